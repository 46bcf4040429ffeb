/* sandbox run: one job submitted (argv or --runtime with --source, files streamed
 * in), its output followed live, its compile step and diagnostics printed after, and
 * its exit code returned; Ctrl-C cancels it. */
#ifndef SANDBOX_CLIRUN_H
#define SANDBOX_CLIRUN_H

int cli_run(int argc, char **argv);

#endif
