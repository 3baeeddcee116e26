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
