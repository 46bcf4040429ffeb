/* The job's seccomp filter: default allow, a fixed deny list, foreign
 * architectures killed. Built with libseccomp, handed to bwrap as BPF in a memfd. */
#ifndef SANDBOX_SCFILTER_H
#define SANDBOX_SCFILTER_H

#include <stdio.h>

/* A memfd (not close-on-exec, offset 0) holding the BPF program; -1 with err. */
int sc_build_fd(char *err, size_t errlen);
/* One line per rule, for --print-profile and the profile digest. */
void sc_print(FILE *f);

#endif
