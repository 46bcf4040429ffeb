/* The one-request job commands of sandbox: get (a job as JSON), list (your jobs, a
 * page at a time), cancel, and runtimes (what a job may name). */
#ifndef SANDBOX_CLIJOBS_H
#define SANDBOX_CLIJOBS_H

int cli_get(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_cancel(int argc, char **argv);
int cli_runtimes(int argc, char **argv);

#endif
