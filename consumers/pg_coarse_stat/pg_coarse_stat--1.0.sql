/* SPDX-License-Identifier: GPL-2.0 */
/* pg_coarse_stat--1.0.sql */

\echo Use "CREATE EXTENSION pg_coarse_stat" to load this file. \quit

CREATE FUNCTION pg_coarse_stat(
	OUT userid oid,
	OUT dbid oid,
	OUT toplevel bool,
	OUT queryid int8,
	OUT calls int8,
	OUT total_wall_ms float8,
	OUT cpu_ms float8,
	OUT runq_ms float8,
	OUT sleep_ms float8,
	OUT dsleep_ms float8,
	OUT iowait_ms float8,
	OUT preempt int8,
	OUT block int8,
	OUT migrate int8,
	OUT minflt int8,
	OUT majflt int8,
	OUT read_bytes int8,
	OUT write_bytes int8
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_coarse_stat'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_coarse_stat AS
	SELECT * FROM pg_coarse_stat();

GRANT SELECT ON pg_coarse_stat TO PUBLIC;

CREATE FUNCTION pg_coarse_stat_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'pg_coarse_stat_reset'
LANGUAGE C PARALLEL SAFE;

REVOKE ALL ON FUNCTION pg_coarse_stat_reset() FROM PUBLIC;

CREATE FUNCTION pg_coarse_stat_info(
	OUT enabled bool,
	OUT status text,
	OUT max int4,
	OUT entries int8,
	OUT dealloc int8,
	OUT evicted int8,
	OUT stats_reset timestamptz
)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_coarse_stat_info'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
