#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-cache: the data-cache lines and misses of a context switch, in
# a QEMU TCG guest with a cache model (QEMU's contrib/plugins/cache.c,
# patched: scripts/qemu-plugins.sh, bench/qemu-cache-window.patch).
#
#   scripts/bench-cache.sh		build, boot once per state, print the table
#   scripts/bench-cache.sh --report	print the table again from build/bench-cache/
#   scripts/bench-cache.sh --guest OUT BIN STATE CPUS ROUNDS WARMUP	(in the guest)
#
# One boot per state and CPU count, so that no state inherits another's
# caches or key: bench/cs_pingpong.c does cs_bench -i's futex ping-pong of
# two threads (a round trip: two switches, two wakeups) in one state -- key
# off (nothing registered), key on (the main thread registered, the pair
# not), registered (the pair too) -- on one CPU (both on CPU 0) or two (CPU
# 0 and 1), and executes a start marker after the warm-up and a stop marker
# after the counted round trips; the plugin counts only in between
# (window=on) and dumps every instruction's counts by guest virtual
# address.  Those are attributed to kernel functions with the kernel's
# System.map (the guest boots with nokaslr): __schedule (with what is
# inlined into it: context_switch(), the switch hooks), try_to_wake_up,
# ttwu_do_activate, finish_task_switch, the out-of-line coarse_stat
# functions (kernel/sched/coarse_stat*.o), the rest of kernel/sched/core.o,
# the rest of kernel/sched, the rest of the kernel (entry, futex, ...) and
# user space.  Per round trip: instructions, L1D accesses, L1D misses, L2
# misses of data accesses, and the distinct data lines the window touched
# (by the function that touched each first), and ratios against key off.
#
# The model: per vCPU an L1D and an L1I (BENCH_CACHE_L1D, default 32 KiB,
# 8-way, 64-byte lines, LRU) and a unified L2 (BENCH_CACHE_L2, 1 MiB 16-way),
# physically indexed, no L3, no prefetcher, no TLB or page-walk accesses, an
# access that crosses a line counts once for its first line; with
# BENCH_CACHE_COHERENT=1 (default) a store invalidates the line in the
# other vCPU's caches (write-invalidate: coherence misses between CPUs).
# QEMU's -icount (VM_ICOUNT=1) keeps the guest deterministic; the plugin
# does not change what the guest executes (a check: its instruction count
# equals the -icount clock's), only how fast: one boot takes ~2.5-3 min on
# this 2-core host (~25 s of it the window), the six boots ~16 min.  With
# DWARF in vmlinux (the -O2 bench kernel has it, for BTF), the instructions
# inlined from the coarse_stat hooks (coarse_stat_switch(), _wakeup(), ...)
# get a table of their own (addr2line -i).
#
# Checks (TAP lines, then "N passed, N failed"): per run, one counting
# window; the plugin's instruction count equals the -icount clock's (+-3%);
# >= 99% of the kernel instructions resolve in System.map; __schedule()
# entered 2 (1 CPU) or 4 (2 CPUs: each goes idle and back) times per round
# trip; the key off in key off, on otherwise.
#
# Environment:
#   BENCH_CACHE_KERNEL	bzImage (default build/linux-bench-o2/..., the -O2
#			bench kernel of make bench BENCH_O2=1, else
#			build/linux-bench/..., -Os); System.map and
#			kernel/sched/*.o next to it
#   BENCH_CACHE_STATES	states ("keyoff keyon reg")
#   BENCH_CACHE_CPUS	CPU counts ("1 2"); a kernel with one CPU: 1 only
#   BENCH_CACHE_ROUNDS	round trips counted (20000)
#   BENCH_CACHE_WARMUP	round trips before the window (2000)
#   BENCH_CACHE_L1D	L1D size,ways,line (32768,8,64); the L1I the same
#   BENCH_CACHE_L2	L2 size,ways,line (1048576,16,64); 0: no L2
#   BENCH_CACHE_COHERENT	1 (default): write-invalidate between vCPUs; 0: not
#   BENCH_CACHE_OUT	results directory (build/bench-cache)
#   BENCH_NICE		niceness of QEMU (10)
#   VM_DIR		the guest's directory (build/vm-cache)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"

# --- the guest side ------------------------------------------------------------
if [ "${1:-}" = --guest ]; then
	out=$2 bin=$3 state=$4 cpus=$5 rounds=$6 warmup=$7
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
	for _ in $(seq 100); do
		[ "$(cat "$cs")" = tsc-early ] || break
		sleep 0.1
	done
	# What the boot left running (deferred work, the clocksource switch) settles.
	sleep 2
	echo "bench-cache: $(uname -r), clocksource $(cat "$cs"), $(nproc) CPUs"
	"$bin" -s "$state" -c "$cpus" -n "$rounds" -w "$warmup" >"$out.tmp"
	rc=$?
	cat "$out.tmp"
	[ "$rc" = 0 ] && mv "$out.tmp" "$out"
	exit "$rc"
fi

# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"

log() { echo "bench-cache: $*" >&2; }
die() { log "$*"; exit 1; }

work=${BENCH_CACHE_OUT:-$BUILD_ROOT/bench-cache}
vmdir=${VM_DIR:-$BUILD_ROOT/vm-cache}
kernel=${BENCH_CACHE_KERNEL:-}
if [ -z "$kernel" ]; then
	kernel=$BUILD_ROOT/linux-bench-o2/arch/x86/boot/bzImage
	[ -f "$kernel" ] || kernel=$BUILD_ROOT/linux-bench/arch/x86/boot/bzImage
fi
kbuild=$(cd "$(dirname "$kernel")/../../.." 2>/dev/null && pwd)
read -r -a states <<<"${BENCH_CACHE_STATES:-keyoff keyon reg}"
read -r -a cpus_list <<<"${BENCH_CACHE_CPUS:-1 2}"
rounds=${BENCH_CACHE_ROUNDS:-20000}
warmup=${BENCH_CACHE_WARMUP:-2000}
IFS=, read -r l1_size l1_ways l1_line <<<"${BENCH_CACHE_L1D:-32768,8,64}"
l2=${BENCH_CACHE_L2:-1048576,16,64}
coherent=${BENCH_CACHE_COHERENT:-1}
nice=${BENCH_NICE:-10}
mkdir -p "$work" "$vmdir"

# --- the table -------------------------------------------------------------------
# report: attribute every run's dump in $work and print the table (and the
# checks); $work/results.md keeps it.
report() {
	local map=$kbuild/System.map objs=() o f

	[ -f "$map" ] || die "no $map (System.map of $kernel)"
	for o in "$kbuild"/kernel/sched/*.o; do
		[ -f "$o" ] && objs+=("$o")
	done
	[ ${#objs[@]} -gt 0 ] || die "no $kbuild/kernel/sched/*.o: cannot group the scheduler's functions"
	{
		for o in "${objs[@]}"; do
			nm --defined-only "$o" 2>/dev/null | awk -v o="$(basename "$o" .o)" \
				'$2 ~ /^[tTwW]$/ { print "obj", o, $3 }'
		done
		awk '$2 ~ /^[tTwW]$/ { print "sym", $1, $3 }' "$map"
		for f in "$work"/*cpu-*.plugin.log; do
			[ -f "$f" ] || continue
			echo "run $(basename "$f" .plugin.log) $f $(head -n 1 "${f%.plugin.log}.out" 2>/dev/null)"
		done
		# With DWARF in vmlinux: the inline frames of every kernel
		# instruction counted, "inl ADDR FRAME,FRAME,..." (innermost first).
		if [ -f "$kbuild/vmlinux" ] && readelf -S "$kbuild/vmlinux" 2>/dev/null | grep -q '\.debug_info'; then
			cat "$work"/*cpu-*.plugin.log 2>/dev/null |
				awk '$1 == "cs_insn" && $2 ~ /^0xffff/ { print $2 }' | sort -u |
				addr2line -a -i -f -e "$kbuild/vmlinux" 2>/dev/null |
				awk '/^0x[0-9a-f]+$/ { if (a != "") print "inl", a, fr; a = $1; fr = ""; n = 0; next }
					n++ % 2 == 0 { fr = fr (fr == "" ? "" : ",") $1 }
					END { if (a != "") print "inl", a, fr }'
		fi
	} >"$work/report.in"
	KERNEL=$kernel L1D="$l1_size/$l1_ways/$l1_line" L2="$l2" COHERENT=$coherent \
	perl -e '
use strict;
use warnings;
no warnings "portable";
my (%obj, @syms, @runs, %hook, %inl);
my $have_dwarf = 0;
open(my $in, "<", "$ARGV[0]") or die;
while (<$in>) {
	chomp;
	my @f = split(" ");
	if ($f[0] eq "obj") { $obj{$f[2]} //= $f[1]; }
	elsif ($f[0] eq "sym") { push @syms, [hex($f[1]), $f[2]]; }
	elsif ($f[0] eq "run") { push @runs, [@f[1 .. $#f]]; }
	elsif ($f[0] eq "inl") {
		# The outermost coarse_stat_*() frame: the hook the instruction is inlined from.
		my @fr = grep { /^(coarse_stat_|csf_)/ } split(/,/, $f[2] // "");
		$hook{hex($f[1])} = $fr[-1] if @fr;
		$have_dwarf = 1;
	}
}
@syms = sort { $a->[0] <=> $b->[0] } @syms;
my @addr = map { $_->[0] } @syms;
my $text_end = $addr[-1];
sub sym_of {
	my ($a) = @_;
	return undef if $a < $addr[0] || $a > $text_end + 65536;
	my ($lo, $hi) = (0, $#addr);
	while ($lo < $hi) {
		my $mid = int(($lo + $hi + 1) / 2);
		if ($addr[$mid] <= $a) { $lo = $mid; } else { $hi = $mid - 1; }
	}
	return $syms[$lo][1];
}
my @groups = ("__schedule", "try_to_wake_up", "ttwu_do_activate", "finish_task_switch",
	"coarse_stat (out of line)", "rest of sched/core.o", "rest of kernel/sched",
	"rest of kernel", "user space", "total");
sub group_of {
	my ($a, $s) = @_;
	return "user space" if $a < 0xffff800000000000;
	return "rest of kernel" unless defined $s;
	(my $b = $s) =~ s/\..*//;
	return $b if $b eq "__schedule" || $b eq "try_to_wake_up" || $b eq "ttwu_do_activate";
	return "finish_task_switch" if $b eq "finish_task_switch";
	my $o = $obj{$s} // $obj{$b} // "";
	return "coarse_stat (out of line)" if $o =~ /^coarse_stat/;
	return "rest of sched/core.o" if $o eq "core";
	return "rest of kernel/sched" if $o ne "";
	return "rest of kernel";
}
my $sched_entry = undef;
for my $s (@syms) { $sched_entry = $s->[0] if $s->[1] eq "__schedule"; }
my (%v, %fn, %meta, @checks);
my %symcache;
for my $r (@runs) {
	my ($id, $file, @out) = @$r;
	my ($cpus, $state) = $id =~ /^(\d)cpu-(\w+)$/ or next;
	my %o = @out[1 .. $#out];		# "cs_pingpong:" state S cpus C rounds N ...
	my $n = $o{rounds} or do { push @checks, ["$id: the driver reported its rounds", 1]; next; };
	my ($starts, $stops, $inval, $kern, $unres) = (0, 0, 0, 0, 0);
	open(my $fh, "<", $file) or next;
	while (<$fh>) {
		if (/^cs_window starts (\d+) stops (\d+) cores \d+ coherent \d+ invalidations (\d+)/) {
			($starts, $stops, $inval) = ($1, $2, $3);
		} elsif (/^cs_insn (0x[0-9a-f]+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/) {
			my $a = hex($1);
			my $s = $symcache{$a} //= (sym_of($a) // "");
			$s = undef if $s eq "";
			my $g = group_of($a, $s);
			if ($a >= 0xffff800000000000) { $kern += $2; $unres += $2 unless defined $s; }
			for my $k ($g, "total") {
				$v{$cpus}{$state}{$k}{insn} += $2;
				$v{$cpus}{$state}{$k}{acc} += $3;
				$v{$cpus}{$state}{$k}{miss} += $4;
				$v{$cpus}{$state}{$k}{l2miss} += $7;
			}
			$fn{$cpus}{$state}{$s // ($a < 0xffff800000000000 ? "(user)" : "(?)")}{acc} += $3;
			$fn{$cpus}{$state}{$s // ($a < 0xffff800000000000 ? "(user)" : "(?)")}{miss} += $4;
			$meta{$cpus}{$state}{sched} += $2 if defined $sched_entry && $a == $sched_entry;
			if (defined $hook{$a}) {
				my $k = ($s // "?") . " / " . $hook{$a};
				$inl{$cpus}{$k}{$state}{insn} += $2;
				$inl{$cpus}{$k}{$state}{acc} += $3;
				$inl{$cpus}{$k}{$state}{miss} += $4;
			}
		} elsif (/^cs_line (0x[0-9a-f]+) (0x[0-9a-f]+) (\d+) (\d+)/) {
			my $a = hex($2);
			my $s = $symcache{$a} //= (sym_of($a) // "");
			$s = undef if $s eq "";
			my $g = group_of($a, $s);
			$v{$cpus}{$state}{$_}{lines}++ for ($g, "total");
			# Touched at least every other round trip on average.
			if ($3 >= $n / 2) { $v{$cpus}{$state}{$_}{hot}++ for ($g, "total"); }
		}
	}
	close($fh);
	$meta{$cpus}{$state}{n} = $n;
	$meta{$cpus}{$state}{inval} = $inval;
	$meta{$cpus}{$state}{key} = $o{key} // "?";
	# Under -icount the window'"'"'s CLOCK_MONOTONIC ns are the instructions of all vCPUs.
	my $ins = $v{$cpus}{$state}{total}{insn} // 0;
	$meta{$cpus}{$state}{icount} = ($o{ns} // 0) / $n;
	push @checks, ["$id: the plugin counted the instructions the -icount clock did (+-3%)",
		(($o{ns} // 0) > 0 && abs($ins - $o{ns}) <= 0.03 * $o{ns}) ? 0 : 1,
		sprintf("plugin %.1f, clock %.1f per round trip", $ins / $n, ($o{ns} // 0) / $n)];
	push @checks, ["$id: one counting window (start and stop marker seen once)",
		($starts == 1 && $stops == 1) ? 0 : 1, "starts $starts stops $stops"];
	push @checks, ["$id: kernel instructions resolved by System.map (>= 99%)",
		($kern > 0 && $unres / $kern < 0.01) ? 0 : 1,
		sprintf("%.2f%% unresolved of %d", $kern ? 100 * $unres / $kern : 100, $kern)];
	my $sw = ($meta{$cpus}{$state}{sched} // 0) / $n;
	$meta{$cpus}{$state}{sw} = $sw;
	# 1 CPU: ping -> pong -> ping, 2 switches; 2 CPUs: each CPU goes to idle and back.
	push @checks, ["$id: __schedule() entered " . (2 * $cpus) . " times per round trip (+-10%)",
		(abs($sw - 2 * $cpus) <= 0.2 * $cpus) ? 0 : 1, sprintf("%.3f", $sw)];
	push @checks, ["$id: the key as the state wants it",
		(($state eq "keyoff") ? ($o{key} <= 0) : ($o{key} > 0)) ? 0 : 1, "key $o{key}"];
}
my %sname = (keyoff => "key off", keyon => "key on, unreg.", reg => "registered");
my @st = grep { my $s = $_; grep { exists $v{$_}{$s} } keys %v } qw(keyoff keyon reg);
sub f1 { return defined $_[0] ? sprintf("%.1f", $_[0]) : "-"; }
sub ratio { my ($a, $b, $min) = @_; return "-" unless defined $a && defined $b;
	return $b >= ($min // 1e-9) ? sprintf("%.3f", $a / $b) : ($a > 0 ? "(~0)" : "-"); }
print "# Cache footprint of a context switch (QEMU TCG cache model)\n\n";
print "Kernel: $ENV{KERNEL}.  Model per vCPU: L1D and L1I $ENV{L1D} (bytes/ways/line, LRU), ";
print "L2 ", ($ENV{L2} eq "0" ? "none" : $ENV{L2} =~ s{,}{/}gr), ", ";
print $ENV{COHERENT} ? "write-invalidate between vCPUs" : "no coherence between vCPUs", "; no L3, ";
print "no prefetcher, no TLB/page walks.  Per round trip (two switches, two wakeups) of the futex ";
print "ping-pong (bench/cs_pingpong.c), after the warm-up.  Lines: distinct data lines (by the function ";
print "that touched each first in the window): hot = accessed at least every other round trip on ";
print "average (the per-round-trip footprint), all = any access in the window.\n\n";
for my $c (sort keys %v) {
	my $off = $v{$c}{keyoff};
	printf "## %d CPU%s (%s)\n\n", $c, $c > 1 ? "s" : "", $c > 1 ? "ping on CPU 0, pong on CPU 1" : "both on CPU 0";
	printf "Round trips counted: %s; instructions per round trip by the -icount clock: %s; __schedule() entries per round trip: %s; static key count: %s%s.\n\n",
		join(", ", map { "$sname{$_} " . ($meta{$c}{$_}{n} // "-") } @st),
		join(", ", map { "$sname{$_} " . sprintf("%.1f", $meta{$c}{$_}{icount} // 0) } @st),
		join(", ", map { "$sname{$_} " . sprintf("%.2f", $meta{$c}{$_}{sw} // 0) } @st),
		join(", ", map { "$sname{$_} " . ($meta{$c}{$_}{key} // "-") } @st),
		$c > 1 ? "; coherence invalidations per round trip: " .
			join(", ", map { "$sname{$_} " . sprintf("%.1f", ($meta{$c}{$_}{inval} // 0) / ($meta{$c}{$_}{n} || 1)) } @st) : "";
	print "| function | state | insns | L1D accesses | L1D misses | L2 misses (data) | hot lines | all lines | accesses / key off | misses / key off | misses - key off |\n";
	print "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
	for my $g (@groups) {
		for my $s (@st) {
			my $x = $v{$c}{$s}{$g} // {};
			my $n = $meta{$c}{$s}{n} || 1;
			my $o = $off->{$g} // {};
			my $no = $meta{$c}{keyoff}{n} || 1;
			my ($acc, $miss) = (($x->{acc} // 0) / $n, ($x->{miss} // 0) / $n);
			my ($oacc, $omiss) = (($o->{acc} // 0) / $no, ($o->{miss} // 0) / $no);
			printf "| %s | %s | %.1f | %.1f | %.2f | %.2f | %d | %d | %s | %s | %s |\n",
				$g eq "total" ? "**total**" : $g, $sname{$s}, ($x->{insn} // 0) / $n, $acc, $miss,
				($x->{l2miss} // 0) / $n, $x->{hot} // 0, $x->{lines} // 0,
				# Misses: a ratio only against at least 0.1 per round trip.
				$off ? ratio($acc, $oacc) : "-", $off ? ratio($miss, $omiss, 0.1) : "-",
				$off ? sprintf("%+.2f", $miss - $omiss) : "-";
		}
	}
	print "\n";
	if ($have_dwarf && %{$inl{$c} // {}}) {
		print "Code inlined from the coarse_stat hooks (DWARF inline frames of vmlinux; function / outermost coarse_stat frame), per round trip:\n\n";
		print "| function / hook | state | insns | L1D accesses | L1D misses |\n|---|---|---:|---:|---:|\n";
		for my $k (sort keys %{$inl{$c}}) {
			for my $s (@st) {
				my $x = $inl{$c}{$k}{$s} // {};
				my $n = $meta{$c}{$s}{n} || 1;
				printf "| %s | %s | %.1f | %.1f | %.2f |\n", $k, $sname{$s},
					($x->{insn} // 0) / $n, ($x->{acc} // 0) / $n, ($x->{miss} // 0) / $n;
			}
		}
		print "\n";
	} elsif (!$have_dwarf && $c == (sort keys %v)[0]) {
		print "(No DWARF in vmlinux: the inlined hooks are counted in the functions they are inlined into.)\n\n";
	}
	if ($off && exists $fn{$c}{reg}) {
		my %d;
		my ($nr, $no) = ($meta{$c}{reg}{n}, $meta{$c}{keyoff}{n});
		for my $f (keys %{$fn{$c}{reg}}, keys %{$fn{$c}{keyoff}}) {
			$d{$f} = [(($fn{$c}{reg}{$f}{acc} // 0) / $nr - ($fn{$c}{keyoff}{$f}{acc} // 0) / $no),
				(($fn{$c}{reg}{$f}{miss} // 0) / $nr - ($fn{$c}{keyoff}{$f}{miss} // 0) / $no)];
		}
		my @top = (sort { abs($d{$b}[0]) + 20 * abs($d{$b}[1]) <=> abs($d{$a}[0]) + 20 * abs($d{$a}[1]) } keys %d)[0 .. 9];
		print "Functions whose L1D accesses or misses per round trip differ most, registered - key off:\n\n";
		print "| function | accesses | misses |\n|---|---:|---:|\n";
		printf "| %s | %+.1f | %+.2f |\n", $_, @{$d{$_}} for grep { defined } @top;
		print "\n";
	}
}
print "What the model leaves out: the cache is a tag-only model of each guest access QEMU makes\n";
print "(loads and stores of guest instructions, by guest physical address); page-table walks,\n";
print "prefetchers, the store buffer, an L3 shared between cores and DMA are not modelled, and the\n";
print "instruction stream is TCG guest code, so the misses are those of this guest kernel on a\n";
print "CPU with these caches, not a measurement of a real CPU.  With one cache per vCPU and no\n";
print "coherence (BENCH_CACHE_COHERENT=0, the stock plugin) a line written on one CPU and read on\n";
print "the other costs nothing; with coherence on (default), a store invalidates the other\n";
print "vCPUs copies, and their next access misses in L1D and L2 (in hardware: a snoop or L3\n";
print "hit, tens of ns).\n\n";
for my $c (@checks) { print "CHECK\t$c->[1]\t$c->[0]\t", $c->[2] // "", "\n"; }
' "$work/report.in" >"$work/report.out" || die "the report failed"
	grep -v '^CHECK' "$work/report.out" | tee "$work/results.md"
	while IFS=$'\t' read -r _ rc what detail; do
		result "$what" "$rc" "$detail"
	done < <(grep '^CHECK' "$work/report.out")
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
}

if [ "${1:-}" = --report ]; then
	# The kernel of the runs, unless BENCH_CACHE_KERNEL says otherwise.
	if [ -z "${BENCH_CACHE_KERNEL:-}" ] && [ -s "$work/kernel" ]; then
		kernel=$(cat "$work/kernel")
		kbuild=$(cd "$(dirname "$kernel")/../../.." && pwd)
	fi
	report
	exit
fi

# --- build and run ---------------------------------------------------------------
"$top/scripts/deps.sh" qemu-plugins || die "packages missing: scripts/deps.sh qemu-plugins (as root)"
plugdir=$("$top/scripts/qemu-plugins.sh") || die "the QEMU plugins did not build (scripts/qemu-plugins.sh)"
[ -f "$kernel" ] || die "no kernel $kernel (make bench BENCH_O2=1 builds build/linux-bench-o2)"
[ -f "$kbuild/System.map" ] || die "no System.map next to $kernel"
bin=$work/bin/cs_pingpong
mkdir -p "$work/bin"
uapi=$(uapi_headers "$work/hdr") || die "no UAPI headers of the series"
gcc -O2 -Wall -pthread -isystem "$uapi" -o "$bin" "$top/bench/cs_pingpong.c" ||
	die "bench/cs_pingpong.c did not build"
ncpu_kernel=$(sed -n 's/^CONFIG_NR_CPUS=//p' "$kbuild/.config" 2>/dev/null)
plug="$plugdir/libcs_cache.so,window=on,dump=on,limit=8"
plug+=",dcachesize=$l1_size,dassoc=$l1_ways,dblksize=$l1_line"
plug+=",icachesize=$l1_size,iassoc=$l1_ways,iblksize=$l1_line"
if [ "$l2" != 0 ]; then
	IFS=, read -r l2_size l2_ways l2_line <<<"$l2"
	plug+=",l2=on,l2cachesize=$l2_size,l2assoc=$l2_ways,l2blksize=$l2_line"
fi
[ "$coherent" = 1 ] && plug+=",coherent=on"
log "kernel $kernel; plugin $plug"
rm -f "$work"/*cpu-*.plugin.log "$work"/*cpu-*.out
echo "$kernel" >"$work/kernel"
for c in "${cpus_list[@]}"; do
	if [ -n "$ncpu_kernel" ] && [ "$c" -gt "$ncpu_kernel" ]; then
		log "the kernel has CONFIG_NR_CPUS=$ncpu_kernel: no $c-CPU runs"
		continue
	fi
	for s in "${states[@]}"; do
		id=${c}cpu-$s
		start=$SECONDS
		log "boot: $id, $rounds round trips after $warmup"
		rc=0
		VM_ACCEL=tcg VM_TCG_THREAD=single VM_ICOUNT=1 VM_DEBUG=0 VM_SCRATCH_MB=0 VM_SMP=2 \
			VM_DIR=$vmdir VM_TIMEOUT=${BENCH_CACHE_TIMEOUT:-1200} VM_APPEND=nokaslr \
			VM_QEMU_ARGS="-plugin $plug -d plugin -D $work/$id.plugin.log" \
			nice -n "$nice" "$top/scripts/vm.sh" --kernel "$kernel" -- \
			"$top/scripts/bench-cache.sh" --guest "$vmdir/$id.out" "$bin" "$s" "$c" "$rounds" "$warmup" ||
			rc=$?
		cp "$vmdir/console.log" "$work/console-$id.log" 2>/dev/null
		if [ "$rc" != 0 ] || [ ! -s "$vmdir/$id.out" ]; then
			log "$id failed (status $rc; console in $work/console-$id.log)"
			continue
		fi
		cp "$vmdir/$id.out" "$work/$id.out"
		log "$id done in $((SECONDS - start)) s"
	done
done
report
