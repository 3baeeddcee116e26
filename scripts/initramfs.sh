#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The initramfs of the arm64 guest (scripts/vm.sh with ARCH=arm64).
#
#   scripts/initramfs.sh [OUTPUT]	(default build/initramfs-arm64.cpio.gz; BASE=6.12:
#					build/6.12/..., scripts/base.sh)
#
# The x86 guest's root is the host's / over 9p; an arm64 guest cannot run
# the host's binaries, so its root is a small initramfs: a static busybox
# and a static bash (Debian's busybox-static:arm64 and bash-static:arm64,
# fetched with apt-get download, unpacked, not installed: busybox-static:arm64
# would replace the host's busybox), the cross glibc the kselftests are
# linked against (libc6-dev-arm64-cross), and /init.  /init mounts the
# project directory read-only over 9p at its host path ($VMTOP, mount tag
# "top") and runs selftests/guest-init.sh stage2 from there, so the guest
# side (guest-init.sh, run-kselftests.sh, the installed kselftests) is the
# same files as on x86, used in place.
#
# The cpio archive is made with the kernel's usr/gen_init_cpio (no root
# needed for /dev/console), a host program: from $KBUILD (default
# build/linux-arm64), else any other kernel build here.  Each run stages
# in a directory of its own and renames the archive into place, so guests
# booting beside each other do not race.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
out=${1:-$BUILD_ROOT/initramfs-arm64.cpio.gz}
kbuild=${KBUILD:-$BUILD_ROOT/linux-arm64}
# (downloads: the same for both bases)
debs=$top/build/arm64-debs
sysroot=/usr/aarch64-linux-gnu
mkdir -p "$BUILD_ROOT"
stage=$(mktemp -d "$BUILD_ROOT/initramfs-arm64.XXXXXX")
trap 'rm -rf "$stage"' EXIT

die() {
	echo "initramfs: $*" >&2
	exit 1
}

[ -d "$sysroot/lib" ] || die "no $sysroot/lib: install libc6-dev-arm64-cross (scripts/deps.sh)"

# --- the static busybox and bash ---------------------------------------------
mkdir -p "$debs"
for pkg in busybox-static bash-static; do
	if ! ls "$debs/${pkg}_"*_arm64.deb >/dev/null 2>&1; then
		dpkg --print-foreign-architectures | grep -qx arm64 ||
			die "dpkg has no arm64 architecture: dpkg --add-architecture arm64 && apt-get update (scripts/deps.sh does it as root)"
		(cd "$debs" && apt-get download "$pkg:arm64" >/dev/null 2>&1) ||
			die "apt-get download $pkg:arm64 failed (apt-get update?)"
	fi
done
mkdir -p "$stage/x"
for deb in "$debs"/busybox-static_*_arm64.deb "$debs"/bash-static_*_arm64.deb; do
	dpkg-deb -x "$deb" "$stage/x"
done
[ -x "$stage/x/bin/busybox" ] && [ -x "$stage/x/bin/bash-static" ] ||
	die "the unpacked packages have no bin/busybox or bin/bash-static"

# --- /init -----------------------------------------------------------------
cat >"$stage/init" <<'EOF'
#!/bin/busybox sh
# PID 1 of the arm64 guest: applets, the project directory, then the same
# stage 2 as the x86 guest (selftests/guest-init.sh).
/bin/busybox mkdir -p /usr/bin /usr/sbin /sbin
/bin/busybox --install -s
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
fail() {
	echo "init: $*" >/dev/kmsg
	sync
	reboot -f
	sleep 60
}
[ -n "${VMTOP:-}" ] || fail "no VMTOP= on the kernel command line"
mkdir -p "$VMTOP"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro top "$VMTOP" ||
	fail "cannot mount the project directory on $VMTOP"
umount /proc
[ -x "$VMTOP/selftests/guest-init.sh" ] || fail "no $VMTOP/selftests/guest-init.sh"
exec "$VMTOP/selftests/guest-init.sh" stage2
EOF

# busybox timeout has no --foreground, which kselftest's runner passes.
cat >"$stage/timeout" <<'EOF'
#!/bin/sh
[ "${1:-}" = --foreground ] && shift
exec busybox timeout "$@"
EOF

# --- the archive -----------------------------------------------------------
gen=
for d in "$kbuild" "$BUILD_ROOT/linux-arm64" "$BUILD_ROOT/linux"; do
	[ -x "$d/usr/gen_init_cpio" ] && { gen=$d/usr/gen_init_cpio; break; }
done
[ -n "$gen" ] || die "no usr/gen_init_cpio in $kbuild: build the arm64 kernel first (ARCH=arm64 make kernel)"

# The shared libraries the kselftests (and what they run) may need.
libs=(ld-linux-aarch64.so.1 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1
      libgcc_s.so.1 libresolv.so.2 libnss_files.so.2 libutil.so.1)

list=$stage/list
{
	for d in /dev /proc /sys /tmp /run /root /etc /bin /lib /lib/aarch64-linux-gnu \
		 /usr /usr/bin /usr/sbin /sbin /mnt /var /var/tmp; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "file /init $stage/init 0755 0 0"
	echo "file /bin/busybox $stage/x/bin/busybox 0755 0 0"
	echo "file /bin/bash $stage/x/bin/bash-static 0755 0 0"
	echo "slink /bin/sh /bin/busybox 0777 0 0"
	echo "file /usr/bin/timeout $stage/timeout 0755 0 0"
	for l in "${libs[@]}"; do
		[ -e "$sysroot/lib/$l" ] || continue
		echo "file /lib/aarch64-linux-gnu/$l $(readlink -f "$sysroot/lib/$l") 0755 0 0"
	done
	echo "slink /lib/ld-linux-aarch64.so.1 /lib/aarch64-linux-gnu/ld-linux-aarch64.so.1 0777 0 0"
	printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$stage/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/group"
	echo "file /etc/passwd $stage/passwd 0644 0 0"
	echo "file /etc/group $stage/group 0644 0 0"
} >"$list"

"$gen" "$list" | gzip -1 >"$stage/initramfs.cpio.gz"
mv "$stage/initramfs.cpio.gz" "$out"
echo "initramfs: $out ($(du -k "$out" | cut -f1) KiB)"
