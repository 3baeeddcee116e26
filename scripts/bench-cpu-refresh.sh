#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the CPU page's refresh costs the CPU it runs on, in instructions:
# bench/cs_cpu_refresh.c in QEMU -icount guests of the -O2 bench kernel
# (make bench BENCH_O2=1 builds it) with 2 and with 8 possible CPUs (its
# CONFIG_NR_CPUS), next to a read of /proc/stat in the same boot.  Writes
# Documentation/bench/cpu-refresh.md.
#
# Environment: CPU_REFRESH_KERNEL (build/linux-bench-o2's bzImage),
# CPU_REFRESH_BOOTS per vCPU count (2), CPU_REFRESH_OUT (the results file).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
work=$BUILD_ROOT/cpu-refresh
kernel=${CPU_REFRESH_KERNEL:-$BUILD_ROOT/linux-bench-o2/arch/x86/boot/bzImage}
boots=${CPU_REFRESH_BOOTS:-2}
out=${CPU_REFRESH_OUT:-$top/Documentation/bench/cpu-refresh.md}
[ -f "$kernel" ] || { echo "no kernel at $kernel (make bench BENCH_O2=1 builds it)" >&2; exit 1; }
mkdir -p "$work"
uapi=$(uapi_headers "$work/hdr") || exit 1
gcc -O2 -Wall -static -isystem "$uapi" -o "$work/cs_cpu_refresh" "$top/bench/cs_cpu_refresh.c" || exit 1

rows=
for smp in 2 8; do
	for ((b = 1; b <= boots; b++)); do
		log=$work/smp$smp-$b.txt
		VM_ICOUNT=1 VM_DEBUG=0 VM_SMP=$smp VM_DIR=$work/vm VM_KERNEL=$kernel \
			"$top/scripts/vm.sh" --timeout 900 -- "$work/cs_cpu_refresh" -n 20000000 -r 9 >"$log" 2>&1 ||
			{ echo "boot with $smp vCPUs failed: $log" >&2; exit 1; }
		v() { awk -v k="$1" '$1 == k { print $2 }' "$log"; }
		rows+="| $(v possible_cpus) | $b | $(v refreshes) | $(v ns_per_refresh) | $(v ns_per_proc_stat_read) | $(v refresh_per_proc_stat_read) |"$'\n'
	done
done
{
	echo "# The CPU page's refresh, in instructions"
	echo
	echo "Written by scripts/bench-cpu-refresh.sh ($(date -u '+%Y-%m-%d %H:%M UTC')), kernel"
	echo "${kernel#"$top"/}, QEMU -icount"
	echo "(one instruction a nanosecond: the figures below are instructions)."
	echo
	echo "bench/cs_cpu_refresh.c, pinned to CPU 0 (where the first opener's refresh"
	echo "timer starts), times a loop of fixed length with /proc/coarse_stat_cpu"
	echo "closed and with it open and mapped, 9 times each, in turns; the"
	echo "difference of the medians over the refreshes that ran while it was open"
	echo "(the page's nr_refresh) is what one refresh costs that CPU: the timer"
	echo "interrupt, the work's kworker and its two switches, and the walk of every"
	echo "possible CPU.  No other CPU runs anything for it (t_isolated: no timer"
	echo "interrupt on a nohz_full CPU).  For scale, the same boot times an open,"
	echo "read and close of /proc/stat, which any user may do as often as they like."
	echo
	echo "| possible CPUs | boot | refreshes | instructions per refresh | per /proc/stat read | refresh / read |"
	echo "|---:|---:|---:|---:|---:|---:|"
	printf '%s' "$rows"
	echo
	printf '%s' "$rows" | awk -F'|' '{ r = $7 + 0; if (!n++ || r < lo) lo = r; if (r > hi) hi = r }
		END { printf "At the default period (10 ms) an opener thus costs one housekeeping CPU\n"
		      printf "100 refreshes a second, whatever the number of openers: the instructions\n"
		      printf "of %.0f to %.0f reads of /proc/stat a second (the rows above), and nothing\n", 100 * lo, 100 * hi
		      printf "on the other CPUs.\n" }'
} >"$out"
cat "$out"
