#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The 64-byte cache lines of task_struct and of the thread page that a
# context switch, a wakeup and a migration touch, from a kernel's DWARF:
#
#   scripts/cache-lines.sh [VMLINUX]	(default build/linux-bench-o2/vmlinux,
#					a make bench BENCH_O2=1 kernel)
#
# Prints a markdown table per object: the field, its offset and line, and
# which paths read (r) or write (w) it: the scheduler's own (read from
# __schedule(), try_to_wake_up() and set_task_cpu() of the 7.3 and 6.12
# trees with SCHED_INFO; fields of the tracepoints left out) and the
# coarse_stat hooks', registered (reg) or not (key on, unreg).  The field
# lists are written down here, not derived: check them against the code
# when the hooks or the scheduler change.  Needs gdb and a vmlinux with
# DWARF (scripts/o2.config has it).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
vmlinux=${1:-$BUILD_ROOT/linux-bench-o2/vmlinux}
[ -f "$vmlinux" ] || { echo "cache-lines: no $vmlinux (make bench BENCH_O2=1 builds it)" >&2; exit 1; }
command -v gdb >/dev/null || { echo "cache-lines: needs gdb" >&2; exit 1; }

# object|field|who touches it: s=switch (o: prev, i: next), w=wakeup, m=migration
task_fields='
thread_info.flags|si: r (TIF work in __switch_to, preemption)
__state|so: r; w: r w
on_cpu|so: w (finish_task); si: w (prepare_task); w: r
on_rq|so: r w (block); w: r w
is_blocked|so: w (try_to_block_task), r (reg: blocked or preempted); w: w (ttwu_do_wakeup)
coarse_stat_page|so, si: r (key on); w: r (key on); m: r (key on)
wake_entry|w: w (remote, queued wakeup)
wake_cpu|w: r w; m: w
se.exec_start|so: r w (update_curr); si: w (set_next_entity)
se.sum_exec_runtime|so: r w
se.vruntime|so: r w; w: r w (place_entity)
se.nr_migrations|m: w
sched_class|so, si, w: r
sched_info.pcount|si: w (sched_info_arrive)
sched_info.run_delay|si: w
sched_info.last_arrival|so: r (sched_info_depart); si: w
sched_info.last_queued|so: w (preempted); si: r w; w: w (enqueue)
coarse_stat_counters_due|so: r (reg)
mm|si: r (context_switch)
active_mm|so: r w; si: w
pi_lock|w: w (lock)
cpus_ptr|w: r (select_task_rq)
coarse_stat|(prctl, fork, exit only)
'
page_fields='
seq|so, si, w, m: w (reg)
state|so: w; si: r w; w: -; m: -
last_switch_cyc|so: r w; si: r w
wake_cyc|si: r; w: w
nr_switch_in|si: w
nr_preempt|so: w (preempted)
nr_block|so: w (blocked)
oncpu_cyc|so: w
runq_cyc|si: w
sleep_cyc|si: w (after a sleep)
dsleep_cyc|si: w (after an uninterruptible sleep)
iowait_cyc|si: w (after I/O wait)
start_cyc|-
cpu|m: w
nr_migrate|m: w
counters_cyc|so: w (every 50 us: the counter copy, to the end of the page)
'

offsets() { # STRUCT FIELDS -> "field offset size" lines (-1: not in this kernel)
	local st=$1 list
	list=$(grep -v '^$' <<<"$2" | cut -d'|' -f1 | paste -sd' ')
	gdb -q -batch -nx -ex "python
import gdb
for f in '$list'.split():
    try:
        v = gdb.parse_and_eval('&((struct $st *)0)->' + f)
        z = gdb.parse_and_eval('sizeof(((struct $st *)0)->' + f + ')')
        print(f, int(v.cast(gdb.lookup_type('long'))), int(z))
    except gdb.error:
        print(f, -1, -1)
" "$vmlinux" 2>/dev/null | grep -E '^[a-z_.]+ -?[0-9]+ -?[0-9]+$'
}

table() { # STRUCT FIELDS
	local st=$1 fields=$2
	echo "| struct $st field | offset | size | line | touched by |"
	echo "|---|---:|---:|---:|---|"
	paste -d'|' <(offsets "$st" "$fields") <(grep -v '^$' <<<"$fields" | cut -d'|' -f2) |
		while IFS='|' read -r of who; do
			read -r f off sz <<<"$of"
			if [ "$off" = -1 ] || [ -z "$off" ]; then
				echo "| $f | - | - | - | $who (not in this kernel) |"
			else
				echo "| $f | $off | $sz | $((off / 64)) | $who |"
			fi
		done
}

echo "Cache lines of $vmlinux ($(strings "$vmlinux" | grep -m1 '^Linux version' | cut -d' ' -f3)); line = offset / 64"
echo "(fork.c allocates task_struct aligned to L1_CACHE_BYTES, the page is page-aligned.)"
echo
table task_struct "$task_fields"
echo
table coarse_stat_thread_page "$page_fields"
