#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and install the kselftests for the guest, out of tree and apart from
# the kernel build (no .config needed, no clash with a running kernel build):
#   make O=build/kselftest headers
#   make -C tools/testing/selftests O=build/kselftest TARGETS=... install
# Result: build/kselftest/install/run_kselftest.sh ($KSFT_INSTALL; $BUILD_ROOT of
# scripts/base.sh for build/: build/6.12/kselftest/... for BASE=6.12).
#
# TARGETS: $KSFT_TARGETS, default coarse_stat; while the tree has no
# tools/testing/selftests/coarse_stat, a small stand-in (size sigaltstack) so
# the harness can be exercised.
#
# ARCH=arm64: cross-build them (aarch64-linux-gnu-gcc, dynamically linked
# against the cross glibc, which scripts/initramfs.sh puts into the guest),
# default output build/kselftest-arm64.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
src=${LINUX:-$base_tree}
out=${KSFT_OUT:-$BUILD_ROOT/kselftest}
xmake=()
if [ "${ARCH:-x86}" = arm64 ]; then
	out=${KSFT_OUT:-$BUILD_ROOT/kselftest-arm64}
	xmake=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
fi
install=${KSFT_INSTALL:-$out/install}
jobs=${JOBS:-$(nproc)}

[ -f "$src/Makefile" ] || { echo "build-selftests: no kernel tree at $src (run 'make linux$base_make')" >&2; exit 1; }
targets=${KSFT_TARGETS:-}
if [ -z "$targets" ]; then
	if [ -f "$src/tools/testing/selftests/coarse_stat/Makefile" ]; then
		targets=coarse_stat
	else
		targets="size sigaltstack"
		echo "build-selftests: no tools/testing/selftests/coarse_stat yet: using the stand-in '$targets'"
	fi
fi

mkdir -p "$out"
make -s -C "$src" O="$out" "${xmake[@]}" headers >/dev/null
rm -rf "$install"
make -s -C "$src/tools/testing/selftests" O="$out" "${xmake[@]}" KSFT_INSTALL_PATH="$install" \
	-j"$jobs" TARGETS="$targets" install >/dev/null
[ -x "$install/run_kselftest.sh" ] || { echo "build-selftests: nothing installed in $install" >&2; exit 1; }
# The benchmark is the project's since v5 (bench/cs_bench.c), installed
# with the tests for the scripts that run it in a guest.
if [ "$targets" = coarse_stat ] && [ ! -x "$install/coarse_stat/cs_bench" ]; then
	cross=
	[ "${ARCH:-x86}" != arm64 ] || cross=aarch64-linux-gnu-
	CROSS_COMPILE=$cross "$top/scripts/build-cs-bench.sh" "$src" \
		"$out/usr/include" "$install/coarse_stat/cs_bench"
fi
# The tests the project keeps outside the series (selftests/extra, since
# v5), installed beside the series' and listed with them; a tree that still
# carries them in its selftests (the 6.12 backport until it carries v5)
# has built its own.
sd=$src/tools/testing/selftests/coarse_stat
if [ "$targets" = coarse_stat ] && [ ! -f "$sd/t_fuzz.c" ]; then
	cross=
	[ "${ARCH:-x86}" != arm64 ] || cross=aarch64-linux-gnu-
	make -s -C "$top/selftests/extra" TREE="$src" UAPI="$out/usr/include" \
		OUT="$install/coarse_stat" CROSS_COMPILE=$cross -j"$jobs" >/dev/null
	for t in $(make -s -C "$top/selftests/extra" TREE=. UAPI=. OUT=. tests); do
		echo "coarse_stat:$t" >>"$install/kselftest-list.txt"
	done
fi
echo "$targets" >"$install/TARGETS"
echo "build-selftests: $targets -> $install ($(wc -l <"$install/kselftest-list.txt") programs)"
