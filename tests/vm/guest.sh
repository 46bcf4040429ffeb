#!/bin/bash
# tests/vm/guest.sh: PID 1 of the test VM (tests/vm/run.sh boots it; the initramfs
# switch_roots here). Mounts what a booted host has (proc, sys, the unified cgroup
# hierarchy, devpts, tmpfs /tmp and /run), then runs the mode from the kernel command
# line (sandbox.mode=): boot (the hierarchy only), targeted (tests/vm/v2set.sh) or
# full (every integration suite). Its log goes to /vmout/guest.log and the console;
# last it writes /vmout/result (the exit status) and powers off. Never returns.
REPO=${1:-}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8

poweroff_now() {
	sync
	umount /vmout 2> /dev/null
	/bin/busybox poweroff -f
	sleep 100
}

# systemd mode (sandbox.mode=systemd): this script runs twice. First as PID 1 from the
# initramfs: it writes a minimal target into the overlay's /etc (journald and
# sandbox-vm.service, nothing of sysinit.target) and execs /lib/systemd/systemd,
# which stays PID 1; then as sandbox-vm.service (SANDBOX_VM_STAGE=2), where systemd has
# mounted the API filesystems and the unified hierarchy, to run tests/vm/sdset.sh.
[[ ${SANDBOX_VM_STAGE:-} == 2 ]] || mount -t proc proc /proc
if [[ ${SANDBOX_VM_STAGE:-} != 2 ]] && grep -qw 'sandbox.mode=systemd' /proc/cmdline; then
	U=/etc/systemd/system
	mkdir -p "$U"
	cat > "$U/sandbox-vm.target" <<-EOF
		[Unit]
		Description=the test VM's minimal target (tests/vm/guest.sh)
		Wants=systemd-journald.socket systemd-journald.service dbus.socket sandbox-vm.service
		AllowIsolate=yes
	EOF
	cat > "$U/sandbox-vm.service" <<-EOF
		[Unit]
		Description=the test VM's set (tests/vm/guide.sh, tests/vm/sdset.sh)
		DefaultDependencies=no
		After=systemd-journald.socket dbus.socket
		[Service]
		Type=simple
		Environment=SANDBOX_VM_STAGE=2
		ExecStart=/bin/bash $REPO/tests/vm/guest.sh $REPO
		StandardInput=null
		StandardOutput=tty
		TTYPath=/dev/ttyS0
		TimeoutStartSec=infinity
	EOF
	# The services and timers the install guide enables (MariaDB, nginx, the sandbox
	# units: tests/vm/guide.sh) would pull in sysinit.target and basic.target, which
	# this minimal boot does not have: none of them gets the default dependencies.
	# dbus.socket: the system bus a booted host has (systemd-run, in the guide, needs it).
	for t in service timer socket; do
		mkdir -p "$U/$t.d"
		printf '[Unit]\nDefaultDependencies=no\n' > "$U/$t.d/sandbox-vm.conf"
	done
	# what cannot work here (no network, no getty, no udev-managed disks) stays off
	for u in getty.target serial-getty@ttyS0.service systemd-networkd.service \
		systemd-networkd-wait-online.service systemd-timesyncd.service \
		systemd-resolved.service cron.service; do
		ln -sf /dev/null "$U/$u"
	done
	: > /etc/fstab
	echo "guest: stage 1: exec /lib/systemd/systemd --unit=sandbox-vm.target" > /dev/console
	exec /lib/systemd/systemd --unit=sandbox-vm.target --log-target=console --show-status=no
fi

if [[ ${SANDBOX_VM_STAGE:-} != 2 ]]; then # else systemd mounted these
	mount -t sysfs sysfs /sys
	mountpoint -q /dev || mount -t devtmpfs dev /dev
	mkdir -p /dev/pts /dev/shm
	[[ -e /dev/fd ]] || ln -s /proc/self/fd /dev/fd
	for i in 0 1 2; do
		n=(stdin stdout stderr)
		[[ -e /dev/${n[i]} ]] || ln -s /proc/self/fd/$i /dev/${n[i]}
	done
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /dev/shm
	# The checkout may live under /tmp or /run (a CI's fresh clone in /tmp): keep it
	# visible through the tmpfs mounted there.
	if [[ -d $REPO ]]; then
		mkdir -p /mnt/sandbox-repo && mount --bind "$REPO" /mnt/sandbox-repo
	fi
	mount -t tmpfs -o mode=1777 tmpfs /tmp
	mount -t tmpfs -o mode=0755 tmpfs /run
	if [[ -n $REPO && ! -d $REPO ]] && mountpoint -q /mnt/sandbox-repo; then
		mkdir -p "$REPO" && mount --move /mnt/sandbox-repo "$REPO"
	fi
	mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
fi
mkdir -p /run/lock /run/mysqld
# systemd mode: what sysinit.target's systemd-tmpfiles-setup.service does on a booted
# host (this minimal boot has none): /run/mysqld for MariaDB's unit, and the like
if [[ ${SANDBOX_VM_STAGE:-} == 2 ]]; then
	systemd-tmpfiles --create > /dev/null 2>&1 || echo "guest: systemd-tmpfiles --create: exit $? (ignored)"
fi
ip link set lo up
hostname sandbox-vm
exec > >(tee -a /vmout/guest.log > /dev/console) 2>&1
read -r UP _ < /proc/uptime
echo "boot_to_userspace_s $UP" >> /vmout/timings
echo "guest: kernel $(uname -r), up ${UP}s, cgroup root controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "guest: root subtree_control: '$(cat /sys/fs/cgroup/cgroup.subtree_control)'"

mode=targeted
for w in $(cat /proc/cmdline); do
	case $w in sandbox.mode=*) mode=${w#sandbox.mode=} ;; esac
done

rc=0
if [[ ! -d $REPO ]]; then
	echo "guest: no repository at '$REPO'"
	rc=1
elif [[ $(stat -f -c %T /sys/fs/cgroup) != cgroup2fs ]]; then
	echo "guest: /sys/fs/cgroup is not cgroup2"
	rc=1
else
	cd "$REPO" || rc=1
	case $mode in
	boot) grep -qw memory /sys/fs/cgroup/cgroup.controllers || rc=1 ;;
	targeted) bash tests/vm/v2set.sh & wait $! || rc=$? ;;
	full) bash tests/vm/full.sh & wait $! || rc=$? ;;
	systemd)
		# the install guide followed (systemd/README.md), then the unit's set on
		# the service it installed
		bash tests/vm/guide.sh & wait $! || rc=$?
		if ((rc == 0)); then
			bash tests/vm/sdset.sh & wait $! || rc=$?
		else
			echo "guest: the install guide failed: tests/vm/sdset.sh not run"
		fi
		;;
	*) echo "guest: unknown mode $mode"; rc=1 ;;
	esac
fi
read -r UP _ < /proc/uptime
echo "guest_total_s $UP" >> /vmout/timings
echo "guest: done, exit status $rc"
echo "$rc" > /vmout/result
poweroff_now
