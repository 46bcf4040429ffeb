/* Files between this machine and the service: a job's artifacts downloaded (sandbox
 * artifacts), a session's files listed (session ls) and copied up or down (session
 * cp). Uploads stream from the file; downloads stream to it, are created under the
 * chosen place by fd, never through a symlink, and (artifacts) never over an existing
 * file. */
#ifndef SANDBOX_CLIFILES_H
#define SANDBOX_CLIFILES_H

int cli_artifacts(int argc, char **argv);
int cli_session_ls(int argc, char **argv);
int cli_session_cp(int argc, char **argv);

#endif
