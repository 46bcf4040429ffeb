/* The sandbox's seccomp filter (see scfilter.h). */
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

#define DENY(name) { name, EPERM, -1, 0, 0, NULL }
/* Any namespace flag on clone: "flags & NS != 0" is not one rule, so one per flag. */
#define NS_FLAG(f) { "clone", EPERM, 0, f, f, #f " (namespaces)" }
#define ARG_EQ(name, err, arg, val) { name, err, arg, 0xFFFFFFFFu, val, #val }

/* Each rule is a way out of the sandbox or into the kernel's less-trodden paths (see
 * DESIGN.md section 6, flatpak and docker). Arguments compared as 32 bits (masked):
 * the upper half of a register is not the kernel's business for these. */
const struct sc_rule sc_rules[] = {
	DENY("ptrace"), DENY("process_vm_readv"), DENY("process_vm_writev"), DENY("kcmp"),
	DENY("pidfd_getfd"),
	DENY("mount"), DENY("umount"), DENY("umount2"), DENY("pivot_root"), DENY("chroot"),
	DENY("move_mount"), DENY("open_tree"), DENY("fsopen"), DENY("fsconfig"),
	DENY("fsmount"), DENY("fspick"), DENY("mount_setattr"),
	DENY("unshare"), DENY("setns"),
	DENY("keyctl"), DENY("add_key"), DENY("request_key"),
	DENY("bpf"), DENY("perf_event_open"), DENY("userfaultfd"),
	DENY("io_uring_setup"), DENY("io_uring_enter"), DENY("io_uring_register"),
	DENY("kexec_load"), DENY("kexec_file_load"), DENY("init_module"), DENY("finit_module"),
	DENY("delete_module"),
	DENY("syslog"), DENY("uselib"), DENY("acct"), DENY("quotactl"), DENY("quotactl_fd"),
	DENY("personality"),
	DENY("swapon"), DENY("swapoff"), DENY("reboot"), DENY("settimeofday"),
	DENY("clock_settime"), DENY("clock_adjtime"),
	DENY("adjtimex"), DENY("lookup_dcookie"), DENY("vhangup"), DENY("name_to_handle_at"),
	DENY("open_by_handle_at"),
	DENY("iopl"), DENY("ioperm"), DENY("mbind"), DENY("set_mempolicy"), DENY("migrate_pages"),
	DENY("move_pages"),
	DENY("fanotify_init"), DENY("nfsservctl"),
	NS_FLAG(CLONE_NEWNS), NS_FLAG(CLONE_NEWUTS), NS_FLAG(CLONE_NEWIPC),
	NS_FLAG(CLONE_NEWUSER), NS_FLAG(CLONE_NEWPID), NS_FLAG(CLONE_NEWNET),
	NS_FLAG(CLONE_NEWCGROUP),
	/* clone3 hides its flags in memory: refused outright, glibc falls back to clone */
	{ "clone3", ENOSYS, -1, 0, 0, "flags unreadable; libc falls back to clone" },
	ARG_EQ("ioctl", EPERM, 1, TIOCSTI),
	ARG_EQ("ioctl", EPERM, 1, TIOCLINUX),
	ARG_EQ("socket", EAFNOSUPPORT, 0, AF_VSOCK),
	ARG_EQ("socketpair", EAFNOSUPPORT, 0, AF_VSOCK),
	{ NULL, 0, 0, 0, 0, NULL },
};

void sc_print(FILE *f, const struct sc_rule *r)
{
	fprintf(f, "seccomp default allow\n");
	fprintf(f, "seccomp arch native only; other arches (x32, i386): kill process\n");
	for (size_t i = 0; r[i].syscall; i++) {
		const char *e = strerrorname_np(r[i].err);

		if (r[i].arg < 0)
			fprintf(f, "seccomp deny %s %s%s%s%s\n", r[i].syscall, e ? e : "?",
				r[i].why ? " (" : "", r[i].why ? r[i].why : "", r[i].why ? ")" : "");
		else
			fprintf(f, "seccomp deny %s arg%d & 0x%llx == 0x%llx (%s) %s\n",
				r[i].syscall, r[i].arg, (unsigned long long)r[i].mask,
				(unsigned long long)r[i].val, r[i].why ? r[i].why : "",
				e ? e : "?");
	}
}

static int add_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	for (const struct sc_rule *r = sc_rules; r->syscall; r++) {
		int nr = seccomp_syscall_resolve_name(r->syscall), rc;

		if (nr == __NR_SCMP_ERROR)
			continue; /* unknown to this libseccomp: absent on this arch */
		if (r->arg < 0) {
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 0);
		} else {
			struct scmp_arg_cmp cmp = { (unsigned)r->arg, SCMP_CMP_MASKED_EQ, r->mask,
						    r->val };
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(r->err), nr, 1, &cmp);
		}
		if (rc < 0) {
			snprintf(err, errlen, "seccomp rule %s: %s", r->syscall, strerror(-rc));
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
	if (add_rules(ctx, err, errlen) < 0)
		goto out;
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
