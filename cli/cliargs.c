/* The pure parts of the command-line client (cli/sandbox.c) (see cliargs.h). */
#include "cliargs.h"

#include <string.h>

#include "pathrules.h"

#define CLI_PATH_MAX 4096
#define CLI_LIMIT_MAX 9007199254740992LL /* 2^53 */

static int is_lower(char c) { return c >= 'a' && c <= 'z'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return is_lower(c) || (c >= 'A' && c <= 'Z'); }

int cli_parse_limit(const char *arg, char name[64], long long *value, const char **why)
{
	const char *eq = strchr(arg, '=');
	size_t n;
	long long v = 0;

	if (!eq) {
		*why = "expected NAME=VALUE";
		return -1;
	}
	n = (size_t)(eq - arg);
	if (n == 0 || n > 63 || !is_lower(arg[0])) {
		*why = "the limit name must be lower-case letters, digits and '_'";
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!is_lower(arg[i]) && !is_digit(arg[i]) && arg[i] != '_') {
			*why = "the limit name must be lower-case letters, digits and '_'";
			return -1;
		}
	if (eq[1] == '\0') {
		*why = "the value must be a non-negative integer";
		return -1;
	}
	for (const char *p = eq + 1; *p; p++) {
		if (!is_digit(*p) || v > (CLI_LIMIT_MAX - (*p - '0')) / 10) {
			*why = is_digit(*p) ? "the value is too large"
					    : "the value must be a non-negative integer";
			return -1;
		}
		v = v * 10 + (*p - '0');
	}
	memcpy(name, arg, n);
	name[n] = '\0';
	*value = v;
	return 0;
}

int cli_parse_env(const char *arg, size_t *name_len, const char **why)
{
	const char *eq = strchr(arg, '=');
	size_t n;

	if (!eq) {
		*why = "expected NAME=VALUE";
		return -1;
	}
	n = (size_t)(eq - arg);
	if (n == 0 || n > 255 || (!is_alpha(arg[0]) && arg[0] != '_')) {
		*why = "the variable name must be letters, digits and '_', not starting with a digit";
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!is_alpha(arg[i]) && !is_digit(arg[i]) && arg[i] != '_') {
			*why = "the variable name must be letters, digits and '_', not starting with a digit";
			return -1;
		}
	*name_len = n;
	return 0;
}

const char *cli_rel_path(const char *p)
{
	return pr_rel_path(p, CLI_PATH_MAX);
}

int cli_split_file(const char *arg, size_t *file_len, const char **path, const char **why)
{
	const char *colon = strchr(arg, ':');
	const char *r;

	if (colon) {
		*file_len = (size_t)(colon - arg);
		*path = colon + 1;
	} else {
		const char *slash = strrchr(arg, '/');

		*file_len = strlen(arg);
		*path = slash ? slash + 1 : arg;
	}
	if (*file_len == 0) {
		*why = "the local FILE is empty";
		return -1;
	}
	if ((r = cli_rel_path(*path))) {
		*why = colon ? "the sandbox PATH must be relative and normalized"
			     : "FILE needs a :PATH (its last component is not a usable name)";
		return -1;
	}
	return 0;
}

int cli_is_id(const char *s)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

	if (strlen(s) != sizeof shape - 1)
		return 0;
	for (size_t i = 0; shape[i]; i++) {
		if (shape[i] == '-') {
			if (s[i] != '-')
				return 0;
		} else if (!is_digit(s[i]) && !(s[i] >= 'a' && s[i] <= 'f')) {
			return 0;
		}
	}
	return 1;
}

int cli_remote_spec(const char *s, char id[37], const char **path)
{
	if (strlen(s) < 38 || s[36] != ':' || s[37] == '\0')
		return 0;
	memcpy(id, s, 36);
	id[36] = '\0';
	if (!cli_is_id(id))
		return 0;
	*path = s + 37;
	return 1;
}

int cli_exit_for(int has_code, long long exit_code)
{
	if (!has_code || exit_code < 0 || exit_code > 255)
		return 125;
	return (int)exit_code;
}
