#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-snap-native: what a snapshot costs on this machine's own CPU,
# in cycles of real hardware rather than QEMU's TCG.  bench/cs_snap_native.c
# runs cs_bench's snapshot rows (the ordered TSC read, the copy floor, the C
# floor, the image's own clock_gettime(CLOCK_MONOTONIC) called directly,
# the C library's, __vdso_coarse_stat_snap(), the library's csf_thread_snap()) with
# the vDSO image of make bench's -O2 patched kernel loaded into a host
# process, its time data filled as timekeeping fills it for the tsc
# clocksource: the kernel running here need not have the series.  Each run
# is done twice, alternating: the image as built, and with -L (the LFENCE
# before the page's sequence re-check made a NOP: what the fence costs; not
# a correct snapshot for readers on other CPUs).  SNAP_RUNS runs of each;
# the tables give every run's ratio to the image's clock_gettime() plus the
# copy floor (the target's yardstick, measured in the same run) and their
# median, and the targets judge the medians.
#
#   scripts/bench-snap-native.sh
#
# Before the runs the script checks the layout of the time data that
# cs_snap_native writes against the image's DWARF (pahole, if installed),
# and after the -L runs that the NOPs replaced exactly the LFENCE
# instructions objdump finds in __vdso_coarse_stat_snap().
#
# Results: $BENCH_OUT/O2/snap-native.{md,tsv} (Documentation/bench/O2/;
# BASE=6.12: Documentation/bench/6.12/O2/).  Run it on a quiet machine:
# the rows of one run share its load, the runs do not.  x86-64 only.
#
# Environment:
#   SNAP_IMAGE	the vDSO image (default: arch/x86/entry/vdso/vdso64/
#		vdso64.so.dbg of BENCH_PATCHED, else $BUILD_ROOT/linux-bench-o2)
#   SNAP_RUNS	runs of each kind (5)
#   SNAP_REPS	repetitions per row and run (cs_bench -r; 11)
#   BENCH_OUT	as scripts/bench.sh (Documentation/bench)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"

log() { echo "bench-snap-native: $*" >&2; }
die() { log "$*"; exit 1; }

[ "$(uname -m)" = x86_64 ] || die "x86-64 only (the image is the x86-64 vDSO)"
linux=${LINUX:-$base_tree}
image=${SNAP_IMAGE:-${BENCH_PATCHED:-$BUILD_ROOT/linux-bench-o2}/arch/x86/entry/vdso/vdso64/vdso64.so.dbg}
runs=${SNAP_RUNS:-5}
reps=${SNAP_REPS:-11}
out_root=${BENCH_OUT:-$top/Documentation/bench}
[ "$BASE" = 7.3 ] || out_root=${BENCH_OUT:-$top/Documentation/bench/$BASE}
out=$out_root/O2
work=$BUILD_ROOT/bench-snap-native

[ -f "$image" ] || die "no $image: make bench BENCH_O2=1 builds the -O2 patched kernel (or SNAP_IMAGE=...)"
mkdir -p "$work" "$out"
hdr=$(uapi_headers "$work/hdr") || die "the series' UAPI headers did not install"
gcc -O2 -Wall -pthread -isystem "$hdr" -I "$linux/tools/testing/selftests/coarse_stat" \
	-I "$linux/tools/lib/coarse_stat" \
	-o "$work/cs_snap_native" "$top/bench/cs_snap_native.c" || die "cs_snap_native did not build"

# The time data's layout: what cs_snap_native writes against the image's DWARF.
if command -v pahole >/dev/null; then
	"$work/cs_snap_native" -D >"$work/layout.want"
	{
		pahole -C vdso_clock "$image" | awk '
			/\/\* size:/ { print "vdso_clock.size\t" $3 + 0 }
			/;[ \t]*\/\*/ && !/^\t\t/ {
				n = $0; sub(/;.*/, "", n); sub(/\[.*/, "", n); sub(/.*[ *\t]/, "", n)
				o = $0; sub(/.*\/\*[ \t]*/, "", o); split(o, f, /[ \t]+/)
				if (n ~ /^[a-z_]+$/) print "vdso_clock." n "\t" f[1]
			}
			/^\t\tstruct vdso_timestamp basetime\[/ {
				o = $0; sub(/.*\/\*[ \t]*/, "", o); split(o, f, /[ \t]+/)
				print "vdso_clock.basetime\t" f[1]
			}'
		pahole -C vdso_time_data "$image" | awk '/clock_data\[/ && !/aux_/ {
			o = $0; sub(/.*\/\*[ \t]*/, "", o); split(o, f, /[ \t]+/)
			print "vdso_time_data.clock_data\t" f[1] }'
	} >"$work/layout.dwarf"
	while IFS=$'\t' read -r k v; do
		grep -qx "$k"$'\t'"$v" "$work/layout.dwarf" ||
			die "the image's $k is not at $v (pahole: $(grep "^$k"$'\t' "$work/layout.dwarf" | cut -f2)): bench/cs_snap_native.c's struct native_vdso_clock is out of date"
	done <"$work/layout.want"
	log "time data layout checked against the image's DWARF (pahole)"
else
	log "no pahole (dwarves): the time data's layout is not checked against the image"
fi

# The LFENCE instructions of __vdso_coarse_stat_snap() as objdump decodes them.
read -r fstart fsize < <(nm -S "$image" | awk '$4 == "__vdso_coarse_stat_snap" { print $1, $2 }')
[ -n "${fsize:-}" ] || die "no __vdso_coarse_stat_snap in $image"
lfences=$(objdump -d --start-address=$((16#$fstart)) --stop-address=$((16#$fstart + 16#$fsize)) "$image" |
	awk -F '\t' '$3 ~ /^lfence/ { a = $1; sub(/^ */, "", a); sub(/:$/, "", a); printf "%s0x%s", s, a; s = "," }')

rm -f "$work"/run-*.tsv
for r in $(seq "$runs"); do
	for kind in image nolfence; do
		flag=()
		[ $kind = nolfence ] && flag=(-L)
		log "run $r of $runs: $kind"
		"$work/cs_snap_native" -t -r "$reps" "${flag[@]}" "$image" >"$work/run-$r-$kind.tsv" ||
			die "cs_snap_native failed (run $r, $kind)"
	done
done
at=$(awk -F '\t' '$1 == "#meta" && $2 == "no_lfence_at" { print $3; exit }' "$work/run-1-nolfence.tsv")
[ "$at" = "$lfences" ] ||
	die "-L made NOPs of $at, objdump's LFENCE instructions in __vdso_coarse_stat_snap are ${lfences:-none}"
meta() { awk -F '\t' -v k="$1" '$1 == "#meta" && $2 == k { print $3; exit }' "$work/run-1-image.tsv"; }

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
date=$(date -u '+%Y-%m-%d %H:%M UTC')
sha=$(sha1sum "$image" | cut -c1-12)
{
	printf '# cs_snap_native, %s; %s, %s CPUs, Linux %s (clocksource %s); image %s\n' \
		"$date" "$cpu" "$(nproc)" "$(uname -r)" "$clocksource" "${image#"$top"/}"
	printf '# image sha1 %s; TSC read: %s; TSC %s Hz, mult/shift %s; -L: NOP at %s\n' "$sha" \
		"$(meta vdso_tsc_alternatives)" "$(meta tsc_hz)" "$(meta vdso_mult_shift)" "$at"
	printf '# run\tkind\tid\tns_median\tns_min\tns_max\n'
	for f in "$work"/run-*.tsv; do
		b=${f##*/run-}
		b=${b%.tsv}
		awk -F '\t' -v run="${b%%-*}" -v kind="${b#*-}" \
			'$1 == "snap" && $4 != "-" { print run "\t" kind "\t" $2 "\t" $4 "\t" $5 "\t" $6 }' "$f"
	done
} >"$out/snap-native.tsv"

awk -F '\t' -v runs="$runs" -v reps="$reps" -v image="${image#"$top"/}" -v cpu="$cpu" \
	-v kernel="$(uname -r)" -v date="$date" -v cs="$clocksource" -v tsc="$(meta vdso_tsc_alternatives)" \
	-v hz="$(meta tsc_hz)" -v ms="$(meta vdso_mult_shift)" -v at="$at" -v sha="$sha" '
function median(a, n,    i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^#/ { next }
{
	ns[$2, $1, $3] = $4
	if (!(($2, $3) in seen)) { seen[$2, $3] = 1; nid[$2]++; ids[$2, nid[$2]] = $3 }
}
# The yardstick of run r: the image'"'"'s clock_gettime() plus the copy floor.
function yard(kind, r) {
	return ns[kind, r, "vdso_clock_mono"] + ns[kind, r, "copy"]
}
function x(kind, id,    r, a, n) {
	n = 0
	for (r = 1; r <= runs; r++)
		if ((kind, r, id) in ns && yard(kind, r) > 0)
			a[++n] = ns[kind, r, id] / yard(kind, r)
	return n ? median(a, n) : -1
}
function mns(kind, id,    r, a, n) {
	n = 0
	for (r = 1; r <= runs; r++)
		if ((kind, r, id) in ns)
			a[++n] = ns[kind, r, id]
	return n ? median(a, n) : -1
}
END {
	desc["rdtscp"] = "ordered TSC read (" (tsc ~ /rdtscp/ ? "rdtscp" : "lfence; rdtsc: no RDTSCP here") ")"
	desc["copy"] = "seqcount copy of the page in C, no clock (copy floor)"
	desc["floor"] = "the same + the C library'"'"'s clock_gettime() + LFENCE (C floor)"
	desc["floor_words"] = "the same, copying u64 by u64"
	desc["vdso_clock_mono"] = "the image'"'"'s clock_gettime(CLOCK_MONOTONIC), called directly"
	desc["clock_mono"] = "the C library'"'"'s clock_gettime(CLOCK_MONOTONIC) (the host'"'"'s vDSO, " cs ")"
	desc["vdso_csf_snap"] = "__vdso_coarse_stat_snap()"
	desc["lib_csf_thread_snap"] = "csf_thread_snap() (library)"
	print "# Snapshot cost on real hardware (make bench-snap-native)"
	print ""
	printf "Generated by scripts/bench-snap-native.sh on %s: %s, Linux %s\n", date, cpu, kernel
	printf "(the host; the kernel running need not have the series).  The vDSO is\n"
	printf "%s (sha1 %s), loaded into a host process by bench/cs_snap_native.c\n", image, sha
	printf "with the alternatives of its ordered TSC reads applied (%s) and a\n", tsc
	printf "struct vdso_time_data as timekeeping writes it for the tsc clocksource (TSC\n"
	printf "%.0f Hz measured against the host'"'"'s CLOCK_MONOTONIC, mult/shift %s;\n", hz, ms
	printf "layout checked against the image'"'"'s DWARF): the image reads CLOCK_MONOTONIC\n"
	printf "itself, with no system call.  %d runs of each kind, alternating, %d\n", runs, reps
	printf "repetitions per row and run (cs_bench -r).  Ratios: to the image'"'"'s\n"
	printf "clock_gettime(CLOCK_MONOTONIC) plus the copy floor of the same run (the\n"
	printf "target'"'"'s yardstick), median of the runs.\n\n"
	for (kk = 1; kk <= 2; kk++) {
		kind = kk == 1 ? "image" : "nolfence"
		if (kind == "image")
			print "## The image as built\n"
		else
			printf "## -L: the LFENCE before the page'"'"'s sequence re-check made a NOP (at %s; what the fence costs; not a correct snapshot)\n\n", at
		hdr = "| row | x (clock_gettime + copy floor), median |"
		sep = "|---|---:|"
		for (r = 1; r <= runs; r++) { hdr = hdr " run " r " |"; sep = sep "---:|" }
		print hdr " ns, median of runs |"
		print sep "---:|"
		for (i = 1; i <= nid[kind]; i++) {
			id = ids[kind, i]
			line = ""
			for (r = 1; r <= runs; r++) {
				if (((kind, r, id) in ns) && yard(kind, r) > 0)
					line = line sprintf(" %.3f |", ns[kind, r, id] / yard(kind, r))
				else
					line = line " - |"
			}
			printf "| %s | %.3f |%s %.1f |\n", (id in desc) ? desc[id] : id, x(kind, id), line,
				mns(kind, id)
		}
		print ""
	}
	print "## Targets (the image as built, medians of the runs)\n"
	print "| target | measured | wanted | verdict |"
	print "|---|---:|---|---|"
	v = x("image", "vdso_csf_snap")
	printf "| __vdso_coarse_stat_snap() / (the image'"'"'s clock_gettime() + copy floor) | %.3fx (%.1f ns against %.1f + %.1f) | <= 1.2x | %s |\n",
		v, mns("image", "vdso_csf_snap"), mns("image", "vdso_clock_mono"), mns("image", "copy"),
		v <= 1.2 ? "PASS" : "MISS"
	l = x("image", "lib_csf_thread_snap")
	printf "| (csf_thread_snap() / the same) | %.3fx | | |\n", l
	printf "| (without the LFENCE: __vdso_coarse_stat_snap() / the same) | %.3fx | | |\n", x("nolfence", "vdso_csf_snap")
	printf "| (the LFENCE: __vdso_coarse_stat_snap() as built minus -L, medians) | %.1f ns | | |\n",
		mns("image", "vdso_csf_snap") - mns("nolfence", "vdso_csf_snap")
	print ""
	print "v3'"'"'s targets were against the C floor with RDTSCP (1.05x and 1.1x); v4'"'"'s"
	print "C floor reads the C library'"'"'s clock_gettime(), the host kernel'"'"'s vDSO and"
	printf "clocksource (here %s), not the image'"'"'s: its ratios are in the tables, not judged.\n", cs
}' "$out/snap-native.tsv" >"$out/snap-native.md"
cat "$out/snap-native.md"
