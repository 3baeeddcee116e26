#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A native lower bound, in cycles, of the coarse_stat hooks' added work
# (project issue 38, item 7): bench/hook_native/ times, on this machine's
# CPU, cache-hot, the instruction sequences that the v4 -O2 bench kernel
# executes for a registered context switch and a wakeup stamp (taken from
# objdump of its vmlinux), and prints them next to the host's own context
# switch cost (perf bench sched pipe, natively).
#
#   scripts/bench-hook-native.sh	build, check the sequences, time, write
#					Documentation/bench/O2/hook-native.md
#
# Environment:
#   HOOK_VMLINUX	the kernel whose hooks are reproduced (build/linux-bench-o2/vmlinux)
#   HOOK_ROUNDS		rounds of samples (5); HOOK_SAMPLES per round (2000)
#   HOOK_PIPE_LOOPS	perf bench sched pipe -l (50000), HOOK_PIPE_RUNS (5)
#   HOOK_PIPE_CHRT	how perf bench runs (default "chrt -f 1": SCHED_FIFO; empty: as is)
#   HOOK_OUT		the results file (Documentation/bench/O2/hook-native.md)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
work=$BUILD_ROOT/hook_native
vmlinux=${HOOK_VMLINUX:-$BUILD_ROOT/linux-bench-o2/vmlinux}
out=${HOOK_OUT:-$top/Documentation/bench/O2/hook-native.md}
rounds=${HOOK_ROUNDS:-5}
samples=${HOOK_SAMPLES:-2000}
pipe_loops=${HOOK_PIPE_LOOPS:-50000}
pipe_runs=${HOOK_PIPE_RUNS:-5}
mkdir -p "$work"

make -s -C "$top/bench/hook_native" OUT="$work" || exit 1

# --- the sequences: every kernel block must appear, instruction for
# instruction (operands with kernel addresses normalised), in hook_native.
check=$work/check.txt
python3 - "$vmlinux" "$work/hook_native" >"$check" <<'PY'
import re, subprocess, sys
vml, hn = sys.argv[1], sys.argv[2]
def sym(f, name):
    for l in subprocess.run(['nm', f], capture_output=True, text=True).stdout.splitlines():
        a, t, n = l.split()[:3]
        if n == name: return int(a, 16)
    raise SystemExit('no symbol %s in %s' % (name, f))
def dis(f, lo, hi):
    o = subprocess.run(['objdump', '-d', '--no-show-raw-insn', '--start-address=%#x' % lo,
                        '--stop-address=%#x' % hi, f], capture_output=True, text=True).stdout
    r = []
    for l in o.splitlines():
        m = re.match(r'\s*([0-9a-f]+):\t(.*)$', l)
        if m: r.append(norm(m.group(2)))
    return r
def norm(s):
    s = re.sub(r'\s+#.*$', '', s).strip()
    s = re.sub(r'^(j\w+|call)\s+\S+.*$', r'\1 X', s)           # branch targets
    s = re.sub(r'-?0x[0-9a-f]+\(%rip\)', 'M(%rip)', s)          # RIP-relative symbols
    s = re.sub(r'-?0x[0-9a-f]{6,}\(,', 'M(,', s)               # absolute + index
    s = re.sub(r'\s+', ' ', s)
    return s
# (name, vmlinux symbol, start offset, end offset) of each executed block
S, W, K, C = '__schedule', 'try_to_wake_up', 'ktime_get_mono_fast_ns', 'coarse_stat_copy_counters'
blocks = [
 ('switch: in-line block (d756-d834)', S, 0x616, 0x6f4),
 ('switch: blocked, /proc letter (e605-e659)', S, 0x14c5, 0x1519),
 ('switch: prev unregistered (e701-e71f)', S, 0x15c1, 0x15df),
 ('switch: counter copy call (e71f-e737)', S, 0x15df, 0x15f7),
 ('switch: switch-in after wakeup, iowait (e746-e788)', S, 0x1606, 0x1648),
 ('wakeup: try_to_wake_up block (cff82-cffc8)', W, 0x3f2, 0x438),
 ('ktime_get_mono_fast_ns: entry to the jump label (e020-e055)', K, 0x0, 0x35),
 ('ktime_get_mono_fast_ns: after the clock read to the return (e05c-e0af)', K, 0x3c, 0x8f),
 ('coarse_stat_copy_counters (all but the return thunk jump)', C, 0x0, 0xff),
]
text = sym(hn, 'hook_native_end') if False else None
h = dis(hn, sym(hn, 'ktime_fast'), sym(hn, 'ktime_fast') + 0x4000)
hs = '\n'.join(h)
ok = 0
for name, f, lo, hi in blocks:
    a = sym(vml, f)
    k = dis(vml, a + lo, a + hi)
    found = ('\n' + '\n'.join(k) + '\n') in ('\n' + hs + '\n')
    ok += found
    print('%s\t%d insns\t%s' % ('same' if found else 'DIFFERENT', len(k), name))
print('%d of %d kernel blocks found instruction for instruction in hook_native' % (ok, len(blocks)))
PY
cat "$check"

# --- native timing (min and median over many samples, cache-hot)
load_before=$(uptime)
"$work/hook_native" -r "$rounds" -s "$samples" >"$work/hook.tsv" 2>"$work/hook.err" || { cat "$work/hook.err"; exit 1; }
load_after=$(uptime)
cat "$work/hook.tsv" "$work/hook.err"

# --- the host's own context switch: perf bench sched pipe, else cs_pingpong
pipe=$work/pipe.txt
: >"$pipe"
if perf bench sched pipe -l 1000 >/dev/null 2>&1; then
	# SCHED_FIFO (as root) so that other work on the shared host does not
	# preempt the pair between its switches; HOOK_PIPE_CHRT= for none.
	rt=${HOOK_PIPE_CHRT-chrt -f 1}
	[ -z "$rt" ] || $rt true 2>/dev/null || rt=
	for mode in "$rt taskset -c 0|1 CPU, processes|" "$rt taskset -c 0|1 CPU, threads|-T" "$rt|2 CPUs, processes|" "$rt|2 CPUs, threads|-T"; do
		IFS='|' read -r pre label opt <<<"$mode"
		best=
		for ((i = 0; i < pipe_runs; i++)); do
			# shellcheck disable=SC2086
			v=$($pre perf bench sched pipe $opt -l "$pipe_loops" 2>/dev/null | awk '$2 == "usecs/op" { print $1 }')
			[ -n "$v" ] || continue
			if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$v; fi
		done
		printf '%s\t%sperf bench sched pipe %s-l %s\t%s\n' "$label" "${pre:+$pre }" "${opt:+$opt }" "$pipe_loops" "${best:--}" >>"$pipe"
	done
	src="perf bench sched pipe"
else
	src="cs_pingpong (perf bench does not run here)"
	uapi=$(uapi_headers "$work/hdr") || exit 1
	gcc -O2 -Wall -pthread -isystem "$uapi" -o "$work/cs_pingpong" "$top/bench/cs_pingpong.c" || exit 1
	for c in 1 2; do
		best=
		for ((i = 0; i < pipe_runs; i++)); do
			v=$("$work/cs_pingpong" -s keyoff -c "$c" -n "$pipe_loops" | awk '{ printf "%.3f", $NF / '"$pipe_loops"' / 1000 }')
			if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$v; fi
		done
		printf '%s CPU, futex threads\tcs_pingpong -s keyoff -c %s -n %s\t%s\n' "$c" "$c" "$pipe_loops" "$best" >>"$pipe"
	done
fi
cat "$pipe"
load_pipe=$(uptime)

# --- the results
mhz=$( (dmesg 2>/dev/null || journalctl -k -q 2>/dev/null) | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz.*/\1/p' | tail -n 1)
[ -n "$mhz" ] || mhz=$(awk -F': ' '/^cpu MHz/ { print $2; exit }' /proc/cpuinfo)
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
fam=$(awk -F': ' '/^cpu family/ { f = $2 } /^model\t/ { m = $2 } END { print "family " f ", model " m }' /proc/cpuinfo)
clk=$(sed -n 's/^#meta\tclock_read\t//p' "$work/hook.tsv")
val() { awk -F'\t' -v id="$1" -v c="$2" '$1 == id { print $c }' "$work/hook.tsv"; }
ns() { awk -v t="$1" -v m="$mhz" 'BEGIN { printf "%.1f", t * 1000 / m }'; }
{
	echo "# The hooks' added work in cycles, natively: a lower bound"
	echo
	echo "Written by scripts/bench-hook-native.sh ($(date -u '+%Y-%m-%d %H:%M UTC')) on this host: $cpu ($fam),"
	echo "TSC ${mhz} MHz, $(nproc) CPUs (a KVM guest, shared with other work; no PMU: times are TSC ticks)."
	echo "Host load: before \`${load_before#*load }\`, after \`${load_after#*load }\`, after perf bench \`${load_pipe#*load }\`."
	echo
	echo "## Method"
	echo
	echo "bench/hook_native/hook.S is the v4 -O2 bench kernel's code for the hooks,"
	echo "copied instruction for instruction from \`objdump -d\` of build/linux-bench-o2/vmlinux"
	echo "(CONFIG_COARSE_STAT=y, scripts/o2.config: distribution-like) in its run-time form"
	echo "with the key on: the coarse_stat jump label sites (found through the"
	echo "\`__jump_table\` entries whose key is \`coarse_stat_key\`) as 5-byte JMPs to"
	echo "their out-of-line blocks in \`__schedule()\` and \`try_to_wake_up()\`, the"
	echo "called \`ktime_get_mono_fast_ns()\` (fast path, the clocksource_read_inlined"
	echo "jump label patched to a NOP, \`rdtsc_ordered()\` as \`$clk\`: the"
	echo "kernel's ALTERNATIVE_2 choice on this CPU) and \`coarse_stat_copy_counters()\`."
	echo "Kernel symbols in memory operands point at user buffers laid out at the same"
	echo "offsets (task_struct: coarse_stat_page 0x38, is_blocked 0x36, in_iowait 0x5b8,"
	echo "coarse_stat_counters_due 0x4e8, the copied counters; the page; tk_fast_mono),"
	echo "the return thunk jumps are \`ret\` (what the kernel patches them to on a CPU"
	echo "with no retbleed/SRSO return thunk in use, as on this host), and the full"
	echo "barrier \`lock addl \$0,-4(%rsp)\` (smp_mb()) is kept as is.  Not the"
	echo "fallback (compiling coarse_stat.h's logic in user space): the kernel's own"
	echo "instructions.  The check below normalises kernel addresses and looks for each"
	echo "executed kernel block, in order, in hook_native's disassembly:"
	echo
	echo '```'
	cat "$check"
	echo '```'
	echo
	echo "(The blocks not found verbatim differ only where listed above: jump label"
	echo "and alternative sites in their run-time form, \`ret\` for the return thunk.)"
	echo
	echo "A loop iteration is the 1-CPU ping-pong's round trip: stamp B's wakeup,"
	echo "switch A -> B (A blocked in TASK_INTERRUPTIBLE, so the /proc-letter path; B"
	echo "switched in after that wakeup), stamp A's wakeup, switch B -> A.  The same"
	echo "loop with the key-off NOP5 at each hook site is subtracted, so the figures"
	echo "are the work added over a kernel with nothing registered.  A separate loop"
	echo "times the wakeup stamp alone; switch = (round trip - 2 wakeups) / 2.  Each"
	echo "sample times $(sed -n 's/^#meta\titers\t//p' "$work/hook.tsv") iterations between two \`lfence; rdtsc\`; the variants take"
	echo "turns sample by sample; min and median of $(sed -n 's/^#meta\tsamples\t//p' "$work/hook.tsv") samples each."
	echo
	echo "## Results (TSC ticks at ${mhz} MHz; ns)"
	echo
	echo "| added work | min | median | min ns | full barriers | what |"
	echo "|---|---:|---:|---:|---:|---|"
	echo "| registered switch (prev and next registered, no copy) | $(val added_switch 3) | $(val added_switch 4) | $(ns "$(val added_switch 3)") | 1 (+1 LFENCE) | one smp_mb() for both write sections, one clock read |"
	echo "| registered switch with the counter copy | $(val added_switch_copy 3) | $(val added_switch_copy 4) | $(ns "$(val added_switch_copy 3)") | 1 (+1 LFENCE) | + coarse_stat_copy_counters(): 16 loads and 18 stores |"
	echo "| the copy alone | $(val copy_extra 3) | $(val copy_extra 4) | $(ns "$(val copy_extra 3)") | 0 | |"
	echo "| wakeup stamp | $(val added_wake 3) | $(val added_wake 4) | $(ns "$(val added_wake 3)") | 1 (+1 LFENCE) | write section around one clock read |"
	echo "| round trip: 2 switches + 2 wakeups | $(val added_roundtrip 3) | $(val added_roundtrip 4) | $(ns "$(val added_roundtrip 3)") | 4 (+4 LFENCE) | the 1-CPU ping-pong round trip, both registered |"
	echo
	echo "Instructions on these paths (counted from the listing): a registered switch"
	echo "115 (74 in \`__schedule()\`'s blocks incl. the JMP, 41 in"
	echo "\`ktime_get_mono_fast_ns()\`), +45 with the counter copy; a wakeup stamp 58"
	echo "(17 + 41).  Under -icount the patched kernel's registered ping-pong adds"
	echo "+161 instructions per switch and its wakeup (v4-icount.md) over key off."
	echo
	echo "## The host's own context switch, for scale ($src)"
	echo
	echo "| case | command | us per round trip (least of $pipe_runs) | TSC ticks per half round trip (a switch, a wakeup, a write and a read) |"
	echo "|---|---|---:|---:|"
	while IFS=$'\t' read -r l c v; do
		t=$(awk -v v="$v" -v m="$mhz" 'BEGIN { if (v == "-") print "-"; else printf "%.0f", v * m / 2 }')
		echo "| $l | \`$c\` | $v | $t |"
	done <"$pipe"
	echo
	awk -F'\t' -v m="$mhz" -v sw="$(val added_switch 3)" -v wk="$(val added_wake 3)" '
		$1 == "1 CPU, threads" && $3 != "-" {
			h = $3 * m / 2
			printf "Scale: a registered switch and its wakeup stamp add at least %.0f TSC ticks\n", sw + wk
			printf "(min), %.1f %% of this host'"'"'s 1-CPU thread round trip half (%.0f ticks).\n", 100 * (sw + wk) / h, h
		}' "$pipe"
	echo
	echo "A round trip is two switches and two wakeups (1 CPU); on 2 CPUs each side"
	echo "also goes to and comes back from idle (and the host is a KVM guest: the"
	echo "IPIs and idle exits are the hypervisor's).  Raw: build/hook_native/."
	echo
	echo "## What the lower bound does not include"
	echo
	echo "- Cache and TLB misses: the loop is cache-hot; in a real switch the page's"
	echo "  second line (and the third to fifth at a copy), the task_struct lines with"
	echo "  coarse_stat_page/counters_due and the copied counters, tk_fast_mono, and the"
	echo "  hook's own code (out of line: one more I-cache line or two) may miss."
	echo "- The real clock read: here \`$clk\` against user memory laid out like"
	echo "  tk_fast_mono, always on the fast path (no seqcount retry, no"
	echo "  max_cycles overflow path); a kernel whose clocksource is not the TSC (e.g."
	echo "  kvm-clock in a guest) calls clock->read through a retpoline instead."
	echo "- Mitigations on calls and returns: \`ret\` here; a kernel with call-depth"
	echo "  tracking (Intel retbleed=stuff) or an SRSO/retbleed return thunk adds"
	echo "  them to the two calls per switch (ktime, copy) and one per wakeup."
	echo "- Contention: the full barrier drains a store buffer that, after a real"
	echo "  switch's runqueue-lock and context-switch stores, is fuller than in this"
	echo "  loop; the TSC read is serialising (LFENCE) and its cost depends on what is"
	echo "  in flight; a reader on another CPU may hold the page line shared, making"
	echo "  each store a miss/RFO."
	echo "- Frequency: TSC ticks are at the nominal ${mhz} MHz, not core cycles (no PMU"
	echo "  in this guest): under turbo a core cycle is shorter, so the core cycles"
	echo "  are at least these tick counts times the ratio of core to TSC frequency."
	echo "- Everything the hooks change elsewhere: \`ttwu_runnable()\`'s and"
	echo "  \`sched_ttwu_pending()\`'s stamps, \`set_task_cpu()\`'s migration section,"
	echo "  and code layout effects of the extra NOP5s on \`__schedule()\`."
} >"$out"
echo "bench-hook-native: wrote ${out#"$top"/}"
