#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The live view, measured: what one watchdog sweep over N worker threads
# costs through the coarse_stat pages and through /proc (bench/cs_sweep.c),
# N = 10, 100, 1000, at 1 ms and 20 ms cadence, in a guest of 2 vCPUs (the
# watchdog on CPU 0, the workers on CPU 1), booted twice:
#
#   icount	QEMU -icount shift=0,sleep=off (VM_ICOUNT=1): CLOCK_MONOTONIC
#		advances one ns per guest instruction, so ns per sweep are
#		instructions per sweep (those of the other vCPU while it runs
#		too: the workers keep it a few % busy, printed)
#   wall	plain TCG, the host's wall clock: the spread of a second opinion
#
# and writes the table, the command, the kernel and the date to
# Documentation/bench/sweep.md.  A benchmark: it prints, it does not
# assert (the exit status says only whether both boots gave every row).
#
#   scripts/bench-sweep.sh			build, boot twice, write the results
#   scripts/bench-sweep.sh --report		write the results again from build/bench-sweep/
#   scripts/bench-sweep.sh --guest OUT BIN ARGS...	(in the guest)
#
# Environment:
#   BENCH_SWEEP_KERNEL	bzImage (default: the -O2 bench kernel
#			build/linux-bench-o2 if it exists, else the debug
#			guest kernel build/linux, booted with VM_DEBUG=0)
#   BENCH_SWEEP_ARGS	cs_sweep arguments ("-n 10,100,1000 -p 1,20 -s 20 -b 5")
#   BENCH_SWEEP_OUT	results file (Documentation/bench/sweep.md)
#   VM_DIR		the guest's directory (build/vm-sweep)
#   BENCH_NICE		niceness of QEMU (10)
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"

if [ "${1:-}" = --guest ]; then
	out=$2 bin=$3
	shift 3
	cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
	for _ in $(seq 100); do
		[ "$(cat "$cs")" = tsc-early ] || break
		sleep 0.1
	done
	echo 2 >/proc/sys/kernel/coarse_stat_thread
	{
		echo "#meta uname $(uname -rv)"
		echo "#meta cpus $(nproc) clocksource $(cat "$cs")"
		echo "#meta args $*"
		"$bin" "$@"
		echo "#meta status $?"
	} >"$out.tmp" 2>&1
	mv "$out.tmp" "$out"
	exit 0
fi

log() { echo "bench-sweep: $*" >&2; }

work=$BUILD_ROOT/bench-sweep
bin=$work/cs_sweep
res=${BENCH_SWEEP_OUT:-$top/Documentation/bench/sweep.md}
args=${BENCH_SWEEP_ARGS:--n 10,100,1000 -p 1,20 -s 20 -b 5}
o2=$BUILD_ROOT/linux-bench-o2/arch/x86/boot/bzImage
kernel=${BENCH_SWEEP_KERNEL:-}
if [ -z "$kernel" ]; then
	kernel=$o2
	[ -f "$kernel" ] || kernel=$BUILD_ROOT/linux/arch/x86/boot/bzImage
fi

# The kernel's description for the results: its build directory's .config.
kernel_note() {
	local cfg yn

	cfg=$(dirname "$(dirname "$(dirname "$(dirname "$kernel")")")")/.config
	echo "Kernel: ${kernel#"$top"/}, built $(date -u -r "$kernel" '+%Y-%m-%d %H:%M UTC')."
	if [ "$kernel" = "$o2" ]; then
		echo "Kernel desc: -O2 bench"
		echo "The -O2 bench kernel (scripts/o2.config, distribution-like)."
	elif [ "$kernel" = "$BUILD_ROOT/linux/arch/x86/boot/bzImage" ]; then
		echo "Kernel desc: debug"
		echo "No bench kernel existed (build/linux-bench-o2: make bench BENCH_O2=1 builds"
		echo "it), so this is the debug guest kernel (scripts/debug.config), booted with"
		echo "VM_DEBUG=0 (no slub_debug/init_on_free/KFENCE arguments)."
	fi
	if [ -f "$cfg" ]; then
		for yn in PROVE_LOCKING DEBUG_PREEMPT DEBUG_LIST KFENCE SLUB_DEBUG PREEMPT \
			  VIRT_CPU_ACCOUNTING_GEN SCHEDSTATS; do
			printf '%s=%s ' "$yn" "$(sed -n "s/^CONFIG_$yn=//p" "$cfg" | head -n 1)"
		done
		echo
		if grep -q '^CONFIG_PROVE_LOCKING=y' "$cfg"; then
			echo "Lockdep is on: every lock the /proc reads take costs more than on a"
			echo "production kernel, so the /proc rows (and the ratios) overstate /proc"
			echo "by an unmeasured factor; the pages rows make no system call and do not"
			echo "depend on the kernel's debug options."
		fi
	fi
}

run() {
	local vmdir=${VM_DIR:-$BUILD_ROOT/vm-sweep} mode ic uapi rc=0

	[ -f "$kernel" ] || { log "no kernel $kernel"; return 1; }
	mkdir -p "$work" "$vmdir"
	vmdir=$(cd "$vmdir" && pwd)
	uapi=$(uapi_headers "$work/hdr") || { log "no UAPI headers of the series"; return 1; }
	gcc -O2 -Wall -Wextra -pthread -isystem "$uapi" \
		-I "$top/linux/tools/lib/coarse_stat" -o "$bin" "$top/bench/cs_sweep.c" ||
		{ log "bench/cs_sweep.c did not build"; return 1; }
	kernel_note >"$work/kernel.txt"
	for mode in icount wall; do
		ic=0
		[ "$mode" = icount ] && ic=1
		rm -f "$vmdir/$mode.out" "$work/$mode.out"
		log "boot: $mode ($kernel), cs_sweep $args"
		# shellcheck disable=SC2086
		VM_ACCEL=tcg VM_TCG_THREAD=single VM_ICOUNT=$ic VM_DEBUG=0 VM_SCRATCH_MB=0 \
			VM_SMP=2 VM_DIR=$vmdir VM_TIMEOUT=${BENCH_SWEEP_TIMEOUT:-1800} \
			nice -n "${BENCH_NICE:-10}" "$top/scripts/vm.sh" --kernel "$kernel" -- \
			"$top/scripts/bench-sweep.sh" --guest "$vmdir/$mode.out" "$bin" $args >&2 ||
			{ log "$mode boot failed (console: $vmdir/console.log)"; rc=1; }
		cp "$vmdir/$mode.out" "$work/$mode.out" 2>/dev/null || rc=1
		cp "$vmdir/console.log" "$work/$mode.console.log" 2>/dev/null
	done
	date -u '+%Y-%m-%d %H:%M UTC' >"$work/date"
	return $rc
}

report() {
	mkdir -p "$(dirname "$res")"
	awk -v date="$(cat "$work/date" 2>/dev/null || date -u '+%Y-%m-%d')" \
	    -v args="$args" -v knote="$(cat "$work/kernel.txt" 2>/dev/null)" \
	    -v kdesc="$(sed -n 's/^Kernel desc: //p' "$work/kernel.txt" 2>/dev/null)" '
	FNR == 1 { mode = (FILENAME ~ /icount\.out$/) ? "i" : "w" }
	/^#meta uname/ { sub(/^#meta uname /, ""); uname[mode] = $0; next }
	/^#meta cpus/ { cpus[mode] = $3; clk[mode] = $5; next }
	/^#meta status/ { status[mode] = $3; next }
	/^#meta args/ { sub(/^#meta args /, ""); if (mode == "i" || cmdargs == "") cmdargs = $0; next }
	/ method .* ns min / {
		id = $3 "," $5 "," $7
		mn[mode, id] = $14; md[mode, id] = $16; mx[mode, id] = $18; ov[mode, id] = $20
		sw[id] = $9; bl[id] = $11
		if (!($3 in seen_n)) { seen_n[$3] = 1; ns[++nn] = $3 }
		if (!($5 in seen_p)) { seen_p[$5] = 1; ps[++np] = $5 }
		next
	}
	/ seen pages / { id = $3 "," $5; seenpg[mode, id] = $0; next }
	/ seen pread / { id = $3 "," $5; seenpr[mode, id] = $0; next }
	/ cpu [0-9]+ busy / { id = $3 "," $5; busy0[mode, id] = $9; busy1[mode, id] = $14; next }
	/clock floor ns/ { floor[mode] = $5; next }
	/ workers: / { sub(/^cs_sweep: /, ""); wdesc[$2] = $0; next }
	function per(x, n) { return (x == "") ? "" : x / n }
	function h(x) {
		if (x == "") return "?"
		if (x < 10) return sprintf("%.1f", x)
		if (x < 10000) return sprintf("%d", x)
		if (x < 1e6) return sprintf("%.1fk", x / 1e3)
		return sprintf("%.2fM", x / 1e6)
	}
	function us(x) {
		if (x == "") return "?"
		if (x < 1e3) return sprintf("%.0f ns", x)
		if (x < 1e5) return sprintf("%.1f us", x / 1e3)
		if (x < 1e6) return sprintf("%.0f us", x / 1e3)
		return sprintf("%.1f ms", x / 1e6)
	}
	function wus(x) {
		if (x == "") return "?"
		if (x < 1e4) return sprintf("%.2f", x / 1e3)
		return sprintf(x < 1e6 ? "%.1f" : "%.0f", x / 1e3)
	}
	function pshare(x, p) {
		if (x == "") return "?"
		x = 100 * x / (p * 1e6)
		return sprintf(x >= 10 ? "%.0f %%" : "%.2g %%", x)
	}
	function share(x, p) {
		if (x != "" && x > p * 1e6) return "**" pshare(x, p) "** (late)"
		return pshare(x, p)
	}
	function ratio(m, n, p, meth,	a, b) {
		a = md[m, n "," p ",pages"]; b = md[m, n "," p "," meth]
		if (a == "" || b == "" || a == 0) return "?"
		return sprintf("%.0f", b / a)
	}
	function pct(x) { return sprintf("%.2g %%", x) }
	END {
		name["pages"] = "pages: csf_page_snap()"
		name["pread"] = "/proc: pread() of 2 kept fds"
		name["open"] = "/proc: open+read+close of 2"
		split("pages pread open", meths, " ")
		print "# A watchdog sweep: the coarse_stat pages against /proc"
		print ""
		printf "Written by scripts/bench-sweep.sh, %s, from bench/cs_sweep.c run as\n", date
		if (cmdargs == "") cmdargs = args
		printf "`cs_sweep %s` in two boots of the guest (2 vCPUs, single-threaded\n", cmdargs
		print "TCG): VM_ICOUNT=1 (QEMU -icount shift=0,sleep=off: the guest clock advances one ns"
		print "per guest instruction, so ns per sweep are instructions per sweep) and plain TCG"
		print "(the host wall clock, slowed by TCG as a whole: not a hardware figure)."
		print ""
		gsub(/Kernel desc: [^\n]*\n/, "", knote)
		print knote
		print ""
		printf "Guest: %s; clocksource %s (icount), %s (wall).\n", uname["i"], clk["i"], clk["w"]
		print ""
		print "The watchdog (the main thread, CPU 0) looks at N worker threads (CPU 1) every"
		print "1 ms or 20 ms.  Half the workers block on a futex and wake by its timeout; the"
		print "other half spin 100 us, then block the same way; the naps (2N ms, at least"
		print "20 ms, +-50 % at random) keep the wakeups near 500 per second and the spinning"
		print "near 2.5 % of CPU 1 whatever N.  Each worker registers and hands its mapped"
		print "page to the watchdog.  One sweep looks once at"
		print "every worker, one of three ways, and computes the same verdict (busy the whole"
		print "interval? waiting for a CPU more than half of it?):"
		print ""
		print "- **pages**: csf_page_snap() of its page: the vDSO copies the page under its"
		print "  sequence count and reads the clock; no system call.  State now, five buckets"
		print "  extrapolated to now."
		print "- **pread**: pread(fd, buf, n, 0) of /proc/self/task/<tid>/stat (state,"
		print "  utime, stime) and of /proc/self/task/<tid>/schedstat (run time, run delay),"
		print "  both files opened once: the strongest /proc watchdog.  Parsed by hand."
		print "- **open**: the same two files opened, read and closed every sweep, as many"
		print "  tools do."
		print ""
		printf "Per N and cadence, %s blocks of %s sweeps of each method at that cadence\n", bl[ns[1] "," ps[1] ",pages"], sw[ns[1] "," ps[1] ",pages"]
		print "(absolute deadlines; a sweep that overruns its period starts the next at once),"
		print "the methods in a rotating order after one unmeasured sweep each; a block'"'"'s figure"
		print "is its mean per sweep, and the table gives the median block and, in brackets,"
		print "the least and most.  ratio = the /proc row'"'"'s median / the pages row'"'"'s median."
		print "CPU share = cost per sweep / period: the watchdog'"'"'s share of one CPU (under"
		print "-icount, of a CPU doing one instruction per ns)."
		print ""
		print "## Instructions per sweep (-icount)"
		print ""
		print "| threads | cadence | method | instructions per sweep | per thread | ratio | CPU share |"
		print "|---:|---:|---|---:|---:|---:|---:|"
		for (i = 1; i <= nn; i++) for (j = 1; j <= np; j++) for (k = 1; k <= 3; k++) {
			n = ns[i]; p = ps[j]; m = meths[k]; id = n "," p "," m
			printf "| %s | %s ms | %s | %s [%s-%s] | %s | %s | %s |\n", n, p, name[m],
				h(md["i", id]), h(mn["i", id]), h(mx["i", id]),
				h(per(md["i", id], n)), (m == "pages") ? "1" : ratio("i", n, p, m),
				share(md["i", id], p)
		}
		print ""
		print "## Wall time per sweep (plain TCG)"
		print ""
		print "| threads | cadence | method | us per sweep | per thread | ratio | CPU share |"
		print "|---:|---:|---|---:|---:|---:|---:|"
		for (i = 1; i <= nn; i++) for (j = 1; j <= np; j++) for (k = 1; k <= 3; k++) {
			n = ns[i]; p = ps[j]; m = meths[k]; id = n "," p "," m
			printf "| %s | %s ms | %s | %s [%s-%s] | %s | %s | %s |\n", n, p, name[m],
				wus(md["w", id]), wus(mn["w", id]), wus(mx["w", id]),
				us(per(md["w", id], n)), (m == "pages") ? "1" : ratio("w", n, p, m),
				share(md["w", id], p)
		}
		print ""
		print "**(late)**: the median sweep is longer than the period, so the watchdog cannot"
		print "keep its cadence.  Overruns: sweeps that ended after the next deadline (a late"
		print "wakeup counts too), of all measured sweeps; CPU busy shares from /proc/stat over"
		print "each cadence'"'"'s run:"
		print ""
		print "| threads | cadence | overruns pages/pread/open, icount | wall | CPU 0 busy, icount | CPU 1 (workers) busy, icount | CPU 0, wall | CPU 1, wall |"
		print "|---:|---:|---|---|---:|---:|---:|---:|"
		for (i = 1; i <= nn; i++) for (j = 1; j <= np; j++) {
			n = ns[i]; p = ps[j]; id = n "," p; tot = sw[id ",pages"] * bl[id ",pages"]
			printf "| %s | %s ms | %s/%s/%s of %s | %s/%s/%s | %s %% | %s %% | %s %% | %s %% |\n", n, p,
				ov["i", id ",pages"], ov["i", id ",pread"], ov["i", id ",open"], tot,
				ov["w", id ",pages"], ov["w", id ",pread"], ov["w", id ",open"],
				busy0["i", id], busy1["i", id], busy0["w", id], busy1["w", id]
		}
		print ""
		# How much of CPU 1 leaks into the counts: the per-thread cost of
		# each method over rows whose CPU 1 busy share differs widely.
		for (k = 1; k <= 3; k++) {
			m = meths[k]; lo[m] = ""; hi[m] = ""
			for (i = 1; i <= nn; i++) for (j = 1; j <= np; j++) {
				id = ns[i] "," ps[j] "," m
				if (md["i", id] == "") continue
				x = md["i", id] / ns[i]
				if (lo[m] == "" || x < lo[m]) lo[m] = x
				if (hi[m] == "" || x > hi[m]) hi[m] = x
			}
		}
		b1lo = ""; b1hi = ""
		for (i = 1; i <= nn; i++) for (j = 1; j <= np; j++) {
			x = busy1["i", ns[i] "," ps[j]]
			if (x == "") continue
			if (b1lo == "" || x + 0 < b1lo + 0) b1lo = x
			if (b1hi == "" || x + 0 > b1hi + 0) b1hi = x
		}
		printf "The two clock reads that bracket each sweep cost %s instructions (icount), %s ns\n", floor["i"], floor["w"]
		print "(wall), included in every row.  Single-threaded TCG runs the two vCPUs in turn"
		print "on one host thread and, under -icount, one clock, so a sweep'"'"'s count also holds"
		print "what CPU 1 executed meanwhile.  That share is small: per thread, the icount cost"
		printf "stays within %s-%s instructions (pages), %s-%s (pread) and %s-%s (open)\n", h(lo["pages"]), h(hi["pages"]), h(lo["pread"]), h(hi["pread"]), h(lo["open"]), h(hi["open"])
		printf "over every N and cadence, while CPU 1'"'"'s busy share (guest time) goes from %s %%\n", b1lo
		printf "to %s %%.  (That busy share grows with the sweep'"'"'s length: a worker that spins\n", b1hi
		print "100 us of guest time is, under TCG, probably frozen most of that time while"
		print "CPU 0 runs, so it stays \"running\" for longer, and long /proc sweeps catch more"
		print "workers in R.)  Instruction counts do not depend on the cadence; TCG wall times"
		print "do (after 20 ms idle a sweep starts with cold TCG TLBs and code caches, as on"
		print "hardware it would with cold CPU caches).  The wall-clock rows also move with"
		print "the host'"'"'s load: when this was written, two runs on the shared host differed"
		print "by up to 2x in the /proc rows, while the instruction counts repeated within 3 %."
		print ""
		print "What the sweeps saw, summed over the measured sweeps (icount boot); the pages"
		print "and /proc looked at different moments, so the counts are alike, not equal:"
		print ""
		for (i = 1; i <= nn; i++) for (j = 1; j <= np; j++) {
			id = ns[i] "," ps[j]
			a = seenpg["i", id]; sub(/^cs_sweep: /, "", a)
			b = seenpr["i", id]; sub(/^cs_sweep: /, "", b)
			printf "    %s\n    %s\n", a, b
		}
		print ""
		print "## What the pages give that /proc does not"
		print ""
		print "- The current bucket extrapolated to now: a snapshot says \"on the run queue"
		print "  since T\" or \"asleep for 40 ms so far\".  /proc/<tid>/schedstat'"'"'s run time and"
		print "  run delay are updated at context switches and ticks only: a thread queued"
		print "  right now shows none of its current wait until it runs, and a running one lags"
		print "  by its time since the last tick; /proc/<tid>/stat'"'"'s state letter has no since."
		print "- Where the blocked time went: sleep, dsleep (uninterruptible, not I/O) and"
		print "  iowait apart, summing with oncpu and runq to exactly the wall time.  /proc has"
		print "  run delay, and utime+stime in ticks (1/USER_HZ = 10 ms: at a 1 ms cadence a"
		print "  thread'"'"'s CPU time moves in 10 ms steps), but not sleep vs iowait vs D per"
		print "  thread; the rest is wall time minus what it has, lumped."
		print "- Consistency: one snapshot is one instant for all fields; two /proc files are"
		print "  two reads at two moments, in two units (CPU time in 10 ms clock ticks, run"
		print "  delay in ns)."
		print "- No file descriptor per thread (the kept-fd /proc watchdog holds 2 per worker,"
		print "  2000 for 1000 workers, past the default RLIMIT_NOFILE of 1024), and no system"
		print "  call: the watchdog does not enter the kernel at all."
		print ""
		print "## Where /proc is good enough"
		print ""
		# The cheapest /proc watchdog: the smallest N at the longest period.
		n = ns[1]; p = ps[np]
		x = md["i", n "," p ",pread"]
		printf "At %s threads every %s ms the kept-fd /proc sweep costs %s instructions, %s\n", n, p, h(x), pshare(x, p)
		printf "of a CPU that executes one instruction per ns (%s instructions per second; under\n", h(x * 1000 / p)
		printf "TCG %s us per sweep, %s of the CPU); open+read+close %s (%s); the\n", wus(md["w", n "," p ",pread"]), pshare(md["w", n "," p ",pread"], p), h(md["i", n "," p ",open"]), pshare(md["i", n "," p ",open"], p)
		printf "pages %s (%s).  A watchdog of a few threads at a slow cadence that wants\n", h(md["i", n "," p ",pages"]), pshare(md["i", n "," p ",pages"], p)
		if (x != "" && 100 * x / (p * 1e6) < 5 && 100 * md["w", n "," p ",pread"] / (p * 1e6) < 5) {
			print "only the state letter and the CPU time can afford /proc: its cost there is"
			print "under 5 % of a CPU in both boots (probably less on a kernel without lockdep)."
		} else {
			print "only the state letter and the CPU time pays 5 % of a CPU or more for /proc"
			print "even there (in one boot or both; probably less on a kernel without lockdep)."
		}
		print "What it gives up is the list above: since when, and which kind of sleep."
		print ""
		for (k = 2; k <= 3; k++) {
			m = meths[k]; late = ""
			for (i = 1; i <= nn; i++) for (j = 1; j <= np; j++) {
				n = ns[i]; p = ps[j]; id = n "," p "," m
				if (md["i", id] != "" && md["i", id] > p * 1e6)
					late = late sprintf("%s%s threads every %s ms", late == "" ? "" : ", ", n, p)
			}
			printf "The %s sweep cannot keep its cadence (median sweep longer than the period,\n", m == "pread" ? "kept-fd /proc" : "open+read+close /proc"
			printf "-icount) at: %s.\n", late == "" ? "none of the rows" : late
		}
		late = ""
		for (i = 1; i <= nn; i++) for (j = 1; j <= np; j++) {
			n = ns[i]; p = ps[j]; id = n "," p ",pages"
			if (md["i", id] != "" && md["i", id] > p * 1e6)
				late = late sprintf("%s%s threads every %s ms", late == "" ? "" : ", ", n, p)
		}
		printf "The pages sweep cannot at: %s.\n", late == "" ? "none of the rows" : late
		print ""
		print "## For the Why not text"
		print ""
		N = ns[nn]; P1 = ps[1]; P2 = ps[np]; n0 = ns[1]
		wlo = ""; whi = ""
		for (i = 1; i <= nn; i++) for (j = 1; j <= np; j++) {
			x = ratio("w", ns[i], ps[j], "pread")
			if (x == "?") continue
			if (wlo == "" || x + 0 < wlo + 0) wlo = x
			if (whi == "" || x + 0 > whi + 0) whi = x
		}
		x = md["i", N "," P2 ",pread"]
		print "```"
		printf "Why not /proc: a watchdog that looks at %d threads every %d ms through\n", N, P2
		print "/proc/<tid>/stat and /proc/<tid>/schedstat, both files kept open and re-read"
		printf "with pread(), executes %s instructions per sweep (QEMU -icount, %s\n", h(x), kdesc == "" ? "patched" : kdesc
		printf "kernel): %s of a CPU at one instruction per ns%s\n", pshare(x, P2), (x > P2 * 1e6) ? ", so it cannot keep its" : "."
		printf "%sOpening the files each sweep, as most tools do, costs %s.\n", (x > P2 * 1e6) ? "cadence.  " : "", h(md["i", N "," P2 ",open"])
		print "The same sweep through the pages, one vDSO snapshot per thread and no"
		printf "system call, takes %s (%s per thread), %s times fewer than pread\n", h(md["i", N "," P2 ",pages"]), h(per(md["i", N "," P2 ",pages"], N)), ratio("i", N, P2, "pread")
		printf "(%s to %s times less wall time under TCG).  At %d threads every %d ms\n", wlo, whi, n0, P2
		printf "/proc costs %s instructions a sweep, %s of such a CPU: there the\n", h(md["i", n0 "," P2 ",pread"]), pshare(md["i", n0 "," P2 ",pread"], P2)
		print "argument is not cost but content.  No /proc file says how long a thread"
		print "has been queued or asleep right now, nor splits its blocked time into"
		print "sleep, uninterruptible sleep and I/O wait; one page snapshot gives both."
		print "```"
	}' "$work/icount.out" "$work/wall.out" >"$res.tmp"
	mv "$res.tmp" "$res"
	log "wrote ${res#"$top"/}"
}

case "${1:-}" in
--report)
	report
	exit
	;;
esac
rc=0
run || rc=1
report || rc=1
cat "$res"
for mode in icount wall; do
	n=$(grep -c ' method .* ns min ' "$work/$mode.out" 2>/dev/null)
	if [ "${n:-0}" = 0 ] || ! grep -q '^#meta status 0$' "$work/$mode.out"; then
		log "$mode: no complete results"
		rc=1
	fi
done
exit $rc
