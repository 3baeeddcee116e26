# shellcheck shell=bash disable=SC2034,SC2154
# SPDX-License-Identifier: GPL-2.0
#
# The base the series is on, sourced by the scripts once $top is set:
#
#   BASE=7.3 (default)  series patches/          tree linux/       outputs build/
#   BASE=6.12           series backports/6.12/   tree linux-6.12/  outputs build/6.12/
#
# Sets base_tree and base_patches (the default LINUX and PATCHES of the
# base: the scripts still take LINUX= and PATCHES= from the environment),
# and BUILD_ROOT, the directory every output goes to (kernel builds,
# kselftests, VM directories, lint, b4, bisect, bench), unless the
# environment sets it.  BASE and BUILD_ROOT are exported, so the scripts a
# script runs agree; the Makefile sets the same.  Only the QEMU probes
# (build/vm/accel, build/vm/tsc_khz) and the downloads (build/apt,
# build/arm64-debs) are shared by the bases.

BASE=${BASE:-7.3}
case "$BASE" in
7.3)
	base_tree=$top/linux
	base_patches=$top/patches
	base_build=$top/build ;;
6.12)
	base_tree=$top/linux-6.12
	base_patches=$top/backports/6.12
	base_build=$top/build/6.12 ;;
*)
	echo "${0##*/}: BASE=$BASE: the series has two bases, 7.3 (patches/, the default) and 6.12 (backports/6.12/)" >&2
	exit 2 ;;
esac
BUILD_ROOT=${BUILD_ROOT:-$base_build}
# make's hint for the messages: "make linux" or "make linux BASE=6.12".
base_make=
[ "$BASE" = 7.3 ] || base_make=" BASE=$BASE"
export BASE BUILD_ROOT

# uapi_headers OUT: the series' UAPI headers, installed from $LINUX (default
# the base's tree) into OUT (make headers: quick when up to date); prints
# OUT/usr/include, for -isystem.  What builds against them gets every UAPI
# name from the series itself, never from a copy.
uapi_headers() {
	local tree=${LINUX:-$base_tree}

	[ -f "$tree/Makefile" ] || { echo "${0##*/}: no kernel tree at $tree (make linux$base_make)" >&2; return 1; }
	nice -n "${BENCH_NICE:-19}" make -s -C "$tree" O="$1" headers >/dev/null && echo "$1/usr/include"
}
