/* The job's seccomp filter: default allow, a fixed deny list, foreign
 * architectures killed. Built with libseccomp, handed to bwrap as BPF in a memfd.
 * One rule table feeds both the filter and --print-profile (so the digest). */
#ifndef SANDBOX_SCFILTER_H
#define SANDBOX_SCFILTER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sc_rule {
	const char *syscall;  /* by name: one this libseccomp lacks is absent on this arch */
	int err;              /* the errno the call fails with */
	int arg;              /* -1: every call; else the argument compared */
	uint64_t mask, val;   /* denied when (arg & mask) == val */
	const char *why;      /* what the value means, for the printout */
};

/* The rules, ended by one whose syscall is NULL. */
extern const struct sc_rule sc_rules[];

/* A memfd (not close-on-exec, offset 0) holding the BPF program; -1 with err. */
int sc_build_fd(char *err, size_t errlen);
/* One line per rule of r, for --print-profile and the profile digest. */
void sc_print(FILE *f, const struct sc_rule *r);

#endif
