/* sandbox: the command-line client of the job API (issue 12, point 5). This file is
 * the program: its global options, its configuration (URL, CA file, token), the
 * command table and the help texts. Each command family lives in its own file (run:
 * clirun.c; get, list, cancel, runtimes: clijobs.c; artifacts, session ls and cp:
 * clifiles.c; session create, list, close: clisession.c; session exec, output, kill:
 * cliexec.c) on what they share: requests from arguments (clireq.c), local files into
 * requests (cliupload.c), waiting for an end (cliwait.c), HTTP (clihttp.c).
 *
 * Theory of operation: configuration comes from the environment (SANDBOX_URL,
 * SANDBOX_CACERT, and the token from SANDBOX_TOKEN or the file SANDBOX_TOKEN_FILE;
 * never from argv, so it never shows in ps). Each command is one or a few HTTPS
 * requests (cli/clihttp.c). `run` and `session exec` submit an argv array as given
 * (no shell string is ever built from the arguments), then follow both output
 * streams with long-polls and exit with the command's exit code. Downloads are
 * written under the chosen directory by fd, never through a symlink, never over an
 * existing file. Diagnostics go to stderr prefixed "sandbox: " (cli/climsg.c). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cliargs.h"
#include "clifiles.h"
#include "clihttp.h"
#include "clijobs.h"
#include "climsg.h"
#include "clirun.h"
#include "clisession.h"
#include "cliupload.h"
#include "strbuf.h"

/* ------------------------------------------------------------------ help */

static const char help_main[] =
"NAME\n"
"    sandbox - run commands in the sandboxed job service\n"
"\n"
"SYNOPSIS\n"
"    sandbox [--url URL] [--cacert FILE] COMMAND [OPTIONS] [ARGS]\n"
"    sandbox COMMAND --help\n"
"\n"
"COMMANDS\n"
"    run [OPTIONS] -- CMD [ARGS...]   run a job, stream its output, exit with its code\n"
"    run --runtime NAME --source FILE run a program in a runtime (python3, c, ...)\n"
"    runtimes                         list the runtimes jobs may name\n"
"    get ID [--wait S]                print a job as JSON\n"
"    list [--limit N] [--status S] [--cursor C]\n"
"                                     list your jobs, newest first\n"
"    cancel ID                        cancel a job\n"
"    artifacts ID [--out DIR]         download a job's artifacts into DIR\n"
"    session create|list|exec|output|kill|ls|cp|close\n"
"                                     work in a persistent session (sandbox session --help)\n"
"\n"
"ENVIRONMENT\n"
"    SANDBOX_URL        the API's base URL (https://host:port); --url overrides it\n"
"    SANDBOX_CACERT     a CA certificate file to verify the server with; --cacert\n"
"                       overrides it (unset: the system's CAs)\n"
"    SANDBOX_TOKEN      the API key. It is read only from the environment or from\n"
"    SANDBOX_TOKEN_FILE a file (first line), never from a command-line flag, so it\n"
"                       never appears in ps; sandbox never prints it.\n"
"    `make up` writes these to var/env: `set -a; . var/env; set +a`.\n"
"\n"
"EXIT STATUS\n"
"    run and session exec exit with the command's exit code: its own, 128+N when\n"
"    killed by signal N, 124 timed out, 122 output limit, 126 blocked by policy,\n"
"    125 the service failed or the job never ran (lost, cancelled before it started).\n"
"    Otherwise, and when sandbox itself fails:\n"
"      0  success\n"
"      2  usage error: bad arguments, missing SANDBOX_URL or token\n"
"      3  the API answered an error (its code, message and field are printed), or\n"
"         the connection failed\n"
"      4  a local file could not be read or written (e.g. a download would overwrite\n"
"         a file or follow a symlink)\n"
"      130 interrupted (run and session exec cancel the job / kill the command first)\n"
"\n"
"EXAMPLES\n"
"    set -a; . var/env; set +a\n"
"    sandbox run -- echo hello\n"
"    sandbox run -f main.py --limit wall_seconds=5 -- python3 main.py\n"
"    sandbox run --runtime python3 --source main.py\n"
"    id=$(sandbox session create --idle 600)\n"
"    sandbox session cp data.bin $id:in/data.bin\n"
"    sandbox session exec $id -- sha256sum in/data.bin\n"
"    pid=$(sandbox session exec --detach $id -- make -j2)\n"
"    sandbox session output $id $pid --follow\n"
"    sandbox session close $id\n";

static const char help_run[] =
"NAME\n"
"    sandbox run - run one job and stream its output live\n"
"\n"
"SYNOPSIS\n"
"    sandbox run [-f FILE[:PATH]]... [--limit NAME=VALUE]... [--env NAME=VALUE]...\n"
"                [--network] [--stdin FILE|-] [--cwd DIR] [--artifacts DIR]\n"
"                [--detach] [-v] -- CMD [ARGS...]\n"
"    sandbox run --runtime NAME --source FILE|- [OPTIONS]\n"
"\n"
"DESCRIPTION\n"
"    Submits CMD and ARGS as the job's argv (exactly as given: no shell is involved\n"
"    unless CMD is one), then copies the job's stdout and stderr to sandbox's own,\n"
"    byte for byte, while the job runs, and exits with the job's exit code. The\n"
"    job's diagnostics (e.g. \"command timed out\") are printed after its output on\n"
"    stderr, prefixed \"sandbox: \". Ctrl-C cancels the job.\n"
"\n"
"OPTIONS\n"
"    -f, --file FILE[:PATH]  upload the local FILE as PATH in the job's workspace\n"
"                            (default: FILE's last component); executable when FILE is.\n"
"                            Files are streamed into the request, never read whole\n"
"                            into memory (the service's body limit still applies)\n"
"    --runtime NAME          run --source in the runtime NAME (see sandbox runtimes)\n"
"                            instead of a command; a compiled runtime's compiler\n"
"                            output is printed on stderr after the program's output\n"
"    --source FILE|-         the program's text (UTF-8) for --runtime\n"
"    --limit NAME=VALUE      a job limit: wall_seconds, cpu_seconds, memory_mb, pids,\n"
"                            output_bytes, disk_mb (the API checks names and ranges)\n"
"    --env NAME=VALUE        an environment variable for the job\n"
"    --network               ask for network access (the key must permit it)\n"
"    --stdin FILE|-          the job's stdin: FILE's bytes, or sandbox's own stdin\n"
"    --cwd DIR               the job's working directory, relative to the workspace\n"
"    --artifacts DIR         collect the workspace directory DIR as artifacts\n"
"    --detach                print the job id and exit 0 without waiting\n"
"    -v                      say the job's id on stderr, and show every diagnostic\n"
"                            (by default only those of a job that did not end on\n"
"                            its own: timed out, output limit, resource limit, ...)\n";

static const char help_get[] =
"NAME\n    sandbox get - print a job as JSON\n\n"
"SYNOPSIS\n    sandbox get ID [--wait S]\n\n"
"DESCRIPTION\n    Prints the job object (status, result, output inline, diagnostics).\n"
"    --wait S waits up to S (0..30) seconds for the job to end first.\n";
static const char help_list[] =
"NAME\n    sandbox list - list your jobs, newest first\n\n"
"SYNOPSIS\n    sandbox list [--limit N] [--status STATUS] [--cursor CURSOR]\n\n"
"DESCRIPTION\n    One line per job: id, status, exit code (- while none), created_at.\n"
"    When there are more, a line on stderr gives the --cursor of the next page.\n";
static const char help_runtimes[] =
"NAME\n    sandbox runtimes - list the runtimes a job may name\n\n"
"SYNOPSIS\n    sandbox runtimes\n\n"
"DESCRIPTION\n    One line per runtime the runner hosts provide (GET /v1/runtimes): name,\n"
"    version (- when it has none), aliases (comma-separated, - when none), the file\n"
"    name the source is written to, and compiled or interpreted. Run one with\n"
"    sandbox run --runtime NAME --source FILE.\n";
static const char help_cancel[] =
"NAME\n    sandbox cancel - cancel a job\n\n"
"SYNOPSIS\n    sandbox cancel ID\n\n"
"DESCRIPTION\n    A queued job is cancelled at once, a running one is killed by its runner;\n"
"    an ended job is left as it is. Prints the id and the status after the request.\n";
static const char help_artifacts[] =
"NAME\n    sandbox artifacts - download a job's artifacts\n\n"
"SYNOPSIS\n    sandbox artifacts ID [--out DIR]\n\n"
"DESCRIPTION\n    Writes each artifact under DIR (default: the current directory), creating\n"
"    its parent directories, and prints the paths written. A name that is absolute\n"
"    or has a '..' component is refused; a file is only ever created, never\n"
"    overwritten, and no symlink under DIR is followed (exit 4). Each file's size and\n"
"    sha256 are checked against the listing.\n";
static const char help_session[] =
"NAME\n    sandbox session - work in a persistent sandbox session\n\n"
"SYNOPSIS\n"
"    sandbox session create [--limit NAME=VALUE]... [--idle S] [--max S] [--network]\n"
"                           [--env NAME=VALUE]... [--no-wait]\n"
"    sandbox session list [--status STATUS] [--limit N] [--cursor CURSOR] [--all]\n"
"    sandbox session exec ID [--env NAME=VALUE]... [--cwd DIR] [--stdin FILE|-]\n"
"                           [--timeout S] [--detach] [-v] -- CMD [ARGS...]\n"
"    sandbox session output ID PID [--follow] [--offset N] [--stream stdout|stderr]\n"
"    sandbox session kill ID PID [--signal NAME]\n"
"    sandbox session ls ID [DIR]\n"
"    sandbox session cp LOCAL ID:PATH\n"
"    sandbox session cp ID:PATH LOCAL\n"
"    sandbox session close ID\n\n"
"DESCRIPTION\n"
"    create   starts a session and prints its id; waits until it is ready unless\n"
"             --no-wait. Limits: memory_mb, pids, cpu_seconds, disk_mb; --idle and\n"
"             --max are idle_seconds and max_seconds.\n"
"    list     one line per session of yours, newest first: id, status, created_at.\n"
"             A next page's --cursor is printed on stderr; --all follows every page.\n"
"    exec     runs CMD ARGS as an argv command in the session, streams its output live\n"
"             and exits with its exit code (as run does). --detach prints the\n"
"             command's pid (1, 2, ...) instead and exits 0: the command runs on.\n"
"    output   replays the command PID's stdout and stderr (to sandbox's own) from\n"
"             byte offset N of each (default 0): what is stored now, or with --follow\n"
"             everything until the command ends, then exits with its exit code.\n"
"             PID is the pid exec --detach printed, or the command's id.\n"
"    kill     sends a signal (TERM unless --signal: KILL, INT, HUP, QUIT, USR1,\n"
"             USR2, or a number) to the running command PID; prints its id and status.\n"
"    ls       lists the regular files under DIR (default: the workspace): size, path.\n"
"    cp       uploads LOCAL ('-': stdin) to PATH, streamed (never whole in memory),\n"
"             or downloads PATH to LOCAL ('-': stdout). A download never follows a\n"
"             symlink at LOCAL.\n"
"    close    ends the session (every process killed, the workspace removed).\n";

static int want_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ main */

static const struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} commands[] = {
	{ "run", cli_run, help_run },
	{ "get", cli_get, help_get },
	{ "list", cli_list, help_list },
	{ "cancel", cli_cancel, help_cancel },
	{ "artifacts", cli_artifacts, help_artifacts },
	{ "session", cli_session, help_session },
	{ "runtimes", cli_runtimes, help_runtimes },
};

/* The token: SANDBOX_TOKEN, else the first line of SANDBOX_TOKEN_FILE. malloc'd, or
 * NULL with the reason printed (never the token). */
static char *load_token(void)
{
	const char *env = getenv("SANDBOX_TOKEN"), *file = getenv("SANDBOX_TOKEN_FILE");
	struct strbuf sb = STRBUF_INIT;
	size_t n;

	if (env && *env) {
		sb_adds(&sb, env);
	} else if (file && *file) {
		int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);

		if (fd < 0 || cli_read_fd(fd, &sb) < 0) {
			cli_say("SANDBOX_TOKEN_FILE %s: %s", file, strerror(errno));
			if (fd >= 0)
				close(fd);
			sb_release(&sb);
			return NULL;
		}
		close(fd);
		sb.len = strcspn(sb.buf, "\r\n");
		sb.buf[sb.len] = '\0';
	} else {
		cli_say("no API token: set SANDBOX_TOKEN or SANDBOX_TOKEN_FILE "
			"(e.g. `set -a; . var/env; set +a`)");
		return NULL;
	}
	n = sb.len;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)sb.buf[i] <= 0x20 || (unsigned char)sb.buf[i] >= 0x7f) {
			cli_say("the API token has characters a bearer token cannot have");
			explicit_bzero(sb.buf, sb.len);
			sb_release(&sb);
			return NULL;
		}
	if (n == 0 || n > 4096) {
		cli_say("the API token is empty or too long");
		sb_release(&sb);
		return NULL;
	}
	return sb_detach(&sb, NULL);
}

int main(int argc, char **argv)
{
	const char *url = getenv("SANDBOX_URL"), *cacert = getenv("SANDBOX_CACERT");
	const struct command *cmd = NULL;
	char *token;
	int i = 1, rc;

	signal(SIGPIPE, SIG_IGN);
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
			url = argv[++i];
		else if (strcmp(argv[i], "--cacert") == 0 && i + 1 < argc)
			cacert = argv[++i];
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(help_main, stdout);
			return 0;
		} else if (strcmp(argv[i], "--token") == 0)
			return cli_usage("there is no --token: the token comes from SANDBOX_TOKEN or "
					 "SANDBOX_TOKEN_FILE only, so it never shows in ps");
		else
			break;
	}
	if (i >= argc) {
		fputs(help_main, stderr);
		return CLI_EXIT_USAGE;
	}
	for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
		if (strcmp(argv[i], commands[k].name) == 0)
			cmd = &commands[k];
	if (!cmd)
		return cli_usage("unknown command %s", argv[i]);
	if (want_help(argc - i, argv + i)) {
		fputs(cmd->help, stdout);
		return 0;
	}
	if (!url || !*url)
		return cli_usage("no API URL: set SANDBOX_URL or pass --url");
	if (!(token = load_token()))
		return CLI_EXIT_USAGE;
	rc = ch_init(url, cacert, token);
	explicit_bzero(token, strlen(token));
	free(token);
	if (rc < 0) {
		ch_cleanup();
		return CLI_EXIT_USAGE;
	}
	rc = cmd->fn(argc - i, argv + i);
	fflush(stdout);
	ch_cleanup();
	return rc;
}
