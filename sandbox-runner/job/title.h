/* A forked process's command line (title.c), as ps, pgrep -f and tests/stack.sh see
 * it. */
#ifndef SANDBOX_TITLE_H
#define SANDBOX_TITLE_H

/* At the start of main, before anything keeps a pointer into the environment: lets
 * a forked spare or holder show the command line of the supervisor it becomes. */
void title_init(char **argv);
/* The command line tools see (ps, pgrep -f): argv joined, in the area found by
 * title_init. */
void title_set(const char *const *argv);

#endif
