#!/usr/bin/env bash
# tests/vm/run.sh (make test-vm): boots Debian's own kernel in QEMU with the unified
# cgroup v2 hierarchy and runs the runner's v2 set inside the guest.
#
#   bash tests/vm/run.sh [boot|targeted|full|systemd]  (default: targeted; FULL=1 = full)
#   targeted: two boots, tests/vm/v2set.sh with a shell as PID 1, then the systemd
#   mode into var/vm/out/systemd; systemd: systemd (Debian 12: 252) as PID 1 in the
#   guest and the installed sandbox-runner.service (tests/vm/sdset.sh)
#
# The guest: Debian's linux-image-<version>-amd64 (the package linux-image-amd64
# depends on; apt-get download + dpkg-deb -x into var/vm/, never into the host's
# /boot), an initramfs built here from busybox-static and the kernel's own 9p, virtio
# and overlay modules (tests/vm/initramfs-init.sh), the host's root filesystem shared
# read-only over virtio-9p under a tmpfs overlay (so the guest runs this checkout's
# build/ with the host's MariaDB, nginx, bwrap), kernel command line
# `systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all`. TCG (-accel tcg): this kind of
# machine's /dev/kvm cannot run a stock guest; VM_ACCEL=kvm to try.
#
# Results come back through a second 9p share, var/vm/out (writable): the guest writes
# its log there and, last, `result` (its exit status) before it powers off. No result
# file (the boot failed, the guest hung past VM_TIMEOUT, the kernel panicked) is a
# failure, never a pass. Exit status: the guest's, or 1.
#
# Environment: VM_TIMEOUT (seconds a boot may take, default 1500, FULL=1 14400; the
# VM is killed after it),
# VM_MEM_MB (3072), VM_SMP (2), VM_KERNEL_PKG (default: what linux-image-amd64
# depends on), VM_OUT (default var/vm/out), VM_BENCH=1 (also build/bench-launch in
# the guest on v2: var/vm/out/bench-launch.txt); FULL=1 only: VM_TIME_SCALE (default
# 20: SANDBOX_TIME_SCALE in the guest, by which the suites' time limits are multiplied),
# SANDBOX_SUITES (the suites to run in the guest; default all), VM_PARALLEL (default 2:
# the suites are dealt in turn to that many guests booted side by side, each with its
# own stack, results in var/vm/out/part-K; one guest leaves a core of this machine
# idle: TCG and the guest's own waits keep it from using both).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
MODE=${1:-targeted}
[[ ${FULL:-0} == 1 ]] && MODE=full
case $MODE in boot | targeted | full | systemd) ;; *) echo "usage: $0 [boot|targeted|full|systemd]" >&2; exit 2 ;; esac
VMDIR=$REPO/var/vm
OUT=$(realpath -m -- "${VM_OUT:-$VMDIR/out}")
TIMEOUT=${VM_TIMEOUT:-$([[ $MODE == full ]] && echo 14400 || echo 1500)}
PARALLEL=${VM_PARALLEL:-2}
VM_TIME_SCALE=${VM_TIME_SCALE:-20}
[[ $VM_TIME_SCALE =~ ^[1-9][0-9]{0,2}$ ]] || die "VM_TIME_SCALE must be a whole number from 1 to 999"
[[ ${SANDBOX_SUITES:-} =~ ^[a-z_\ ]*$ ]] || die "SANDBOX_SUITES: suite names only (letters, _, spaces)"
[[ $PARALLEL =~ ^[1-4]$ ]] || die "VM_PARALLEL must be 1 to 4"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "VM_TIMEOUT must be a number of seconds"
MEM=${VM_MEM_MB:-3072}
SMP=${VM_SMP:-2}
ACCEL=${VM_ACCEL:-tcg}

say() { printf 'vm: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[[ $(id -u) == 0 ]] || die "must run as root (the guest runs the runner as root, and QEMU shares / with its owners)"
command -v qemu-system-x86_64 > /dev/null || die "qemu-system-x86_64 missing: bash tests/deps.sh (qemu-system-x86)"
BUSYBOX=/bin/busybox
[[ -x $BUSYBOX ]] || die "$BUSYBOX missing: bash tests/deps.sh (busybox-static)"
file_is_static() { ! grep -q 'ld-linux' < <(head -c 4096 "$1" | tr -c '[:print:]' '\n'); }
file_is_static "$BUSYBOX" || die "$BUSYBOX is not the static busybox (busybox-static)"

# ------------------------------------------------------------------ the kernel
kernel_pkg() {
	if [[ -n ${VM_KERNEL_PKG:-} ]]; then
		printf '%s' "$VM_KERNEL_PKG"
		return
	fi
	apt-cache depends linux-image-amd64 2> /dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9].*-amd64$/ { print $2; exit }'
}

PKG=$(kernel_pkg)
[[ -n $PKG ]] || die "cannot tell which kernel linux-image-amd64 depends on (apt-get update first, or set VM_KERNEL_PKG)"
KROOT=$VMDIR/$PKG
if [[ ! -e $KROOT/.extracted ]]; then
	say "fetching $PKG (apt-get download, extracted under $KROOT; the host's /boot is not touched)"
	rm -rf "$KROOT" "$VMDIR/dl"
	mkdir -p "$VMDIR/dl"
	(cd "$VMDIR/dl" && apt-get download -q -o APT::Sandbox::User=root "$PKG") ||
		die "apt-get download $PKG failed"
	dpkg-deb -x "$VMDIR"/dl/"$PKG"_*.deb "$KROOT" || die "dpkg-deb -x failed"
	rm -rf "$VMDIR/dl"
	touch "$KROOT/.extracted"
fi
KVER=${PKG#linux-image-}
VMLINUZ=$KROOT/boot/vmlinuz-$KVER
MODDIR=$KROOT/lib/modules/$KVER
[[ -r $VMLINUZ && -d $MODDIR ]] || die "$KROOT holds no vmlinuz-$KVER or modules"

# ------------------------------------------------------------------ the initramfs
# Modules in load order: each after the ones it depends on (the depends= field of the
# module's .modinfo section; no depmod or modinfo needed on the host).
declare -A MODPATH=() LOADED=()
while IFS= read -r -d '' f; do
	b=${f##*/}
	b=${b%.ko}
	MODPATH[$b]=$f
done < <(find "$MODDIR/kernel" -name '*.ko' -print0)
ORDER=()
mod_deps() { grep -a -o 'depends=[a-z0-9_,-]*' "$1" | head -n 1 | sed 's/^depends=//; s/,/ /g'; }
add_mod() {
	local m=${1//-/_} d
	[[ -n ${LOADED[$m]:-} ]] && return 0
	[[ -n ${MODPATH[$m]:-} ]] || die "kernel module $m not found under $MODDIR"
	LOADED[$m]=1
	for d in $(mod_deps "${MODPATH[$m]}"); do add_mod "$d"; done
	ORDER+=("$m")
}
# tun: /dev/net/tun for slirp4netns (network jobs and sessions), as on a real host
for m in virtio_pci 9pnet_virtio 9p overlay tun; do add_mod "$m"; done

INITRD=$VMDIR/initrd-$KVER.cpio
STAGE=$(mktemp -d "$VMDIR/initrd.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,mod,proc,sys,dev,lower,upper,newroot}
cp "$BUSYBOX" "$STAGE/bin/busybox"
install -m 0755 "$REPO/tests/vm/initramfs-init.sh" "$STAGE/init"
for m in "${ORDER[@]}"; do cp "${MODPATH[$m]}" "$STAGE/mod/$m.ko"; done
printf '%s\n' "${ORDER[@]}" > "$STAGE/mod/order"
(cd "$STAGE" && find . -mindepth 1 | "$BUSYBOX" cpio -o -H newc -R 0:0 > "$INITRD" 2> /dev/null) ||
	die "cpio of the initramfs failed"

# ------------------------------------------------------------------ boot
# boot MODE OUTDIR [SUITES [TAG]]: one VM run; its exit status is the guest's, or 1 (no
# result). SUITES (FULL=1): the suites this guest runs (default $SANDBOX_SUITES: all);
# TAG: printed before each console line (guests side by side).
boot() {
	local mode=$1 out=$2 suites=${3-${SANDBOX_SUITES:-}} tag=${4:-} console qpid tpid qrc=0 t0 t1 rc append
	rm -rf "$out"
	mkdir -p "$out"
	console=$out/console.log
	: > "$console"
	append="console=ttyS0 panic=-1 quiet loglevel=4 systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all"
	append+=" sandbox.guest=$REPO/tests/vm/guest.sh sandbox.repo=$REPO sandbox.mode=$mode sandbox.bench=${VM_BENCH:-0}"
	# FULL=1: the suites' time scale in the guest (tests/integration/lib.sh), and the
	# suites to run when SANDBOX_SUITES names them (comma-separated on the command line)
	append+=" sandbox.timescale=$VM_TIME_SCALE"
	[[ -n ${suites// /} ]] && append+=" sandbox.suites=$(tr -s ' ' ',' <<< "${suites# }" | sed 's/^,//; s/,$//')"
	say "${tag}booting $PKG (accel $ACCEL, ${MEM} MiB, $SMP CPUs, mode $mode, timeout ${TIMEOUT}s; console $console)"
	t0=$(date +%s)
	timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 \
		-accel "$ACCEL" -cpu max -m "$MEM" -smp "$SMP" \
		-nodefaults -no-reboot -display none -monitor none \
		-serial "file:$console" \
		-kernel "$VMLINUZ" -initrd "$INITRD" -append "$append" \
		-fsdev local,id=hostroot,path=/,security_model=passthrough,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev local,id=vmout,path="$out",security_model=passthrough,multidevs=remap \
		-device virtio-9p-pci,fsdev=vmout,mount_tag=vmout &
	qpid=$!
	echo "$qpid" > "$out/timeout.pid"
	if [[ -n $tag ]]; then
		tail -n +1 -f --pid="$qpid" "$console" > >(sed -u "s/^/$tag/" >&2) &
	else
		tail -n +1 -f --pid="$qpid" "$console" >&2 &
	fi
	tpid=$!
	wait "$qpid" || qrc=$?
	sleep 0.3
	kill "$tpid" 2> /dev/null || true
	wait "$tpid" 2> /dev/null || true
	t1=$(date +%s)
	((qrc == 124 || qrc == 137)) && say "${tag}the VM ran past ${TIMEOUT}s and was killed"
	if [[ ! -s $out/result ]]; then
		say "${tag}FAIL ($mode): no result from the guest (qemu exit $qrc after $((t1 - t0)) s): the VM did not boot or the guest did not finish; see $console"
		return 1
	fi
	rc=$(cat "$out/result")
	[[ $rc =~ ^[0-9]+$ ]] || { say "${tag}FAIL ($mode): unreadable result '$rc'"; return 1; }
	[[ -s $out/timings ]] && sed "s/^/vm: $tag$mode: /" "$out/timings" >&2
	say "$tag$mode: guest exit status $rc, $((t1 - t0)) s in all (log: $out/guest.log)"
	return "$rc"
}

# targeted (make test-vm): two boots, the v2 set with a shell as PID 1 (bare v2 needs a
# root cgroup nobody turned controllers on in), then systemd as PID 1 (tests/vm/sdset.sh,
# results in $OUT/systemd).
RC=0
if [[ $MODE == full ]] && ((PARALLEL > 1)); then
	# FULL=1 with guests side by side: the suites dealt in turn, part K's results in
	# $OUT/part-K, the parts' exit statuses in $OUT/summary.
	read -r -a LIST <<< "${SANDBOX_SUITES:-$(bash "$REPO/tests/run-integration.sh" --list)}"
	((${#LIST[@]})) || die "no suites to run"
	((PARALLEL > ${#LIST[@]})) && PARALLEL=${#LIST[@]}
	declare -a PART_SUITES=() PIDS=()
	for i in "${!LIST[@]}"; do
		PART_SUITES[i % PARALLEL]+=" ${LIST[i]}"
	done
	rm -rf "$OUT"
	mkdir -p "$OUT"
	T0=$(date +%s)
	# Stopped (^C, TERM): the guests go too (timeout(1) passes the TERM to QEMU).
	stop_parts() {
		local f
		for f in "$OUT"/part-*/timeout.pid; do [[ -s $f ]] && kill -TERM "$(cat "$f")" 2> /dev/null; done
		exit 130
	}
	trap stop_parts INT TERM
	for ((k = 0; k < PARALLEL; k++)); do
		say "part-$((k + 1)):${PART_SUITES[k]}"
		boot full "$OUT/part-$((k + 1))" "${PART_SUITES[k]}" "[part-$((k + 1))] " &
		PIDS+=($!)
	done
	for ((k = 0; k < PARALLEL; k++)); do
		prc=0
		wait "${PIDS[k]}" || prc=$?
		if ((prc != 0 && RC == 0)); then RC=$prc; fi
		printf 'part-%d rc=%d suites:%s\n' "$((k + 1))" "$prc" "${PART_SUITES[k]}" >> "$OUT/summary"
	done
	for ((k = 1; k <= PARALLEL; k++)); do
		grep -h '^integration: \|^[0-9]* passed, [0-9]* failed\|^=== integration suite' "$OUT/part-$k/guest.log" 2> /dev/null |
			sed "s/^/vm: [part-$k] /" >&2
	done
	say "FULL=1: $PARALLEL guests side by side, $(($(date +%s) - T0)) s in all; exit status $RC ($OUT/summary)"
	exit "$RC"
fi
boot "$MODE" "$OUT" || RC=$?
if [[ $MODE == targeted ]]; then
	boot systemd "$OUT/systemd" || RC=$((RC ? RC : $?))
fi
exit "$RC"
