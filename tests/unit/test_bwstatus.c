/* bwrap's --json-status-fd parser: however the pipe cuts the stream. */
#include <string.h>

#include "bwstatus.h"
#include "tests.h"

/* Feeds the chunks in order (then EOF when finish), into a fresh parser. */
static void feed(struct bw_status *st, const char *const *chunks, size_t n, int finish)
{
	bws_init(st);
	for (size_t i = 0; i < n; i++)
		bws_feed(st, chunks[i], strlen(chunks[i]));
	if (finish)
		bws_finish(st);
}

static const char child_line[] =
	"{ \"child-pid\": 4242, \"cgroup-namespace\": 4026531835, \"ipc-namespace\": 1 }\n";

static void test_child_pid_then_exit(void)
{
	const char *const chunks[] = { child_line, "{ \"exit-code\": 3 }\n" };
	struct bw_status st;

	feed(&st, chunks, 1, 0);
	CHECK_INT(st.have_pid, 1);
	CHECK_INT(st.child_pid, 4242);
	CHECK_INT(st.have_exit, 0);
	bws_feed(&st, chunks[1], strlen(chunks[1]));
	CHECK_INT(st.have_exit, 1);
	CHECK_INT(st.exit_code, 3);
	CHECK_INT(st.garbage, 0);
	bws_release(&st);
}

/* Every split point of the two lines gives the same result. */
static void test_split_lines(void)
{
	char all[256];
	size_t n;

	snprintf(all, sizeof all, "%s{\"exit-code\": 137}\n", child_line);
	n = strlen(all);
	for (size_t cut = 0; cut <= n; cut++) {
		struct bw_status st;
		char ctx[48];

		bws_init(&st);
		bws_feed(&st, all, cut);
		bws_feed(&st, all + cut, n - cut);
		snprintf(ctx, sizeof ctx, "cut at %zu: child_pid", cut);
		CHECK_INT_AT(ctx, st.have_pid ? st.child_pid : -1, 4242);
		snprintf(ctx, sizeof ctx, "cut at %zu: exit_code", cut);
		CHECK_INT_AT(ctx, st.have_exit ? st.exit_code : -1, 137);
		snprintf(ctx, sizeof ctx, "cut at %zu: garbage", cut);
		CHECK_INT_AT(ctx, st.garbage, 0);
		bws_release(&st);
	}
	/* one byte at a time */
	{
		struct bw_status st;

		bws_init(&st);
		for (size_t i = 0; i < n; i++)
			bws_feed(&st, all + i, 1);
		CHECK_INT(st.exit_code, 137);
		CHECK_INT(st.child_pid, 4242);
		bws_release(&st);
	}
}

static void test_several_per_read(void)
{
	const char *const one_read[] = { "{\"child-pid\":7}\n{\"exit-code\":0}\n" };
	const char *const one_line[] = { "{\"child-pid\":8} {\"exit-code\":9}\n" };
	struct bw_status st;

	feed(&st, one_read, 1, 0);
	CHECK_INT(st.child_pid, 7);
	CHECK_INT(st.have_exit, 1);
	CHECK_INT(st.exit_code, 0);
	bws_release(&st);
	feed(&st, one_line, 1, 0);
	CHECK_INT(st.child_pid, 8);
	CHECK_INT(st.exit_code, 9);
	CHECK_INT(st.garbage, 0);
	bws_release(&st);
}

static void test_garbage(void)
{
	static const struct {
		const char *in;
		int have_pid, have_exit;
		size_t garbage;
	} rows[] = {
		{ "not json\n{\"exit-code\":1}\n", 0, 1, 1 },
		{ "{\"exit-code\":\"1\"}\n", 0, 0, 0 },          /* a string: not a code */
		{ "{\"exit-code\":256}\n", 0, 0, 0 },            /* out of range */
		{ "{\"exit-code\":-1}\n", 0, 0, 0 },
		{ "{\"child-pid\":0}\n", 0, 0, 0 },
		{ "{\"child-pid\":99999999999}\n", 0, 0, 0 },
		{ "[1,2]\n{\"child-pid\":5}\n", 1, 0, 1 },       /* not an object */
		{ "{\"exit-code\":1,\"exit-code\":2}\n", 0, 0, 1 }, /* duplicate key */
		{ "{\"child-pid\":5\n", 0, 0, 1 },               /* cut object */
		{ "\"child-pid\": 5\n", 0, 0, 1 },               /* what strstr would take */
		{ "{\"child-pid\":5}", 1, 0, 0 },                /* no newline: taken at EOF */
		{ "\n\n{\"child-pid\":5}\r\n", 1, 0, 0 },
		{ "{\"child-pid\":5} junk\n", 1, 0, 1 },
	};

	for (size_t i = 0; i < NELEM(rows); i++) {
		const char *const chunks[] = { rows[i].in };
		struct bw_status st;
		char ctx[64];

		feed(&st, chunks, 1, 1);
		snprintf(ctx, sizeof ctx, "row %zu: have_pid", i);
		CHECK_INT_AT(ctx, st.have_pid, rows[i].have_pid);
		snprintf(ctx, sizeof ctx, "row %zu: have_exit", i);
		CHECK_INT_AT(ctx, st.have_exit, rows[i].have_exit);
		snprintf(ctx, sizeof ctx, "row %zu: garbage", i);
		CHECK_INT_AT(ctx, st.garbage, rows[i].garbage);
		bws_release(&st);
	}
}

/* A line past the bound is dropped whole; the stream recovers at the next line. */
static void test_long_line(void)
{
	char big[10000];
	struct bw_status st;

	memset(big, ' ', sizeof big);
	memcpy(big, "{\"exit-code\":1,\"x\":\"", 20);
	bws_init(&st);
	bws_feed(&st, big, sizeof big);
	bws_feed(&st, "\"}\n{\"child-pid\":6}\n", 19);
	CHECK_INT(st.have_exit, 0);
	CHECK_INT(st.garbage, 1);
	CHECK_INT(st.child_pid, 6);
	bws_release(&st);
}

void suite_bwstatus(void)
{
	static const CU_TestInfo tests[] = { { "child_pid_then_exit_code", test_child_pid_then_exit },
					     { "split_lines", test_split_lines },
					     { "several_objects_per_read", test_several_per_read },
					     { "garbage", test_garbage },
					     { "overlong_line", test_long_line },
					     CU_TEST_INFO_NULL };

	t_register("bwstatus", tests);
}
