#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The 'make run' demo, run inside the guest from the project directory:
# show that the booted kernel has the feature.  scripts/vm.sh passes BASE and
# BUILD_ROOT (build/ or build/6.12/, scripts/base.sh), KBUILD when set.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
kbuild=${KBUILD:-$BUILD_ROOT/linux}
ksft=${KSFT_INSTALL:-$BUILD_ROOT/kselftest/install}
# The arm64 guest (ARCH=arm64 make run): its kernel build and kselftests.
if [ "$(uname -m)" = aarch64 ]; then
	kbuild=${KBUILD:-$BUILD_ROOT/linux-arm64}
	ksft=${KSFT_INSTALL:-$BUILD_ROOT/kselftest-arm64/install}
fi

echo "== kernel"
uname -a
echo "== CONFIG_COARSE_STAT in $kbuild/.config"
grep COARSE_STAT "$kbuild/.config" || echo "(not set: this kernel was built without the feature)"
echo "== /proc/sys/kernel/coarse_stat_period_us"
if [ -e /proc/sys/kernel/coarse_stat_period_us ]; then
	cat /proc/sys/kernel/coarse_stat_period_us
else
	echo "(missing: the feature is not in this kernel yet)"
fi
echo "== clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"

# The feature at work, as a user sees it: csfcat and the eventloop sample
# (built with the kselftests from tools/coarse_stat and samples/coarse_stat),
# then a few kselftests, which print what they compare against /proc.
st=$ksft/coarse_stat
if [ ! -x "$st/csfcat" ]; then
	echo "(no csfcat in $st: run 'make selftests')"
	exit 1
fi
# Nobody may register by default (v5): the administrator allows it, once;
# the first non-zero write patches the scheduler's hooks in for the boot.
if [ -e /proc/sys/kernel/coarse_stat_thread ]; then
	echo "== kernel.coarse_stat_thread: $(cat /proc/sys/kernel/coarse_stat_thread) (the default); as the administrator: 2, everyone may register"
	echo 2 >/proc/sys/kernel/coarse_stat_thread || exit 1
fi
echo "== csfcat self 100: sleep 50 ms, spin 50 ms, where the wall time went (vDSO, no syscall)"
"$st/csfcat" self 100 || exit 1
echo "== csfcat cpu (the CPU page in /proc/stat format), then /proc/stat itself"
"$st/csfcat" cpu | head -n 4 || exit 1
head -n 3 /proc/stat
echo "== eventloop: snapshots before every operation, reports only the slow ones"
"$st/eventloop" || exit 1
echo "== a thread's page against the wall clock and /proc (kselftests)"
"$st/t_thread" -t busy_spin -t nanosleep -t cross_thread_wakeup 2>&1 |
	grep -vE '^# +(RUN|OK) ' || exit 1
echo "== the vDSO: versioned symbols, no system call in 100000 snapshots"
"$st/t_vdso" -t symbols_versioned -t no_syscall 2>&1 | grep -vE '^# +(RUN|OK) ' || exit 1
