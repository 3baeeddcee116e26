#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Overhead of pg_coarse_stat on pgbench -S (select-only: one short
# top-level SELECT per transaction, simple query protocol, one client), in
# one boot of the coarse_stat kernel, alternating the states round by round:
#
#   off		shared_preload_libraries = ''
#   none	pg_coarse_stat loaded, pg_coarse_stat.track = none (the hooks
#		only, no snapshot)
#   top		pg_coarse_stat loaded, track = top (the default: two snapshots
#		and a shared hash update per statement), log_min_duration = -1
#
# Under VM_ICOUNT=1 (the default here) the guest clock advances one ns per
# guest instruction, so pgbench's latency is the instructions the guest
# executes per transaction (client, backend and kernel; idle time is
# skipped), the same to a percent whatever the host's load.  BENCH_ICOUNT=0
# runs on the wall clock instead (plain TCG: a second opinion, noisier).
# A benchmark: it prints, it does not assert.
#
#   consumers/pg_coarse_stat/bench.sh		boot, run, print the table
#   consumers/pg_coarse_stat/bench.sh --guest	(in the guest, as root)
#
# ns/tx is 1e9 / pgbench's tps (without the connection time).  One vCPU by
# default (BENCH_SMP): client, backend and kernel then run one after the
# other and the instruction count per transaction is steadier.
#
# Environment: PGCS_BENCH_TX (transactions per run, 6000), PGCS_BENCH_ROUNDS
# (alternations, 5), BENCH_ICOUNT (1), BENCH_SMP (1), BENCH_NICE (10).  The host runs
# "make -C consumers/pg_coarse_stat install" first.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

if [ "${1:-}" = --guest ]; then
	# shellcheck source=consumers/pg_coarse_stat/pglib.sh
	. "$here/pglib.sh"
	tx=${PGCS_BENCH_TX:-6000}
	rounds=${PGCS_BENCH_ROUNDS:-5}
	echo 2 >/proc/sys/kernel/coarse_stat_thread
	cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
	for _ in $(seq 100); do
		[ "$(cat "$cs")" = tsc-early ] || break
		sleep 0.1
	done
	echo "# kernel $(uname -r), $(nproc) CPUs, clocksource $(cat "$cs"), $tx transactions per run"
	pgcs_init /tmp/pgcs-bench "fsync = off" "synchronous_commit = off" \
		"autovacuum = off" "max_parallel_workers_per_gather = 0" ||
		exit 1
	pgcs_start || exit 1
	pgcs_as_pg "$PGCS_BIN/pgbench" -h "$PGCS_SOCK" -p "$PGCS_PORT" -i -q \
		-s 1 postgres >/dev/null 2>&1 || exit 1
	pgcs_psql bench -c "CREATE EXTENSION pg_coarse_stat" || exit 1
	pgcs_stop
	printf '%-6s %-5s %10s %12s\n' state round tps ns/tx
	for r in $(seq "$rounds"); do
		for st in off none top; do
			case $st in
			off) pgcs_conf "shared_preload_libraries = ''" ;;
			none) pgcs_conf "shared_preload_libraries = 'pg_coarse_stat'" \
					"pg_coarse_stat.track = none" ;;
			top) pgcs_conf "shared_preload_libraries = 'pg_coarse_stat'" \
					"pg_coarse_stat.track = top" ;;
			esac
			pgcs_start || exit 1
			# warm-up: caches, the backend's page mapped
			pgcs_as_pg "$PGCS_BIN/pgbench" -h "$PGCS_SOCK" \
				-p "$PGCS_PORT" -n -S -c 1 -t 500 postgres \
				>/dev/null 2>&1
			out=$(pgcs_as_pg "$PGCS_BIN/pgbench" -h "$PGCS_SOCK" \
				-p "$PGCS_PORT" -n -S -c 1 -t "$tx" postgres 2>&1)
			tps=$(awk '/^tps = / { print $3; exit }' <<<"$out")
			if [ "$st" = top ]; then
				calls=$(pgcs_psql bench -c "SELECT sum(calls) FROM pg_coarse_stat()")
				echo "# top: pg_coarse_stat counted $calls statements (warm-up and run)"
			fi
			pgcs_stop
			printf '%-6s %-5s %10.1f %12.0f\n' "$st" "$r" "$tps" \
				"$(awk -v t="$tps" 'BEGIN { print (t > 0 ? 1e9 / t : 0) }')"
		done
	done | tee /tmp/pgcs-bench/table
	awk '$1 ~ /^(off|none|top)$/ { v[$1] = v[$1] " " $4 }
	function stats(s,    a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		lo = a[1]; hi = a[n]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		off = stats(v["off"]); offlo = lo; offhi = hi
		none = stats(v["none"]); nonelo = lo; nonehi = hi
		tp = stats(v["top"]); toplo = lo; tophi = hi
		printf "ns/tx median [min, max]: off %.0f [%.0f, %.0f], none %.0f [%.0f, %.0f], top %.0f [%.0f, %.0f]\n",
			off, offlo, offhi, none, nonelo, nonehi, tp, toplo, tophi
		printf "ratio of medians: top/off %.4f (%+.2f%%), none/off %.4f (%+.2f%%)\n",
			tp / off, (tp / off - 1) * 100, none / off, (none / off - 1) * 100
		printf "extra per transaction: top %+.0f ns, none %+.0f ns\n", tp - off, none - off
	}' /tmp/pgcs-bench/table
	exit 0
fi

icount=${BENCH_ICOUNT:-1}
mode=wall
[ "$icount" = 1 ] && mode="icount (guest ns = guest instructions)"
echo "pg_coarse_stat pgbench -S overhead, $mode, ${BENCH_SMP:-1} vCPU(s)"
VM_ICOUNT=$([ "$icount" = 1 ] && echo 1 || echo 0) VM_DEBUG=0 VM_SCRATCH_MB=0 \
	VM_SMP=${BENCH_SMP:-1} \
	VM_DIR=${VM_DIR:-$top/build/vm-pgbench} \
	nice -n "${BENCH_NICE:-10}" "$top/scripts/vm.sh" -- "$here/bench.sh" --guest
