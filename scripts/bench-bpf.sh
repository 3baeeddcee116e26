#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-bpf: the four implementations of a thread's scheduling
# buckets measured like for like in one run (project issues 26 and 39):
# the series, the BPF version of the thread page (bench/bpf/), its tuned
# version, its __uptr version (issue 51), empty BPF programs on the same
# tracepoints (the dispatch alone), and the rseq prototype
# (bench/rseq/).  Boots the unpatched
# and the patched O2 bench kernels (scripts/o2.config, BPF and BTF on) and
# runs "cs_bpf check" and "cs_bpf bench" in each, then boots the rseq
# prototype's kernel (the same config + bench/rseq/rseq.config) and runs
# "cs_rseq check" and "cs_rseq bench" there; writes the results, with the
# four implementations side by side, and prints that table.
#
#   scripts/bench-bpf.sh			build cs_bpf and cs_rseq, boot, run, write the results
#   scripts/bench-bpf.sh --report		write the results again from build/bench-bpf/
#					(every kernel's latest run there)
#   scripts/bench-bpf.sh --guest OUT BIN ROUNDS REPS
#					(in the guest) BIN --tuned bench > OUT.tsv,
#					then BIN check > OUT.check,
#					BIN --tuned check > OUT.tuned.check,
#					BIN --tuned --live check > OUT.live.check,
#					BIN --uptr check > OUT.uptr.check
#   scripts/bench-bpf.sh --jit		(in the guest) load build/bpf/cs_bpf_uptr.bpf.o
#					with the kernel tree's bpftool and print
#					its store-releases as verified (xlated)
#					and the JITed code: boot it with
#					VM_KERNEL=... scripts/vm.sh -- scripts/bench-bpf.sh --jit
#					(Documentation/bench/bpf/uptr-jited.txt)
#					(the rseq kernel's guest runs
#					bench/rseq/guest.sh: cs_rseq check >
#					OUT.check, cs_rseq bench > OUT.tsv)
#
# Each kernel is booted BENCH_BPF_BOOTS times (default 1) in each mode, the
# kernels taking turns (boot 1 of every kernel, then boot 2, ...), each boot
# in its files build/bench-bpf/KERNEL-MODE-bN.*; the tables give each row's
# least over the boots and its spread (largest - least), each boot's
# figure taken against the baseline of the same boot.  Each boot: under QEMU -icount (VM_ICOUNT=1, one ns and
# one TSC tick per guest instruction: the instruction counts) and without
# (wall clock, the second opinion, in ns; TCG when KVM does not boot).
# cs_bpf bench: the futex ping-pong of cs_bench -i (ROUNDS round trips, REPS
# repetitions, the least) on 1 CPU and 2, BPF not loaded, with
# kernel.sched_schedstats=1, loaded with no thread, another thread or both
# registered, and on the patched kernel both registered with the series;
# then the tuned BPF version (bench/bpf/cs_bpf_tuned.bpf.c, issue 39) in the
# same run: loaded with its links detached (nobody registered), another
# thread or both registered, without and with its wakeup program (live);
# then the __uptr version (bench/bpf/cs_bpf_uptr.bpf.c, issue 51: another
# thread or both registered) and empty programs on sched_switch alone and
# on sched_switch + sched_wakeup (empty_switch, empty_live: the dispatch
# with no program body); then the cost of one read (BPF page, schedstat,
# taskstats, the series' csf_thread_snap(), rdtscp).  On the patched
# kernel (series v5) the base and BPF rows run as booted,
# kernel.coarse_stat_thread=0 (nobody may register, the hooks patched out);
# cs_bpf bench sets it to 2 before the series' rows (the hooks then stay
# on for good), and the checks run after the bench.  cs_rseq bench (bench/rseq/cs_rseq.c, built
# with bench/rseq/Makefile into build/rseq/cs_rseq): the same ping-pong with
# the prototype's key off (nobody registered), another thread registered
# (key on), both registered, and key off again; the cost of one snapshot.
# results.md's section "The four implementations, like for like (one run)"
# takes each one's added instructions over its own kernel's nothing-
# registered row of the same boot (the series and BPF: the patched kernel's
# "base" row; the rseq prototype: its key-off row), and the report also
# writes ../compare.md (BENCH_BPF_OUT's parent) with that section.  The
# kernels are not built here: the lead builds the O2 ones
# (scripts/bench.sh BENCH_O2=1), bench/rseq/README.md says how to build the
# rseq prototype's.
#
# The lead's scripts/bench.sh can run it as one more step:
#	BENCH_BPF_OUT=$out/bpf "$top/scripts/bench-bpf.sh" || rc=1
# or source it and call the functions:
#	. "$top/scripts/bench-bpf.sh"; bench_bpf_run && bench_bpf_report
#
# Environment:
#   BENCH_BPF_KERNELS	"label=bzImage ..." (default: base=the unpatched
#			build/bench-base/build-o2, patched=build/linux-bench-o2)
#   BENCH_BPF_RSEQ=0	no rseq prototype boots (default on with BASE=7.3,
#			the prototype's base; off with BASE=6.12)
#   BENCH_BPF_RSEQ_KERNEL	the rseq prototype's bzImage, booted with the
#			label "rseq" ("rseq=bzImage" also accepted; default
#			build/linux-rseq-o2/arch/x86/boot/bzImage)
#   BENCH_BPF_ROUNDS	round trips per repetition (20000, as cs_bench -i)
#   BENCH_BPF_REPS	repetitions (3)
#   BENCH_BPF_WALL=0	no wall-clock boots
#   BENCH_BPF_BOOTS	boots per kernel and mode (1; issue 51 asks for >= 5)
#   BENCH_BPF_OUT	results directory (Documentation/bench/bpf)
#   BENCH_BPF_COMPARE	the side-by-side page (BENCH_BPF_OUT/../compare.md;
#			"-": none)
#   VM_DIR		the guest's directory (build/vm-bpf)
#   BASE=6.12		(scripts/base.sh) the kernels under build/6.12/
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"

bpf_bin=$top/build/bpf/cs_bpf
bpf_work=$BUILD_ROOT/bench-bpf
bpf_out=${BENCH_BPF_OUT:-$top/Documentation/bench/bpf}
bpf_rounds=${BENCH_BPF_ROUNDS:-20000}
bpf_reps=${BENCH_BPF_REPS:-3}
bpf_boots=${BENCH_BPF_BOOTS:-1}
bpf_kernels=${BENCH_BPF_KERNELS:-base=$BUILD_ROOT/bench-base/build-o2/arch/x86/boot/bzImage patched=$BUILD_ROOT/linux-bench-o2/arch/x86/boot/bzImage}
# The rseq prototype (bench/rseq/) is a patch on 7.3's base only.
bpf_rseq_bin=$top/build/rseq/cs_rseq
bpf_rseq=${BENCH_BPF_RSEQ:-1}
[ "$BASE" = 7.3 ] || bpf_rseq=${BENCH_BPF_RSEQ:-0}
bpf_rseq_kernel=${BENCH_BPF_RSEQ_KERNEL:-$top/build/linux-rseq-o2/arch/x86/boot/bzImage}
bpf_rseq_kernel=${bpf_rseq_kernel#rseq=}
bpf_compare=${BENCH_BPF_COMPARE:-$(dirname "$bpf_out")/compare.md}

# (In the guest.)  Wait for the kernel to leave tsc-early, as bench.sh does.
bench_bpf_guest() {
	local out=$1 bin=$2 rounds=$3 reps=$4 cs rc=0

	cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
	for _ in $(seq 100); do
		[ "$(cat "$cs")" = tsc-early ] || break
		sleep 0.1
	done
	echo "bench-bpf: $(uname -r), clocksource $(cat "$cs")"
	# The series' static key count (cs_bpf bench's #meta series_key).
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	# The bench first: on the patched kernel its base and BPF rows run with
	# kernel.coarse_stat_thread=0 (the hooks patched out, as booted); cs_bpf
	# sets it to 2 for the series' rows, and the hooks stay on for good.
	"$bin" --tuned bench -i "$rounds" -r "$reps" >"$out.tsv.tmp" 2>"$out.err" || rc=1
	cat "$out.tsv.tmp" "$out.err"
	mv "$out.tsv.tmp" "$out.tsv"
	# The checks, registration with the series allowed (cs_bpf check
	# compares the BPF page with the series' page there).
	if [ -e /proc/sys/kernel/coarse_stat_thread ]; then
		echo 2 >/proc/sys/kernel/coarse_stat_thread || rc=1
	fi
	"$bin" check >"$out.check" 2>&1 || rc=1
	cat "$out.check"
	"$bin" --tuned check >"$out.tuned.check" 2>&1 || rc=1
	cat "$out.tuned.check"
	"$bin" --tuned --live check >"$out.live.check" 2>&1 || rc=1
	cat "$out.live.check"
	"$bin" --uptr check >"$out.uptr.check" 2>&1 || rc=1
	cat "$out.uptr.check"
	return $rc
}

# Boot every kernel, icount and wall clock, BENCH_BPF_BOOTS times, the
# kernels taking turns; per-boot files in build/bench-bpf/KERNEL-MODE-bN.*.
# The rseq prototype's kernel, label "rseq", with bench/rseq/guest.sh.
bench_bpf_run() {
	local vmdir=${VM_DIR:-$BUILD_ROOT/vm-bpf} kv label kernel mode rc=0 r kernels guest
	local n f booted=""

	make -C "$top" --no-print-directory bpf || return 1
	kernels=$bpf_kernels
	if [ "$bpf_rseq" != 0 ]; then
		if make -C "$top/bench/rseq" --no-print-directory OUT="$bpf_rseq_bin"; then
			kernels="$kernels rseq=$bpf_rseq_kernel"
		else
			echo "bench-bpf: cs_rseq did not build (make -C bench/rseq): no rseq prototype rows" >&2
			rc=1
		fi
	fi
	mkdir -p "$bpf_work" "$vmdir"
	vmdir=$(cd "$vmdir" && pwd)
	# The command of this run, for the report.
	printf 'BENCH_BPF_BOOTS=%s BENCH_BPF_ROUNDS=%s BENCH_BPF_REPS=%s BENCH_BPF_WALL=%s BENCH_BPF_RSEQ=%s BENCH_BPF_KERNELS="%s" make bench-bpf\n' \
		"$bpf_boots" "$bpf_rounds" "$bpf_reps" "${BENCH_BPF_WALL:-1}" "$bpf_rseq" \
		"$bpf_kernels" >"$bpf_work/command"
	for n in $(seq "$bpf_boots"); do
		for kv in $kernels; do
			label=${kv%%=*}
			kernel=${kv#*=}
			if [ ! -f "$kernel" ]; then
				if [ "$label" = rseq ]; then
					echo "bench-bpf: no rseq prototype kernel at $kernel (bench/rseq/README.md builds it; BENCH_BPF_RSEQ=0 skips it)" >&2
				else
					echo "bench-bpf: no kernel $label at $kernel (scripts/bench.sh BENCH_O2=1 builds it)" >&2
				fi
				rc=1
				continue
			fi
			guest=("$top/scripts/bench-bpf.sh" --guest "$vmdir/out" "$bpf_bin")
			[ "$label" = rseq ] && guest=("$top/bench/rseq/guest.sh" "$vmdir/out" "$bpf_rseq_bin")
			# This kernel's files of an earlier run go; other kernels' stay.
			case " $booted " in
			*" $label "*) ;;
			*)
				rm -f "$bpf_work/$label"-*.tsv "$bpf_work/$label"-*.check \
					"$bpf_work/$label"-*.err "$bpf_work/$label"-*.console.log
				booted="$booted $label"
				;;
			esac
			for mode in icount wall; do
				[ "$mode" = wall ] && [ "${BENCH_BPF_WALL:-1}" = 0 ] && continue
				echo "bench-bpf: $label, $mode, boot $n of $bpf_boots ($(date -u '+%H:%M UTC'))" >&2
				rm -f "$vmdir/out.tsv" "$vmdir/out.check" "$vmdir/out.err" \
					"$vmdir/out.tuned.check" "$vmdir/out.live.check" \
					"$vmdir/out.uptr.check"
				if [ "$mode" = icount ]; then
					VM_ICOUNT=1 VM_DEBUG=0 VM_KERNEL=$kernel VM_DIR=$vmdir \
						"$top/scripts/vm.sh" -- "${guest[@]}" "$bpf_rounds" "$bpf_reps"
				else
					VM_DEBUG=0 VM_KERNEL=$kernel VM_DIR=$vmdir \
						"$top/scripts/vm.sh" -- "${guest[@]}" "$bpf_rounds" "$bpf_reps"
				fi
				r=$?
				[ "$r" = 0 ] || { echo "bench-bpf: $label $mode boot $n: guest status $r" >&2; rc=1; }
				for f in tsv check tuned.check live.check uptr.check err; do
					[ -f "$vmdir/out.$f" ] && cp "$vmdir/out.$f" "$bpf_work/$label-$mode-b$n.$f"
				done
				cp "$vmdir/console.log" "$bpf_work/$label-$mode-b$n.console.log" 2>/dev/null
			done
		done
	done
	return $rc
}

# results.tsv (every row of every boot, prefixed by kernel, mode and boot)
# and results.md (the tables: each row's least over the boots and its
# spread, largest - least).
bench_bpf_report() {
	local f name rest label mode boot c ext id what tsv=$bpf_out/results.tsv md=$bpf_out/results.md
	local checks when="" four cmd=""

	# When each kernel's -icount boots ran (first and last file).
	for f in "$bpf_work"/*-icount-b*.tsv; do
		[ -f "$f" ] || continue
		name=$(basename "$f" .tsv)
		when="$when ${name%-icount-b*}=$(date -u -r "$f" '+%Y-%m-%d_%H:%M_UTC')"
	done
	[ -f "$bpf_work/command" ] && cmd=$(cat "$bpf_work/command")
	cmd=${cmd//"$top"\//}

	mkdir -p "$bpf_out"
	{
		printf 'kernel\tmode\tboot\tsection\tid\tunit\tmin\tmedian\tmax\tns_min\tdesc\n'
		for f in "$bpf_work"/*-b*.tsv; do
			[ -f "$f" ] || continue
			name=$(basename "$f" .tsv)
			boot=${name##*-b}
			rest=${name%-b*}
			mode=${rest##*-}
			label=${rest%-*}
			awk -F'\t' -v k="$label" -v m="$mode" -v b="$boot" -v OFS='\t' \
				'/^#meta/ { print k, m, b, "meta", $2, "-", $3, "-", "-", "-", "-"; next }
				 /^#/ { next }
				 NF >= 8 { print k, m, b, $0 }' "$f"
			checks=(check:cs_bpf_check:"cs_bpf check"
				tuned.check:cs_bpf_tuned_check:"cs_bpf --tuned check"
				live.check:cs_bpf_live_check:"cs_bpf --tuned --live check"
				uptr.check:cs_bpf_uptr_check:"cs_bpf --uptr check")
			[ "$label" = rseq ] && checks=(check:cs_rseq_check:"cs_rseq check")
			for c in "${checks[@]}"; do
				ext=${c%%:*}
				id=${c#*:}
				what=${id#*:}
				id=${id%%:*}
				[ -f "${f%.tsv}.$ext" ] && awk -F'\t' -v k="$label" -v m="$mode" -v b="$boot" \
					-v OFS='\t' -v id="$id" -v what="$what" '
					/^ok ([0-9]+ )?- / { p++ } /^not ok ([0-9]+ )?- / { n++ }
					END { print k, m, b, "check", id, "passed/failed", p + 0, n + 0, "-", "-", what }' \
					"${f%.tsv}.$ext"
			done
		done
	} >"$tsv"
	awk -F'\t' -v rounds="$bpf_rounds" -v reps="$bpf_reps" -v when="$when" -v cmd="$cmd" '
		NR == 1 { next }
		{ if ($3 + 0 > maxb) maxb = $3 + 0 }
		$4 == "meta" { if (!(($1 "," $2 "," $5) in meta)) meta[$1 "," $2 "," $5] = $7; next }
		$4 == "check" {
			x = $1 "," $2 "," $5
			cp[x] += $7; cf[x] += $8; cn[x]++
			if ($1 != "rseq") kern[$1] = 1
			next
		}
		{
			key = $1 "," $2 "," $4 "," $5 "," $3
			v[key] = $7
			nsv[key] = $10
			nb[$1 "," $2] = ($3 + 0 > nb[$1 "," $2]) ? $3 + 0 : nb[$1 "," $2]
			if ($1 == "rseq") next
			kern[$1] = 1
			if ($4 == "pingpong") {
				st = $5; sub(/_[12]cpu$/, "", st)
				if (!(st in seen)) { seen[st] = 1; order[++ns] = st }
			} else if (!($5 in rseen)) {
				rseen[$5] = 1; rorder[++nr] = $5; rdesc[$5] = $11
			}
		}
		function cell(k, m, s, id, b,   x) {
			x = k "," m "," s "," id "," b
			return (x in v) && v[x] != "-" ? v[x] : "-"
		}
		# Over the boots: SL least, SS spread (largest - least), SN boots.
		function reset() { SN = 0; SL = ""; SH = "" }
		function add(d) {
			if (SN == 0 || d < SL) SL = d
			if (SN == 0 || d > SH) SH = d
			SN++
		}
		function fmt(signed) {
			if (SN == 0) return "-"
			return sprintf(signed ? "%+.0f (%.0f)" : "%.0f (%.0f)", SL, SH - SL) \
				(SN < maxb ? " [" SN " of " maxb " boots]" : "")
		}
		# Instructions added by state st of kernel k over state b0 of
		# kernel k2, on c ("1cpu" or "2cpu"), boot by boot (-icount).
		function added(k, st, k2, b0, c,   b, a, z) {
			reset()
			for (b = 1; b <= maxb; b++) {
				a = cell(k, "icount", "pingpong", st "_" c, b)
				z = cell(k2, "icount", "pingpong", b0 "_" c, b)
				if (a != "-" && z != "-") add(a - z)
			}
			return fmt(1)
		}
		function raw(k, m, s, id,   b, a) {
			reset()
			for (b = 1; b <= maxb; b++) {
				a = cell(k, m, s, id, b)
				if (a != "-") add(a)
			}
			return fmt(0)
		}
		function rawns(k, id,   b, x) {
			reset()
			for (b = 1; b <= maxb; b++) {
				x = k ",wall,read," id "," b
				if ((x in nsv) && nsv[x] != "-") add(nsv[x])
			}
			return SN ? sprintf("%.1f", SL) : "-"
		}
		# One operation of a thread that times itself: a block (the
		# accounting of a round trip, both registered) and two snapshots.
		function perop(k, st, b0, rid, c,   b, a, z, rd) {
			reset()
			for (b = 1; b <= maxb; b++) {
				a = cell(k, "icount", "pingpong", st "_" c, b)
				z = cell(k, "icount", "pingpong", b0 "_" c, b)
				rd = cell(k, "icount", "read", rid, b)
				if (a != "-" && z != "-" && rd != "-") add(a - z + 2 * rd)
			}
			return fmt(0)
		}
		function four(name, k, u, r, b0, rid, rname,   rc) {
			rc = raw(k, "icount", "read", rid)
			print "| " name " | " added(k, u, k, b0, "1cpu") " | " added(k, u, k, b0, "2cpu") \
				" | " (r == "" ? "-" : added(k, r, k, b0, "1cpu")) \
				" | " (r == "" ? "-" : added(k, r, k, b0, "2cpu")) \
				" | " rc (rc == "-" || rname == "" ? "" : " (" rname ")") \
				" | " (r == "" || rid == "" ? "-" : perop(k, r, b0, rid, "1cpu") " / " perop(k, r, b0, rid, "2cpu")) \
				" | " k " kernel, " b0 ": " raw(k, "icount", "pingpong", b0 "_1cpu") " / " \
				raw(k, "icount", "pingpong", b0 "_2cpu") " |"
		}
		function chkline(k, m, id, name,   x) {
			x = k "," m "," id
			if (x in cn)
				print "| " k " | " m " | " name " | " cp[x] " passed, " cf[x] " failed (" cn[x] " boot" (cn[x] > 1 ? "s" : "") ") |"
		}
		END {
			nk = 0
			if ("base" in kern) kl[++nk] = "base"
			if ("patched" in kern) kl[++nk] = "patched"
			for (k in kern) if (k != "base" && k != "patched") kl[++nk] = k
			bk = ("patched" in kern) ? "patched" : "base"
			nw = split(when, wl, " ")
			for (i = 1; i <= nw; i++) {
				split(wl[i], wp, "=")
				gsub(/_/, " ", wp[2])
				if (!(wp[1] in at0) || wp[2] < at0[wp[1]]) at0[wp[1]] = wp[2]
				if (!(wp[1] in at1) || wp[2] > at1[wp[1]]) at1[wp[1]] = wp[2]
			}
			print "# The BPF version of the thread page, side by side"
			print ""
			print "Written by scripts/bench-bpf.sh (make bench-bpf) from build/bench-bpf/."
			print "Kernels: the O2 bench kernels (scripts/o2.config): \"base\" unpatched,"
			print "\"patched\" with the series.  BPF: bench/bpf/cs_bpf.bpf.c (tp_btf on"
			print "sched_switch, sched_wakeup, sched_migrate_task; task storage by pidfd;"
			print "a BPF_F_MMAPABLE array of per-slot pages read under a sequence count),"
			print "its tuned version bench/bpf/cs_bpf_tuned.bpf.c (issue 39: sched_switch"
			print "and sched_process_exec only, sched_wakeup only for the live view; the"
			print "task->bpf_storage test before any helper call; run-queue time from"
			print "sched_info and rq->clock; links attached only while a thread is"
			print "registered), its __uptr version bench/bpf/cs_bpf_uptr.bpf.c (issue 51:"
			print "the tuned accounting writing the thread\047s own page through a __uptr in"
			print "its task storage, the close a BPF store-release; clang-22, libbpf and"
			print "bpftool from the kernel tree) and empty programs on the same tracepoints"
			print "(bench/bpf/cs_bpf_empty.bpf.c), measured in the same boots."
			print ""
			printf "Boots: %d per kernel (-icount), each row the least over the boots and, in\n", maxb
			print "parentheses, the spread (largest - least); an added figure is taken boot by"
			print "boot against the baseline of the same boot.  A cell with fewer boots says so."
			if (cmd != "") {
				print ""
				print "Command:"
				print ""
				print "    " cmd
			}
			print ""
			print "## The implementations, like for like (one run)"
			print ""
			print "The series, the BPF versions (first, tuned, __uptr), empty BPF programs and"
			print "the rseq prototype (bench/rseq/: struct rseq fields written on rseq\047s"
			print "exit path, a kernel patch kept in the project, not in the series;"
			print "\"registered\" there is PR_RSEQ_SCHED_TIME enabled, every thread of the"
			print "pair registering rseq in every state), measured in one run of scripts/bench-bpf.sh under QEMU"
			print "-icount: guest instructions per round trip of cs_bench -i\047s futex ping-pong"
			printf "(two switches and two wakeups; %s round trips, the least of %s repetitions\n", rounds, reps
			printf "per boot; %d boots per kernel), each as the instructions added over its own\n", maxb
			print "kernel\047s nothing-registered row of the same boot: the series and the BPF"
			print "rows on the " bk " kernel against its \"base\" row (BPF not loaded; on the"
			print "patched kernel kernel.coarse_stat_thread=0 as booted: nobody may register,"
			print "the series\047 hooks patched out; the series\047 rows run last, after"
			print "cs_bpf sets it to 2, which turns the hooks on for good); the rseq prototype"
			print "on its own kernel against its key-off row (rseq_none)."
			print ""
			print "\"Others registered\" is what every other switch of the system pays while"
			print "some thread is registered (series_unreg, bpf_unreg, tuned_unreg,"
			print "tuned_live_unreg, uptr_unreg, rseq_unreg); \"both registered\" is the"
			print "registered threads\047 own accounting (series_reg, bpf_reg, tuned_reg,"
			print "tuned_live_reg, uptr_reg, rseq_reg).  The empty programs (empty_switch:"
			print "sched_switch; empty_live: sched_switch and sched_wakeup) run on every"
			print "switch whoever is registered: the attach and dispatch cost alone, with no"
			print "program body, under \"others registered\".  Read: one snapshot from user"
			print "space, instructions per call (least over the boots).  Per operation: what"
			print "one operation of a thread that times itself costs, a block and two"
			print "snapshots: \"both registered\" plus two reads, per boot, the least."
			print ""
			print "| implementation | others registered, 1 CPU | 2 CPUs | both registered, 1 CPU | 2 CPUs | read (insn) | per operation, 1 CPU / 2 CPUs | baseline, 1 CPU / 2 CPUs |"
			print "|---|---:|---:|---:|---:|---:|---:|---|"
			four("the series", bk, "series_unreg", "series_reg", "base", "series_csf_thread_snap", "csf_thread_snap")
			four("BPF, first version", bk, "bpf_unreg", "bpf_reg", "base", "bpf_page_read", "seq loop + clock_gettime")
			four("BPF, tuned", bk, "tuned_unreg", "tuned_reg", "base", "tuned_page_read", "seq loop + clock_gettime")
			four("BPF, tuned, live view (wakeup program)", bk, "tuned_live_unreg", "tuned_live_reg", "base", "tuned_page_read", "seq loop + clock_gettime")
			four("BPF, __uptr (own page, store-release)", bk, "uptr_unreg", "uptr_reg", "base", "uptr_page_read", "seq loop + clock_gettime")
			four("empty BPF program on sched_switch (dispatch alone)", bk, "empty_switch", "", "base", "", "")
			four("empty BPF programs on sched_switch + sched_wakeup", bk, "empty_live", "", "base", "", "")
			four("rseq prototype", "rseq", "rseq_unreg", "rseq_reg", "rseq_none", "rseq_read", "gen loop + clock_gettime")
			print ""
			printf "Nothing registered, over the same baselines: the first BPF version loaded\n"
			printf "%s / %s (1 CPU / 2 CPUs; it stays attached: bpf_none), the tuned version\n", \
				added(bk, "bpf_none", bk, "base", "1cpu"), added(bk, "bpf_none", bk, "base", "2cpu")
			printf "with its links detached %s / %s (tuned_none; the __uptr version detaches\n", \
				added(bk, "tuned_none", bk, "base", "1cpu"), added(bk, "tuned_none", bk, "base", "2cpu")
			print "its links the same way).  The series\047 key off and the rseq prototype\047s key"
			print "off are the baselines themselves; against the unpatched kernel\047s \"base\""
			print "row (another boot of the same round): the series\047 key off"
			printf "%s / %s, the rseq prototype\047s %s / %s.\n", \
				added(bk, "base", "base", "base", "1cpu"), added(bk, "base", "base", "base", "2cpu"), \
				added("rseq", "rseq_none", "base", "base", "1cpu"), added("rseq", "rseq_none", "base", "base", "2cpu")
			print ""
			if (!("rseq" in at0)) {
				print "The rseq prototype\047s kernel was not booted in this run (its row is"
				print "empty; BENCH_BPF_RSEQ=0 or no kernel): its own figures, from another run,"
				print "are in rseq/results.md, not comparable boot for boot with these."
			}
			x = ("rseq,icount,cs_rseq_check" in cn) ? cp["rseq,icount,cs_rseq_check"] " passed, " cf["rseq,icount,cs_rseq_check"] " failed" : "not run"
			print "The rseq prototype\047s self-timing checks (cs_rseq check): " x "."
			x = (bk ",icount,cs_bpf_tuned_check" in cn) ? cp[bk ",icount,cs_bpf_tuned_check"] " passed, " cf[bk ",icount,cs_bpf_tuned_check"] " failed" : "not run"
			print "The tuned BPF version\047s (cs_bpf --tuned check, " bk " kernel, all boots): " x "."
			x = (bk ",icount,cs_bpf_uptr_check" in cn) ? cp[bk ",icount,cs_bpf_uptr_check"] " passed, " cf[bk ",icount,cs_bpf_uptr_check"] " failed" : "not run"
			print "The __uptr BPF version\047s (cs_bpf --uptr check, " bk " kernel, all boots): " x "."
			printf "Boots (-icount, build/bench-bpf/):"
			sepc = " "
			for (i = 1; i <= nk; i++) {
				printf "%s%s %d, %s .. %s", sepc, kl[i], nb[kl[i] ",icount"], \
					(kl[i] in at0) ? at0[kl[i]] : "?", (kl[i] in at1) ? at1[kl[i]] : "?"
				sepc = "; "
			}
			if ("rseq" in at0) printf "%srseq %d, %s .. %s", sepc, nb["rseq,icount"], at0["rseq"], at1["rseq"]
			print "."
			print ""
			print "| | live view of another thread | CPU page | unprivileged | no kernel change | extrapolated at the read |"
			print "|---|---|---|---|---|---|"
			print "| the series | yes | yes | yes (sysctl) | no | yes (vDSO) |"
			print "| BPF, first / tuned | yes (the wakeup program) | no | registration yes, through pinned maps; loading no | yes | yes (clock_gettime() after the copy) |"
			print "| BPF, __uptr | not in this version (the tuned wakeup program would give it) | no | registration yes, through the pinned task storage map; loading no | yes | yes (clock_gettime() after the copy) |"
			print "| rseq prototype | no: a blocked or queued thread publishes nothing | no | yes | no | yes (switch-in stamp + clock_gettime()) |"
			print ""
			print "## Futex ping-pong, guest instructions per round trip (QEMU -icount)"
			print ""
			printf "The ping-pong of cs_bench -i: %s round trips, the least of %s repetitions\n", rounds, reps
			print "per boot; each cell the least over the boots (spread); \"added\": the"
			print "instructions added per round trip over \"base\" (BPF not loaded) of the same"
			print "boot, least over the boots (spread): two context switches and two wakeups"
			print "on 1 CPU; on 2 CPUs each thread also switches to and from idle."
			print ""
			hdr = "| state |"; sep = "|---|"
			for (i = 1; i <= nk; i++) {
				hdr = hdr " " kl[i] " 1 CPU | added | " kl[i] " 2 CPUs | added |"
				sep = sep "---:|---:|---:|---:|"
			}
			print hdr; print sep
			for (j = 1; j <= ns; j++) {
				st = order[j]; line = "| " st " |"
				for (i = 1; i <= nk; i++)
					line = line " " raw(kl[i], "icount", "pingpong", st "_1cpu") " | " \
						(st == "base" ? "-" : added(kl[i], st, kl[i], "base", "1cpu")) " | " \
						raw(kl[i], "icount", "pingpong", st "_2cpu") " | " \
						(st == "base" ? "-" : added(kl[i], st, kl[i], "base", "2cpu")) " |"
				print line
			}
			print ""
			print "States: base = BPF not loaded; schedstats = not loaded, kernel.sched_schedstats=1;"
			print "bpf_none = loaded, no thread registered (a global count skips the lookups);"
			print "bpf_unreg = loaded, another thread registered, the pair not (two task-storage"
			print "lookups per switch); bpf_reg = both registered; series_unreg = the series,"
			print "another thread registered (its static key on), the pair not; series_reg = the"
			print "series, both registered (the last two on the patched kernel only, BPF not"
			print "loaded).  The tuned version: tuned_none = loaded, nobody registered, so its"
			print "links are detached (the tracepoints off: the counterpart of the static key of the series"
			print "off); tuned_unreg = another thread registered, links attached, the pair not"
			print "(the cost every other switch of the system pays: dispatch and the"
			print "task->bpf_storage test); tuned_reg = both registered (the accounting of the"
			print "registered threads themselves); tuned_live_* = the same with the wakeup program attached"
			print "(the cross-thread live view).  The __uptr version: uptr_unreg, uptr_reg as"
			print "tuned_unreg, tuned_reg.  empty_switch = an empty program on sched_switch,"
			print "empty_live = empty programs on sched_switch and sched_wakeup (the dispatch"
			print "alone)."
			print ""
			print "## The cost of one read from user space"
			print ""
			print "Least of the repetitions of 2000 calls, least over the boots (spread): guest"
			print "instructions under -icount; ns in the wall-clock boot, if any (QEMU, the"
			print "accelerator in the console log)."
			print ""
			hdr = "| read |"; sep = "|---|"
			for (i = 1; i <= nk; i++) {
				hdr = hdr " " kl[i] " insn | " kl[i] " ns (wall) |"
				sep = sep "---:|---:|"
			}
			print hdr " what |"; print sep "---|"
			for (j = 1; j <= nr; j++) {
				id = rorder[j]; line = "| " id " |"
				for (i = 1; i <= nk; i++)
					line = line " " raw(kl[i], "icount", "read", id) " | " rawns(kl[i], id) " |"
				print line " " rdesc[id] " |"
			}
			print ""
			print "## cs_bpf check"
			print ""
			print "| kernel | boot | version | result |"
			print "|---|---|---|---|"
			split("cs_bpf_check cs_bpf_tuned_check cs_bpf_live_check cs_bpf_uptr_check", cids, " ")
			split("first (cs_bpf check)|tuned (cs_bpf --tuned check)|tuned, live (cs_bpf --tuned --live check)|__uptr (cs_bpf --uptr check)", cnames, "|")
			for (i = 1; i <= nk; i++)
				for (m = 0; m < 2; m++)
					for (c = 1; c <= 4; c++)
						chkline(kl[i], m ? "wall" : "icount", cids[c], cnames[c])
			for (m = 0; m < 2; m++)
				chkline("rseq", m ? "wall" : "icount", "cs_rseq_check", "rseq prototype (cs_rseq check)")
			print ""
			print "Per boot, the checks are in build/bench-bpf/KERNEL-MODE-bN.check (the tuned"
			print "version: .tuned.check and .live.check; the __uptr version: .uptr.check)."
			print ""
			print "## How the BPF version works"
			print ""
			print "- Registration: BPF_MAP_TYPE_TASK_STORAGE keyed from user space by"
			print "  pidfd_open(tid, PIDFD_THREAD), holding the slot.  An unregistered task costs"
			print "  a bpf_task_storage_get() that finds task->bpf_storage NULL; the storage"
			print "  goes with the task, so a reused tid never inherits a slot.  A global count"
			print "  of registered threads (.bss) skips even that while none is registered."
			print "- Publication: slot N is page N of a BPF_F_MMAPABLE array (4096-byte values),"
			print "  mmap()ed read-only.  Sequence count: odd, data, even, each count store a"
			print "  BPF_XCHG (fetching atomic: x86 xchg, arm64 swpal / ll-sc with dmb, fully"
			print "  ordered); the reader: acquire load, copy, clock_gettime(), acquire fence,"
			print "  load, retry on odd or changed.  Writers of one page are serialised by the"
			print "  runqueue lock (switch, wakeup) and pi_lock (migration), as in the series."
			print "- Time: bpf_ktime_get_ns() (CLOCK_MONOTONIC); the reader extrapolates the"
			print "  current state with clock_gettime(CLOCK_MONOTONIC), splitting a sleep at the"
			print "  wakeup stamp, as the vDSO of the series does with the cycle counter."
			print ""
			print "## How the tuned and __uptr versions differ"
			print ""
			print "See Documentation/bench/bpf/tuned.md: only sched_switch and"
			print "sched_process_exec attached (sched_wakeup for the live view), the"
			print "task->bpf_storage test before any helper call, the run-queue time from"
			print "sched_info and rq->clock, counts from the task, the sequence count closed by"
			print "a plain store after a compiler barrier (x86-64 only), links attached only"
			print "while a thread is registered, registration through bpffs-pinned maps."
			print "The __uptr version (Documentation/bench/bpf/uptr.md): the same accounting;"
			print "the page is the thread\047s own memory, pinned by the kernel when the thread"
			print "stores its address in its task storage (struct cs_bpf_ureg); the close is a"
			print "BPF store-release (checked in the object at build time)."
			print ""
			for (i = 1; i <= nk; i++)
				if ((kl[i] ",icount,kernel") in meta)
					print "- " kl[i] ": " meta[kl[i] ",icount,kernel"] ", " meta[kl[i] ",icount,nr_cpus"] " CPUs"
			if (("rseq,icount,kernel") in meta)
				print "- rseq: " meta["rseq,icount,kernel"] ", " meta["rseq,icount,nr_cpus"] " CPUs (the rseq prototype)"
		}' "$tsv" >"$md"
	echo "bench-bpf: wrote ${tsv#"$top"/} and ${md#"$top"/}"
	four=$(bench_bpf_four "$md")
	[ "$bpf_compare" = - ] && return 0
	{
		echo "# The series, the BPF versions and an rseq prototype, like for like"
		echo
		echo "Written by scripts/bench-bpf.sh (make bench-bpf, or --report) with"
		echo "$(basename "$bpf_out")/results.md, from the same run: its section \"The"
		echo "implementations, like for like (one run)\", which follows.  The rows of"
		echo "every state, the read costs and the checks are in $(basename "$bpf_out")/results.md;"
		echo "the rseq prototype's own page, with the cs_rseq_nopublish boot and the split"
		echo "of its cost, is rseq/results.md."
		if [ -n "$cmd" ]; then
			echo
			echo "Command:"
			echo
			echo "    $cmd"
		fi
		echo
		printf '%s\n' "$four" | sed '1,2d'
		echo
		echo "A fence counts as one instruction here: the fenced clock reads per round"
		echo "trip of each design, timed natively, are in fence.md."
		echo
		echo "Not measured like for like: the server-like requests (Documentation/bench/server,"
		echo "the series only) and wall-clock time (TCG is not hardware)."
	} >"$bpf_compare"
	echo "bench-bpf: wrote ${bpf_compare#"$top"/}"
}

# The like-for-like section of results.md FILE, heading included.
bench_bpf_four() {
	awk '/^## The implementations, like for like/ { p = 1; print; next }
	     p && /^## / { exit } p' "$1" |
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}

# (In the guest.)  The __uptr object's store-releases after the verifier,
# and the JIT's code for them.
bench_bpf_jit() {
	local bt=$top/build/bpf-tools/bpftool/bpftool pin=/sys/fs/bpf/cs_bpf_uptr_jit p rc=0

	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || return 1
	"$bt" prog loadall "$top/build/bpf/cs_bpf_uptr.bpf.o" "$pin" || return 1
	for p in cs_switch cs_exec; do
		echo "== $p xlated"
		"$bt" prog dump xlated pinned "$pin/$p" | grep -n -B3 -A1 -i release || rc=1
		echo "== $p jited"
		"$bt" prog dump jited pinned "$pin/$p" >"/tmp/jited.$p" 2>&1 || rc=1
		wc -l <"/tmp/jited.$p"
		cat "/tmp/jited.$p"
	done
	rm -rf "$pin"
	return $rc
}

bench_bpf_main() {
	local rc=0 f r

	case "${1:-}" in
	--jit)
		bench_bpf_jit
		return
		;;
	--guest)
		shift
		bench_bpf_guest "$@"
		return
		;;
	--report)
		bench_bpf_report
		return
		;;
	esac
	bench_bpf_run || rc=1
	bench_bpf_report || rc=1
	# The checks of every boot, counted.
	for f in "$bpf_work"/*.check; do
		[ -f "$f" ] || continue
		tail -n 1 "$f" | grep -q ' 0 failed$'
		r=$?
		case $(basename "$f") in
		rseq-*) result "cs_rseq check in $(basename "$f" .check)" $r "$(tail -n 1 "$f")" ;;
		*) result "cs_bpf check in $(basename "$f" .check)" $r "$(tail -n 1 "$f")" ;;
		esac
	done
	# The like-for-like table, printed.
	echo
	bench_bpf_four "$bpf_out/results.md"
	echo
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ] && [ "$rc" = 0 ]
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	bench_bpf_main "$@"
	exit
fi
