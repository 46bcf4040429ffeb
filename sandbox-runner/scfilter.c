#include "scfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

/* Whole syscalls refused with EPERM: each one is a way out of the sandbox or into
 * the kernel's less-trodden paths (see DESIGN.md section 6, flatpak and docker). */
static const char *const denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"unshare", "setns",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"syslog", "uselib", "acct", "quotactl", "quotactl_fd", "personality",
	"swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "clock_adjtime",
	"adjtimex", "lookup_dcookie", "vhangup", "name_to_handle_at", "open_by_handle_at",
	"iopl", "ioperm", "mbind", "set_mempolicy", "migrate_pages", "move_pages",
	"fanotify_init", "nfsservctl",
};

#define NS_FLAGS                                                                       \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |        \
	 CLONE_NEWNET | CLONE_NEWCGROUP)

void sc_print(FILE *f)
{
	fprintf(f, "seccomp default allow\n");
	fprintf(f, "seccomp arch native only; other arches (x32, i386): kill process\n");
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
		fprintf(f, "seccomp deny %s EPERM\n", denied[i]);
	fprintf(f, "seccomp deny clone with flags & 0x%x (namespaces) EPERM\n", NS_FLAGS);
	fprintf(f, "seccomp deny clone3 ENOSYS (flags unreadable; libc falls back to clone)\n");
	fprintf(f, "seccomp deny ioctl TIOCSTI EPERM\n");
	fprintf(f, "seccomp deny ioctl TIOCLINUX EPERM\n");
	fprintf(f, "seccomp deny socket AF_VSOCK EAFNOSUPPORT\n");
	fprintf(f, "seccomp deny socketpair AF_VSOCK EAFNOSUPPORT\n");
}

static int add_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	int rc;

	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
		int nr = seccomp_syscall_resolve_name(denied[i]);
		if (nr == __NR_SCMP_ERROR)
			continue; /* unknown to this libseccomp: absent on this arch */
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (rc < 0) {
			snprintf(err, errlen, "seccomp rule %s: %s", denied[i], strerror(-rc));
			return -1;
		}
	}
	/* "flags & NS_FLAGS != 0" is not expressible in one rule: one per flag. */
	static const uint64_t ns[] = { CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
				       CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP };
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, ns[i], ns[i]));
		if (rc < 0) {
			snprintf(err, errlen, "seccomp rule clone: %s", strerror(-rc));
			return -1;
		}
	}
	return 0;
}

static int add_arg_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	struct {
		int nr;
		int action;
		unsigned arg;
		uint64_t mask, val;
		enum scmp_compare op;
		const char *what;
	} rules[] = {
		{ SCMP_SYS(ioctl), SCMP_ACT_ERRNO(EPERM), 1, 0xFFFFFFFFu, TIOCSTI,
		  SCMP_CMP_MASKED_EQ, "ioctl TIOCSTI" },
		{ SCMP_SYS(ioctl), SCMP_ACT_ERRNO(EPERM), 1, 0xFFFFFFFFu, TIOCLINUX,
		  SCMP_CMP_MASKED_EQ, "ioctl TIOCLINUX" },
		{ SCMP_SYS(socket), SCMP_ACT_ERRNO(EAFNOSUPPORT), 0, 0xFFFFFFFFu, AF_VSOCK,
		  SCMP_CMP_MASKED_EQ, "socket AF_VSOCK" },
		{ SCMP_SYS(socketpair), SCMP_ACT_ERRNO(EAFNOSUPPORT), 0, 0xFFFFFFFFu, AF_VSOCK,
		  SCMP_CMP_MASKED_EQ, "socketpair AF_VSOCK" },
	};

	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		struct scmp_arg_cmp cmp = { rules[i].arg, rules[i].op, rules[i].mask,
					    rules[i].val };
		int rc = seccomp_rule_add_array(ctx, rules[i].action, rules[i].nr, 1, &cmp);
		if (rc < 0) {
			snprintf(err, errlen, "seccomp rule %s: %s", rules[i].what, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

int sc_build_fd(char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int fd = -1, rc;

	if (ctx == NULL) {
		snprintf(err, errlen, "seccomp_init failed");
		return -1;
	}
	/* Native arch only: a 32-bit or x32 syscall would bypass every rule below. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0) /* a kernel (or valgrind) without KILL_PROCESS: kill the thread */
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_THREAD);
	if (rc < 0) {
		snprintf(err, errlen, "seccomp badarch action: %s", strerror(-rc));
		goto out;
	}
	if (add_rules(ctx, err, errlen) < 0 || add_arg_rules(ctx, err, errlen) < 0)
		goto out;
	/* Any namespace flag on clone is refused; clone3 hides its flags in memory, so
	 * it is refused outright with ENOSYS and glibc falls back to clone. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (rc < 0) {
		snprintf(err, errlen, "seccomp rule clone3: %s", strerror(-rc));
		goto out;
	}
	fd = memfd_create("sandbox-seccomp", 0);
	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		goto out;
	}
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		snprintf(err, errlen, "seccomp export: %s", strerror(rc < 0 ? -rc : errno));
		close(fd);
		fd = -1;
	}
out:
	seccomp_release(ctx);
	return fd;
}
