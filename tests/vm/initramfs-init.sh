#!/bin/busybox sh
# tests/vm/initramfs-init.sh: the /init of the VM's initramfs (tests/vm/run.sh builds
# it: busybox-static, this file, the kernel's own 9p/virtio/overlay modules and tun).
# Loads the modules, mounts the host's root (9p tag "hostroot") read-only under a tmpfs
# overlay, mounts the writable result share (tag "vmout") at /vmout in it, and
# switch_roots into the guest script named by sandbox.guest= on the kernel command
# line (run by the host's bash). Any failure powers off: the host sees no result file
# and reports the boot as failed.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

fail() {
	echo "vm-init: error: $*" > /dev/console
	sync
	poweroff -f
}

while read -r m; do
	insmod "/mod/$m.ko" || fail "insmod $m"
done < /mod/order

guest=
repo=
for w in $(cat /proc/cmdline); do
	case $w in
	sandbox.guest=*) guest=${w#sandbox.guest=} ;;
	sandbox.repo=*) repo=${w#sandbox.repo=} ;;
	esac
done
[ -n "$guest" ] || fail "no sandbox.guest= on the kernel command line"

mkdir -p /lower /upper /newroot
# cache=loose: the host tree is read-only for the guest's life (the harness builds first).
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /lower ||
	fail "mount the host root (9p hostroot)"
mount -t tmpfs -o mode=0755 upper /upper || fail "tmpfs for the overlay"
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot ||
	fail "overlay root"
mkdir -p /newroot/vmout
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 vmout /newroot/vmout ||
	fail "mount the result share (9p vmout)"
mount --move /dev /newroot/dev || fail "move /dev"
umount /proc /sys
echo "vm-init: switching to $guest" > /dev/console
exec switch_root /newroot /bin/bash "$guest" "$repo"
