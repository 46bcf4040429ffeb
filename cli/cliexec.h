/* A session's commands from sandbox: session exec (submit an argv command, follow its
 * output live, exit with its code; Ctrl-C kills it), session output (replay or follow
 * a command's output) and session kill (signal one), a command named by its pid or
 * its id. */
#ifndef SANDBOX_CLIEXEC_H
#define SANDBOX_CLIEXEC_H

int cli_session_exec(int argc, char **argv);
int cli_session_output(int argc, char **argv);
int cli_session_kill(int argc, char **argv);

#endif
