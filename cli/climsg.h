/* The command-line client's diagnostics: every message `sandbox` prints on stderr is
 * one "sandbox: " line written here (stdout carries only what a command outputs). */
#ifndef SANDBOX_CLIMSG_H
#define SANDBOX_CLIMSG_H

/* "sandbox: <message>\n" on stderr. */
void cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A usage error: "sandbox: <message> (see sandbox --help)\n" on stderr; returns
 * CLI_EXIT_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
