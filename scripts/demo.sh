#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The 'make run' demo, run inside the guest from the project directory:
# show that the booted kernel has the feature.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kbuild=${KBUILD:-$top/build/linux}

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

# The feature at work: the kselftests print what they measure.  Each line
# "... ms" compares a bucket of the thread page with the wall clock or /proc.
st=${KSFT_INSTALL:-$top/build/kselftest/install}/coarse_stat
if [ -x "$st/t_thread" ]; then
	echo "== a thread's page: spin, sleep, a cross-thread read across a wakeup"
	"$st/t_thread" -t header -t busy_spin -t nanosleep -t cross_thread_wakeup 2>&1 |
		grep -vE '^# +(RUN|OK) ' || exit 1
	echo "== the CPU page against /proc/stat"
	"$st/t_cpu" -t tracks_proc_stat 2>&1 | grep -vE '^# +(RUN|OK) ' || exit 1
else
	echo "(no kselftests in $st: run 'make selftests')"
fi
