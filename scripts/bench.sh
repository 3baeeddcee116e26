#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, inside the guest booted with the kernel without debug options:
# run every coarse_stat kselftest program whose name contains "bench".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${KSFT_INSTALL:-$top/build/kselftest/install}/coarse_stat

echo "bench: $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
found=0
rc=0
for b in "$dir"/*bench*; do
	[ -f "$b" ] && [ -x "$b" ] || continue
	found=1
	echo "== $(basename "$b")"
	(cd "$dir" && "$b") || rc=1
done
[ $found = 1 ] || echo "bench: no benchmarks yet (no $dir/*bench*)"
exit $rc
