#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cstime on a kernel WITHOUT coarse_stat (the host), any user:
#
#   make -C consumers/cstime && consumers/cstime/host-test.sh
#
# The command runs as without cstime (output, status, errno), and cstime says
# in one line of stderr why it has no per-thread times, with the wall time.
# TAP on stdout.  $CSTIME runs another cstime build.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CSTIME=${CSTIME:-$here/cstime}
cstest=$here/cstest
out=$(mktemp -d)
# shellcheck source=scripts/tap.sh
. "$here/../../scripts/tap.sh"
tap() {	# tap STATUS NAME DIAG
	tap_case "$2" "$1" "$3"
}

echo "TAP version 13"
if [ -e /proc/sys/kernel/coarse_stat_thread ]; then
	echo "# this kernel has coarse_stat: these tests are for one without"
fi

o=$("$CSTIME" "$cstest" exit 4 2> "$out/e")
st=$?
[ "$st" = 4 ] && [ "$o" = ran ] && [ "$(wc -l < "$out/e")" = 1 ] &&
	grep -q "no coarse_stat.*EOPNOTSUPP.*exited 4, wall [0-9]*\.[0-9]\{3\} ms$" "$out/e"
tap $? "no coarse_stat: one-line message with the wall time, status 4, stdout" \
	"status $st, stdout '$o'; stderr: $(cat "$out/e")"

"$CSTIME" -j -o "$out/j" "$cstest" exit 0 > /dev/null 2>&1
python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
assert len(o) == 1 and o[0]["type"] == "total" and o[0]["threads"] == 0
assert "EOPNOTSUPP" in o[0]["error"] and o[0]["command_wall_ns"] > 0
' "$out/j" 2> "$out/py"
tap $? "-j without coarse_stat: one JSON total with the error" \
	"$(cat "$out/j" "$out/py")"

o=$("$CSTIME" "$cstest" errno 2> /dev/null)
[ "$o" = "errno main 0 thread 0" ]
tap $? "errno kept: 0 at main() and thread start" "stdout '$o'"

o=$(LD_PRELOAD=$here/libcstime.so "$cstest" errno 2>&1)
st=$?
[ "$st" = 0 ] && [ "$o" = "errno main 0 thread 0" ]
tap $? "shim without cstime: inert" "status $st, output '$o'"

"$CSTIME" /nonexistent/cmd 2> "$out/e"
st1=$?
"$CSTIME" /etc/passwd 2>> "$out/e"
st2=$?
[ "$st1" = 127 ] && [ "$st2" = 126 ]
tap $? "command not found: 127, not executable: 126" \
	"status $st1 and $st2; stderr: $(cat "$out/e")"

rm -rf "$out"
tap_totals
