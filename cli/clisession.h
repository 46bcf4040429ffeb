/* sandbox session: its subcommands dispatched, and the session's own life (create,
 * waiting until it is ready; list, a page or every page; close). The commands in a
 * session are cliexec's, its files clifiles'. */
#ifndef SANDBOX_CLISESSION_H
#define SANDBOX_CLISESSION_H

int cli_session(int argc, char **argv);

#endif
