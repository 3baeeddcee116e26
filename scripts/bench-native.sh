#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-native: the recipe for real hardware.  On a machine booted into
# the patched kernel, perf stat of the futex ping-pong (bench/cs_pingpong.c,
# cs_bench -i's loop in one state per run), perf bench sched pipe and perf
# bench sched messaging (hackbench), each with nothing registered (key off),
# with a holder process registered (key on, the benchmark unregistered) and
# with every thread of the benchmark registered (bench/cs_register.c
# preloaded with CS_REGISTER=1), printed as ratios against key off.
#
#   scripts/bench-native.sh
#
# Events: cycles, instructions, cache-references, cache-misses,
# L1-dcache-loads, L1-dcache-load-misses, LLC-load-misses, task-clock and
# context-switches, as many as the CPU and perf have (a VM without a virtual
# PMU has the software ones only).  Every figure is perf stat -r REPS's mean,
# per round trip (ping-pong), per operation (pipe: usecs/op's loops) or per
# run (messaging), counted for the benchmark's tasks (user and kernel; needs
# root or kernel.perf_event_paranoid <= 0 for the kernel part), not for
# the idle CPUs.
#
# A kernel without the series (prctl(PR_COARSE_STAT) fails: this is checked
# first and said in the output's first lines) runs the key-off rows only,
# as a baseline and a test of the recipe; the other columns are "-".
#
# The last line is "N passed, N failed" (a run that fails, a registered run
# that registered fewer than 2 threads, the key on in a key-off row).
#
# Environment:
#   PERF			perf binary (default: perf in PATH if it runs, else
#				scripts/build-perf.sh's build/perf/perf)
#   BENCH_NATIVE_REPS		perf stat -r (5)
#   BENCH_NATIVE_ROUNDS		ping-pong round trips (200000)
#   BENCH_NATIVE_PIPE_LOOPS	perf bench sched pipe -l (200000)
#   BENCH_NATIVE_MSG_GROUPS	perf bench sched messaging -g (10)
#   BENCH_NATIVE_MSG_LOOPS	perf bench sched messaging -l (1000)
#   BENCH_NATIVE_CPUS		the two CPUs of the 2-CPU rows ("0,1"; pick two
#				cores, not SMT siblings, for cross-core numbers)
#   BENCH_NATIVE_OUT		results directory (build/bench-native)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"

log() { echo "bench-native: $*" >&2; }
die() { log "$*"; exit 1; }

work=${BENCH_NATIVE_OUT:-$BUILD_ROOT/bench-native}
reps=${BENCH_NATIVE_REPS:-5}
rounds=${BENCH_NATIVE_ROUNDS:-200000}
pipe_loops=${BENCH_NATIVE_PIPE_LOOPS:-200000}
msg_groups=${BENCH_NATIVE_MSG_GROUPS:-10}
msg_loops=${BENCH_NATIVE_MSG_LOOPS:-1000}
two=${BENCH_NATIVE_CPUS:-0,1}
one=${two%%,*}
mkdir -p "$work/bin"
"$top/scripts/deps.sh" native || log "packages missing (scripts/deps.sh native)"

# --- tools -----------------------------------------------------------------------
perf=${PERF:-}
if [ -z "$perf" ]; then
	if perf stat -e task-clock -x, -o /dev/null -- true >/dev/null 2>&1; then
		perf=perf
	else
		perf=$("$top/scripts/build-perf.sh") || die "no perf: install linux-perf or set PERF"
	fi
fi
"$perf" stat -e task-clock -x, -o /dev/null -- true >/dev/null 2>&1 || die "$perf stat does not run"
"$perf" bench sched pipe -l 10 >/dev/null 2>&1 || die "$perf has no 'perf bench sched pipe'"
shim=$work/bin/cs_register.so
pp=$work/bin/cs_pingpong
# Built when older than their source (so a guest without gcc can run them),
# against the series' UAPI headers (make linux).
if ! [ "$shim" -nt "$top/bench/cs_register.c" ] || ! [ "$pp" -nt "$top/bench/cs_pingpong.c" ] ||
	! [ "$pp" -nt "$top/bench/pingpong.h" ]; then
	uapi=$(uapi_headers "$work/hdr") || die "no UAPI headers of the series"
	gcc -O2 -Wall -shared -fPIC -isystem "$uapi" -o "$shim" "$top/bench/cs_register.c" -ldl ||
		die "bench/cs_register.c did not build"
	gcc -O2 -Wall -pthread -isystem "$uapi" -o "$pp" "$top/bench/cs_pingpong.c" ||
		die "bench/cs_pingpong.c did not build"
fi
nr=$(nproc)
[ "$nr" -ge 2 ] || log "one CPU online: no 2-CPU rows"

# --- the kernel --------------------------------------------------------------------
series=1
if ! CS_REGISTER=1 LD_PRELOAD=$shim /bin/true 2>/dev/null; then
	series=0
fi
echo "# perf stat of context-switch benchmarks on $(uname -n), kernel $(uname -r)"
echo
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); $nr CPUs online; perf $("$perf" --version 2>/dev/null | awk '{ print $3 }')."
if [ $series = 0 ]; then
	echo
	echo "**This kernel ($(uname -r)) does not have the coarse_stat series**"
	echo "(prctl(PR_COARSE_STAT) fails): only the key-off rows run, without ratios."
	echo "Boot the patched kernel (CONFIG_COARSE_STAT=y) for the comparison."
	states=(keyoff)
else
	states=(keyoff keyon reg)
fi
mountpoint -q /sys/kernel/debug 2>/dev/null || mount -t debugfs none /sys/kernel/debug 2>/dev/null
keycount() {
	sed -n 's/^key //p' /sys/kernel/debug/coarse_stat/stats 2>/dev/null | grep . || echo -1
}

# Events this perf and CPU count.
events=()
for e in cycles instructions cache-references cache-misses L1-dcache-loads L1-dcache-load-misses \
	LLC-load-misses task-clock context-switches; do
	o=$("$perf" stat -x, -e "$e" -- true 2>&1)
	grep -q -e '<not supported>' -e 'event syntax error' -e 'not counted' <<<"$o" || events+=("$e")
done
hw=0
for e in "${events[@]}"; do
	case "$e" in task-clock|context-switches) ;; *) hw=1 ;; esac
done
[ $hw = 1 ] || { echo; echo "No hardware counters here (a VM without a virtual PMU?): task-clock and context-switches only."; }
evlist=$(IFS=,; echo "${events[*]}")
echo "Events: $evlist; perf stat -r $reps, means."
if [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)" -gt 0 ] && [ "$(id -u)" != 0 ]; then
	echo "kernel.perf_event_paranoid > 0 and not root: user-space counts only."
fi

# --- runs ----------------------------------------------------------------------------
# cases: id, unit divisor, description, command (the state's env goes in front)
declare -A cmd div desc
order=()
addcase() { order+=("$1"); div[$1]=$2; desc[$1]=$3; cmd[$1]=$4; }
addcase pp_1cpu "$rounds" "futex ping-pong, 1 CPU (per round trip)" \
	"$pp -c 1 -n $rounds -w 1000 -s STATE"
[ "$nr" -ge 2 ] && addcase pp_2cpu "$rounds" "futex ping-pong, 2 CPUs (per round trip)" \
	"$pp -c 2 -n $rounds -w 1000 -s STATE"
addcase pipe_1cpu "$pipe_loops" "sched pipe, 1 CPU, processes (per op)" \
	"taskset -c $one $perf bench sched pipe -l $pipe_loops"
addcase pipe_1cpu_thr "$pipe_loops" "sched pipe -T, 1 CPU, threads (per op)" \
	"taskset -c $one $perf bench sched pipe -T -l $pipe_loops"
[ "$nr" -ge 2 ] && addcase pipe_2cpu "$pipe_loops" "sched pipe, 2 CPUs, processes (per op)" \
	"taskset -c $two $perf bench sched pipe -l $pipe_loops"
addcase msg "1" "sched messaging (hackbench), processes (per run)" \
	"$perf bench sched messaging -g $msg_groups -l $msg_loops"
addcase msg_thr "1" "sched messaging -t (hackbench), threads (per run)" \
	"$perf bench sched messaging -t -g $msg_groups -l $msg_loops"

declare -A val
holder=
reglog=$work/cs_register.log
for st in "${states[@]}"; do
	if [ "$st" = keyoff ] && [ "$(keycount)" -gt 0 ]; then
		result "key off: the static key is off before the key-off runs" 1 "count $(keycount)"
	fi
	if [ "$st" = keyon ]; then
		CS_REGISTER=1 LD_PRELOAD=$shim sleep 100000 &
		holder=$!
		sleep 1
		kill -0 "$holder" 2>/dev/null || die "the holder process did not register"
	fi
	for c in "${order[@]}"; do
		line=${cmd[$c]}
		pre=()
		case "$c" in
		pp_*)	line=${line/STATE/$st} ;;
		*)	[ "$st" = reg ] && pre=(env CS_REGISTER=1 "CS_REGISTER_LOG=$reglog" "LD_PRELOAD=$shim") ;;
		esac
		rm -f "$reglog" "$work/$c-$st.csv"
		log "$c ($st): perf stat -r $reps"
		# shellcheck disable=SC2086
		"$perf" stat -x, -r "$reps" -e "$evlist" -o "$work/$c-$st.csv" -- "${pre[@]}" $line \
			>"$work/$c-$st.out" 2>&1
		rc=$?
		result "$c ($st) ran" "$rc" "$(tail -n 3 "$work/$c-$st.out" | tr '\n' ' ')"
		[ "$rc" = 0 ] || continue
		if [ "$st" = reg ] && [ "$c" != pp_1cpu ] && [ "$c" != pp_2cpu ]; then
			n=$(grep -c . "$reglog" 2>/dev/null)
			result "$c (reg): every task registered (>= 2 registrations per run)" \
				"$([ "${n:-0}" -ge $((2 * reps)) ] && echo 0 || echo 1)" "${n:-0} in $reps runs"
		fi
		while IFS=, read -r v _ ev _; do
			case "$v" in ''|'#'*|'<'*) continue ;; esac
			val[$c,$st,$ev]=$v
		done <"$work/$c-$st.csv"
	done
done
[ -z "$holder" ] || kill "$holder"

# --- table --------------------------------------------------------------------------
{
	echo
	echo "| benchmark | event | key off | key on, unregistered | registered | key on / off | registered / off |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for c in "${order[@]}"; do
		for e in "${events[@]}"; do
			a=${val[$c,keyoff,$e]:-} b=${val[$c,keyon,$e]:-} r=${val[$c,reg,$e]:-}
			[ -n "$a$b$r" ] || continue
			awk -v d="${desc[$c]}" -v e="$e" -v n="${div[$c]}" -v a="$a" -v b="$b" -v r="$r" '
				function f(x) { return x == "" ? "-" : sprintf("%.1f", x * m / n) }
				function q(x, y) { return (x == "" || y == "" || y == 0) ? "-" : sprintf("%.4f", x / y) }
				BEGIN { m = e == "task-clock" ? 1e6 : 1
					printf "| %s | %s | %s | %s | %s | %s | %s |\n", d, e, f(a), f(b), f(r), q(b, a), q(r, a) }'
		done
	done
	echo
	echo "task-clock in ns per unit; counts per round trip / op / run.  Every figure includes the"
	echo "benchmark's user space and its start-up (thread creation, the shim's registrations)."
} | tee "$work/results.md"
[ $series = 1 ] || echo "NOTE: kernel without coarse_stat: key-off rows only (see above)."
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
