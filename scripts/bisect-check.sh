#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bisect-check: build the kernel at every commit of linux/'s
# base..coarse-stat, oldest first, and stop at the first that does not build.
#
#   scripts/bisect-check.sh [RANGE]        (default base..coarse-stat)
#
# linux/ is not touched: the commits are checked out in a shared clone,
# build/bisect/linux, and built incrementally in build/bisect/build/linux
# (the same relative layout as linux/ and build/linux, so that ccache hits
# the objects 'make kernel' compiled).  Each commit gets the guest kernel's
# config, made afresh by scripts/build-kernel.sh from scripts/*.config (the
# options a commit does not have yet are dropped by olddefconfig), then
# 'make headers' and, once the commit has include/uapi/linux/coarse_stat.h,
# a -Wall -Wextra -Werror compile of it and of linux/prctl.h from usr/include.
# Where a commit has tools/testing/selftests/coarse_stat and coarse_stat for
# the architecture, its programs are built too (any compiler warning fails
# the commit).  ARCH=arm64 does all of
# it for arm64 (cross compilers, build/bisect/build/linux-arm64).
# Only commits are built: uncommitted changes in linux/ are not.
# A build in build/linux ('make kernel') is waited for before each commit.
# Environment: BISECT_NICE (default 10), JOBS (default nproc).
# Logs: build/bisect/logs/N.log.  Last line "N passed, N failed".
# BASE=6.12 (scripts/base.sh): linux-6.12/ in build/6.12/bisect, the clone
# build/6.12/bisect/linux-6.12 built in build/6.12/bisect/build/6.12/linux
# (again the relative layout of linux-6.12/ and build/6.12/linux).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
tree=$(realpath -m "${LINUX:-$base_tree}")
lead=$(realpath -m "${KBUILD:-$BUILD_ROOT/linux}")
range=${1:-base..coarse-stat}
bis=$BUILD_ROOT/bisect
logs=$bis/logs
xmake=()
cc=gcc
if [ "${ARCH:-x86}" = arm64 ]; then
	logs=$bis/logs-arm64
	lead=$(realpath -m "${KBUILD:-$BUILD_ROOT/linux-arm64}")
	xmake=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	cc=aarch64-linux-gnu-gcc
	export ARCH
fi
# The clone and its build directory in $bis as the tree and its build are
# beside each other (linux and build/linux, linux-6.12 and build/6.12/linux):
# the same relative paths for ccache.  A build directory elsewhere:
# build/<its name>.
bsrc=$bis/${tree##*/}
rel=$(realpath -m --relative-to="${tree%/*}" "$lead")
case "$rel" in ../*|/*) rel=build/${lead##*/} ;; esac
bout=$bis/$rel

die() { echo "bisect-check: $*" >&2; exit 1; }

[ -e "$tree/.git" ] || die "no git tree at $tree (run 'make linux$base_make')"
mapfile -t commits < <(git --no-optional-locks -C "$tree" rev-list --reverse "$range") ||
	die "bad range $range"
[ ${#commits[@]} -gt 0 ] || die "no commit in $range"
git --no-optional-locks -C "$tree" diff --quiet HEAD 2>/dev/null ||
	echo "bisect-check: note: $tree has uncommitted changes; only commits are built"

mkdir -p "$bis" "$logs"
exec 9>"$bis/.lock"
flock -n 9 || { echo "bisect-check: waiting for another bisect-check"; flock 9; }

fetch() {
	git -C "$bsrc" fetch -q --force origin '+refs/heads/*:refs/remotes/origin/*' \
		'+refs/tags/*:refs/tags/*' 2>/dev/null
}
# (A clone that lost objects pruned in linux/ is made again.)
[ ! -e "$bsrc/.git" ] || fetch || rm -rf "$bsrc"
if [ ! -e "$bsrc/.git" ]; then
	echo "bisect-check: cloning $tree into $bsrc (shared, no checkout)"
	git clone -q --shared --no-checkout "$tree" "$bsrc" && fetch || die "git clone of $tree failed"
fi

n=${#commits[@]}
pass=0
fail=0
total=$SECONDS
i=0
for sha in "${commits[@]}"; do
	i=$((i + 1))
	subject=$(git -C "$bsrc" log -1 --format=%s "$sha")
	short=$(git -C "$bsrc" rev-parse --short=12 "$sha")
	log=$logs/$i.log
	# Let a running 'make kernel' finish first (this does not keep it
	# from starting while we build; we run niced).
	if [ -e "$lead/.build-kernel.lock" ] && ! flock -n "$lead/.build-kernel.lock" true; then
		echo "bisect-check: waiting for the build in $lead"
		flock "$lead/.build-kernel.lock" true
	fi
	t=$SECONDS
	git -C "$bsrc" checkout -q -f --detach "$sha" || die "checkout of $sha failed"
	# Re-make .config at every commit: the Kconfig options come and go.
	rm -f "$bout/.coarse_stat-config.sum"
	ok=1
	what=
	if ! LINUX=$bsrc KBUILD=$bout ALLOW_MISSING_CONFIG=1 \
		nice -n "${BISECT_NICE:-10}" "$top/scripts/build-kernel.sh" debug >"$log" 2>&1; then
		ok=0
		what="the kernel does not build"
	elif ! nice -n "${BISECT_NICE:-10}" make -s -C "$bsrc" O="$bout" "${xmake[@]}" headers >>"$log" 2>&1; then
		ok=0
		what="'make headers' fails"
	elif [ -f "$bsrc/include/uapi/linux/coarse_stat.h" ]; then
		echo "== UAPI headers" >>"$log"
		if ! printf '#include <linux/coarse_stat.h>\n#include <linux/prctl.h>\n' |
			"$cc" -fsyntax-only -Wall -Wextra -Werror -isystem "$bout/usr/include" -x c - >>"$log" 2>&1; then
			ok=0
			what="include/uapi/linux/coarse_stat.h does not compile from usr/include"
		fi
	fi
	# The kselftests, once they exist and the architecture has coarse_stat.
	karch=x86
	[ "${ARCH:-x86}" != arm64 ] || karch=arm64
	if [ "$ok" = 1 ] && [ -f "$bsrc/tools/testing/selftests/coarse_stat/Makefile" ] &&
		[ -f "$bsrc/arch/$karch/include/asm/coarse_stat.h" ]; then
		echo "== selftests/coarse_stat" >>"$log"
		rm -rf "$bout/kselftest-coarse_stat"
		mkdir -p "$bout/kselftest-coarse_stat"
		if ! nice -n "${BISECT_NICE:-10}" make -s -C "$bsrc/tools/testing/selftests/coarse_stat" \
			"${xmake[@]}" CC="$cc" OUTPUT="$bout/kselftest-coarse_stat" \
			KHDR_INCLUDES="-isystem $bout/usr/include" >"$log.ksft" 2>&1 ||
			grep -q 'warning:' "$log.ksft"; then
			ok=0
			what="the coarse_stat kselftests do not build without warnings"
		fi
		cat "$log.ksft" >>"$log"
	fi
	if [ "$ok" = 1 ]; then
		pass=$((pass + 1))
		printf 'ok %d/%d %s %s (%d s)\n' "$i" "$n" "$short" "$subject" $((SECONDS - t))
		continue
	fi
	fail=$((fail + 1))
	printf 'not ok %d/%d %s %s (%d s)\n' "$i" "$n" "$short" "$subject" $((SECONDS - t))
	grep -E 'error|Error|\*\*\*' "$log" | head -n 20
	echo "bisect-check: patch $i/$n, $short (\"$subject\"): $what; log: $log"
	break
done
echo "bisect-check: $pass of $n commits build ($((SECONDS - total)) s)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
