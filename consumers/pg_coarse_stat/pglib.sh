# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by guest-test.sh, host-test.sh and bench.sh: a throw-away
# PostgreSQL 15 cluster run as the user postgres, reachable only through a
# Unix socket (the guest has no network), its log in $PGCS_LOG.
#
#   pgcs_init DIR [CONF_LINE...]	initdb DIR/data, write the configuration
#   pgcs_start / pgcs_stop / pgcs_restart
#   pgcs_psql APP [PSQL_ARG...]		psql -X -At as postgres, application_name APP
#
# Environment: PGCS_BIN (/usr/lib/postgresql/15/bin), PGCS_PORT (5499).

PGCS_BIN=${PGCS_BIN:-/usr/lib/postgresql/15/bin}
PGCS_PORT=${PGCS_PORT:-5499}

pgcs_as_pg() {
	runuser -u postgres -- "$@"
}

# pgcs_init DIR [CONF_LINE...]: a new cluster in DIR/data, socket in DIR/sock.
pgcs_init() {
	local dir=$1 line
	shift
	PGCS_DATA=$dir/data
	PGCS_SOCK=$dir/sock
	PGCS_LOG=$dir/server.log
	rm -rf "$dir"
	mkdir -p "$dir" "$PGCS_SOCK"
	chown postgres: "$dir" "$PGCS_SOCK"
	pgcs_as_pg "$PGCS_BIN/initdb" -D "$PGCS_DATA" -U postgres -A trust \
		-E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2
		return 1
	}
	{
		echo "listen_addresses = ''"
		echo "port = $PGCS_PORT"
		echo "unix_socket_directories = '$PGCS_SOCK'"
		echo "dynamic_shared_memory_type = sysv"
		echo "shared_preload_libraries = 'pg_coarse_stat'"
		echo "log_line_prefix = '%p %a '"
		echo "logging_collector = off"
		echo "max_connections = 20"
		echo "shared_buffers = 64MB"
		for line in "$@"; do
			echo "$line"
		done
	} >>"$PGCS_DATA/postgresql.conf"
}

# pgcs_conf LINE...: add settings (the last one wins), for the next start.
pgcs_conf() {
	printf '%s\n' "$@" >>"$PGCS_DATA/postgresql.conf"
}

pgcs_start() {
	pgcs_as_pg "$PGCS_BIN/pg_ctl" -D "$PGCS_DATA" -l "$PGCS_LOG" -w -t 120 \
		start >/dev/null
}

pgcs_stop() {
	pgcs_as_pg "$PGCS_BIN/pg_ctl" -D "$PGCS_DATA" -m fast -w -t 120 \
		stop >/dev/null
}

pgcs_restart() {
	pgcs_stop && pgcs_start
}

# pgcs_psql APP [ARG...]: psql as postgres in database postgres.
pgcs_psql() {
	local app=$1
	shift
	pgcs_as_pg env PGAPPNAME="$app" "$PGCS_BIN/psql" -X -At -q \
		-v ON_ERROR_STOP=1 -h "$PGCS_SOCK" -p "$PGCS_PORT" -d postgres "$@"
}
