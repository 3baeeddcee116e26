#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench's server-like table (project issue 38, item 7): bench/cs_server.c,
# a server thread that blocks 50-500 us per request, so that a registered
# thread's counter copy at switch-out (coarse_stat_copy_counters(), once the
# last copy is >= 50 us old) runs at a real server's rate, next to the 5 us
# ping-pong of cs_pingpong/cs_bench -i.  Instructions per request under QEMU
# -icount, in four states: the unpatched base kernel, the patched kernel
# with nothing registered (key off), the server thread registered, both.
#
#   scripts/bench-server.sh			build cs_server, boot, run, write the results
#   scripts/bench-server.sh --report	write the results again from build/bench-server/
#   scripts/bench-server.sh --guest OUT BIN REQUESTS WARMUP REPS
#					(in the guest) every state, 1 CPU and 2
#
# Each kernel is booted once under -icount (VM_ICOUNT=1: single-threaded
# TCG, one ns and one TSC tick per guest instruction, sleep=off); in the
# guest, per CPU count (1, then 2): "none" (the key must be off), then on a
# coarse_stat kernel "server", then "both", REPS repetitions of REQUESTS
# requests after WARMUP, the least repetition compared.  The kernels are
# not built here (scripts/bench.sh BENCH_O2=1 builds them).
#
# Environment:
#   BENCH_SERVER_KERNELS	"label=bzImage ..." (default: base=the unpatched
#				build/bench-base/build-o2, patched=build/linux-bench-o2)
#   BENCH_SERVER_REQUESTS	requests per repetition (2000)
#   BENCH_SERVER_WARMUP	warm-up requests (200)
#   BENCH_SERVER_REPS		repetitions per state (3)
#   BENCH_SERVER_OUT		results directory (Documentation/bench/server)
#   VM_DIR			the guest's directory (build/vm-server)
#   BENCH_NICE			niceness of QEMU (10)
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"

srv_work=$BUILD_ROOT/bench-server
srv_bin=$srv_work/cs_server
srv_out=${BENCH_SERVER_OUT:-$top/Documentation/bench/server}
srv_req=${BENCH_SERVER_REQUESTS:-2000}
srv_warm=${BENCH_SERVER_WARMUP:-200}
srv_reps=${BENCH_SERVER_REPS:-3}
srv_kernels=${BENCH_SERVER_KERNELS:-base=$BUILD_ROOT/bench-base/build-o2/arch/x86/boot/bzImage patched=$BUILD_ROOT/linux-bench-o2/arch/x86/boot/bzImage}

# (In the guest.)  Every state on 1 CPU and 2; OUT gets cs_server's lines
# and #meta lines.
srv_guest() {
	local out=$1 bin=$2 req=$3 warm=$4 reps=$5 cs c st rc=0 r

	cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
	for _ in $(seq 100); do
		[ "$(cat "$cs")" = tsc-early ] || break
		sleep 0.1
	done
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	{
		printf '#meta\tkernel\t%s\n' "$(uname -rv)"
		printf '#meta\tnr_cpus\t%s\n' "$(nproc)"
		printf '#meta\tclocksource\t%s\n' "$(cat "$cs")"
		printf '#meta\targs\t-n %s -w %s -r %s\n' "$req" "$warm" "$reps"
	} >"$out.tmp"
	for c in 1 2; do
		for st in none server both; do
			"$bin" -s "$st" -c "$c" -n "$req" -w "$warm" -r "$reps" >>"$out.tmp"
			r=$?
			if [ "$r" = 3 ] && [ "$st" = server ]; then
				echo "bench-server: no coarse_stat on this kernel: state none only" >&2
				break
			fi
			[ "$r" = 0 ] || { echo "bench-server: $st -c $c: status $r" >&2; rc=1; }
		done
		# The key goes off one second after the last release.
		sleep 2
	done
	cat "$out.tmp"
	mv "$out.tmp" "$out"
	return $rc
}

srv_build() {
	local uapi

	mkdir -p "$srv_work"
	uapi=$(uapi_headers "$srv_work/hdr") || return 1
	gcc -O2 -Wall -static -pthread -isystem "$uapi" -o "$srv_bin" "$top/bench/cs_server.c"
}

srv_run() {
	local vmdir=${VM_DIR:-$BUILD_ROOT/vm-server} kv label kernel rc=0 r

	srv_build || { echo "bench-server: cs_server did not build" >&2; return 1; }
	mkdir -p "$vmdir"
	vmdir=$(cd "$vmdir" && pwd)
	for kv in $srv_kernels; do
		label=${kv%%=*}
		kernel=${kv#*=}
		if [ ! -f "$kernel" ]; then
			echo "bench-server: no kernel $label at $kernel (scripts/bench.sh BENCH_O2=1 builds it)" >&2
			rc=1
			continue
		fi
		echo "bench-server: $label ($kernel), icount" >&2
		rm -f "$vmdir/out.tsv" "$srv_work/$label.tsv"
		nice -n "${BENCH_NICE:-10}" env VM_ICOUNT=1 VM_DEBUG=0 VM_KERNEL="$kernel" VM_DIR="$vmdir" \
			"$top/scripts/vm.sh" -- "$top/scripts/bench-server.sh" --guest \
			"$vmdir/out.tsv" "$srv_bin" "$srv_req" "$srv_warm" "$srv_reps"
		r=$?
		[ "$r" = 0 ] || { echo "bench-server: $label: guest status $r" >&2; rc=1; }
		[ -f "$vmdir/out.tsv" ] && cp "$vmdir/out.tsv" "$srv_work/$label.tsv"
		cp "$vmdir/console.log" "$srv_work/$label.console.log" 2>/dev/null
	done
	return $rc
}

# results.tsv: every repetition, prefixed by the kernel; results.md: the
# least repetition per kernel, state and CPU count.
srv_report() {
	local f label tsv=$srv_out/results.tsv md=$srv_out/results.md

	mkdir -p "$srv_out"
	{
		printf 'kernel\tstate\tcpus\trequests\tns\twork_insn\tsrv_copies\tcli_copies\tsrv_swout\tcli_swout\tkey\n'
		for f in "$srv_work"/*.tsv; do
			[ -f "$f" ] || continue
			label=$(basename "$f" .tsv)
			awk -F'\t' -v k="$label" -v OFS='\t' '
				/^#meta/ { print k, "#meta", $2, $3; next }
				$1 == "server" { $1 = k; print }' "$f"
		done
	} >"$tsv"
	awk -F'\t' -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" '
		NR == 1 { next }
		$2 == "#meta" { meta[$1 "," $3] = $4; next }
		{
			id = $1 "," $2 "," $3
			if (!(id in best) || $5 < best[id]) {
				best[id] = $5; req[id] = $4; work[id] = $6
				sc[id] = $7; cc[id] = $8; ss[id] = $9; cs[id] = $10; key[id] = $11
			}
			nrep[id]++
			if (!(id in lo) || $5 < lo[id]) lo[id] = $5
			if (!(id in hi) || $5 > hi[id]) hi[id] = $5
		}
		function per(id) { return (best[id] - work[id]) / req[id] }
		function cell(id) { return (id in best) ? sprintf("%.1f", per(id)) : "-" }
		function spread(id) { return (id in best) ? sprintf("%.1f", (hi[id] - lo[id]) / req[id]) : "-" }
		function delta(a, b) {
			if (!(a in best) || !(b in best)) return "-"
			return sprintf("%+.1f (%+.2f %%)", per(a) - per(b), 100 * (per(a) - per(b)) / per(b))
		}
		function cp(x) { return x < 0 ? "-" : x }
		function cpr(x, id) { return x < 0 ? "-" : sprintf("%.3f", x / req[id]) }
		END {
			print "# Server-like requests: instructions per request (QEMU -icount)"
			print ""
			print "Written by scripts/bench-server.sh (" date ") from build/bench-server/."
			print "bench/cs_server.c: a server thread blocks on a futex while a client thread"
			print "works a seeded-random 50-500 us (under -icount: 25,000-250,000 iterations of"
			print "\"dec; jnz\", the same sequence in every state), then wakes the server and"
			print "waits for its reply (a futex store and wake).  So the server blocks 50-500 us"
			print "per request and the client runs that long between its switch-outs: a"
			print "registered thread copies its counters (coarse_stat_copy_counters(), last copy"
			print ">= 50 us old) at nearly every switch-out, where the 5 us ping-pong of"
			print "cs_bench -i / cs_pingpong rarely does."
			print ""
			print "Kernels: the O2 bench kernels (scripts/o2.config, distribution-like:"
			print "mitigations, IBT, SLUB, PREEMPT_DYNAMIC, HZ 250), \"base\" unpatched"
			print "(build/bench-base/build-o2), \"patched\" the series (build/linux-bench-o2),"
			print "booted under VM_ICOUNT=1 (single-threaded TCG, one ns per guest instruction,"
			print "all vCPUs).  Per request: the instructions in the window minus those of the work loop"
			print "(2 per iteration, exact), divided by the requests: the syscalls, context"
			print "switches, wakeups, idle entries/exits and timer ticks of a request.  The"
			print "least of the repetitions; spread = (most - least) / requests."
			print ""
			for (c = 1; c <= 2; c++) {
				printf "## %d CPU%s\n\n", c, (c == 1 ? " (both threads on CPU 0)" : "s (server on CPU 0, client on CPU 1)")
				print "| kernel, state | insn/request | spread | vs base | vs patched none | server copies/req | client copies/req | server switch-outs/req | client switch-outs/req |"
				print "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
				n = split("base,none patched,none patched,server patched,both", rows, " ")
				for (i = 1; i <= n; i++) {
					id = rows[i] "," c
					split(rows[i], kr, ",")
					if (!(id in best)) continue
					printf "| %s, %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", kr[1], kr[2],
						cell(id), spread(id), delta(id, "base,none," c),
						delta(id, "patched,none," c), cpr(sc[id], id), cpr(cc[id], id),
						cpr(ss[id], id), cpr(cs[id], id)
				}
				print ""
			}
			print "States: none = no thread registered (patched: the static key off, checked);"
			print "server = the server thread registered (key on), the client not; both = both"
			print "registered.  Copies per request: changes of counters_ns in its page that each"
			print "thread saw, loading it once per request (a lower bound: two copies between"
			print "two loads count once); switch-outs: nr_block + nr_preempt of the page."
			print ""
			print "Per request on 1 CPU a registered server does one switch-out (with a copy),"
			print "one switch-in and is woken once; for scale, the 5 us ping-pong (no copy) adds"
			print "+161 instructions per switch and its wakeup with both threads registered"
			print "(O2/v4-icount.md).  Instruction counts weigh the full barrier, the LFENCE of"
			print "the clock read and each store of the copy as one instruction: see O2/hook-native.md for"
			print "the same sequences in cycles."
			print ""
			for (m in meta) {
				split(m, mk, ",")
				if (mk[2] == "kernel") print "- " mk[1] ": " meta[m] ", " meta[mk[1] ",nr_cpus"] " CPUs, clocksource " meta[mk[1] ",clocksource"] ", cs_server " meta[mk[1] ",args"]
			}
		}' "$tsv" >"$md"
	echo "bench-server: wrote ${tsv#"$top"/} and ${md#"$top"/}"
}

case "${1:-}" in
--guest)
	shift
	srv_guest "$@"
	exit
	;;
--report)
	srv_report
	exit
	;;
esac
rc=0
srv_run || rc=1
srv_report || rc=1
echo
echo "== server-like requests, instructions per request ($srv_out/results.md)"
sed -n '/^## /,/^States:/p' "$srv_out/results.md" | grep -v '^States:'
exit $rc
