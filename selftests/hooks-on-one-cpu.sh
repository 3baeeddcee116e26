#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In the race guest (scripts/check.sh, booted with maxcpus=1): allow
# registrations, which patches the hooks' static key in, while one CPU runs,
# then bring the other CPUs online and run COMMAND.
#
#   selftests/hooks-on-one-cpu.sh COMMAND [ARG...]
#
# Under QEMU 7.2's multi-threaded TCG a vCPU can run stale code at a site the
# kernel is patching (scripts/vm.sh): a single enable of the key killed one
# race boot (6.12, "Oops: int3" in the idle task's __schedule()).  With one
# CPU online nothing else runs while the key is patched.  The exit status is
# COMMAND's, or 1 if a step before it failed.
set -uo pipefail

sysctl=/proc/sys/kernel/coarse_stat_thread
if [ "$(cat "$sysctl")" = 0 ]; then
	echo 2 >"$sysctl" || { echo "hooks-on-one-cpu: cannot write $sysctl"; exit 1; }
fi
n=0
for f in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ "$(cat "$f")" = 1 ] && continue
	echo 1 >"$f" || { echo "hooks-on-one-cpu: cannot online ${f%/online}"; exit 1; }
	n=$((n + 1))
done
echo "hooks-on-one-cpu: $sysctl $(cat "$sysctl"), $n CPUs brought online, $(grep -c ^processor /proc/cpuinfo) online"
exec "$@"
