#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: run cs_bench (bench/cs_bench.c; scripts/build-cs-bench.sh) in
# guests booted with kernels without debug options, and write the results.
#
#   scripts/bench.sh			build, boot, run, write the results
#   scripts/bench.sh --report		write the results again from build/bench/
#   scripts/bench.sh --guest OUT BIN ARGS	(in the guest) BIN -t ARGS > OUT
#   scripts/bench.sh --guest-perf OUT PERF SHIM PIPE_LOOPS MSG_GROUPS MSG_LOOPS REPS
#					(in the guest) perf bench, see below
#
# Kernels, each built with scripts/build-kernel.sh minus scripts/debug.config
# (a build takes ~12 min on 2 cores; builds run at nice $BENCH_NICE):
#   patched	linux/ as it is, build/linux-bench: every cs_bench section
#   base	the unpatched tree, tag "base" of linux/ checked out in a shared
#		clone (build/bench-base/src; linux/ itself is not touched),
#		same config, build/bench-base/build: context switches only
#   nocs	linux/ with CONFIG_COARSE_STAT=n, build/linux-bench-nocs:
#		context switches only
#   before	with BENCH_BEFORE=REV (e.g. v3): linux/'s REV checked out in a
#		shared clone (build/bench-before/src), same config,
#		build/bench-before/build, running its own cs_bench (built from
#		that tree's selftests and UAPI headers): an earlier version of
#		the series, whose figures are printed next to the patched
#		kernel's
# The context-switch runs (cs_bench -s) alternate between the kernels,
# BENCH_ROUNDS boots each; the lowest of the boots' medians is compared.
#
# Instructions per switch (icount runs): each kernel is also booted under
# QEMU -icount shift=0,sleep=off (scripts/vm.sh VM_ICOUNT=1), where the
# guest's clock and TSC advance one ns, one tick, per guest instruction, and
# runs cs_bench -i: BENCH_ICOUNT_REPS repetitions of BENCH_ICOUNT_ROUNDS
# futex round trips per state -- no thread registered (key off) first, then
# key on with the two threads unregistered, then both registered -- on one
# CPU and on two.  The least repetition of all boots is compared with the
# targets.  ~30 s per boot (3 kernels x 2 boots: ~3 min), the same figures to
# a few in 10^4 whatever the host's load; but instructions, not cycles
# (results.md says what that hides).
#
# perf bench (with the icount runs, or alone with BENCH_PERF_ONLY=1): perf
# from the tree's tools/perf (scripts/build-perf.sh, built once into
# build/perf) in one more icount boot per kernel: perf bench sched pipe
# (processes and -T threads, on CPU 0 and on CPUs 0-1) and perf bench sched
# messaging (hackbench; processes and -t threads), BENCH_PERF_REPS runs each,
# key off, key on (a holder process registered) and registered (every task
# and thread of perf, by the LD_PRELOAD shim bench/cs_register.c); the
# least run is compared, in instructions (~3 min per boot as sized).
#
# Results: $BENCH_OUT (Documentation/bench/): results.tsv (raw, every boot),
# results.md (tables, ratios first), results.svg (per-call cost, log scale;
# needs gnuplot).  Per-boot files and console logs: build/bench/.
#
# Environment:
#   BENCH_BASE=0, BENCH_NOCS=0	skip the base or the =n kernel
#   BENCH_BEFORE=REV		also the before kernel (above): REV of linux/
#   BENCH_ICOUNT		unset: wall-clock and icount runs; 1: only the
#				icount runs; 0: only the wall-clock runs (the
#				other kind's figures of an earlier run are kept)
#   BENCH_ICOUNT_BOOTS		boots per kernel for the icount runs (2)
#   BENCH_ICOUNT_ROUNDS		round trips per repetition (20000)
#   BENCH_ICOUNT_REPS		repetitions per state and boot (3)
#   BENCH_BUILD=0		use the kernels as already built
#   BENCH_PATCHED		the patched kernel's build directory
#				(build/linux-bench, -o2); with LINUX=, an
#				earlier version of the series, for a before
#				and after
#   BENCH_ROUNDS		boots per kernel for the switch comparison (3)
#   BENCH_PERF=0		no perf bench boots with the icount runs
#   BENCH_BPF=0			make bench without scripts/bench-bpf.sh (the
#				BPF version of the thread page and schedstats,
#				side by side, in the -O2 kernels; results in
#				Documentation/bench/bpf)
#   BENCH_SERVER=0		without scripts/bench-server.sh (server-like
#				requests, blocks of 50-500 us, -O2 kernels, icount;
#				results in Documentation/bench/server)
#   BENCH_HOOK_NATIVE=0		without scripts/bench-hook-native.sh (the hooks'
#				instructions timed natively: O2/hook-native.md)
#   BENCH_REGISTRATION=0	without scripts/bench-registration.sh (registered
#				against plain thread create/exit, -O2 kernel,
#				icount and wall clock: O2/registration.md)
#   BENCH_PERF_ONLY=1		only the perf bench boots (no cs_bench runs)
#   BENCH_PERF_PIPE_LOOPS	perf bench sched pipe -l (50000)
#   BENCH_PERF_MSG_GROUPS	perf bench sched messaging -g (2)
#   BENCH_PERF_MSG_LOOPS	perf bench sched messaging -l (50)
#   BENCH_PERF_REPS		runs per benchmark and state (3)
#   BENCH_ARGS			more cs_bench arguments for every run (e.g. -q)
#   BENCH_SWITCH_ARGS		more for the switch-only runs (default -r 15)
#   BENCH_NICE			niceness of the builds (19)
#   BENCH_OUT			where the results go (Documentation/bench; the
#				-O2 ones in its O2/)
#   BENCH_O2=1			only the kernels built as distributions do
#				(scripts/o2.config: -O2 instead of tinyconfig's
#				-Os, tracepoints, BPF with BTF), in build
#				directories of their own (suffix -o2,
#				build/bench-o2); BENCH_O2=0 only tinyconfig's
#				-Os; unset (make bench): both, -O2 first, and
#				the two icount target tables at the end
#   BENCH_OS=0			make bench without the -Os half (the -O2
#				kernels, their BPF, server, native and
#				registration runs, and the -O2 table only)
#   VM_DIR			the guest's directory (build/vm-bench)
#   BASE=6.12			(scripts/base.sh) linux-6.12/, every build/ above
#				is build/6.12/ ($BUILD_ROOT), the results go to
#				Documentation/bench/6.12 (and .../6.12/O2)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"

# (In the guest.)  The kernel replaces tsc-early by tsc once it has refined
# the TSC's frequency, a few seconds into the boot: not in the middle of a
# run.  Sets cs, the clocksource file.
wait_tsc() {
	cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
	for _ in $(seq 100); do
		[ "$(cat "$cs")" = tsc-early ] || break
		sleep 0.1
	done
}

if [ "${1:-}" = --guest ]; then
	out=$2
	bin=$3
	shift 3
	[ -x "$bin" ] || { echo "bench: no $bin" >&2; exit 1; }
	wait_tsc
	echo "bench: $(uname -r), clocksource $(cat "$cs")"
	# What of the built-in mitigations the guest's CPU made the kernel use.
	for v in /sys/devices/system/cpu/vulnerabilities/*; do
		[ -r "$v" ] && echo "bench: vulnerabilities: ${v##*/}: $(cat "$v")"
	done
	echo "bench: preempt $(cat /sys/kernel/debug/sched/preempt 2>/dev/null || echo '?')"
	"$bin" -t "$@" | tee "$out.tmp"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] && mv "$out.tmp" "$out"
	exit "$rc"
fi

# --- perf bench (guest side) -------------------------------------------------
# scripts/bench.sh --guest-perf OUT PERF SHIM PIPE_LOOPS MSG_GROUPS MSG_LOOPS REPS
# (in an icount guest): perf bench sched pipe (processes, -T threads; 1 CPU
# with taskset -c 0, 2 CPUs) and sched messaging (processes, -t threads),
# REPS runs each, in three states in this order: key off (nothing
# registered), key on with a holder process registered and perf not, perf's
# every thread registered (SHIM preloaded with CS_REGISTER=1; the holder
# stays).  Rows "perf" of bench.sh's tsv: instructions per round trip (pipe)
# and millions of instructions per run (messaging) under -icount.
if [ "${1:-}" = --guest-perf ]; then
	out=$2 perf=$3 shim=$4 pl=$5 mg=$6 ml=$7 reps=$8
	[ -x "$perf" ] || { echo "bench: no $perf" >&2; exit 1; }
	wait_tsc
	echo "bench: $(uname -r), clocksource $(cat "$cs"), perf bench"
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	keycount() {
		sed -n 's/^key //p' /sys/kernel/debug/coarse_stat/stats 2>/dev/null | grep . || echo -1
	}
	declare -A cmd=(
		[pipe_1cpu_proc]="taskset -c 0 $perf bench sched pipe -l $pl"
		[pipe_1cpu_thr]="taskset -c 0 $perf bench sched pipe -T -l $pl"
		[pipe_2cpu_proc]="taskset -c 0,1 $perf bench sched pipe -l $pl"
		[pipe_2cpu_thr]="taskset -c 0,1 $perf bench sched pipe -T -l $pl"
		[msg_proc]="$perf bench sched messaging -g $mg -l $ml"
		[msg_thr]="$perf bench sched messaging -t -g $mg -l $ml"
	)
	cases="pipe_1cpu_proc pipe_1cpu_thr pipe_2cpu_proc pipe_2cpu_thr msg_proc msg_thr"
	reglog=/tmp/cs_register.log
	printf '#meta\tnr_cpus\t%s\n#meta\tclocksource\t%s\n#meta\tkernel\t%s\n' \
		"$(nproc)" "$(cat "$cs")" "$(uname -r)" >"$out.tmp"
	printf '#meta\tperf_args\tpipe -l %s; messaging -g %s -l %s; %s runs\n' \
		"$pl" "$mg" "$ml" "$reps" >>"$out.tmp"
	holder=
	rc=0
	for st in keyoff keyon reg; do
		# Can this kernel register at all (base and =n kernels: no)?  Asked
		# after the key-off runs: the key goes off 1 s after the last release.
		if [ "$st" = keyon ] && ! CS_REGISTER=1 LD_PRELOAD=$shim /bin/true 2>/dev/null; then
			echo "bench: no coarse_stat registration on this kernel: key off only" >&2
			break
		fi
		if [ "$st" = keyon ]; then
			# One registered thread elsewhere: the key is on, perf unregistered.
			CS_REGISTER=1 LD_PRELOAD=$shim sleep 100000 &
			holder=$!
			sleep 1
			kill -0 "$holder" 2>/dev/null || { echo "bench: the holder did not register" >&2; exit 1; }
		fi
		if [ "$st" = keyoff ] && [ "$(keycount)" -gt 0 ]; then
			echo "bench: the static key is on (count $(keycount)) with nothing of this run registered" >&2
			exit 1
		fi
		printf '#meta\tkey_%s\t%s\n' "$st" "$(keycount)" >>"$out.tmp"
		for c in $cases; do
			vals=()
			for ((i = 1; i <= reps; i++)); do
				rm -f "$reglog"
				if [ "$st" = reg ]; then
					# shellcheck disable=SC2086
					o=$(CS_REGISTER=1 CS_REGISTER_LOG=$reglog LD_PRELOAD=$shim ${cmd[$c]} 2>&1)
				else
					# shellcheck disable=SC2086
					o=$(${cmd[$c]} 2>&1)
				fi
				r=$?
				case "$c" in
				pipe*)	v=$(awk '$2 == "usecs/op" { printf "%.1f", $1 * 1000 }' <<<"$o") ;;
				*)	v=$(awk '/Total time:/ { printf "%.0f", $3 * 1000 }' <<<"$o") ;;
				esac
				if [ "$r" != 0 ] || [ -z "$v" ]; then
					echo "bench: $c ($st) failed, status $r:" >&2
					echo "$o" >&2
					rc=1
					continue
				fi
				n=0
				[ "$st" != reg ] || n=$(grep -c . "$reglog" 2>/dev/null)
				echo "bench: $c $st run $i: $v (registrations: $n)" >&2
				if [ "$st" = reg ] && [ "$n" -lt 2 ]; then
					echo "bench: $c registered only $n threads" >&2
					rc=1
				fi
				vals+=("$v")
			done
			[ ${#vals[@]} -gt 0 ] || continue
			[ "$st" != reg ] || printf '#meta\tregs_%s\t%s\n' "$c" "$n" >>"$out.tmp"
			unit=insn/op
			case "$c" in msg*) unit=Minsn ;; esac
			printf '%s\n' "${vals[@]}" | sort -g | awk -v id="${c}_$st" -v u="$unit" \
				-v d="$(sed "s|^taskset -c [0-9,]* ||; s|$perf|perf|" <<<"${cmd[$c]}")" -v OFS='\t' '
				{ v[NR] = $1 }
				END { print "perf", id, u, v[int((NR + 1) / 2)], v[1], v[NR], "-", "-", "-", d }'
		done >>"$out.tmp"
	done
	[ -z "$holder" ] || kill "$holder"
	cat "$out.tmp"
	[ "$rc" = 0 ] && mv "$out.tmp" "$out"
	exit "$rc"
fi

# Both builds unless BENCH_O2 says which: -O2 with tracepoints first, as
# distributions build (the verdict that counts), then tinyconfig's -Os; the
# two icount target tables last.
if [ -z "${BENCH_O2:-}" ]; then
	rc=0
	res_base=
	[ "$BASE" = 7.3 ] || res_base=/$BASE
	out=${BENCH_OUT:-$top/Documentation/bench$res_base}
	BENCH_O2=1 "$0" "$@" || rc=$?
	# The BPF version of the thread page and schedstats, on the -O2 kernels
	# (BPF and BTF on): scripts/bench-bpf.sh, BENCH_BPF=0 not.
	if [ "${BENCH_BPF:-1}" != 0 ]; then
		if [ "${1:-}" = --report ]; then
			BENCH_BPF_OUT=$out/bpf "$top/scripts/bench-bpf.sh" --report || rc=1
		elif make --no-print-directory -C "$top" bpf; then
			BENCH_BPF_OUT=$out/bpf "$top/scripts/bench-bpf.sh" || rc=1
		else
			echo "bench: cs_bpf did not build (make bpf): no BPF rows" >&2
			rc=1
		fi
	fi
	# The server-like requests (scripts/bench-server.sh, on the -O2
	# kernels under -icount; results in $out/server), BENCH_SERVER=0 not;
	# the hooks' native cycle lower bound (scripts/bench-hook-native.sh,
	# on this host; $out/O2/hook-native.md), BENCH_HOOK_NATIVE=0 not;
	# registration throughput (scripts/bench-registration.sh, the -O2
	# kernel; $out/O2/registration.md), BENCH_REGISTRATION=0 not.
	if [ "${BENCH_SERVER:-1}" != 0 ]; then
		if [ "${1:-}" = --report ]; then
			BENCH_SERVER_OUT=$out/server "$top/scripts/bench-server.sh" --report || rc=1
		else
			BENCH_SERVER_OUT=$out/server "$top/scripts/bench-server.sh" || rc=1
		fi
	fi
	if [ "${BENCH_HOOK_NATIVE:-1}" != 0 ] && [ "${1:-}" != --report ]; then
		HOOK_OUT=$out/O2/hook-native.md "$top/scripts/bench-hook-native.sh" || rc=1
	fi
	if [ "${BENCH_REGISTRATION:-1}" != 0 ] && [ "${1:-}" != --report ]; then
		BENCH_REG_OUT=$out/O2/registration.md "$top/scripts/bench-registration.sh" || rc=1
	fi
	oses=(O2)
	if [ "${BENCH_OS:-1}" != 0 ]; then
		BENCH_O2=0 "$0" "$@" || rc=$?
		oses+=(Os)
	fi
	for o in "${oses[@]}"; do
		d=${BENCH_OUT:-$top/Documentation/bench$res_base}
		[ "$o" = Os ] || d=$d/O2
		echo
		echo "== -$o: instructions per switch against the targets ($d/results.md)"
		sed -n '/^| target | 1 CPU | 2 CPUs | wanted | verdict |$/,/^$/p' "$d/results.md" 2>/dev/null
	done
	if [ "${BENCH_BPF:-1}" != 0 ]; then
		echo
		echo "== the BPF version and schedstats, -O2, per round trip ($out/bpf/results.md)"
		sed -n '/^| state | base 1 CPU/,/^$/p' "$out/bpf/results.md" 2>/dev/null
	fi
	if [ "${BENCH_SERVER:-1}" != 0 ]; then
		echo
		echo "== server-like requests, -O2, instructions per request ($out/server/results.md)"
		sed -n '/^## /,/^States:/p' "$out/server/results.md" 2>/dev/null | grep -v '^States:'
	fi
	if [ "${BENCH_HOOK_NATIVE:-1}" != 0 ]; then
		echo
		echo "== the hooks' native lower bound ($out/O2/hook-native.md)"
		sed -n '/^| added work /,/^$/p' "$out/O2/hook-native.md" 2>/dev/null
	fi
	if [ "${BENCH_REGISTRATION:-1}" != 0 ]; then
		echo
		echo "== registration throughput, -O2, 2 vCPUs ($out/O2/registration.md)"
		sed -n '/^| clock /,/^$/p' "$out/O2/registration.md" 2>/dev/null
	fi
	exit "$rc"
fi

set -e
linux=${LINUX:-$base_tree}
# -O2 kernels (BENCH_O2=1): every directory gets the suffix, the config the fragment.
sfx='' opt=-Os optcfg=''
if [ "${BENCH_O2:-0}" = 1 ]; then
	sfx=-o2 opt="-O2 and tracepoints (scripts/o2.config)" optcfg=$top/scripts/o2.config
fi
work=$BUILD_ROOT/bench$sfx
# The results of BASE=7.3 in Documentation/bench, of 6.12 in Documentation/bench/6.12.
res_base=
[ "$BASE" = 7.3 ] || res_base=/$BASE
res=${BENCH_OUT:+$BENCH_OUT${sfx:+/O2}}
res=${res:-$top/Documentation/bench$res_base${sfx:+/O2}}
vmdir=${VM_DIR:-$BUILD_ROOT/vm-bench$sfx}
nice=${BENCH_NICE:-19}
rounds=${BENCH_ROUNDS:-3}
icount_boots=${BENCH_ICOUNT_BOOTS:-2}
icount_rounds=${BENCH_ICOUNT_ROUNDS:-20000}
icount_reps=${BENCH_ICOUNT_REPS:-3}
case "${BENCH_ICOUNT:-}" in
'')	do_wall=1; do_icount=1 ;;
1)	do_wall=0; do_icount=1 ;;
0)	do_wall=1; do_icount=0 ;;
*)	echo "bench: BENCH_ICOUNT must be unset, 0 or 1" >&2; exit 2 ;;
esac
perf_only=${BENCH_PERF_ONLY:-0}
perf_pipe_loops=${BENCH_PERF_PIPE_LOOPS:-50000}
perf_msg_groups=${BENCH_PERF_MSG_GROUPS:-2}
perf_msg_loops=${BENCH_PERF_MSG_LOOPS:-50}
perf_reps=${BENCH_PERF_REPS:-3}
read -r -a args <<<"${BENCH_ARGS:-}"
read -r -a sargs <<<"${BENCH_SWITCH_ARGS:--r 15}"
mkdir -p "$work" "$res" "$vmdir"

log() {
	echo "bench: $*" >&2
}

"$top/scripts/deps.sh" bench || log "packages missing: no chart without gnuplot, no -O2 kernel without pahole (dwarves)"
# The -O2 kernels have DEBUG_INFO_BTF, which needs pahole: without it the
# base would be built without BTF and the patched kernel not at all.
if [ -n "$optcfg" ] && [ "${BENCH_BUILD:-1}" != 0 ] && ! command -v pahole >/dev/null; then
	log "no pahole: the -O2 kernels need it for DEBUG_INFO_BTF (scripts/deps.sh bench installs dwarves, as root)"
	exit 1
fi

# --- kernels ---------------------------------------------------------------

tags=(patched)
patched_dir=${BENCH_PATCHED:-$BUILD_ROOT/linux-bench$sfx}
declare -A kernel=([patched]=$patched_dir/arch/x86/boot/bzImage)
[ "${BENCH_BASE:-1}" = 0 ] || {
	tags+=(base)
	kernel[base]=$BUILD_ROOT/bench-base/build$sfx/arch/x86/boot/bzImage
}
[ "${BENCH_NOCS:-1}" = 0 ] || {
	tags+=(nocs)
	kernel[nocs]=$BUILD_ROOT/linux-bench-nocs$sfx/arch/x86/boot/bzImage
}
before=${BENCH_BEFORE:-}
before_src=$BUILD_ROOT/bench-before/src
[ -z "$before" ] || {
	tags+=(before)
	kernel[before]=$BUILD_ROOT/bench-before/build$sfx/arch/x86/boot/bzImage
}
# cs_bench of each kernel: the patched tree's, the before kernel's its own.
declare -A bins=()

# clone_at DIR REV: DIR a shared clone of linux/ with REV checked out
# (linux/ itself is not touched).
clone_at() {
	local src=$1 rev=$2

	# A shared clone borrows linux/'s objects: after linux/ was made
	# again (rm -rf linux && make linux), clone afresh.
	if [ -d "$src/.git" ] && ! git -C "$src" fetch -q --force --tags origin 2>/dev/null; then
		log "$src lost $linux's objects: cloning it again"
		rm -rf "$src"
	fi
	[ -d "$src/.git" ] || git clone -q --shared --no-checkout "$linux" "$src"
	git -C "$src" checkout -q --force --detach "$rev"
}

build() {
	local tag=$1 start=$SECONDS

	log "building the $tag kernel (nice $nice)"
	case "$tag" in
	patched)
		LINUX=$linux KBUILD=$patched_dir KCONFIG_EXTRA=$optcfg \
			nice -n "$nice" "$top/scripts/build-kernel.sh" bench ;;
	base)
		local src=$BUILD_ROOT/bench-base/src
		clone_at "$src" base
		# The base lacks the coarse_stat options; everything else is the same.
		LINUX=$src KBUILD=$BUILD_ROOT/bench-base/build$sfx ALLOW_MISSING_CONFIG=1 \
			KCONFIG_EXTRA=$optcfg \
			nice -n "$nice" "$top/scripts/build-kernel.sh" bench 2>&1 |
			{ grep -v -e "did not stick" -e "did not apply" >&2 || true; } ;;
	nocs)
		# CONFIG_COARSE_STAT and the options that depend on it (the sample).
		sed -n 's/^\(CONFIG_[A-Z0-9_]*COARSE_STAT[A-Z0-9_]*\)=y$/\1=n/p' \
			"$top/scripts/coarse_stat.config" \
			"$linux/tools/testing/selftests/coarse_stat/config" | sort -u >"$work/nocs.config"
		LINUX=$linux KBUILD=$BUILD_ROOT/linux-bench-nocs$sfx \
			KCONFIG_EXTRA="$work/nocs.config${optcfg:+ $optcfg}" \
			nice -n "$nice" "$top/scripts/build-kernel.sh" bench-nocs ;;
	before)
		clone_at "$before_src" "$before"
		# Today's fragments: an option the earlier tree lacks is reported
		# and left out.
		LINUX=$before_src KBUILD=$BUILD_ROOT/bench-before/build$sfx ALLOW_MISSING_CONFIG=1 \
			KCONFIG_EXTRA=$optcfg \
			nice -n "$nice" "$top/scripts/build-kernel.sh" bench ;;
	esac
	log "$tag kernel built in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
}

# run TAG BOOT ARGS...: one boot of kernel TAG running cs_bench ARGS; a BOOT
# starting with "i" is an icount run (VM_ICOUNT=1, cs_bench -i).
run() {
	local tag=$1 boot=$2 out rc icount=0 npi
	shift 2

	out=$vmdir/$tag-$boot.tsv
	rm -f "$out"
	case "$boot" in i*) icount=1 ;; esac
	log "boot $boot of the $tag kernel: cs_bench $*"
	rc=0
	VM_DEBUG=0 VM_SCRATCH_MB=0 VM_DIR=$vmdir VM_TIMEOUT=${BENCH_TIMEOUT:-1800} \
		VM_ICOUNT=$icount "$top/scripts/vm.sh" --kernel "${kernel[$tag]}" -- \
		"$top/scripts/bench.sh" --guest "$out" "${bins[$tag]:-$bin}" "$@" || rc=$?
	cp "$vmdir/console.log" "$work/console-$tag-$boot.log" 2>/dev/null || true
	if [ "$rc" != 0 ] || [ ! -s "$out" ]; then
		log "the $tag kernel run failed (status $rc; console in $work/console-$tag-$boot.log)"
		return 1
	fi
	if [ $icount = 0 ]; then
		cp "$out" "$work/$tag-$boot.tsv"
		return 0
	fi
	# The clock must count instructions: cs_bench timed a loop of known length.
	npi=$(awk -F '\t' '$1 == "#meta" && $2 == "ns_per_insn" { print $3 }' "$out")
	if ! awk -v v="${npi:-0}" 'BEGIN { exit !(v > 0.995 && v < 1.005) }'; then
		log "the $tag kernel's clock did not count instructions under -icount" \
		    "(${npi:-no} ns per instruction; console in $work/console-$tag-$boot.log)"
		return 1
	fi
	# Rows of their own: instructions, not ns; the targets are bench.sh's.
	awk -F '\t' -v OFS='\t' '$1 == "target" { next }
		$1 == "switch" { $1 = "icount"; $3 = "insn" } { print }' "$out" >"$work/$tag-$boot.tsv"
}

# --- perf bench (host side) ------------------------------------------------
# perf_runs: build perf (scripts/build-perf.sh, once, into build/perf) and
# the registering shim (bench/cs_register.c), then one icount boot per kernel
# running bench.sh --guest-perf; rows in $work/TAG-p1.tsv.
perf_runs() {
	local t pbin shim out rc uapi

	if ! pbin=$(LINUX=$linux PERF_NICE=$nice "$top/scripts/build-perf.sh"); then
		log "perf could not be built (build/perf/build.log): no perf bench rows"
		return 0
	fi
	shim=$work/bin/cs_register.so
	mkdir -p "$work/bin"
	uapi=$(LINUX=$linux uapi_headers "$work/hdr") &&
		gcc -O2 -Wall -shared -fPIC -isystem "$uapi" -o "$shim" "$top/bench/cs_register.c" -ldl ||
		{ log "bench/cs_register.c did not build"; return 1; }
	rm -f "$work"/*-p[0-9]*.tsv
	for t in "${tags[@]}"; do
		# The shim is the patched tree's: not for an earlier UAPI.
		[ "$t" != before ] || continue
		out=$vmdir/$t-p1.tsv
		rm -f "$out"
		log "perf bench boot of the $t kernel (icount)"
		rc=0
		VM_ACCEL=tcg VM_TCG_THREAD=single VM_DEBUG=0 VM_SCRATCH_MB=0 VM_DIR=$vmdir \
			VM_TIMEOUT=${BENCH_TIMEOUT:-1800} VM_ICOUNT=1 \
			"$top/scripts/vm.sh" --kernel "${kernel[$t]}" -- \
			"$top/scripts/bench.sh" --guest-perf "$out" "$pbin" "$shim" \
			"$perf_pipe_loops" "$perf_msg_groups" "$perf_msg_loops" "$perf_reps" || rc=$?
		cp "$vmdir/console.log" "$work/console-$t-p1.log" 2>/dev/null || true
		if [ "$rc" != 0 ] || [ ! -s "$out" ]; then
			log "the $t kernel's perf bench run failed (status $rc; console in $work/console-$t-p1.log)"
			continue
		fi
		cp "$out" "$work/$t-p1.tsv"
	done
	date -u '+%Y-%m-%d %H:%M UTC' >"$work/perf.date"
}

measure() {
	local t r

	if [ "${BENCH_BUILD:-1}" != 0 ]; then
		for t in "${tags[@]}"; do
			build "$t"
		done
	fi
	for t in "${tags[@]}"; do
		[ -f "${kernel[$t]}" ] || { log "no $t kernel at ${kernel[$t]}"; exit 1; }
	done
	# BENCH_PERF_ONLY=1: only the perf bench boots.
	if [ "$perf_only" = 1 ]; then
		perf_runs
		return 0
	fi

	# cs_bench, built against the patched tree's UAPI headers.
	log "building cs_bench"
	uapi=$(LINUX=$linux BENCH_NICE=$nice uapi_headers "$work/hdr") || exit 1
	mkdir -p "$work/bin"
	# Built afresh: LINUX= may name another tree than the last run's, whose
	# sources can be older than the binary (a stale cs_bench of another
	# UAPI layout).
	"$top/scripts/build-cs-bench.sh" "$linux" "$uapi" "$work/bin/cs_bench"
	bin=$work/bin/cs_bench
	# The before kernel's own cs_bench, against its own UAPI headers.
	if [ -n "$before" ]; then
		[ -d "$before_src/.git" ] || clone_at "$before_src" "$before"
		[ "$(git -C "$before_src" rev-parse HEAD)" = "$(git -C "$before_src" rev-parse "$before^{commit}")" ] ||
			{ log "$before_src is not at $before (BENCH_BUILD=0 with another BENCH_BEFORE?)"; exit 1; }
		uapi=$(LINUX=$before_src BENCH_NICE=$nice uapi_headers "$work/hdr-before") || exit 1
		mkdir -p "$work/bin-before"
		"$top/scripts/build-cs-bench.sh" "$before_src" "$uapi" "$work/bin-before/cs_bench"
		bins[before]=$work/bin-before/cs_bench
		git -C "$before_src" describe --tags --always >"$work/before.rev"
	fi

	if [ $do_icount = 1 ]; then
		local start=$SECONDS

		rm -f "$work"/*-i[0-9]*.tsv
		# TCG even where KVM works: -icount is TCG's.
		for ((r = 1; r <= icount_boots; r++)); do
			for t in "${tags[@]}"; do
				VM_ACCEL=tcg VM_TCG_THREAD=single \
					run "$t" "i$r" -i "$icount_rounds" -r "$icount_reps" || true
			done
		done
		date -u '+%Y-%m-%d %H:%M UTC' >"$work/icount.date"
		log "icount runs took $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
	fi
	# perf bench in icount boots of their own (BENCH_PERF=0: not).
	if [ $do_icount = 1 ] && [ "${BENCH_PERF:-1}" != 0 ]; then
		perf_runs
	fi
	[ $do_wall = 1 ] || return 0
	rm -f "$work"/*-[0-9]*.tsv
	run patched 0 "${args[@]}"
	date -u '+%Y-%m-%d %H:%M UTC' >"$work/wall.date"
	[ ${#tags[@]} -gt 1 ] || return 0
	for ((r = 1; r <= rounds; r++)); do
		for t in "${tags[@]}"; do
			run "$t" "$r" -s "${args[@]}" "${sargs[@]}" || true
		done
	done
	date -u '+%Y-%m-%d %H:%M UTC' >"$work/wall.date"
}

if [ "${1:-}" = --report ]; then
	tags=()
	for t in patched base nocs before; do
		if [ -f "$work/$t-0.tsv" ] || [ -f "$work/$t-1.tsv" ] || [ -f "$work/$t-i1.tsv" ] ||
		   [ -f "$work/$t-p1.tsv" ]; then
			tags+=("$t")
		fi
	done
	[ ${#tags[@]} -gt 0 ] || { log "nothing in $work to report"; exit 1; }
else
	measure
fi

# --- results ---------------------------------------------------------------

accel=${VM_ACCEL:-$(cat "$top/build/vm/accel" 2>/dev/null || echo "?")}
# Only icount runs: those are TCG whatever the host offers.
compgen -G "$work/*-[0-9].tsv" >/dev/null || accel="tcg (-icount)"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
qemu=$(qemu-system-x86_64 --version | head -1)
tsv=$res/results.tsv
{
	printf '# coarse_stat cs_bench results, %s; host %s (%s CPUs, Linux %s); %s, accel %s\n' \
		"$(date -u '+%Y-%m-%d %H:%M UTC')" "$cpu" "$(nproc)" "$(uname -r)" "$qemu" "$accel"
	printf '# kernel\tboot\tsection\tid\tunit\tmedian\tmin\tmax\tx_floor_or_x_unreg\tx_rdtscp\tsyscalls\tdescription\n'
	for f in "$work"/*-[0-9]*.tsv "$work"/*-i[0-9]*.tsv "$work"/*-p[0-9]*.tsv; do
		[ -f "$f" ] || continue
		b=$(basename "$f" .tsv)
		awk -v k="${b%-*}" -v n="${b##*-}" -F '\t' '
			/^#section/ { next }
			/^#meta/ { print "#meta\t" k "\t" n "\t" $2 "\t" $3; next }
			{ print k "\t" n "\t" $0 }' "$f"
	done
} >"$tsv"

awk -F '\t' -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu" -v ncpu="$(nproc)" \
	-v hostk="$(uname -r)" -v qemu="$qemu" -v accel="$accel" -v tags="${tags[*]}" \
	-v opt="$opt" -v sfx="$sfx" -v wdate="$(cat "$work/wall.date" 2>/dev/null)" -v idate="$(cat "$work/icount.date" 2>/dev/null)" \
	-v pdate="$(cat "$work/perf.date" 2>/dev/null)" -v brev="$(cat "$work/before.rev" 2>/dev/null)" '
/^#meta/ { meta[$2, $3, $4] = $5; next }
/^#/ { next }
{
	k = $1; b = $2; sec = $3; id = $4
	if (k == "patched" && b == 0) {
		if (sec == "snap" || sec == "scale" || sec == "target") {
			n = ++nrow[sec]
			row[sec, n] = $0
		}
	}
	if (sec == "switch" && $6 != "-") {
		val[k, b, id] = $6
		nwall++
		if (!((k, b) in seen)) {
			seen[k, b] = 1
			boots[k] = boots[k] " " b
		}
	}
	# perf bench rows (bench.sh --guest-perf, boot p1): the least run.
	if (sec == "perf" && $6 != "-") {
		pmin[k, id] = $7
		pmax[k, id] = $8
		punit[id] = $5
		pdesc[id] = $12
		nperf++
	}
	if (sec == "icount" && $6 != "-") {
		imin[k, b, id] = $7
		imax[k, b, id] = $8
		nicount++
		if (!((k, b) in iseen)) {
			iseen[k, b] = 1
			iboots[k] = iboots[k] " " b
		}
	}
}
END {
	nt = split(tags, tag, " ")
	print "# coarse_stat benchmark results"
	print ""
	printf "Generated by `make bench` (scripts/bench.sh, cs_bench from\n"
	printf "bench/cs_bench.c) on %s", date
	if (wdate != "" || idate != "")
		printf " (wall-clock runs: %s; icount runs: %s)", wdate == "" ? "none" : wdate,
			idate == "" ? "none" : idate
	printf ".\n\n"
	gb = (("patched", 0, "kernel") in meta) ? 0 : "i1"
	if (!(("patched", gb, "kernel") in meta) && (("patched", "p1", "kernel") in meta))
		gb = "p1"	# only perf bench boots
	printf "- Host: %s, %d CPUs, Linux %s\n", cpu, ncpu, hostk
	printf "- Guest: %s, accel **%s**, %s vCPUs, clocksource %s, rdtscp %s\n", qemu,
		accel, meta["patched", gb, "nr_cpus"], meta["patched", gb, "clocksource"],
		meta["patched", gb, "rdtscp"]
	printf "- Guest kernels: tinyconfig plus scripts/*.config without debug options, built with %s (build/linux-bench%s); patched: %s\n", opt, sfx, meta["patched", gb, "kernel"]
	if (accel == "tcg" && nwall) {
		print "- **Under TCG every instruction is emulated: absolute times are emulation costs, and only the ratios measured in one run mean something. Repeat on real hardware (README).**"
		print "  Memory accesses go through a software TLB and a call into the vDSO through an"
		print "  indirect-branch lookup, so copy- and call-heavy code weighs more than natively;"
		print "  rep movs is emulated element by element.  Single-threaded TCG runs the vCPUs in"
		print "  turn on one host thread: the 2-CPU ping-pong mostly measures that round robin."
		print "  The host is shared with kernel builds: see the [min .. max] spreads."
	}
	print ""
	name["patched"] = "patched (CONFIG_COARSE_STAT=y)"
	name["base"] = "base (unpatched)"
	name["nocs"] = "patched, CONFIG_COARSE_STAT=n"
	name["before"] = "before: " (brev == "" ? "an earlier tree" : brev) " (CONFIG_COARSE_STAT=y)"
	if (nrow["snap"])
		snap_section()
	if (nicount)
		icount_section()
	if (nperf)
		perf_section()
	if (nwall)
		wall_switch()
	if (nrow["scale"]) {
		print "## Scale"
		print ""
		print "| what | median | [min .. max] |"
		print "|---|---:|---|"
		for (i = 1; i <= nrow["scale"]; i++) {
			split(row["scale", i], f, "\t")
			if (f[7] == "-")
				printf "| %s | %.0f %s | |\n", f[12], f[6], f[5]
			else
				printf "| %s | %.0f %s | [%.0f .. %.0f] |\n", f[12], f[6], f[5], f[7], f[8]
		}
		print ""
	}
	print "Raw figures of every boot: results.tsv.  How it is measured: the comment at"
	print "the top of bench/cs_bench.c and scripts/bench.sh."
}
function snap_section() {
	print "## Snapshot cost, same thread"
	print ""
	print "Floor: rdtscp plus the seqcount copy of the 320-byte thread page done in C."
	print "Median of the repetitions, [min .. max]."
	print ""
	print "| what | x floor | x rdtscp | ns/call | [min .. max] | syscalls |"
	print "|---|---:|---:|---:|---|---|"
	for (i = 1; i <= nrow["snap"]; i++) {
		split(row["snap", i], f, "\t")
		if (f[6] == "-") {
			printf "| %s | - | - | - | | |\n", f[12]
			continue
		}
		printf "| %s | %.2f | %.2f | %.1f | [%.1f .. %.1f] | %s |\n",
			f[12], f[9], f[10], f[6], f[7], f[8], f[11]
	}
	print ""
	if (nrow["target"]) {
		print "Targets, as the full run (boot 0) evaluated them; the switch figures of"
		print "every boot follow below."
		print ""
		print "| target | measured | wanted | verdict |"
		print "|---|---:|---|---|"
		for (i = 1; i <= nrow["target"]; i++) {
			split(row["target", i], f, "\t")
			printf "| %s | %.2f%s | %s%s | %s |\n", f[4], f[6], f[5], f[9], f[5], f[12]
		}
		print ""
	}
}
function wall_switch() {
	print "## Context switch: futex ping-pong, ns per switch"
	print ""
	ids[1] = "1cpu_unreg"; ids[2] = "1cpu_reg"; ids[3] = "2cpu_unreg"; ids[4] = "2cpu_reg"
	# Switch-only boots (boot >= 1) if there are any, else the full run (boot 0).
	for (t = 1; t <= split(tags, tag, " "); t++) {
		k = tag[t]
		nb = split(boots[k], bl, " ")
		use[k] = ""
		for (i = 1; i <= nb; i++)
			if (bl[i] != 0 || nb == 1)
				use[k] = use[k] " " bl[i]
	}
	print "Each boot runs the pairs interleaved and reports their medians; across"
	print "boots (switch-only runs, cs_bench -s, alternating between the kernels) the"
	print "table keeps the lowest boot median, since load on the shared host only adds"
	print "time.  Registered vs unregistered is also given per boot: those two run"
	print "interleaved in the same boot, the most direct comparison."
	print ""
	print "| kernel | boots | 1 CPU unregistered | 1 CPU registered | 2 CPUs unregistered | 2 CPUs registered |"
	print "|---|---:|---:|---:|---:|---:|"
	for (t = 1; t <= nt; t++) {
		k = tag[t]
		nb = split(use[k], bl, " ")
		line = ""
		for (i = 1; i <= 4; i++) {
			m = ""
			for (j = 1; j <= nb; j++)
				if ((k, bl[j], ids[i]) in val && (m == "" || val[k, bl[j], ids[i]] + 0 < m + 0))
					m = val[k, bl[j], ids[i]]
			v[k, ids[i]] = m
			line = line sprintf(" %s |", m == "" ? "-" : sprintf("%.1f", m))
		}
		printf "| %s | %d |%s\n", name[k], nb, line
	}
	print ""
	t = cmp("patched", "1cpu_reg", "patched", "1cpu_unreg", "2cpu_reg", "2cpu_unreg",
		"registered vs unregistered (patched; target <= +2.0%)")
	t = t cmp("patched", "1cpu_unreg", "base", "1cpu_unreg", "2cpu_unreg", "2cpu_unreg",
		  "patched unregistered vs base (target: noise)")
	t = t cmp("nocs", "1cpu_unreg", "base", "1cpu_unreg", "2cpu_unreg", "2cpu_unreg",
		  "CONFIG_COARSE_STAT=n vs base (target: noise)")
	t = t cmp("patched", "1cpu_reg", "base", "1cpu_unreg", "2cpu_reg", "2cpu_unreg",
		  "patched registered vs base")
	if (t != "")
		printf "| comparison | 1 CPU | 2 CPUs |\n|---|---:|---:|\n%s\n", t
	nb = split(boots["patched"], bl, " ")
	l1 = l2 = ""
	for (j = 1; j <= nb; j++) {
		l1 = l1 pct("patched", bl[j], "1cpu_reg", "1cpu_unreg")
		l2 = l2 pct("patched", bl[j], "2cpu_reg", "2cpu_unreg")
	}
	if (l1 != "" || l2 != "") {
		print "Registered vs unregistered in each boot of the patched kernel (boot 0: the full run):"
		printf "\n| pinning | per boot |\n|---|---|\n| 1 CPU |%s |\n| 2 CPUs |%s |\n\n", l1, l2
	}
}
function icount_section(    nb, bl, i, j, k, t, m, lo, hi, w, line, sp_in, sp_out, r, c, n) {
	split("1cpu_keyoff 1cpu_unreg 1cpu_reg 2cpu_keyoff 2cpu_unreg 2cpu_reg", iid, " ")
	print "## Context switch in instructions (QEMU -icount)"
	print ""
	printf "icount runs of %s: each kernel booted under QEMU `-icount shift=0,sleep=off`\n", idate
	print "(scripts/vm.sh VM_ICOUNT=1, single-threaded TCG) with `tsc_early_khz=1000000`:"
	print "the guest clock advances one ns, and the TSC one tick, per guest instruction,"
	print "so the futex ping-pong (cs_bench -i) gives instructions per switch (a round"
	printf "trip is two switches).  %s repetitions of %s round trips per state and boot;\n",
		meta["patched", "i1", "reps"], meta["patched", "i1", "rounds"]
	print "the table keeps the least (interrupts only add).  States, in the order they"
	print "run in one process: no thread registered anywhere (the static key off), then"
	print "key on (other threads of the process registered) with the two threads"
	print "unregistered, then both registered.  The base and =n kernels have no key:"
	print "their \"key on\" column is the same code run later in the same process."
	print ""
	print "| kernel | boots | 1 CPU key off | 1 CPU key on, unregistered | 1 CPU registered | 2 CPUs key off | 2 CPUs key on, unregistered | 2 CPUs registered |"
	print "|---|---:|---:|---:|---:|---:|---:|---:|"
	for (t = 1; t <= nt; t++) {
		k = tag[t]
		nb = split(iboots[k], bl, " ")
		line = ""
		sp_in[k] = sp_out[k] = 0
		for (i = 1; i <= 6; i++) {
			m = lo = hi = ""
			for (j = 1; j <= nb; j++) {
				if (!((k, bl[j], iid[i]) in imin))
					continue
				w = imin[k, bl[j], iid[i]] + 0
				if (m == "" || w < m)
					m = w
				if (hi == "" || w > hi)
					hi = w
				r = (imax[k, bl[j], iid[i]] - w) / w
				if (r > sp_in[k])
					sp_in[k] = r
			}
			if (m != "" && (hi - m) / m > sp_out[k])
				sp_out[k] = (hi - m) / m
			iv[k, iid[i]] = m
			line = line sprintf(" %s |", m == "" ? "-" : sprintf("%.1f", m))
		}
		printf "| %s | %d |%s\n", name[k], nb, line
	}
	print ""
	print "Targets (instructions, least of the repetitions):"
	print ""
	print "| target | 1 CPU | 2 CPUs | wanted | verdict |"
	print "|---|---:|---:|---|---|"
	series_targets("patched")
	itgt("key on vs key off, threads unregistered (patched)", "patched", "unreg", "patched", "keyoff", "")
	print ""
	if (("before", "1cpu_reg") in iv && iv["before", "1cpu_reg"] != "")
		before_section()
	print "Repeatability and the clock check, per kernel: the largest spread of the"
	print "repetitions within a boot and of the least value of each boot across boots; what"
	print "cs_bench measured for a loop of known length (ns and TSC ticks per"
	print "instruction, 1 = the clock counts instructions; the least of 21 runs of"
	print "0.5 M instructions, one clock_gettime() pair included) and the clocksource;"
	print "the debugfs count of the static key while the key-off pairs and while the"
	print "others ran (-1: no coarse_stat debugfs file, the base and =n kernels)."
	print ""
	print "| kernel | spread in a boot | across boots | ns/insn | TSC/insn | clocksource | key count off / on |"
	print "|---|---:|---:|---|---|---|---|"
	for (t = 1; t <= nt; t++) {
		k = tag[t]
		nb = split(iboots[k], bl, " ")
		if (!nb)
			continue
		c = n = r = ""
		for (j = 1; j <= nb; j++) {
			c = c (j > 1 ? ", " : "") meta[k, bl[j], "ns_per_insn"]
			r = r (j > 1 ? ", " : "") meta[k, bl[j], "tsc_per_insn"]
			n = n (j > 1 ? ", " : "") meta[k, bl[j], "key_keyoff"] " / " meta[k, bl[j], "key_keyon"]
		}
		printf "| %s | %.3f%% | %s | %s | %s | %s | %s |\n", name[k], 100 * sp_in[k],
			(nb > 1 ? sprintf("%.3f%%", 100 * sp_out[k]) : "(1 boot)"), c, r,
			meta[k, bl[1], "clocksource"], n
	}
	print ""
	print "What it shows: the path length the series adds to a switch and a wakeup,"
	print "kernel and user instructions together, for each state, exactly enough to"
	print "check targets of 0.1 % and to see a one-instruction change, whatever the"
	print "load of the shared host (the wall-clock figures below move by several %"
	print "between boots).  On 2 CPUs it counts the instructions of both vCPUs while"
	print "the pair runs: the waker, the wakee, the wakeup IPI, and the idle loop of the"
	print "CPU whose thread waits (entry and exit; a halted vCPU executes nothing)."
	print ""
	print "What it cannot show: cycles.  Every instruction costs one ns: cache and TLB"
	print "misses (the page, the task_struct lines the counter copy reads), branch"
	print "mispredictions, serialising and slow instructions (rdtsc/rdtscp, lfence,"
	print "atomics, writes to MSRs) and memory-level parallelism are invisible, so a"
	print "change that trades instructions for misses or for a serialising"
	print "instruction can look better here and be worse on hardware, and a few"
	print "instructions that a real CPU runs in parallel count in full.  The wall-clock"
	print "runs (the ns per switch section, and cs_bench natively on real hardware)"
	print "stay the second opinion, for time; under TCG neither is the native cost."
	print ""
}
# The targets of the series kernel TAG (patched, or the before kernel).
function series_targets(t) {
	itgt("both threads registered vs the same threads unregistered (" t ", key on)",
	     t, "reg", t, "unreg", 2.0)
	itgt("key on, these two threads unregistered, vs base", t, "unreg", "base", "unreg", 0.1)
	itgt("no thread registered (key off) vs base", t, "keyoff", "base", "keyoff", 0.05)
	if (t == "patched")
		itgt("CONFIG_COARSE_STAT=n vs base", "nocs", "keyoff", "base", "keyoff", 0.05)
	itgt("both threads registered vs base", t, "reg", "base", "unreg", "")
}
# The before kernel (BENCH_BEFORE): its targets, and its states next to
# those of the patched kernel.
function before_section(    i, c, st, sd, b, p) {
	printf "The same targets for the before kernel (%s, with its own cs_bench), same run:\n\n", brev
	print "| target (before) | 1 CPU | 2 CPUs | wanted | verdict |"
	print "|---|---:|---:|---|---|"
	series_targets("before")
	print ""
	printf "Side by side: instructions per switch of the before kernel (%s) and the\n", brev
	print "patched kernel, and the difference (patched - before)."
	print ""
	print "| state | before 1 CPU | patched 1 CPU | difference | before 2 CPUs | patched 2 CPUs | difference |"
	print "|---|---:|---:|---:|---:|---:|---:|"
	split("keyoff unreg reg", st, " ")
	sd["keyoff"] = "no thread registered (key off)"
	sd["unreg"] = "key on, the two threads unregistered"
	sd["reg"] = "both threads registered"
	for (i = 1; i <= 3; i++) {
		printf "| %s |", sd[st[i]]
		for (c = 1; c <= 2; c++) {
			b = iv["before", c "cpu_" st[i]]
			p = iv["patched", c "cpu_" st[i]]
			if (b == "" || p == "")
				printf " - | - | - |"
			else
				printf " %.1f | %.1f | %+.1f (%+.2f%%) |", b, p, p - b, 100 * (p - b) / b
		}
		printf "\n"
	}
	print ""
}
function perf_section(    cs, cl, i, t, k, hasbase, line, a, b, c, pa) {
	split("pipe_1cpu_proc pipe_1cpu_thr pipe_2cpu_proc pipe_2cpu_thr msg_proc msg_thr", cs, " ")
	cl["pipe_1cpu_proc"] = "sched pipe, 1 CPU, processes"
	cl["pipe_1cpu_thr"] = "sched pipe -T, 1 CPU, threads"
	cl["pipe_2cpu_proc"] = "sched pipe, 2 CPUs, processes"
	cl["pipe_2cpu_thr"] = "sched pipe -T, 2 CPUs, threads"
	cl["msg_proc"] = "sched messaging (hackbench), processes"
	cl["msg_thr"] = "sched messaging -t (hackbench), threads"
	hasbase = ("base", "pipe_1cpu_proc_keyoff") in pmin
	for (t = 1; t <= nt; t++)
		if (pa == "" && (tag[t], "p1", "perf_args") in meta)
			pa = meta[tag[t], "p1", "perf_args"]
	print "## perf bench (instructions under -icount)"
	print ""
	printf "`perf bench sched pipe` and `perf bench sched messaging` (hackbench), perf built\n"
	printf "from the tree (tools/perf, scripts/build-perf.sh), in an icount boot of each\n"
	printf "kernel of their own (%s; %s), so the figures are instructions: per pipe\n",
		"runs of " pdate, pa
	print "round trip (two switches; usecs/op x 1000) and millions per messaging run (its"
	print "`Total time`, ms resolution).  1 CPU: `taskset -c 0`; 2 CPUs: `taskset -c 0,1`,"
	print "the two tasks placed by the scheduler; messaging unpinned on both vCPUs.  The"
	print "least of the runs; spread: the largest (max - min) / min of the three states'"'"' runs."
	print "One-CPU pipe figures repeat to about 10^-3; on two CPUs and in messaging the"
	print "placement of the tasks differs from run to run (a few %), so ratios near 1 there"
	print "are noise.  States in this order: key off (nothing registered), key on"
	print "(a holder process registered, `sleep` with the shim) with perf unregistered,"
	print "and every task and thread of perf registered (LD_PRELOAD of"
	print "bench/cs_register.so with CS_REGISTER=1: the main thread, every"
	print "pthread_create()d thread and every fork()ed child; the holder still runs)."
	if (hasbase)
		print "Ratios vs key off of the same kernel, and registered vs the base kernel."
	else
		print "**No base kernel in this run: the ratios are vs key off in the same kernel.**"
	if (nicount)
		print "The futex ping-pong of cs_bench (instructions per switch, table above) for comparison."
	print ""
	printf "| kernel | benchmark | unit | key off | key on, unregistered | registered | key on / off | registered / off |%s spread |\n",
		hasbase ? " registered / base |" : ""
	printf "|---|---|---|---:|---:|---:|---:|---:|%s---:|\n", hasbase ? "---:|" : ""
	for (t = 1; t <= nt; t++) {
		k = tag[t]
		if (nicount && ((k, "1cpu_keyoff") in iv))
			for (i = 1; i <= 2; i++) {
				a = iv[k, i "cpu_keyoff"]; b = iv[k, i "cpu_unreg"]; c = iv[k, i "cpu_reg"]
				printf "| %s | cs_bench futex ping-pong, %d CPU%s | insn/switch | %s | %s | %s | %s | %s |%s\n",
					name[k], i, (i > 1 ? "s" : ""), pf(a), pf(b), pf(c), pr(b, a), pr(c, a),
					(hasbase ? " " pr(c, iv["base", i "cpu_unreg"]) " |" : "") " (table above) |"
			}
		for (i = 1; i <= 6; i++) {
			if (!((k, cs[i] "_keyoff") in pmin))
				continue
			a = pmin[k, cs[i] "_keyoff"]; b = pmin[k, cs[i] "_keyon"]; c = pmin[k, cs[i] "_reg"]
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |%s\n", name[k], cl[cs[i]],
				punit[cs[i] "_keyoff"], pf(a), pf(b), pf(c), pr(b, a), pr(c, a),
				(hasbase ? " " pr(c, pmin["base", cs[i] "_keyoff"]) " |" : "") " " psp(k, cs[i]) " |"
		}
	}
	print ""
	print "Registrations per registered run (taskset and perf main thread counted; the"
	print "shim fails the run if a prctl() fails):"
	for (i = 1; i <= 6; i++)
		if (("patched", "p1", "regs_" cs[i]) in meta)
			printf "%s %s: %s", (i > 1 ? ";" : ""), cs[i], meta["patched", "p1", "regs_" cs[i]]
	print "."
	printf "Static key count (debugfs) at the start of each state: off %s, key on %s, registered %s.\n",
		meta["patched", "p1", "key_keyoff"], meta["patched", "p1", "key_keyon"], meta["patched", "p1", "key_reg"]
	print ""
}
function psp(k, c,    st, i, w, m) {
	split("keyoff keyon reg", st, " ")
	m = ""
	for (i = 1; i <= 3; i++)
		if ((k, c "_" st[i]) in pmin && pmin[k, c "_" st[i]] > 0) {
			w = (pmax[k, c "_" st[i]] - pmin[k, c "_" st[i]]) / pmin[k, c "_" st[i]]
			if (m == "" || w > m)
				m = w
		}
	return m == "" ? "-" : sprintf("%.2f%%", 100 * m)
}
function pf(v) {
	return v == "" ? "-" : sprintf("%.1f", v)
}
function pr(a, b) {
	return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.4f", a / b)
}
function itgt(what, k1, s1, k2, s2, lim,    x, y, a, b, verdict) {
	a = ipct(iv[k1, "1cpu_" s1], iv[k2, "1cpu_" s2])
	b = ipct(iv[k1, "2cpu_" s1], iv[k2, "2cpu_" s2])
	if (a == "" && b == "")
		return
	x = a == "" ? "-" : sprintf("%+.2f%% (%+.0f)", a, iv[k1, "1cpu_" s1] - iv[k2, "1cpu_" s2])
	y = b == "" ? "-" : sprintf("%+.2f%% (%+.0f)", b, iv[k1, "2cpu_" s1] - iv[k2, "2cpu_" s2])
	if (lim == "")
		verdict = ""
	else if (a == "" || b == "")
		verdict = "-"
	else
		verdict = a <= lim && b <= lim ? "PASS" : "MISS"
	printf "| %s | %s | %s | %s | %s |\n", what, x, y, lim == "" ? "" : "<= +" lim "%", verdict
}
function ipct(a, b) {
	if (a == "" || b == "" || b == 0)
		return ""
	return 100 * (a - b) / b
}
function cmp(k1, a1, k2, b1, a2, b2, what,    x, y) {
	x = delta(v[k1, a1], v[k2, b1])
	y = delta(v[k1, a2], v[k2, b2])
	if (x == "" && y == "")
		return ""
	return sprintf("| %s | %s | %s |\n", what, x == "" ? "-" : x, y == "" ? "-" : y)
}
function pct(k, b, x, y) {
	if (!((k, b, x) in val) || !((k, b, y) in val) || val[k, b, y] == 0)
		return ""
	return sprintf(" boot %d: %+.2f%%;", b, 100 * (val[k, b, x] - val[k, b, y]) / val[k, b, y])
}
function delta(a, b) {
	if (a == "" || b == "" || b == 0)
		return ""
	return sprintf("%+.1f ns (%+.2f%%)", a - b, 100 * (a - b) / b)
}' "$tsv" >"$res/results.md"

awk -F '\t' '$1 == "patched" && $2 == 0 && $3 == "snap" && $6 != "-" {
	print $4 "\t" $6 }' "$tsv" >"$work/snap.dat"
if [ ! -s "$work/snap.dat" ]; then
	log "no snapshot figures (icount runs only): results.svg left as it was"
elif command -v gnuplot >/dev/null; then
	gnuplot <<-EOF
		set terminal svg size 900,520 dynamic noenhanced font "sans,11"
		set output "$res/results.svg"
		set title "coarse_stat: cost per call, same thread (median ns; QEMU $accel)"
		set xlabel "ns per call (log scale)"
		set logscale x
		set xrange [1:*]
		set grid xtics
		set yrange [*:*] reverse
		set ytics scale 0 font ",10"
		set offsets 0, 0, 0.6, 0.6
		set style fill solid 0.8 border -1
		set key off
		plot "$work/snap.dat" using (\$2 / 2):0:(1):(\$2):(\$0 - 0.35):(\$0 + 0.35):ytic(1) \
			with boxxyerror lc rgb "#4477aa", \
		     "" using (\$2 * 1.15):0:(sprintf("%.0f", \$2)) with labels left font ",9"
	EOF
else
	log "gnuplot not installed: no results.svg (scripts/deps.sh bench)"
fi

cat "$res/results.md"
log "results in $res (results.md, results.tsv$([ -f "$res/results.svg" ] && echo ", results.svg"))"
