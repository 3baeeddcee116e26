#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pg_coarse_stat against a real PostgreSQL 15 server on the coarse_stat
# kernel.  On the host first (as root): make -C consumers/pg_coarse_stat
# install; then:
#
#   VM_SCRATCH_MB=1024 VM_MEM=2G scripts/vm.sh -- consumers/pg_coarse_stat/guest-test.sh
#
# Runs as root in the guest: initdb on the scratch disk ($COARSE_STAT_SCRATCH,
# ext4) as postgres, pg_ctl start, psql over a Unix socket.  A guest kernel
# without ext4 leaves the disk unmounted: the cluster is then in /tmp and
# the cold-read case reads the raw scratch device instead of a table.  Every statement
# is logged (pg_coarse_stat.log_min_duration = 0, and the server's own
# log_min_duration_statement = 0 as an independent wall clock); each psql
# session has its own application_name, which log_line_prefix prints.  The
# buckets are checked against the backend's own /proc/self/schedstat and
# /proc/self/stat (delayacct_blkio_ticks), read with pg_read_file() in the
# same session around the statement, and against the server's durations.
#
# TAP output.  Exit status 0 only if every test passed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=consumers/pg_coarse_stat/pglib.sh
. "$here/pglib.sh"

# shellcheck source=scripts/tap.sh
. "$here/../../scripts/tap.sh"

finish() {
	[ -n "${PGCS_DATA:-}" ] && pgcs_stop 2>/dev/null
	echo 2 >/proc/sys/kernel/coarse_stat_thread 2>/dev/null
	tap_totals
	exit
}

# cond AWK_EXPR: 0 if the expression is true.
cond() {
	awk "BEGIN { exit !($1) }"
	echo $?
}

# pgcs_lines [APP]: one line per pg_coarse_stat log line (of APP's sessions):
# queryid wall cpu runq sleep dsleep iowait (us) preempt block migrate
# minflt majflt read_bytes write_bytes nested STATEMENT...
pgcs_lines() {
	awk -v app="${1:-}" '
	function us(x) { sub(/ms$/, "", x); sub(/\./, "", x); return x + 0 }
	function flush() { if (pending) print cur " " nested " -"; pending = 0 }
	/ LOG:  pg_coarse_stat: .*queryid / {
		flush()
		if (app != "" && $2 != app)
			next
		nested = 0
		for (i = 1; i <= NF; i++) {
			if ($i == "nested") nested = 1
			else if ($i == "queryid") q = $(i + 1)
			else if ($i == "wall") w = us($(i + 1))
			else if ($i == "cpu") c = us($(i + 1))
			else if ($i == "runq") r = us($(i + 1))
			else if ($i == "sleep") s = us($(i + 1))
			else if ($i == "dsleep") d = us($(i + 1))
			else if ($i == "iowait") io = us($(i + 1))
			else if ($i == "preempt") p = $(i + 1)
			else if ($i == "block") b = $(i + 1)
			else if ($i == "migrate") m = $(i + 1)
			else if ($i == "flt") { split($(i + 1), f, "/"); mi = f[1]; ma = f[2] }
			else if ($i == "io") {
				rb = $(i + 1); sub(/^r/, "", rb); sub(/B$/, "", rb)
				wb = $(i + 2); sub(/^w/, "", wb); sub(/B$/, "", wb)
			}
		}
		cur = q " " w " " c " " r " " s " " d " " io " " p " " b " " m " " mi " " ma " " rb " " wb
		pid = $1
		pending = 1
		next
	}
	pending && $1 == pid && / STATEMENT:  / {
		st = $0
		sub(/^.* STATEMENT:  /, "", st)
		print cur " " nested " " st
		pending = 0
	}
	END { flush() }' "$PGCS_LOG"
}

# line APP TAG: the (first top-level) pg_coarse_stat line of /*TAG*/.
line() {
	pgcs_lines "$1" | awk -v t="/*$2*/" '$15 == 0 && index($0, t) { print; exit }'
}

# pgdur APP TAG: the server's own duration of /*TAG*/, in us.
pgdur() {
	grep -F " $1 LOG:  duration: " "$PGCS_LOG" | grep -F "/*$2*/" |
		awk '{ for (i = 1; i <= NF; i++) if ($i == "duration:") { printf "%d\n", $(i + 1) * 1000; exit } }'
}

# fields LINE: set wall cpu runq slp dslp iow pre blk mig minf majf rby wby.
fields() {
	# shellcheck disable=SC2034
	read -r _ wall cpu runq slp dslp iow pre blk mig minf majf rby wby _ <<<"$1"
}

# sql APP SQL...: one psql session, one -c per argument.
sql() {
	local app=$1 a args=()
	shift
	for a in "$@"; do
		args+=(-c "$a")
	done
	pgcs_psql "$app" "${args[@]}"
}

echo 2 >/proc/sys/kernel/coarse_stat_thread
[ -w /proc/sys/kernel/task_delayacct ] && echo 1 >/proc/sys/kernel/task_delayacct

# The cold-read test scans a ~300 MB table on the ext4 scratch disk; a
# kernel without ext4 (vm.sh then leaves the disk unmounted) gets the
# cluster in /tmp and the test reads 256 MB of the raw scratch device with
# pg_read_binary_file() instead: the same block I/O, without a table.
scratch=${COARSE_STAT_SCRATCH:-}
dev=${COARSE_STAT_SCRATCH_DEV:-}
if [ -n "$scratch" ] && mountpoint -q "$scratch"; then
	io_mode=table
	pgdir=$scratch/pgcs
elif [ -b "$dev" ]; then
	io_mode=device
	pgdir=/tmp/pgcs
	echo "# no ext4 scratch file system: cluster in /tmp, cold reads from $dev"
else
	tap_case "scratch disk" 1 "no scratch disk (COARSE_STAT_SCRATCH='$scratch', COARSE_STAT_SCRATCH_DEV='$dev'): run with VM_SCRATCH_MB=1024"
	finish
fi
if [ ! -f "$("$PGCS_BIN"/pg_config --pkglibdir 2>/dev/null || echo /usr/lib/postgresql/15/lib)/pg_coarse_stat.so" ]; then
	tap_case "extension installed" 1 "pg_coarse_stat.so not installed: run make -C consumers/pg_coarse_stat install on the host"
	finish
fi

pgcs_init "$pgdir" \
	"pg_coarse_stat.log_min_duration = 0" \
	"log_min_duration_statement = 0" \
	"max_parallel_workers_per_gather = 0" \
	"wal_level = minimal" "max_wal_senders = 0" \
	"fsync = off" "synchronous_commit = off" \
	"autovacuum = off" || {
	tap_case "initdb" 1 "initdb failed"
	finish
}
pgcs_start
rc=$?
tap_case "server starts with pg_coarse_stat preloaded" "$rc" "pg_ctl start: status $rc"
[ "$rc" = 0 ] || finish

# --- loaded, enabled, the postmaster has no page --------------------------
pm=$(head -1 "$PGCS_DATA/postmaster.pid")
sql t_setup "CREATE EXTENSION pg_coarse_stat" >/dev/null
info=$(sql t_info "SELECT enabled || ' ' || status FROM pg_coarse_stat_info()")
warn=$(grep -c 'WARNING:  pg_coarse_stat' "$PGCS_LOG")
pm_maps=$(grep -cF '[coarse_stat]' "/proc/$pm/maps")
be_maps=$(sql t_maps "SELECT 1" \
	"SELECT count(*) FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\n') l WHERE l LIKE '%[coarse_stat]%'" | tail -1)
tap_case "enabled, no warning; postmaster maps no page, a backend one" \
	"$([ "$info" = "true enabled" ] && [ "$warn" = 0 ] && [ "$pm_maps" = 0 ] && [ "$be_maps" = 1 ] && echo 0 || echo 1)" \
	"info '$info', warnings $warn, postmaster $pm coarse_stat mappings $pm_maps, backend mappings $be_maps"

# --- tables: big (I/O test, ~300 MB), mid (parallel), t (row lock) -------
t0=$(date +%s)
if [ "$io_mode" = table ]; then
	sql t_setup "CREATE TABLE big AS SELECT i, repeat('x', 900) AS pad FROM generate_series(1, 220000) i" \
		"VACUUM (FREEZE, ANALYZE) big" >/dev/null
	bigsize=$(sql t_setup "SELECT pg_relation_size('big')")
	readsql="SELECT count(*) FROM big"
else
	bigsize=67108864
	readsql="SELECT length(pg_read_binary_file('$dev', 0, $bigsize))"
	chmod o+r "$dev"
fi
sql t_setup \
	"CREATE TABLE mid AS SELECT i, repeat('y', 200) AS pad FROM generate_series(1, 100000) i" \
	"CREATE TABLE t (id int PRIMARY KEY, v int)" \
	"INSERT INTO t VALUES (1, 0)" \
	"CREATE FUNCTION pgcs_nest() RETURNS bigint LANGUAGE plpgsql AS \$\$ BEGIN PERFORM pg_sleep(0.05) FROM pg_class LIMIT 1; RETURN (SELECT count(*) FROM pg_class); END \$\$" \
	"VACUUM (FREEZE, ANALYZE) mid" "CHECKPOINT" >/dev/null
echo "# setup: $io_mode, cold read of $bigsize bytes: $readsql; $(($(date +%s) - t0)) s"

# --- a CPU-bound query is on CPU ------------------------------------------
# The backend's sum_exec_runtime (/proc/self/schedstat) and the system's
# irq + softirq time (/proc/stat, 10 ms ticks), read in the same session
# around the statement: with IRQ_TIME_ACCOUNTING sum_exec leaves out the
# interrupts taken while the backend ran, which the cpu bucket (wall time
# on CPU) includes.
rd="SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1) || ' ' || (SELECT a[7]::bigint + a[8]::bigint FROM regexp_split_to_array(split_part(pg_read_file('/proc/stat'), E'\\n', 1), ' +') a)"
out=$(sql t_cpu "$rd" \
	"/*t_cpu*/ SELECT sum((i * i) % 7) FROM generate_series(1::bigint, 400000) i" \
	"$rd")
read -r s0 i0 <<<"$(sed -n 1p <<<"$out")"
read -r s1 i1 <<<"$(sed -n 3p <<<"$out")"
sched=$(((s1 - s0) / 1000))
irq=$(((i1 - i0) * 10000))
l=$(line t_cpu t_cpu)
fields "$l"
dur=$(pgdur t_cpu t_cpu)
tap_case "CPU-bound query: cpu >= 0.9 (wall - runq), 0.8 schedstat <= cpu <= schedstat + irq time" \
	"$([ -n "$l" ] && cond "$cpu >= 0.9 * ($wall - $runq) && $cpu >= 0.8 * $sched && $cpu <= $sched + $irq + 20000 && $wall <= $dur + 1000 && $wall >= 0.8 * $dur" || echo 1)" \
	"wall ${wall:-?} cpu ${cpu:-?} runq ${runq:-?} sleep ${slp:-?} us; around it: schedstat sum_exec delta $sched us, system irq+softirq $irq us; server duration $dur us"

# --- pg_sleep(0.2) is sleep ------------------------------------------------
sql t_sleep "/*t_sleep*/ SELECT pg_sleep(0.2)" >/dev/null
l=$(line t_sleep t_sleep)
fields "$l"
dur=$(pgdur t_sleep t_sleep)
tap_case "pg_sleep(0.2): wall >= 200 ms, sleep >= 195 ms and >= 0.5 wall" \
	"$([ -n "$l" ] && cond "$wall >= 200000 && $slp >= 195000 && $slp >= 0.5 * $wall && $wall <= $dur + 1000" || echo 1)" \
	"wall ${wall:-?} cpu ${cpu:-?} runq ${runq:-?} sleep ${slp:-?} dsleep ${dslp:-?} iowait ${iow:-?} us; server duration $dur us"

# --- a row-lock wait is sleep ------------------------------------------------
# A updates the row, waits (in SQL, up to 120 s) until B waits for its lock,
# sleeps 0.3 s more and commits: B waits at least 0.3 s.
sql t_lockA "BEGIN" "UPDATE t SET v = v + 1 WHERE id = 1" \
	"DO \$\$ DECLARE n int := 0; BEGIN
		WHILE n < 12000 AND NOT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE application_name = 't_lockB' AND wait_event_type = 'Lock') LOOP
			PERFORM pg_sleep(0.01); PERFORM pg_stat_clear_snapshot(); n := n + 1;
		END LOOP;
		PERFORM pg_sleep(0.3); END \$\$" "COMMIT" >/dev/null &
apid=$!
for _ in $(seq 300); do
	w=$(sql t_poll "SELECT count(*) FROM pg_stat_activity WHERE application_name = 't_lockA' AND backend_xid IS NOT NULL")
	[ "$w" = 1 ] && break
	sleep 0.1
done
sql t_lockB "/*t_lock*/ UPDATE t SET v = v + 1 WHERE id = 1" >/dev/null
wait "$apid"
l=$(line t_lockB t_lock)
fields "$l"
dur=$(pgdur t_lockB t_lock)
tap_case "row-lock wait: wall >= 300 ms, sleep >= 0.8 wall" \
	"$([ "$w" = 1 ] && [ -n "$l" ] && cond "$wall >= 300000 && $slp >= 0.8 * $wall && $wall <= $dur + 1000" || echo 1)" \
	"session A held the row: $w; B: wall ${wall:-?} cpu ${cpu:-?} runq ${runq:-?} sleep ${slp:-?} dsleep ${dslp:-?} iowait ${iow:-?} us; server duration $dur us"

# --- a cold sequential scan waits for I/O ---------------------------------
# Readahead off on the scratch device while the statement runs: under TCG
# the emulated CPU is slower than the emulated disk, so with readahead every
# read would complete while the backend computes and it would never wait.
ra=/sys/block/${dev#/dev/}/queue/read_ahead_kb
ra_old=$(cat "$ra" 2>/dev/null)
[ -n "$ra_old" ] && echo 0 >"$ra"
sync
echo 3 >/proc/sys/vm/drop_caches
out=$(sql t_io "EXPLAIN $readsql" "SELECT split_part(pg_read_file('/proc/self/stat'), ' ', 42)" \
	"/*t_io*/ $readsql" \
	"SELECT split_part(pg_read_file('/proc/self/stat'), ' ', 42)")
out=$(grep -v -e Aggregate -e 'Seq Scan' -e 'Result' <<<"$out")
b0=$(sed -n 1p <<<"$out")
b1=$(sed -n 3p <<<"$out")
blkio=$(((b1 - b0) * 10000))	# clock ticks of 10 ms, in us
[ -n "$ra_old" ] && echo "$ra_old" >"$ra"
l=$(line t_io t_io)
fields "$l"
# delayacct's block I/O delay runs from the dequeue to the enqueue after the
# wakeup, the iowait bucket from the switch-out to the wakeup (then runq):
# so iowait <= blkio, and blkio should be within iowait + runq.  A wakeup
# handed to another CPU's wakelist is enqueued there after the IPI: the page
# charges that wait to runq (the task is runnable), delayacct to blkio.
# Under TCG that wait is long and varies with the host.  On a quiet host
# blkio was 1.04-1.12 times iowait + runq and iowait 0.46-0.50 of blkio;
# one CI run had iowait 2.19 s, runq 6.82 s, blkio 8.86 s (0.98 and 0.25),
# a run beside a kernel build 6.00, 12.80 and 17.72 s (0.94 and 0.34).
# The bounds: iowait >= 0.1 blkio and sleep + dsleep <= 0.05 iowait (block
# reads are iowait, not sleep or dsleep: in_iowait), iowait <= blkio,
# blkio <= 1.3 (iowait + runq), each give or take its 10 ms ticks.  Not a
# share of the wall time: under TCG the scan's emulated CPU work dwarfs
# its I/O (15 s of 23).
tap_case "cold read ($io_mode, readahead off): read bytes ~ size, iowait >= 0.1 blkio, sleep + dsleep <= 0.05 iowait, iowait <= delayacct blkio <= 1.3 (iowait + runq)" \
	"$([ -n "$l" ] && cond "$rby >= 0.9 * $bigsize && $rby <= 1.3 * $bigsize && $iow >= 0.1 * $blkio && $slp + $dslp <= 0.05 * $iow && $iow <= $blkio + 20000 && 1.3 * ($iow + $runq) >= $blkio - 20000" || echo 1)" \
	"$io_mode $bigsize B (read_ahead_kb ${ra_old:-?} -> 0), read ${rby:-?} B; wall ${wall:-?} cpu ${cpu:-?} runq ${runq:-?} sleep ${slp:-?} dsleep ${dslp:-?} iowait ${iow:-?} us; delayacct blkio delta $blkio us (10 ms ticks)"

# --- parallel query: the leader's line only, its wait is sleep ------------
par_set=("SET max_parallel_workers_per_gather = 2" "SET parallel_setup_cost = 0"
	"SET parallel_tuple_cost = 0" "SET min_parallel_table_scan_size = 0"
	"SET parallel_leader_participation = off")
out=$(sql t_par "${par_set[@]}" \
	"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM mid" \
	"/*t_par*/ SELECT count(*) FROM mid")
launched=$(grep -o 'Workers Launched: [0-9]*' <<<"$out" | awk '{ print $3 }')
# every process's lines (a worker logs with its own application_name)
nlines=$(pgcs_lines | grep -cF '/*t_par*/')
l=$(line t_par t_par)
fields "$l"
tap_case "parallel query: one line (the leader's), leader mostly waiting (sleep >= 0.3 wall, cpu <= 0.5 wall)" \
	"$([ "${launched:-0}" -ge 1 ] && [ "$nlines" = 1 ] && cond "$slp >= 0.3 * $wall && $cpu <= 0.5 * $wall" || echo 1)" \
	"workers launched (EXPLAIN ANALYZE of the same query): ${launched:-?}; lines for the statement: $nlines; leader wall ${wall:-?} cpu ${cpu:-?} runq ${runq:-?} sleep ${slp:-?} us"

# --- nested statements: track = all logs them, top does not ----------------
sql t_nest "SET pg_coarse_stat.track = 'all'" "/*t_nest_all*/ SELECT pgcs_nest()" \
	"SET pg_coarse_stat.track = 'top'" "/*t_nest_top*/ SELECT pgcs_nest()" >/dev/null
n_all=$(pgcs_lines t_nest | awk '$15 == 1 && index($0, "/*t_nest_all*/")' | wc -l)
n_top=$(pgcs_lines t_nest | awk '$15 == 1 && index($0, "/*t_nest_top*/")' | wc -l)
nsleep=$(pgcs_lines t_nest | awk '$15 == 1 && index($0, "/*t_nest_all*/") && $2 >= 50000 && $5 >= 0.5 * $2' | wc -l)
nlines=$(pgcs_lines t_nest | awk '$15 == 1 && index($0, "/*t_nest_all*/") { printf " [wall %d cpu %d runq %d sleep %d]", $2, $3, $4, $5 }')
nsum=$(pgcs_lines t_nest | awk '$15 == 1 && index($0, "/*t_nest_all*/") { s += $2 } END { print s + 0 }')
top_all=$(line t_nest t_nest_all | awk '{ print $2 }')
top_top=$(line t_nest t_nest_top | awk '{ print $2 }')
tap_case "nested: track=all logs the function's 2 statements (one in pg_sleep(0.05)) inside the top-level one; track=top none" \
	"$([ "$n_all" = 2 ] && [ "$n_top" = 0 ] && [ "$nsleep" = 1 ] && [ -n "$top_top" ] && cond "${top_all:-0} >= $nsum" || echo 1)" \
	"nested lines with track=all $n_all$nlines (wall >= 50 ms, half asleep: $nsleep, walls sum $nsum us, top-level wall ${top_all:-?} us), with track=top $n_top (top-level wall ${top_top:-?} us)"

# --- every line's buckets add up to its wall time -------------------------
bad=$(pgcs_lines | awk '$3 + $4 + $5 + $6 + $7 != $2' | wc -l)
total=$(pgcs_lines | wc -l)
tap_case "every logged line: cpu + runq + sleep + dsleep + iowait = wall, to the microsecond" \
	"$([ "$bad" = 0 ] && [ "$total" -ge 20 ] && echo 0 || echo 1)" \
	"$total lines, $bad do not add up$( [ "$bad" = 0 ] || pgcs_lines | awk '$3 + $4 + $5 + $6 + $7 != $2 { print ": " $0; exit }')"

# Examples for the README: the raw lines of three statements.
grep -A1 -E ' (t_sleep|t_io|t_lockB) LOG:  pg_coarse_stat' "$PGCS_LOG" | grep -v '^--' | sed 's/^/# log: /'

# --- the view's totals are the sums of the logged lines -------------------
sql t_reset "SELECT pg_coarse_stat_reset()" >/dev/null
sql t_view "/*v1*/ SELECT pg_sleep(0.02)" "/*v1*/ SELECT pg_sleep(0.02)" "/*v1*/ SELECT pg_sleep(0.02)" \
	"/*v2*/ SELECT count(*) FROM generate_series(1, 20000)" "/*v2*/ SELECT count(*) FROM generate_series(1, 20000)" \
	"/*v3*/ SELECT count(*) FROM mid" "/*v4*/ CREATE TEMP TABLE vt (a int)" \
	"/*v5*/ INSERT INTO vt SELECT generate_series(1, 1000)" >/dev/null
view=$(pgcs_psql t_read -F' ' -c "SELECT queryid, calls, total_wall_ms, cpu_ms, runq_ms, sleep_ms, dsleep_ms, iowait_ms, preempt, block, migrate, minflt, majflt, read_bytes, write_bytes FROM pg_coarse_stat WHERE toplevel")
cmp=$(pgcs_lines t_view | awk -v view="$view" '
	BEGIN {
		nv = split(view, vl, "\n")
		for (i = 1; i <= nv; i++) { split(vl[i], f, " "); for (j = 1; j <= 15; j++) V[f[1], j] = f[j]; have[f[1]] = 1 }
	}
	{ q = $1; calls[q]++; for (j = 2; j <= 14; j++) S[q, j] += $j }
	END {
		bad = 0; nq = 0
		for (q in calls) {
			nq++
			if (!(q in have)) { bad++; printf " %s: not in the view;", q; continue }
			if (V[q, 2] != calls[q]) { bad++; printf " %s: calls %s vs %d lines;", q, V[q, 2], calls[q] }
			# times: view ms vs logged us, within 1 us per line
			for (j = 2; j <= 7; j++) {
				d = V[q, j + 1] * 1000 - S[q, j]
				if (d < 0) d = -d
				if (d > calls[q] + 0.01) { bad++; printf " %s: column %d view %.3f ms vs logged %d us;", q, j + 1, V[q, j + 1], S[q, j] }
			}
			for (j = 8; j <= 14; j++)
				if (V[q, j + 1] != S[q, j]) { bad++; printf " %s: column %d view %s vs logged %d;", q, j + 1, V[q, j + 1], S[q, j] }
		}
		printf "|%d|%d\n", nq, bad
	}')
nq=$(awk -F'|' '{ print $2 }' <<<"$cmp")
nbad=$(awk -F'|' '{ print $3 }' <<<"$cmp")
tap_case "view totals = sums of the logged lines, per query id (calls, times to 1 us per call, counts exactly)" \
	"$([ "${nq:-0}" = 5 ] && [ "${nbad:-1}" = 0 ] && echo 0 || echo 1)" \
	"query ids logged: ${nq:-?}, mismatches: ${nbad:-?}$(awk -F'|' '{ print $1 }' <<<"$cmp")"

# --- evictions are counted when the hash is full ---------------------------
pgcs_conf "pg_coarse_stat.max = 10"
pgcs_restart
sql t_evict "SELECT pg_coarse_stat_reset()" >/dev/null
args=()
cols=1
for k in $(seq 40); do
	args+=("SELECT $cols")
	cols="$cols, $((k + 1))"
done
sql t_evict "${args[@]}" >/dev/null
distinct=$(pgcs_lines t_evict | awk '{ print $1 }' | sort -u | wc -l)
ev=$(pgcs_psql t_info -F' ' -c "SELECT max, entries, dealloc, evicted, (SELECT count(*) FROM pg_coarse_stat) FROM pg_coarse_stat_info()")
read -r emax eent edealloc eevicted eview <<<"$ev"
tap_case "max = 10, 40 distinct queries: entries <= 10, evictions counted (entries + evicted >= distinct query ids logged)" \
	"$([ "${emax:-0}" = 10 ] && [ "${eent:-99}" -le 10 ] && [ "${eview:-99}" -le 10 ] && [ "${edealloc:-0}" -ge 1 ] && [ $((${eent:-0} + ${eevicted:-0})) -ge "$distinct" ] && [ "$distinct" -ge 40 ] && echo 0 || echo 1)" \
	"max ${emax:-?} entries ${eent:-?} view rows ${eview:-?} dealloc ${edealloc:-?} evicted ${eevicted:-?}; distinct query ids logged since the reset: $distinct"

# --- registration refused by kernel.coarse_stat_thread = 0 -----------------
pgcs_stop
echo 0 >/proc/sys/kernel/coarse_stat_thread
: >"$PGCS_LOG"
pgcs_start
rc=$?
out=$(sql t_refused "/*t_refused*/ SELECT pg_sleep(0.01)" "SELECT enabled || ' ' || status FROM pg_coarse_stat_info()" 2>&1)
echo 2 >/proc/sys/kernel/coarse_stat_thread
msg='WARNING:  pg_coarse_stat: disabled: registration refused: kernel.coarse_stat_thread = 0 (EPERM); ask the administrator to set kernel.coarse_stat_thread'
nwarn=$(grep -cF "$msg" "$PGCS_LOG")
nlog=$(grep -c 'pg_coarse_stat: .*queryid' "$PGCS_LOG")
tap_case "kernel.coarse_stat_thread = 0: one WARNING at load, server runs, nothing measured" \
	"$([ "$rc" = 0 ] && [ "$nwarn" = 1 ] && [ "$nlog" = 0 ] && grep -q '^false registration refused' <<<"$out" && echo 0 || echo 1)" \
	"start status $rc, warnings $nwarn, measured lines $nlog, session said: $(tr '\n' ' ' <<<"$out")"

finish
