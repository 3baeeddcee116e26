#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pg_coarse_stat on a kernel WITHOUT coarse_stat (the build host): the
# server loads the extension, warns once at load why it does nothing, and
# runs; the view stays empty and nothing is logged.  Run as root after
# "make -C consumers/pg_coarse_stat install":
#
#   consumers/pg_coarse_stat/host-test.sh
#
# TAP output.  Exit status 0 only if every test passed.  PGCS_DIR: the
# cluster's directory (/tmp/pgcs-host).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=consumers/pg_coarse_stat/pglib.sh
. "$here/pglib.sh"

# shellcheck source=scripts/tap.sh
. "$here/../../scripts/tap.sh"

finish() {
	tap_totals
	exit
}

if prctl_ok=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).prctl(82, 1, 0, 0, 0))' 2>/dev/null) &&
   [ "$prctl_ok" -ge 0 ] 2>/dev/null; then
	tap_case "host kernel lacks coarse_stat" 1 "prctl(PR_COARSE_STAT) returned fd $prctl_ok: this kernel has coarse_stat, run guest-test.sh instead"
	finish
fi

dir=${PGCS_DIR:-/tmp/pgcs-host}
pgcs_init "$dir" "pg_coarse_stat.log_min_duration = 0" || {
	tap_case "initdb" 1 "initdb failed"
	finish
}
pgcs_start
started=$?
tap_case "server starts with the extension preloaded" "$started" "pg_ctl start: status $started"
[ "$started" = 0 ] || finish

warn=$(grep -c 'WARNING:  pg_coarse_stat: disabled: kernel has no coarse_stat (EOPNOTSUPP)$' "$PGCS_LOG")
warn_all=$(grep -c 'pg_coarse_stat' "$PGCS_LOG")
tap_case "one WARNING at load naming EOPNOTSUPP" "$([ "$warn" = 1 ] && [ "$warn_all" = 1 ] && echo 0 || echo 1)" \
	"matching warnings $warn, lines naming pg_coarse_stat $warn_all: $(grep pg_coarse_stat "$PGCS_LOG" | head -3 | tr '\n' ' ')"

out=$(pgcs_psql h_query -c "CREATE EXTENSION pg_coarse_stat" \
	-c "/*h_sleep*/ SELECT pg_sleep(0.05)" \
	-c "SELECT sum(i) FROM generate_series(1, 100000) i" 2>&1)
rc=$?
tap_case "statements run (CREATE EXTENSION, queries)" "$rc" "psql status $rc, output: $(echo "$out" | tr '\n' ' ')"

info=$(pgcs_psql h_info -F' ' -c "SELECT enabled, status, (SELECT count(*) FROM pg_coarse_stat) FROM pg_coarse_stat_info()" 2>&1)
tap_case "pg_coarse_stat_info() says disabled and why, view empty" \
	"$([ "$info" = "f kernel has no coarse_stat (EOPNOTSUPP) 0" ] && echo 0 || echo 1)" \
	"info: $info"

sleep 0.2
lines=$(grep -c 'pg_coarse_stat: ' "$PGCS_LOG")
tap_case "nothing measured or logged" "$([ "$lines" = 1 ] && echo 0 || echo 1)" \
	"lines naming pg_coarse_stat in the log: $lines (the load WARNING only)"

pgcs_stop
stopped=$?
tap_case "server stops cleanly" "$stopped" "pg_ctl stop: status $stopped"
finish
