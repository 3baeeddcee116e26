#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cstime's tests, as root in the guest (the patched kernel):
#
#   make -C consumers/cstime		# on the host
#   VM_SMP=2 VM_SCRATCH_MB=256 scripts/vm.sh -- consumers/cstime/guest-test.sh
#
# cstest forces each bucket in a thread of its own and measures what it
# forced itself (thread CPU clock, CLOCK_MONOTONIC, /proc/thread-self);
# check.py compares cstime's report with that.  $CSTIME runs another cstime
# build (default: the one next to this script).  TAP on stdout.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CSTIME=${CSTIME:-$here/cstime}
cstest=$here/cstest
check=$here/check.py
# shellcheck source=scripts/tap.sh
. "$here/../../scripts/tap.sh"
tap() {	# tap STATUS NAME DIAG
	tap_case "$2" "$1" "$3"
}

check() {	# check NAME CHECK ARGS...
	local name=$1 diag st
	shift
	diag=$(python3 "$check" "$@" 2>&1)
	st=$?
	tap "$st" "$name" "$diag"
}

echo "TAP version 13"
echo 2 > /proc/sys/kernel/coarse_stat_thread
echo 1 > /proc/sys/kernel/task_delayacct 2>/dev/null
out=$(mktemp -d /tmp/cstime-test.XXXXXX)
# The reader's data: a file on the scratch file system, or the scratch
# block device itself (a guest kernel without ext4); both real block I/O.
if [ -n "${COARSE_STAT_SCRATCH:-}" ]; then
	data=$COARSE_STAT_SCRATCH/cstime.dat
	dd if=/dev/urandom of="$data" bs=1M count=16 oflag=direct 2>/dev/null ||
		echo "# cannot write $data with O_DIRECT"
else
	data=${COARSE_STAT_SCRATCH_DEV:-/dev/null}
fi
echo "# reader data: $data"

# 1: the whole program: phases, fork + exec, a pool of 200
"$CSTIME" -j -o "$out/all.json" "$cstest" all "$out/meas.json" "$data" \
	> "$out/all.stdout" 2> "$out/all.stderr"
st=$?
tap "$st" "cstime -j cstest all exits 0" \
	"status $st; stderr: $(tr '\n' ' ' < "$out/all.stderr")"
check "-j output parses: one object per line, total last" json "$out/all.json"
check "total line equals the sum of the thread lines" total "$out/all.json"
check "spinner: cpu = its own CPU time" spin "$out/all.json" "$out/meas.json"
check "sleeper: sleep = its nanosleep time" sleep "$out/all.json" "$out/meas.json"
check "reader: O_DIRECT reads are iowait/dsleep" disk "$out/all.json" "$out/meas.json"
check "victim of a SCHED_FIFO hog: runq = hog's CPU time" starve \
	"$out/all.json" "$out/meas.json"
check "every thread counted: 200 pool, fork child, exec'd image" count \
	"$out/all.json" "$out/meas.json"

# 9-10: 200 short threads, text output
"$CSTIME" -s tid -o "$out/pool.txt" "$cstest" pool 200 2> "$out/pool.stderr"
st=$?
"$CSTIME" -j -o "$out/pool.json" "$cstest" pool 200 2>> "$out/pool.stderr"
st=$((st + $?))
[ -s "$out/pool.stderr" ] && echo "# stderr: $(tr '\n' ' ' < "$out/pool.stderr")"
check "pool of 200 short threads: 200 + main reported (status $st)" pool \
	"$out/pool.json" 200
check "text output: total row = sum of the 201 rows" text-total \
	"$out/pool.txt" 201

# 11: 1000 threads alive at once, cstime allowed 512 fds
(ulimit -n 512 && "$CSTIME" -j -o "$out/hold.json" "$cstest" pool 1000 hold) \
	2> "$out/hold.stderr"
[ -s "$out/hold.stderr" ] && echo "# stderr: $(tr '\n' ' ' < "$out/hold.stderr")"
check "1000 threads alive at once with 512 fds: none lost" pool \
	"$out/hold.json" 1000

# 12: exit status and stdout pass through
o=$("$CSTIME" -o /dev/null "$cstest" exit 7 2> "$out/exit.stderr")
st=$?
[ "$st" = 7 ] && [ "$o" = ran ]
tap $? "exit status 7 and stdout pass through" \
	"status $st, stdout '$o'; stderr: $(tr '\n' ' ' < "$out/exit.stderr")"

# 13: killed by a signal: 128 + 15
"$CSTIME" -o /dev/null "$cstest" signal 15 > /dev/null 2> "$out/sig.stderr"
st=$?
[ "$st" = 143 ] && grep -q "signal 15" "$out/sig.stderr"
tap $? "killed by SIGTERM: status 143" \
	"status $st; stderr: $(tr '\n' ' ' < "$out/sig.stderr")"

# 14: a static program: no shim; message, wall time, status, it ran
o=$("$CSTIME" "$here/cstest-static" exit 3 2> "$out/static.stderr")
st=$?
[ "$st" = 3 ] && [ "$o" = ran ] &&
	grep -q "static.*LD_PRELOAD.*wall [0-9.]* ms" "$out/static.stderr" &&
	[ "$(wc -l < "$out/static.stderr")" = 1 ]
tap $? "static program: runs, status 3, one-line message with wall time" \
	"status $st, stdout '$o'; stderr: $(cat "$out/static.stderr")"

# 15: registration refused: the message names the sysctl
echo 0 > /proc/sys/kernel/coarse_stat_thread
o=$("$CSTIME" "$cstest" exit 5 2> "$out/eperm.stderr")
st=$?
echo 2 > /proc/sys/kernel/coarse_stat_thread
[ "$st" = 5 ] && [ "$o" = ran ] &&
	grep -q "EPERM.*kernel.coarse_stat_thread.*wall [0-9.]* ms" \
		"$out/eperm.stderr" &&
	[ "$(wc -l < "$out/eperm.stderr")" = 1 ]
tap $? "kernel.coarse_stat_thread=0: runs, status 5, message names the sysctl" \
	"status $st, stdout '$o'; stderr: $(cat "$out/eperm.stderr")"

# 16: errno kept, also when a registration fails (every fd in use)
o=$("$CSTIME" -o /dev/null "$cstest" errno 2> "$out/errno.stderr")
[ "$o" = "errno main 0 thread 0" ]
tap $? "errno kept at main() and thread start, registration failing" \
	"output '$o'; stderr: $(cat "$out/errno.stderr")"

if [ -n "${CSTIME_KEEP:-}" ]; then
	cp -r "$out" "$CSTIME_KEEP"
fi
rm -rf "$out"
[ -n "${COARSE_STAT_SCRATCH:-}" ] && rm -f "$data"
tap_totals
