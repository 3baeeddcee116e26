#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test guest booted by scripts/vm.sh.
#
# The root file system is the host's / over 9p, read-only.  Stage 1 puts a
# tmpfs overlay on top of it and makes that the root with pivot_root (not a
# chroot, in which unshare(CLONE_NEWUSER) fails); stage 2 mounts the API
# file systems and the shared directory $VMDIR (read-write, at its host
# path), runs $VMDIR/cmd, writes its exit status to $VMDIR/status and the
# kernel taint to $VMDIR/tainted, and reboots (QEMU exits).  PID 1 must never exit:
# that panics the kernel.
#
# $VMDIR comes from the kernel command line (VMDIR=...).

PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

# The guest kernel has no ACPI, so power-off would only halt: reboot, which
# QEMU (-no-reboot) turns into an exit.
off() {
	sync
	busybox reboot -f
	sleep 60
}

fail() {
	echo "guest-init: $*" >&2
	echo "guest-init: $*" >/dev/kmsg 2>/dev/null
	off
}

if [ "${1:-}" != stage2 ]; then
	# Stage 1: overlay a tmpfs on the read-only 9p root.  /tmp is a
	# directory on the host root; anything mounted there stays out of the
	# overlay's lower layer.
	mount -t proc proc /proc || fail "cannot mount /proc"
	mount -t tmpfs -o mode=0755 ovl /tmp || fail "cannot mount a tmpfs on /tmp"
	mkdir -p /tmp/upper /tmp/work /tmp/root
	if mount -t overlay -o lowerdir=/,upperdir=/tmp/upper,workdir=/tmp/work overlay /tmp/root; then
		umount /proc
		mount --make-rprivate / 2>/dev/null
		cd /tmp/root && mkdir -p .oldroot && pivot_root . .oldroot &&
			exec chroot . "$0" stage2
		echo "guest-init: pivot_root failed: a chroot (no user namespaces)" >&2
		exec chroot /tmp/root "$0" stage2
	fi
	echo "guest-init: no overlay: the root stays read-only (tmpfs on /tmp, /run, /var/tmp, /root)" >&2
	umount /proc
	umount /tmp
	for d in /tmp /run /var/tmp /root; do
		case "$0" in "$d"/*) continue ;; esac
		mount -t tmpfs -o mode=0755 tmp "$d"
	done
	chmod 1777 /tmp /var/tmp
fi

# Stage 2.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
# What udev would add; kselftest's runner writes to /dev/stdout.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 shm /dev/shm
# A fresh /tmp, unless the project itself lives under /tmp (a CI clone, say):
# the overlay root already makes /tmp writable, and a tmpfs would hide it.
case "$0" in
/tmp/*) ;;
*) mount -t tmpfs -o mode=1777 tmp /tmp ;;
esac
mount -t tmpfs -o mode=0755 run /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null

[ -n "${VMDIR:-}" ] || fail "no VMDIR= on the kernel command line"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 vmdir "$VMDIR" ||
	fail "cannot mount the shared directory on $VMDIR"

hostname coarse-stat-vm 2>/dev/null
ip link set lo up 2>/dev/null || busybox ip link set lo up 2>/dev/null
export HOME=/root TERM=${TERM:-linux} TMPDIR=/tmp

# A scratch disk (O_DIRECT, iowait): the raw device, and the ext4 file
# system vm.sh put on it when the kernel has ext4.
if [ -b /dev/vda ]; then
	export COARSE_STAT_SCRATCH_DEV=/dev/vda
	mkdir -p /tmp/scratch
	mount -t ext4 /dev/vda /tmp/scratch 2>/dev/null && export COARSE_STAT_SCRATCH=/tmp/scratch
fi

echo "guest-init: clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" >/dev/kmsg
echo "guest-init: running $(cat "$VMDIR/mode" 2>/dev/null)" >/dev/kmsg
if [ "$(cat "$VMDIR/mode" 2>/dev/null)" = shell ]; then
	. "$VMDIR/cmd"
	echo "guest-init: shell; 'exit' powers off"
	if [ -c /dev/ttyAMA0 ]; then
		# The arm64 guest: PL011 console, busybox setsid (no -w; a
		# background job is no group leader, so it does not fork).
		setsid -c bash -l </dev/ttyAMA0 >/dev/ttyAMA0 2>&1 &
		wait $!
	else
	setsid -c -w bash -l </dev/ttyS0 >/dev/ttyS0 2>&1
	fi
	rc=$?
else
	bash "$VMDIR/cmd" </dev/null
	rc=$?
fi
echo "guest-init: command exited with $rc" >/dev/kmsg
cat /proc/sys/kernel/tainted >"$VMDIR/tainted" 2>/dev/null
echo "$rc" >"$VMDIR/status"
off
