/* sandboxctl subcommands. Each returns the process exit status. */
#ifndef SANDBOX_CTL_H
#define SANDBOX_CTL_H

#include "config.h"
#include "db.h"

int ctl_migrate(struct db *db, const struct cfg *cfg);
int ctl_keys(struct db *db, const struct cfg *cfg, int argc, char **argv);
int ctl_queue(struct db *db, int argc, char **argv);
int ctl_purge(struct db *db, const struct cfg *cfg, int argc, char **argv);

#endif
