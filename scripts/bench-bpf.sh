#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-bpf: the four implementations of a thread's scheduling
# buckets measured like for like in one run (project issues 26 and 39):
# the series, the BPF version of the thread page (bench/bpf/), its tuned
# version, and the rseq-style prototype (bench/rseq/).  Boots the unpatched
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
#					(in the guest) BIN check > OUT.check,
#					BIN --tuned check > OUT.tuned.check,
#					BIN --tuned --live check > OUT.live.check,
#					BIN --tuned bench > OUT.tsv
#					(the rseq kernel's guest runs
#					bench/rseq/guest.sh: cs_rseq check >
#					OUT.check, cs_rseq bench > OUT.tsv)
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
# csf_thread_snap(), rdtscp).  cs_rseq bench (bench/rseq/cs_rseq.c, built
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
# The rseq prototype's kernel last, label "rseq", with bench/rseq/guest.sh.
bench_bpf_run() {
	local vmdir=${VM_DIR:-$BUILD_ROOT/vm-bpf} kv label kernel mode rc=0 r kernels guest

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
		rm -f "$bpf_work/$label"-*.tsv "$bpf_work/$label"-*.check "$bpf_work/$label"-*.err
		for mode in icount wall; do
			[ "$mode" = wall ] && [ "${BENCH_BPF_WALL:-1}" = 0 ] && continue
			echo "bench-bpf: $label, $mode" >&2
			rm -f "$vmdir/out.tsv" "$vmdir/out.check" "$vmdir/out.err" \
				"$vmdir/out.tuned.check" "$vmdir/out.live.check"
			if [ "$mode" = icount ]; then
				VM_ICOUNT=1 VM_DEBUG=0 VM_KERNEL=$kernel VM_DIR=$vmdir \
					"$top/scripts/vm.sh" -- "${guest[@]}" "$bpf_rounds" "$bpf_reps"
			else
				VM_DEBUG=0 VM_KERNEL=$kernel VM_DIR=$vmdir \
					"$top/scripts/vm.sh" -- "${guest[@]}" "$bpf_rounds" "$bpf_reps"
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
	local checks when="" four

	# When each kernel's -icount rows were measured (the four-way section).
	for f in "$bpf_work"/*-icount.tsv; do
		[ -f "$f" ] && when="$when $(basename "$f" -icount.tsv)=$(date -u -r "$f" '+%Y-%m-%d_%H:%M_UTC')"
	done

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
			checks=(check:cs_bpf_check:"cs_bpf check"
				tuned.check:cs_bpf_tuned_check:"cs_bpf --tuned check"
				live.check:cs_bpf_live_check:"cs_bpf --tuned --live check")
			[ "$label" = rseq ] && checks=(check:cs_rseq_check:"cs_rseq check")
			for c in "${checks[@]}"; do
				ext=${c%%:*}
				id=${c#*:}
				what=${id#*:}
				id=${id%%:*}
				[ -f "${f%.tsv}.$ext" ] && awk -F'\t' -v k="$label" -v m="$mode" -v OFS='\t' \
					-v id="$id" -v what="$what" '
					/^ok ([0-9]+ )?- / { p++ } /^not ok ([0-9]+ )?- / { n++ }
					END { print k, m, "check", id, "passed/failed", p + 0, n + 0, "-", "-", what }' \
					"${f%.tsv}.$ext"
			done
		done
	} >"$tsv"
	awk -F'\t' -v rounds="$bpf_rounds" -v reps="$bpf_reps" -v when="$when" '
		NR == 1 { next }
		$3 == "meta" { meta[$1 "," $2 "," $4] = $6; next }
		$3 == "check" {
			chk[$1 "," $2 "," $4] = $6 " passed, " $7 " failed"
			if ($1 != "rseq") kern[$1] = 1
			next
		}
		{
			key = $1 "," $2 "," $3 "," $4
			v[key] = $6
			nsv[key] = $9
			# The rseq prototype: only in its own section.
			if ($1 == "rseq") next
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
		# Instructions added by state st over state b0 of kernel k
		# (-icount), on c ("1cpu" or "2cpu"); k2/b0 may name another kernel.
		function added(k, st, k2, b0, c,   a, b) {
			a = cell(k, "icount", "pingpong", st "_" c)
			b = cell(k2, "icount", "pingpong", b0 "_" c)
			return (a == "-" || b == "-") ? "-" : sprintf("%+.0f", a - b)
		}
		function rd(k, id,   x) {
			x = cell(k, "icount", "read", id)
			return x == "-" ? "-" : sprintf("%.0f", x)
		}
		function four(name, k, u, r, b0, rid, rname,   rc) {
			rc = rd(k, rid)
			print "| " name " | " added(k, u, k, b0, "1cpu") " | " added(k, u, k, b0, "2cpu") \
				" | " added(k, r, k, b0, "1cpu") " | " added(k, r, k, b0, "2cpu") \
				" | " rc (rc == "-" ? "" : " (" rname ")") \
				" | " k " kernel, " b0 ": " cell(k, "icount", "pingpong", b0 "_1cpu") " / " \
				cell(k, "icount", "pingpong", b0 "_2cpu") " |"
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
			# The four implementations side by side: the series and both BPF
			# versions on the patched kernel (on "base" without it), the
			# rseq prototype on its own kernel, each against its own
			# nothing-registered row of the same boot.
			bk = ("patched" in kern) ? "patched" : "base"
			nw = split(when, wl, " ")
			for (i = 1; i <= nw; i++) {
				split(wl[i], wp, "=")
				gsub(/_/, " ", wp[2])
				at[wp[1]] = wp[2]
			}
			print "## The four implementations, like for like (one run)"
			print ""
			print "The series, the BPF version (first and tuned) and the rseq-style prototype"
			print "(bench/rseq/: a kernel patch kept in the project, not in the series; the"
			print "buckets accumulated in task_struct behind a static key and published on the"
			print "return to user space into a struct the thread registered with a prctl),"
			print "measured in one run of scripts/bench-bpf.sh under QEMU -icount: guest"
			print "instructions per round trip of cs_bench -i\047s futex ping-pong (two switches"
			printf "and two wakeups; %s round trips, the least of %s repetitions), each as the\n", rounds, reps
			print "instructions added over its own kernel\047s nothing-registered row of the"
			print "same boot: the series and both BPF versions on the " bk " kernel against"
			print "its \"base\" row (BPF not loaded, the series\047 key off); the rseq"
			print "prototype on its own kernel (7.3 base +"
			print "bench/rseq/0001-*.patch, the same O2 config + bench/rseq/rseq.config)"
			print "against its key-off row (rseq_none)."
			print ""
			print "\"Others registered\" is what every other switch of the system pays while"
			print "some thread is registered (series_unreg, bpf_unreg, tuned_unreg,"
			print "tuned_live_unreg, rseq_unreg); \"both registered\" is the registered"
			print "threads\047 own accounting (series_reg, bpf_reg, tuned_reg, tuned_live_reg,"
			print "rseq_reg).  Read: one snapshot from user space, instructions per call."
			print ""
			print "| implementation | others registered, 1 CPU | 2 CPUs | both registered, 1 CPU | 2 CPUs | read (insn) | baseline, 1 CPU / 2 CPUs |"
			print "|---|---:|---:|---:|---:|---:|---|"
			four("the series", bk, "series_unreg", "series_reg", "base", "series_csf_thread_snap", "csf_thread_snap")
			four("BPF, first version", bk, "bpf_unreg", "bpf_reg", "base", "bpf_page_read", "seq loop + clock_gettime")
			four("BPF, tuned", bk, "tuned_unreg", "tuned_reg", "base", "tuned_page_read", "seq loop + clock_gettime")
			four("BPF, tuned, live view (wakeup program)", bk, "tuned_live_unreg", "tuned_live_reg", "base", "tuned_page_read", "seq loop + clock_gettime")
			four("rseq prototype", "rseq", "rseq_unreg", "rseq_reg", "rseq_none", "rseq_read", "gen loop + clock_gettime")
			print ""
			printf "Nothing registered, over the same baselines: the first BPF version loaded\n"
			printf "%s / %s (1 CPU / 2 CPUs; it stays attached: bpf_none), the tuned version\n", \
				added(bk, "bpf_none", bk, "base", "1cpu"), added(bk, "bpf_none", bk, "base", "2cpu")
			printf "with its links detached %s / %s (tuned_none).  The series\047 key off and the\n", \
				added(bk, "tuned_none", bk, "base", "1cpu"), added(bk, "tuned_none", bk, "base", "2cpu")
			print "rseq prototype\047s key off are the baselines themselves; against the"
			print "unpatched kernel\047s \"base\" row (another boot of this run): the series\047 key"
			printf "off %s / %s, the rseq prototype\047s %s / %s.  The rseq prototype with its key\n", \
				added(bk, "base", "base", "base", "1cpu"), added(bk, "base", "base", "base", "2cpu"), \
				added("rseq", "rseq_none", "base", "base", "1cpu"), added("rseq", "rseq_none", "base", "base", "2cpu")
			printf "off again after the registrations: %s / %s (rseq_none_after).  The\n", \
				added("rseq", "rseq_none_after", "rseq", "rseq_none", "1cpu"), \
				added("rseq", "rseq_none_after", "rseq", "rseq_none", "2cpu")
			print "prototype without publication (the boot option cs_rseq_nopublish, a boot of"
			print "its own) is not in this run: Documentation/bench/rseq/results.md."
			print ""
			x = ("rseq,icount,cs_rseq_check" in chk) ? chk["rseq,icount,cs_rseq_check"] : "not run"
			print "The rseq prototype\047s self-timing checks in the same boot (cs_rseq check): " x "."
			x = (bk ",icount,cs_bpf_tuned_check" in chk) ? chk[bk ",icount,cs_bpf_tuned_check"] : "not run"
			print "The tuned BPF version\047s (cs_bpf --tuned check, " bk " kernel): " x "."
			printf "Boots (-icount, build/bench-bpf/):"
			sepc = " "
			for (i = 1; i <= nk; i++) {
				printf "%s%s %s", sepc, kl[i], (kl[i] in at) ? at[kl[i]] : "?"
				sepc = ", "
			}
			if ("rseq" in at) printf "%srseq %s", sepc, at["rseq"]
			print "."
			print ""
			print "| | live view of another thread | CPU page | unprivileged | no kernel change | extrapolated at the read |"
			print "|---|---|---|---|---|---|"
			print "| the series | yes | yes | yes (sysctl) | no | yes (vDSO) |"
			print "| BPF, first / tuned | yes (the wakeup program) | no | registration yes, through pinned maps; loading no | yes | yes (clock_gettime() after the copy) |"
			print "| rseq prototype | no: a blocked or queued thread publishes nothing | no | yes | no | yes (switch-in stamp + clock_gettime()) |"
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
			for (m = 0; m < 2; m++) {
				md = m ? "wall" : "icount"
				if (("rseq," md ",cs_rseq_check") in chk)
					print "| rseq | " md " | rseq prototype (cs_rseq check) | " chk["rseq," md ",cs_rseq_check"] " |"
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
			if (("rseq,icount,kernel") in meta)
				print "- rseq: " meta["rseq,icount,kernel"] ", " meta["rseq,icount,nr_cpus"] " CPUs (the rseq prototype)"
		}' "$tsv" >"$md"
	echo "bench-bpf: wrote ${tsv#"$top"/} and ${md#"$top"/}"
	four=$(bench_bpf_four "$md")
	[ "$bpf_compare" = - ] && return 0
	{
		echo "# The series, two BPF versions and an rseq prototype, like for like"
		echo
		echo "Written by scripts/bench-bpf.sh (make bench-bpf, or --report) with"
		echo "$(basename "$bpf_out")/results.md, from the same run: its section \"The four"
		echo "implementations, like for like (one run)\", which follows.  The rows of"
		echo "every state, the read costs and the checks are in $(basename "$bpf_out")/results.md;"
		echo "the rseq prototype's own page, with the cs_rseq_nopublish boot and the split"
		echo "of its cost, is rseq/results.md (bench/rseq/results.md)."
		echo
		printf '%s\n' "$four" | sed '1,2d'
		echo
		echo "Not measured like for like: the server-like requests (Documentation/bench/server,"
		echo "the series only) and wall-clock time (TCG is not hardware)."
	} >"$bpf_compare"
	echo "bench-bpf: wrote ${bpf_compare#"$top"/}"
}

# The four-way section of results.md FILE, heading included.
bench_bpf_four() {
	awk '/^## The four implementations/ { p = 1 } p && /^## / && !/^## The four/ { exit } p' "$1" |
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
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
