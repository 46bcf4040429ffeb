/* An E2B session's sandbox (sandbox-runner/launch/profile.c, "@home"): its workspace is
 * mounted at /home/user instead of /workspace, HOME and the start directory follow,
 * nothing else of the profile changes; a job's and a plain session's arguments are
 * unchanged; --print-profile says both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "tests.h"

void suite_e2bhome(void);

/* A session's arguments (agent fd 8) as one string with '\n' for each NUL. */
static char *session_args(const struct cfg *c, int e2b)
{
	const struct prof_job j = { "/ws/slot-1003", "", 8, NULL, 4, 5, -1 };
	char err[256] = "", *buf = calloc(1, 65536);
	int fd = prof_session_args(c, &prof_default, &j, 8, e2b, err, sizeof err);
	ssize_t n;

	if (!CHECK(fd >= 0, "prof_session_args: %s", err) || buf == NULL) {
		if (fd >= 0)
			close(fd);
		return buf;
	}
	n = read(fd, buf, 65535);
	close(fd);
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = '\n';
	return buf;
}

static void test_home(void)
{
	struct cfg c;
	char *plain, *e2b, *printed = NULL;
	size_t len = 0;
	FILE *f;

	cfg_defaults(&c);
	plain = session_args(&c, 0);
	e2b = session_args(&c, 1);
	if (plain == NULL || e2b == NULL)
		goto out;
	CHECK_HAS(plain, "\n--bind\n/ws/slot-1003\n/workspace\n");
	CHECK_HAS(plain, "\n--setenv\nHOME\n/workspace\n");
	CHECK_HAS(plain, "\n--chdir\n/workspace\n");
	CHECK_HAS(e2b, "\n--bind\n/ws/slot-1003\n/home/user\n");
	CHECK_HAS(e2b, "\n--setenv\nHOME\n/home/user\n");
	CHECK_HAS(e2b, "\n--chdir\n/home/user\n");
	CHECK(strstr(e2b, "/workspace") == NULL, "an E2B sandbox has no /workspace");
	/* the one mount point is all that differs: same length less the name change */
	CHECK_INT((long long)strlen(e2b) - (long long)strlen(plain),
		  3 * ((long long)strlen(PROF_E2B_HOME) - (long long)strlen(PROF_WORKSPACE)));
	f = open_memstream(&printed, &len);
	if (CHECK(f != NULL, "open_memstream")) {
		prof_print_tables(f, &c, &prof_default);
		fclose(f);
		CHECK_HAS(printed, "/workspace (an E2B session: /home/user instead, no /workspace)");
		CHECK_HAS(printed, "env HOME=/workspace (an E2B session: /home/user)");
		CHECK_HAS(printed, "bwrap-args e2b-session");
	}
out:
	free(plain);
	free(e2b);
	free(printed);
}

void suite_e2bhome(void)
{
	static const CU_TestInfo tests[] = {
		{ "an E2B session's workspace, HOME and cwd are /home/user", test_home },
		CU_TEST_INFO_NULL,
	};
	t_register("e2bhome", tests);
}
