#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run an installed kselftest tree and count its test cases (in the guest).
#
#   selftests/run-kselftests.sh [-d INSTALL_DIR] [run_kselftest.sh options]
#   selftests/run-kselftests.sh --parse TAP_FILE
#
# INSTALL_DIR is what scripts/build-selftests.sh installed (default
# $KSFT_INSTALL or $BUILD_ROOT/kselftest/install, build/kselftest/install when
# BUILD_ROOT is unset; scripts/vm.sh passes BUILD_ROOT).  The TAP output goes to stdout
# and to $KSFT_TAP (default /tmp/kselftest.tap).
#
# Counting: every nested "ok N name" / "not ok N name" of a test program
# (kselftest_harness cases, ksft_test_result lines) is one test case; a
# program without nested results counts as one.  A program that fails
# although all its cases passed (crash, timeout, bad exit) counts one more
# failure, so does every program the plan announced that never reported.
# "ok ... # SKIP" counts neither way; skips are listed.  The last line is
# "N passed, N failed"; the exit status is 1 when anything failed or
# nothing ran.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${KSFT_INSTALL:-${BUILD_ROOT:-$top/build}/kselftest/install}

parse() {
	awk '
	function flush_prog(line, name) {
		name = line
		sub(/^(not )?ok [0-9]+ (- )?/, "", name)
		sub(/^selftests: /, "", name)
		progs++
		if (nested > 0) {
			pass += npass
			fail += nfail
			if (line ~ /^not ok/ && nfail == 0) {
				fail++
				failed[++nf] = name " (the program failed after its cases)"
			}
			for (i = 1; i <= ncf; i++)
				failed[++nf] = prog_of(name) ": " nfailed[i]
			for (i = 1; i <= ncs; i++)
				skipped[++ns] = prog_of(name) ": " nskipped[i]
		} else if (line ~ /^ok / && line ~ /# *[Ss][Kk][Ii][Pp]/) {
			skipped[++ns] = name
		} else if (line ~ /^ok /) {
			pass++
		} else {
			fail++
			failed[++nf] = name
		}
		nested = npass = nfail = ncf = ncs = 0
	}
	function prog_of(name) {
		sub(/ #.*/, "", name)
		return name
	}
	/^1\.\.[0-9]+/ { plan += substr($0, 4) + 0; next }
	/^# (not )?ok [0-9]+/ {
		line = substr($0, 3)
		name = line
		sub(/^(not )?ok [0-9]+ (- )?/, "", name)
		nested++
		if (line ~ /^ok / && line ~ /# *[Ss][Kk][Ii][Pp]/)
			nskipped[++ncs] = name
		else if (line ~ /^ok /)
			npass++
		else {
			nfail++
			nfailed[++ncf] = name
		}
		next
	}
	/^(not )?ok [0-9]+/ { flush_prog($0); next }
	END {
		if (plan > progs) {
			fail += plan - progs
			failed[++nf] = (plan - progs) " of " plan " programs never reported"
		}
		if (progs == 0 && plan == 0) {
			fail++
			failed[++nf] = "no test program ran"
		}
		print "kselftest summary: " progs " programs, " pass " cases passed, " fail " failed, " ns + 0 " skipped"
		for (i = 1; i <= nf; i++)
			print "  FAIL " failed[i]
		for (i = 1; i <= ns; i++)
			print "  SKIP " skipped[i]
		print pass " passed, " fail " failed"
		exit fail > 0
	}' "$1"
}

if [ "${1:-}" = --parse ]; then
	[ $# = 2 ] || { echo "usage: $0 --parse TAP_FILE" >&2; exit 2; }
	parse "$2"
	exit
fi
if [ "${1:-}" = -d ]; then
	dir=$2
	shift 2
fi

tap=${KSFT_TAP:-/tmp/kselftest.tap}
if [ ! -x "$dir/run_kselftest.sh" ]; then
	echo "run-kselftests: no kselftest install in $dir (make selftests)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

cd "$dir" || exit 1
./run_kselftest.sh "$@" 2>&1 | tee "$tap"
echo
parse "$tap"
