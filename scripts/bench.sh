#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: run cs_bench (tools/testing/selftests/coarse_stat/cs_bench.c) in
# guests booted with kernels without debug options, and write the results.
#
#   scripts/bench.sh			build, boot, run, write the results
#   scripts/bench.sh --report		write the results again from build/bench/
#   scripts/bench.sh --guest OUT BIN ARGS	(in the guest) BIN -t ARGS > OUT
#
# Kernels, each built with scripts/build-kernel.sh minus scripts/debug.config
# (a build takes ~12 min on 2 cores; builds run at nice $BENCH_NICE):
#   patched	linux/ as it is, build/linux-bench: every cs_bench section
#   base	the unpatched tree, tag "base" of linux/ checked out in a shared
#		clone (build/bench-base/src; linux/ itself is not touched),
#		same config, build/bench-base/build: context switches only
#   nocs	linux/ with CONFIG_COARSE_STAT=n, build/linux-bench-nocs:
#		context switches only
# The context-switch runs (cs_bench -s) alternate between the kernels,
# BENCH_ROUNDS boots each; the lowest of the boots' medians is compared.
#
# Results: $BENCH_OUT (Documentation/bench/): results.tsv (raw, every boot),
# results.md (tables, ratios first), results.svg (per-call cost, log scale;
# needs gnuplot).  Per-boot files and console logs: build/bench/.
#
# Environment:
#   BENCH_BASE=0, BENCH_NOCS=0	skip the base or the =n kernel
#   BENCH_BUILD=0		use the kernels as already built
#   BENCH_ROUNDS		boots per kernel for the switch comparison (3)
#   BENCH_ARGS			more cs_bench arguments for every run (e.g. -q)
#   BENCH_SWITCH_ARGS		more for the switch-only runs (default -r 15)
#   BENCH_NICE			niceness of the builds (19)
#   BENCH_OUT			where the results go (Documentation/bench)
#   VM_DIR			the guest's directory (build/vm-bench)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" = --guest ]; then
	out=$2
	bin=$3
	shift 3
	[ -x "$bin" ] || { echo "bench: no $bin" >&2; exit 1; }
	echo "bench: $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	"$bin" -t "$@" | tee "$out.tmp"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] && mv "$out.tmp" "$out"
	exit "$rc"
fi

set -e
linux=${LINUX:-$top/linux}
work=$top/build/bench
res=${BENCH_OUT:-$top/Documentation/bench}
vmdir=${VM_DIR:-$top/build/vm-bench}
nice=${BENCH_NICE:-19}
rounds=${BENCH_ROUNDS:-3}
read -r -a args <<<"${BENCH_ARGS:-}"
read -r -a sargs <<<"${BENCH_SWITCH_ARGS:--r 15}"
mkdir -p "$work" "$res" "$vmdir"

log() {
	echo "bench: $*" >&2
}

"$top/scripts/deps.sh" bench || log "optional packages missing: no chart without gnuplot"

# --- kernels ---------------------------------------------------------------

tags=(patched)
declare -A kernel=([patched]=$top/build/linux-bench/arch/x86/boot/bzImage)
[ "${BENCH_BASE:-1}" = 0 ] || {
	tags+=(base)
	kernel[base]=$top/build/bench-base/build/arch/x86/boot/bzImage
}
[ "${BENCH_NOCS:-1}" = 0 ] || {
	tags+=(nocs)
	kernel[nocs]=$top/build/linux-bench-nocs/arch/x86/boot/bzImage
}

build() {
	local tag=$1 start=$SECONDS

	log "building the $tag kernel (nice $nice)"
	case "$tag" in
	patched)
		LINUX=$linux KBUILD=$top/build/linux-bench \
			nice -n "$nice" "$top/scripts/build-kernel.sh" bench ;;
	base)
		local src=$top/build/bench-base/src
		if [ ! -d "$src/.git" ]; then
			git clone -q --shared --no-checkout "$linux" "$src"
		else
			git -C "$src" fetch -q --force --tags origin
		fi
		git -C "$src" checkout -q --force --detach base
		# The base lacks the coarse_stat options; everything else is the same.
		LINUX=$src KBUILD=$top/build/bench-base/build ALLOW_MISSING_CONFIG=1 \
			nice -n "$nice" "$top/scripts/build-kernel.sh" bench 2>&1 |
			{ grep -v -e "did not stick" -e "did not apply" >&2 || true; } ;;
	nocs)
		# CONFIG_COARSE_STAT and the options that depend on it (the sample).
		sed -n 's/^\(CONFIG_[A-Z0-9_]*COARSE_STAT[A-Z0-9_]*\)=y$/\1=n/p' \
			"$top/scripts/coarse_stat.config" \
			"$linux/tools/testing/selftests/coarse_stat/config" | sort -u >"$work/nocs.config"
		LINUX=$linux KBUILD=$top/build/linux-bench-nocs KCONFIG_EXTRA=$work/nocs.config \
			nice -n "$nice" "$top/scripts/build-kernel.sh" bench-nocs ;;
	esac
	log "$tag kernel built in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
}

# run TAG BOOT ARGS...: one boot of kernel TAG running cs_bench ARGS.
run() {
	local tag=$1 boot=$2 out rc
	shift 2

	out=$vmdir/$tag-$boot.tsv
	rm -f "$out"
	log "boot $boot of the $tag kernel: cs_bench $*"
	rc=0
	VM_DEBUG=0 VM_SCRATCH_MB=0 VM_DIR=$vmdir VM_TIMEOUT=${BENCH_TIMEOUT:-1800} \
		"$top/scripts/vm.sh" --kernel "${kernel[$tag]}" -- \
		"$top/scripts/bench.sh" --guest "$out" "$bin" "$@" || rc=$?
	cp "$vmdir/console.log" "$work/console-$tag-$boot.log" 2>/dev/null || true
	if [ "$rc" != 0 ] || [ ! -s "$out" ]; then
		log "the $tag kernel run failed (status $rc; console in $work/console-$tag-$boot.log)"
		return 1
	fi
	cp "$out" "$work/$tag-$boot.tsv"
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

	# cs_bench, built against the patched tree's UAPI headers.
	log "building cs_bench"
	nice -n "$nice" make -s -C "$linux" O="$work/hdr" headers >/dev/null
	mkdir -p "$work/bin"
	make -s -C "$linux/tools/testing/selftests/coarse_stat" OUTPUT="$work/bin" \
		KHDR_INCLUDES="-isystem $work/hdr/usr/include" "$work/bin/cs_bench" >/dev/null
	bin=$work/bin/cs_bench

	rm -f "$work"/*.tsv
	run patched 0 "${args[@]}"
	[ ${#tags[@]} -gt 1 ] || return 0
	for ((r = 1; r <= rounds; r++)); do
		for t in "${tags[@]}"; do
			run "$t" "$r" -s "${args[@]}" "${sargs[@]}" || true
		done
	done
}

if [ "${1:-}" = --report ]; then
	tags=()
	for t in patched base nocs; do
		if [ -f "$work/$t-0.tsv" ] || [ -f "$work/$t-1.tsv" ]; then
			tags+=("$t")
		fi
	done
	[ ${#tags[@]} -gt 0 ] || { log "nothing in $work to report"; exit 1; }
else
	measure
fi

# --- results ---------------------------------------------------------------

accel=${VM_ACCEL:-$(cat "$top/build/vm/accel" 2>/dev/null || echo "?")}
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
qemu=$(qemu-system-x86_64 --version | head -1)
tsv=$res/results.tsv
{
	printf '# coarse_stat cs_bench results, %s; host %s (%s CPUs, Linux %s); %s, accel %s\n' \
		"$(date -u '+%Y-%m-%d %H:%M UTC')" "$cpu" "$(nproc)" "$(uname -r)" "$qemu" "$accel"
	printf '# kernel\tboot\tsection\tid\tunit\tmedian\tmin\tmax\tx_floor_or_x_unreg\tx_rdtscp\tsyscalls\tdescription\n'
	for f in "$work"/*-[0-9]*.tsv; do
		b=$(basename "$f" .tsv)
		awk -v k="${b%-*}" -v n="${b##*-}" -F '\t' '
			/^#section/ { next }
			/^#meta/ { print "#meta\t" k "\t" n "\t" $2 "\t" $3; next }
			{ print k "\t" n "\t" $0 }' "$f"
	done
} >"$tsv"

awk -F '\t' -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu" -v ncpu="$(nproc)" \
	-v hostk="$(uname -r)" -v qemu="$qemu" -v accel="$accel" -v tags="${tags[*]}" '
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
		if (!((k, b) in seen)) {
			seen[k, b] = 1
			boots[k] = boots[k] " " b
		}
	}
}
END {
	nt = split(tags, tag, " ")
	print "# coarse_stat benchmark results"
	print ""
	printf "Generated by `make bench` (scripts/bench.sh, cs_bench from\n"
	printf "tools/testing/selftests/coarse_stat) on %s.\n\n", date
	printf "- Host: %s, %d CPUs, Linux %s\n", cpu, ncpu, hostk
	printf "- Guest: %s, accel **%s**, %s vCPUs, clocksource %s, rdtscp %s\n", qemu,
		accel, meta["patched", 0, "nr_cpus"], meta["patched", 0, "clocksource"],
		meta["patched", 0, "rdtscp"]
	printf "- Guest kernel: %s, no debug options (build/linux-bench)\n", meta["patched", 0, "kernel"]
	if (accel == "tcg") {
		print "- **Under TCG every instruction is emulated: absolute times are emulation costs, and only the ratios measured in one run mean something. Repeat on real hardware (README).**"
		print "  Memory accesses go through a software TLB and a call into the vDSO through an"
		print "  indirect-branch lookup, so copy- and call-heavy code weighs more than natively;"
		print "  rep movs is emulated element by element.  Single-threaded TCG runs the vCPUs in"
		print "  turn on one host thread: the 2-CPU ping-pong mostly measures that round robin."
		print "  The host is shared with kernel builds: see the [min .. max] spreads."
	}
	print ""
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
	print "## Context switch: futex ping-pong, ns per switch"
	print ""
	ids[1] = "1cpu_unreg"; ids[2] = "1cpu_reg"; ids[3] = "2cpu_unreg"; ids[4] = "2cpu_reg"
	name["patched"] = "patched (CONFIG_COARSE_STAT=y)"
	name["base"] = "base (unpatched)"
	name["nocs"] = "patched, CONFIG_COARSE_STAT=n"
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
		"registered vs unregistered (patched; target <= +1.5%)")
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
	print "the top of tools/testing/selftests/coarse_stat/cs_bench.c and scripts/bench.sh."
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

if command -v gnuplot >/dev/null; then
	awk -F '\t' '$1 == "patched" && $2 == 0 && $3 == "snap" && $6 != "-" {
		print $4 "\t" $6 }' "$tsv" >"$work/snap.dat"
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
