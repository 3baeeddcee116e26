#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-bpf: the BPF version of the thread page (bench/bpf/, project
# issue 26) measured side by side with the base: boots the unpatched and the
# patched O2 bench kernels (scripts/o2.config, BPF and BTF on), runs
# "cs_bpf check" and "cs_bpf bench" in each, and writes the results.
#
#   scripts/bench-bpf.sh			build cs_bpf, boot, run, write the results
#   scripts/bench-bpf.sh --report		write the results again from build/bench-bpf/
#					(every kernel's latest run there)
#   scripts/bench-bpf.sh --guest OUT BIN ROUNDS REPS
#					(in the guest) BIN check > OUT.check,
#					BIN --tuned check > OUT.tuned.check,
#					BIN --tuned --live check > OUT.live.check,
#					BIN --tuned bench > OUT.tsv
#
# Each kernel is booted twice: under QEMU -icount (VM_ICOUNT=1, one ns and
# one TSC tick per guest instruction: the instruction counts) and without
# (wall clock, the second opinion, in ns; TCG when KVM does not boot).
# cs_bpf bench: the futex ping-pong of cs_bench -i (ROUNDS round trips, REPS
# repetitions, the least) on 1 CPU and 2, BPF not loaded, with
# kernel.sched_schedstats=1, loaded with no thread, another thread or both
# registered, and on the patched kernel both registered with the series;
# then the tuned BPF version (bench/bpf/cs_bpf_tuned.bpf.c, issue 39) in the
# same run: loaded with its links detached (nobody registered), another
# thread or both registered, without and with its wakeup program (live);
# then the cost of one read (BPF page, schedstat, taskstats, the series'
# csf_thread_snap(), rdtscp).  The kernels are not built here: the lead
# builds them (scripts/bench.sh BENCH_O2=1).
#
# The lead's scripts/bench.sh can run it as one more step:
#	BENCH_BPF_OUT=$out/bpf "$top/scripts/bench-bpf.sh" || rc=1
# or source it and call the functions:
#	. "$top/scripts/bench-bpf.sh"; bench_bpf_run && bench_bpf_report
#
# Environment:
#   BENCH_BPF_KERNELS	"label=bzImage ..." (default: base=the unpatched
#			build/bench-base/build-o2, patched=build/linux-bench-o2)
#   BENCH_BPF_ROUNDS	round trips per repetition (20000, as cs_bench -i)
#   BENCH_BPF_REPS	repetitions (3)
#   BENCH_BPF_WALL=0	no wall-clock boots
#   BENCH_BPF_OUT	results directory (Documentation/bench/bpf)
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
bpf_kernels=${BENCH_BPF_KERNELS:-base=$BUILD_ROOT/bench-base/build-o2/arch/x86/boot/bzImage patched=$BUILD_ROOT/linux-bench-o2/arch/x86/boot/bzImage}

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
	"$bin" check >"$out.check" 2>&1 || rc=1
	cat "$out.check"
	"$bin" --tuned check >"$out.tuned.check" 2>&1 || rc=1
	cat "$out.tuned.check"
	"$bin" --tuned --live check >"$out.live.check" 2>&1 || rc=1
	cat "$out.live.check"
	"$bin" --tuned bench -i "$rounds" -r "$reps" >"$out.tsv.tmp" 2>"$out.err" || rc=1
	cat "$out.tsv.tmp" "$out.err"
	mv "$out.tsv.tmp" "$out.tsv"
	return $rc
}

# Boot every kernel, icount and wall clock; per-boot files in build/bench-bpf/.
bench_bpf_run() {
	local vmdir=${VM_DIR:-$BUILD_ROOT/vm-bpf} kv label kernel mode rc=0 r

	make -C "$top" --no-print-directory bpf || return 1
	mkdir -p "$bpf_work" "$vmdir"
	vmdir=$(cd "$vmdir" && pwd)
	for kv in $bpf_kernels; do
		label=${kv%%=*}
		kernel=${kv#*=}
		if [ ! -f "$kernel" ]; then
			echo "bench-bpf: no kernel $label at $kernel (scripts/bench.sh BENCH_O2=1 builds it)" >&2
			rc=1
			continue
		fi
		# This kernel's files of an earlier run go; other kernels' stay.
		rm -f "$bpf_work/$label"-*.tsv "$bpf_work/$label"-*.check "$bpf_work/$label"-*.err
		for mode in icount wall; do
			[ "$mode" = wall ] && [ "${BENCH_BPF_WALL:-1}" = 0 ] && continue
			echo "bench-bpf: $label, $mode" >&2
			rm -f "$vmdir/out.tsv" "$vmdir/out.check" "$vmdir/out.err" \
				"$vmdir/out.tuned.check" "$vmdir/out.live.check"
			if [ "$mode" = icount ]; then
				VM_ICOUNT=1 VM_DEBUG=0 VM_KERNEL=$kernel VM_DIR=$vmdir \
					"$top/scripts/vm.sh" -- "$top/scripts/bench-bpf.sh" --guest \
					"$vmdir/out" "$bpf_bin" "$bpf_rounds" "$bpf_reps"
			else
				VM_DEBUG=0 VM_KERNEL=$kernel VM_DIR=$vmdir \
					"$top/scripts/vm.sh" -- "$top/scripts/bench-bpf.sh" --guest \
					"$vmdir/out" "$bpf_bin" "$bpf_rounds" "$bpf_reps"
			fi
			r=$?
			[ "$r" = 0 ] || { echo "bench-bpf: $label $mode: guest status $r" >&2; rc=1; }
			for f in tsv check tuned.check live.check err; do
				[ -f "$vmdir/out.$f" ] && cp "$vmdir/out.$f" "$bpf_work/$label-$mode.$f"
			done
			cp "$vmdir/console.log" "$bpf_work/$label-$mode.console.log" 2>/dev/null
		done
	done
	return $rc
}

# results.tsv (every row of every boot, prefixed by kernel and mode) and
# results.md (the tables).
bench_bpf_report() {
	local f label mode c ext id what tsv=$bpf_out/results.tsv md=$bpf_out/results.md

	mkdir -p "$bpf_out"
	{
		printf 'kernel\tmode\tsection\tid\tunit\tmin\tmedian\tmax\tns_min\tdesc\n'
		for f in "$bpf_work"/*.tsv; do
			[ -f "$f" ] || continue
			label=$(basename "$f" .tsv)
			mode=${label##*-}
			label=${label%-*}
			awk -F'\t' -v k="$label" -v m="$mode" -v OFS='\t' \
				'/^#meta/ { print k, m, "meta", $2, "-", $3, "-", "-", "-", "-"; next }
				 /^#/ { next }
				 NF >= 8 { print k, m, $0 }' "$f"
			for c in check:cs_bpf_check:"cs_bpf check" \
				 tuned.check:cs_bpf_tuned_check:"cs_bpf --tuned check" \
				 live.check:cs_bpf_live_check:"cs_bpf --tuned --live check"; do
				ext=${c%%:*}
				id=${c#*:}
				what=${id#*:}
				id=${id%%:*}
				[ -f "${f%.tsv}.$ext" ] && awk -F'\t' -v k="$label" -v m="$mode" -v OFS='\t' \
					-v id="$id" -v what="$what" '
					/^ok - / { p++ } /^not ok - / { n++ }
					END { print k, m, "check", id, "passed/failed", p + 0, n + 0, "-", "-", what }' \
					"${f%.tsv}.$ext"
			done
		done
	} >"$tsv"
	awk -F'\t' -v rounds="$bpf_rounds" -v reps="$bpf_reps" '
		NR == 1 { next }
		$3 == "meta" { meta[$1 "," $2 "," $4] = $6; next }
		$3 == "check" { chk[$1 "," $2 "," $4] = $6 " passed, " $7 " failed"; kern[$1] = 1; next }
		{
			key = $1 "," $2 "," $3 "," $4
			v[key] = $6
			nsv[key] = $9
			kern[$1] = 1
			if ($3 == "pingpong") {
				st = $4; sub(/_[12]cpu$/, "", st)
				if (!(st in seen)) { seen[st] = 1; order[++ns] = st }
			} else if (!($4 in rseen)) {
				rseen[$4] = 1; rorder[++nr] = $4; rdesc[$4] = $10
			}
		}
		function cell(k, m, s, id,   x) {
			x = k "," m "," s "," id
			return (x in v) && v[x] != "-" ? v[x] : "-"
		}
		function ratio(k, m, st, c,   a, b) {
			a = cell(k, m, "pingpong", st "_" c); b = cell(k, m, "pingpong", "base_" c)
			return (a == "-" || b == "-" || b == 0) ? "-" : sprintf("%.3f (%+.0f)", a / b, a - b)
		}
		END {
			nk = 0
			if ("base" in kern) kl[++nk] = "base"
			if ("patched" in kern) kl[++nk] = "patched"
			for (k in kern) if (k != "base" && k != "patched") kl[++nk] = k
			print "# The BPF version of the thread page, side by side"
			print ""
			print "Written by scripts/bench-bpf.sh (make bench-bpf) from build/bench-bpf/."
			print "Kernels: the O2 bench kernels (scripts/o2.config): \"base\" unpatched,"
			print "\"patched\" with the series.  BPF: bench/bpf/cs_bpf.bpf.c (tp_btf on"
			print "sched_switch, sched_wakeup, sched_migrate_task; task storage by pidfd;"
			print "a BPF_F_MMAPABLE array of per-slot pages read under a sequence count)"
			print "and its tuned version bench/bpf/cs_bpf_tuned.bpf.c (issue 39: sched_switch"
			print "and sched_process_exec only, sched_wakeup only for the live view; the"
			print "task->bpf_storage test before any helper call; run-queue time from"
			print "sched_info and rq->clock; links attached only while a thread is"
			print "registered), measured in the same boots."
			print ""
			print "## Futex ping-pong, guest instructions per round trip (QEMU -icount)"
			print ""
			printf "The ping-pong of cs_bench -i: %s round trips, the least of %s repetitions;\n", rounds, reps
			print "ratio: against \"base\" (BPF not loaded) in the same boot, and in"
			print "parentheses the instructions added per round trip (two context switches and"
			print "two wakeups on 1 CPU; on 2 CPUs each thread also switches to and from idle)."
			print ""
			hdr = "| state |"; sep = "|---|"
			for (i = 1; i <= nk; i++) {
				hdr = hdr " " kl[i] " 1 CPU | ratio | " kl[i] " 2 CPUs | ratio |"
				sep = sep "---:|---:|---:|---:|"
			}
			print hdr; print sep
			for (j = 1; j <= ns; j++) {
				st = order[j]; line = "| " st " |"
				for (i = 1; i <= nk; i++)
					line = line " " cell(kl[i], "icount", "pingpong", st "_1cpu") " | " \
						ratio(kl[i], "icount", st, "1cpu") " | " \
						cell(kl[i], "icount", "pingpong", st "_2cpu") " | " \
						ratio(kl[i], "icount", st, "2cpu") " |"
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
			print "(the cross-thread live view)."
			print ""
			print "## The cost of one read from user space"
			print ""
			print "Least of the repetitions of 2000 calls: guest instructions under -icount; ns"
			print "in the wall-clock boot (QEMU, the accelerator in the console log)."
			print ""
			hdr = "| read |"; sep = "|---|"
			for (i = 1; i <= nk; i++) {
				hdr = hdr " " kl[i] " insn | " kl[i] " ns (wall) |"
				sep = sep "---:|---:|"
			}
			print hdr " what |"; print sep "---|"
			for (j = 1; j <= nr; j++) {
				id = rorder[j]; line = "| " id " |"
				for (i = 1; i <= nk; i++) {
					w = kl[i] ",wall,read," id
					line = line " " cell(kl[i], "icount", "read", id) " | " \
						((w in nsv) ? nsv[w] : "-") " |"
				}
				print line " " rdesc[id] " |"
			}
			print ""
			print "## cs_bpf check"
			print ""
			print "| kernel | boot | version | result |"
			print "|---|---|---|---|"
			split("cs_bpf_check cs_bpf_tuned_check cs_bpf_live_check", cids, " ")
			split("first (cs_bpf check)|tuned (cs_bpf --tuned check)|tuned, live (cs_bpf --tuned --live check)", cnames, "|")
			for (i = 1; i <= nk; i++)
				for (m = 0; m < 2; m++) {
					md = m ? "wall" : "icount"
					for (c = 1; c <= 3; c++)
						if ((kl[i] "," md "," cids[c]) in chk)
							print "| " kl[i] " | " md " | " cnames[c] " | " chk[kl[i] "," md "," cids[c]] " |"
				}
			print ""
			print "Per boot, the checks are in build/bench-bpf/KERNEL-BOOT.check (the tuned"
			print "version: in KERNEL-BOOT.tuned.check and KERNEL-BOOT.live.check)."
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
			print "## How the tuned version differs"
			print ""
			print "See Documentation/bench/bpf/tuned.md: only sched_switch and"
			print "sched_process_exec attached (sched_wakeup for the live view), the"
			print "task->bpf_storage test before any helper call, the run-queue time from"
			print "sched_info and rq->clock, counts from the task, the sequence count closed by"
			print "a plain store after a compiler barrier (x86-64 only), links attached only"
			print "while a thread is registered, registration through bpffs-pinned maps."
			print ""
			for (i = 1; i <= nk; i++)
				if ((kl[i] ",icount,kernel") in meta)
					print "- " kl[i] ": " meta[kl[i] ",icount,kernel"] ", " meta[kl[i] ",icount,nr_cpus"] " CPUs"
		}' "$tsv" >"$md"
	echo "bench-bpf: wrote ${tsv#"$top"/} and ${md#"$top"/}"
}

bench_bpf_main() {
	local rc=0 f r

	case "${1:-}" in
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
		result "cs_bpf check in $(basename "$f" .check)" $r "$(tail -n 1 "$f")"
	done
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ] && [ "$rc" = 0 ]
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	bench_bpf_main "$@"
	exit
fi
