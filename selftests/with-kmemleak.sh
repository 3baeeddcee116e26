#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In the guest of a kernel with CONFIG_DEBUG_KMEMLEAK (make check-kasan): run
# COMMAND with a kmemleak baseline before and a scan after.
#
#   selftests/with-kmemleak.sh COMMAND [ARG...]
#
# The automatic scans stop (their reports would race with COMMAND's) and the
# suspects from before COMMAND (boot) are cleared; after it, two scans some
# seconds apart (objects younger than 5 s are not reported, and RCU and
# deferred frees need time).  Every suspect left is printed.  The last line
# is "kmemleak: no leaks" or "kmemleak: N suspected leaks"; the exit status
# is COMMAND's, or 1 if it succeeded and there are leaks (or no kmemleak).
set -uo pipefail

kl=/sys/kernel/debug/kmemleak

[ -e "$kl" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
if [ ! -w "$kl" ]; then
	"$@"
	rc=$?
	echo "kmemleak: no $kl (kernel without CONFIG_DEBUG_KMEMLEAK?)"
	exit $((rc ? rc : 1))
fi
echo scan=off >"$kl"
echo scan >"$kl"
echo clear >"$kl"

"$@"
rc=$?

sleep 6
echo scan >"$kl"
sleep 6
echo scan >"$kl"
report=$(cat "$kl")
if [ -n "$report" ]; then
	echo "$report"
	n=$(grep -c 'unreferenced object' <<<"$report")
	echo "kmemleak: $n suspected leaks"
	[ "$rc" = 0 ] && rc=1
else
	echo "kmemleak: no leaks"
fi
exit "$rc"
