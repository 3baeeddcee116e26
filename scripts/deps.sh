#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make sure the Debian 12 packages the project needs are installed.
#
#   scripts/deps.sh [lint|bench|b4|matrix|man|perf|qemu-plugins|native|bpf]
#
# As root, missing packages are installed with apt-get; otherwise the exact
# apt-get command is printed and the script fails.  The base tree's source
# (scripts/base.sh, scripts/get-base.sh): BASE=7.3 (the default) needs the
# Debian archive keyring for the download of linux-source-7.3, BASE=6.12 the
# package linux-source-6.12.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"

pkgs=(
	# kernel build
	make gcc libc6-dev flex bison bc libelf-dev libssl-dev cpio xz-utils perl git rsync kmod
	# guest: QEMU, busybox for poweroff, ext4 scratch disk, setsid
	qemu-system-x86 busybox-static e2fsprogs util-linux iproute2 coreutils
	# kselftests: t_compat's static ia32 program (gcc -m32 -static, glibc):
	# the i386 glibc and libgcc, not gcc-multilib, which Debian 12 does not
	# let coexist with the arm64 cross compiler (ARCH=arm64, make lint)
	libc6-dev-i386 lib32gcc-12-dev
)
# the base tree: apt-get download and dpkg-deb (7.3), or the package (6.12)
case "$BASE" in
7.3)	pkgs+=(apt dpkg debian-archive-keyring) ;;
6.12)	pkgs+=(linux-source-6.12) ;;
esac
# Optional but fast: a rebuild of an unchanged file is a cache hit.
pkgs+=(ccache)
# make check's consumers (make consumers): a PostgreSQL 15 server and its
# extension build files for consumers/pg_coarse_stat, python3 for cstime's
# checks.
[ "$BASE" != 7.3 ] || pkgs+=(postgresql-15 postgresql-server-dev-15 python3)
# ARCH=arm64: the cross compiler and glibc, QEMU for arm64.  The guest's
# busybox-static:arm64 and bash-static:arm64 are downloaded, not installed
# (scripts/initramfs.sh): that needs dpkg's arm64 architecture.
if [ "${ARCH:-x86}" = arm64 ]; then
	pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm)
	if ! dpkg --print-foreign-architectures 2>/dev/null | grep -qx arm64; then
		if [ "$(id -u)" = 0 ]; then
			echo "deps: dpkg --add-architecture arm64 (for apt-get download busybox-static:arm64)"
			dpkg --add-architecture arm64 && apt-get update -q >/dev/null
		else
			echo "deps: run: sudo dpkg --add-architecture arm64 && sudo apt-get update" >&2
			exit 1
		fi
	fi
fi
if [ "${1:-}" = lint ]; then
	pkgs+=(shellcheck sparse codespell python3-ply python3-git python3-docutils)
	# sparse and W=1 on the arm64 objects of the series
	pkgs+=(gcc-aarch64-linux-gnu)
	# make htmldocs (Documentation/sphinx/requirements.txt: Sphinx, alabaster, pyyaml)
	pkgs+=(python3-sphinx python3-alabaster python3-yaml)
	# the man pages' checks (scripts/man.sh, as make man)
	pkgs+=(man-db mandoc groff-base)
fi
# make b4-check
if [ "${1:-}" = b4 ]; then
	pkgs+=(b4 git-filter-repo)
fi
# make build-matrix: the cross compilers of the 0-day-like matrix, pahole
# for DEBUG_INFO_BTF (SCHED_CLASS_EXT).
if [ "${1:-}" = matrix ]; then
	pkgs+=(gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu gcc-powerpc64le-linux-gnu dwarves)
fi
# make man, make man-series (scripts/man.sh): render, lint, git am; the
# man-pages .debs are downloaded with apt-get and unpacked with dpkg-deb.
if [ "${1:-}" = man ]; then
	pkgs+=(man-db mandoc groff-base apt dpkg debian-archive-keyring)
fi
# make bench: the chart of the results; pahole for the -O2 kernels'
# DEBUG_INFO_BTF (scripts/o2.config, as distributions build: without it the
# option does not stick and no -O2 kernel is built).
if [ "${1:-}" = bench ]; then
	pkgs+=(gnuplot-nox dwarves)
fi
# make bench's perf bench rows: perf from the tree (scripts/build-perf.sh),
# every optional library off but libelf (and zlib, which it needs).
if [ "${1:-}" = perf ]; then
	pkgs+=(flex bison libelf-dev zlib1g-dev binutils)
fi
# make bench-cache (scripts/qemu-plugins.sh): QEMU's TCG plugins built
# from Debian's qemu source package (apt-get source, dpkg-source) against
# glib; nm (binutils) for the attribution to functions.
if [ "${1:-}" = qemu-plugins ]; then
	pkgs+=(libglib2.0-dev pkg-config dpkg-dev apt debian-archive-keyring binutils xz-utils)
fi
# make bench-native (scripts/bench-native.sh): gcc for the ping-pong driver
# and the shim, taskset; perf is the machine's own (or PERF=...).
if [ "${1:-}" = native ]; then
	pkgs+=(gcc libc6-dev util-linux)
fi
# make bpf, make bench-bpf: the BPF versions of the thread page (bench/bpf/):
# clang for -target bpf (clang-22 for the __uptr version's store-release),
# and what libbpf and bpftool, built from the kernel tree, need.
if [ "${1:-}" = bpf ]; then
	pkgs+=(clang clang-22 llvm-22 libelf-dev zlib1g-dev)
fi

missing=()
for p in "${pkgs[@]}"; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
		missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0

if ! command -v dpkg-query >/dev/null; then
	echo "deps: not a Debian system; install the equivalent of: ${missing[*]}" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages; run:" >&2
	echo "  sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q "${missing[@]}" >/dev/null ||
	{ apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; } ||
	{ echo "deps: apt-get install ${missing[*]} failed" >&2; exit 1; }
