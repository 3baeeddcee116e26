// SPDX-License-Identifier: GPL-2.0
/*
 * pg_coarse_stat - where did a slow statement's wall time go?
 *
 * A PostgreSQL (15) extension, loaded with shared_preload_libraries.  Each
 * backend takes a coarse_stat snapshot of its own thread page (a vDSO call,
 * no system call) when a tracked statement's executor starts (or a utility
 * statement starts) and another when it ends; the difference says where the
 * wall time went: on CPU, on the run queue, asleep, in uninterruptible
 * sleep, in I/O wait, with preemptions, blocks, faults and I/O bytes.
 *
 * - A statement that took at least pg_coarse_stat.log_min_duration ms is
 *   logged at LOG, one line, with its query id; the server adds the
 *   STATEMENT line (errhidestmt(false)).
 * - Every tracked statement adds to a shared hash per (user, database,
 *   query id, top level), of at most pg_coarse_stat.max entries, shown by
 *   the view pg_coarse_stat; when the hash is full the least called 5 % are
 *   evicted and counted (pg_coarse_stat_info()).
 *
 * The postmaster only probes the kernel (prctl() and close(): nothing stays
 * registered and nothing is mapped); each backend registers its own thread
 * on its first statement.  See README.
 */
#include "postgres.h"

#include <sys/auxv.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "coarse_stat.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/queryjumble.h"
#include "utils/timestamp.h"

PG_MODULE_MAGIC;

#define PGCS_NB		COARSE_STAT_NR_BUCKETS
#define PGCS_COLS	18	/* columns of pg_coarse_stat() */
#define PGCS_INFO_COLS	7	/* columns of pg_coarse_stat_info() */

enum pgcs_track {
	PGCS_TRACK_NONE,
	PGCS_TRACK_TOP,
	PGCS_TRACK_ALL,
};

static const struct config_enum_entry pgcs_track_options[] = {
	{"none", PGCS_TRACK_NONE, false},
	{"top", PGCS_TRACK_TOP, false},
	{"all", PGCS_TRACK_ALL, false},
	{NULL, 0, false}
};

/* GUCs */
static int pgcs_log_min_duration = -1;	/* ms; -1 off, 0 every statement */
static int pgcs_track = PGCS_TRACK_TOP;
static bool pgcs_track_utility = true;
static int pgcs_max = 5000;

/* What the postmaster's probe found; the backends inherit it. */
static bool pgcs_kernel_ok;
static char pgcs_status[192] = "not loaded by shared_preload_libraries";

/* This backend's registration failed (it said so once in the log). */
static bool pgcs_backend_off;

/* Executor and utility nesting, as pg_stat_statements counts it. */
static int pgcs_nesting;

/* The counters of one statement, or the sums of an entry. */
struct pgcs_counters {
	int64		calls;
	int64		wall_ns;
	int64		bucket_ns[PGCS_NB];
	int64		preempt;
	int64		block;
	int64		migrate;
	int64		minflt;
	int64		majflt;
	int64		read_bytes;
	int64		write_bytes;
};

struct pgcs_key {
	Oid		userid;
	Oid		dbid;
	uint64		queryid;
	bool		toplevel;
};

struct pgcs_entry {
	struct pgcs_key		key;	/* first: the hash key */
	slock_t			mutex;	/* protects c */
	struct pgcs_counters	c;
};

struct pgcs_shared {
	LWLock		*lock;		/* protects the hash */
	slock_t		mutex;		/* protects the fields below */
	int64		dealloc;	/* times entries were evicted */
	int64		evicted;	/* entries evicted */
	TimestampTz	stats_reset;
};

static struct pgcs_shared *pgcs;
static HTAB *pgcs_hash;

/*
 * A statement whose executor started with a snapshot, until its
 * ExecutorEnd; allocated in its es_query_cxt, so that a statement that
 * fails leaves nothing behind (the context's reset callback unlinks it).
 */
struct pgcs_running {
	dlist_node		node;
	QueryDesc		*qd;	/* NULL once unlinked */
	bool			toplevel;
	MemoryContextCallback	cb;
	struct csf_snap		snap;
};

static dlist_head pgcs_running_list = DLIST_STATIC_INIT(pgcs_running_list);

static shmem_request_hook_type prev_shmem_request_hook;
static shmem_startup_hook_type prev_shmem_startup_hook;
static ExecutorStart_hook_type prev_ExecutorStart;
static ExecutorRun_hook_type prev_ExecutorRun;
static ExecutorFinish_hook_type prev_ExecutorFinish;
static ExecutorEnd_hook_type prev_ExecutorEnd;
static ProcessUtility_hook_type prev_ProcessUtility;

void _PG_init(void);

PG_FUNCTION_INFO_V1(pg_coarse_stat);
PG_FUNCTION_INFO_V1(pg_coarse_stat_reset);
PG_FUNCTION_INFO_V1(pg_coarse_stat_info);

#define pgcs_enabled(level) \
	(!IsParallelWorker() && !pgcs_backend_off && \
	 (pgcs_track == PGCS_TRACK_ALL || \
	  (pgcs_track == PGCS_TRACK_TOP && (level) == 0)))

/* Why registration failed, for the log and pg_coarse_stat_info(). */
static void pgcs_reason(char *buf, size_t len, int err)
{
	char val[16] = "";
	FILE *f;

	switch (err) {
	case EINVAL:
	case EOPNOTSUPP:
		snprintf(buf, len, "kernel has no coarse_stat (EOPNOTSUPP)");
		break;
	case EPERM:
		f = fopen("/proc/sys/kernel/coarse_stat_thread", "r");
		if (f) {
			if (!fgets(val, sizeof(val), f))
				val[0] = '\0';
			fclose(f);
			val[strcspn(val, "\n")] = '\0';
		}
		snprintf(buf, len,
			 "registration refused: kernel.coarse_stat_thread%s%s (EPERM); ask the administrator to set kernel.coarse_stat_thread",
			 val[0] ? " = " : "", val);
		break;
	case ENOENT:
		snprintf(buf, len, "vDSO has no coarse_stat snapshot (ENOENT)");
		break;
	default:
		snprintf(buf, len, "registration failed: %s", csf_strerror(err));
		break;
	}
}

/*
 * In the postmaster: can a thread of this user register, and does the vDSO
 * snapshot?  The probe's page is released at once (close() of its only file
 * descriptor, no mapping), so nothing is inherited by the backends.
 */
static void pgcs_probe(void)
{
	void *sym;
	int fd;

	fd = prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD, 0L, 0L, 0L);
	if (fd < 0) {
		pgcs_reason(pgcs_status, sizeof(pgcs_status), errno);
		return;
	}
	close(fd);
#ifdef CSF__VDSO_SNAP
	sym = csf__elf_sym(getauxval(AT_SYSINFO_EHDR), CSF__VDSO_SNAP,
			   CSF__VDSO_VERSION);
#else
	sym = NULL;
#endif
	if (!sym) {
		pgcs_reason(pgcs_status, sizeof(pgcs_status), ENOENT);
		return;
	}
	pgcs_kernel_ok = true;
	strlcpy(pgcs_status, "enabled", sizeof(pgcs_status));
}

/* Snapshot this thread; the first one in a backend registers it. */
static bool pgcs_snap(struct csf_snap *s)
{
	char why[192];

	if (likely(csf_thread_snap(s) == 0))
		return true;
	pgcs_backend_off = true;
	pgcs_reason(why, sizeof(why), errno);
	ereport(LOG, (errmsg_internal("pg_coarse_stat: disabled in this backend: %s",
				      why),
		      errhidestmt(true)));
	return false;
}

static Size pgcs_memsize(void)
{
	return add_size(MAXALIGN(sizeof(struct pgcs_shared)),
			hash_estimate_size(pgcs_max, sizeof(struct pgcs_entry)));
}

static void pgcs_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(pgcs_memsize());
	RequestNamedLWLockTranche("pg_coarse_stat", 1);
}

static void pgcs_shmem_startup(void)
{
	HASHCTL info;
	bool found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	pgcs = NULL;
	pgcs_hash = NULL;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	pgcs = ShmemInitStruct("pg_coarse_stat", sizeof(*pgcs), &found);
	if (!found) {
		pgcs->lock = &(GetNamedLWLockTranche("pg_coarse_stat"))->lock;
		SpinLockInit(&pgcs->mutex);
		pgcs->dealloc = 0;
		pgcs->evicted = 0;
		pgcs->stats_reset = GetCurrentTimestamp();
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(struct pgcs_key);
	info.entrysize = sizeof(struct pgcs_entry);
	pgcs_hash = ShmemInitHash("pg_coarse_stat hash", pgcs_max, pgcs_max,
				  &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

static int pgcs_cmp_calls(const void *a, const void *b)
{
	int64 ca = (*(struct pgcs_entry *const *)a)->c.calls;
	int64 cb = (*(struct pgcs_entry *const *)b)->c.calls;

	return ca < cb ? -1 : ca > cb;
}

/* Evict the least called 5 % (at least one).  Lock held exclusively. */
static void pgcs_dealloc(void)
{
	struct pgcs_entry **v, *e;
	HASH_SEQ_STATUS hs;
	long n, i = 0, nvict, j;

	n = hash_get_num_entries(pgcs_hash);
	v = palloc(n * sizeof(*v));
	hash_seq_init(&hs, pgcs_hash);
	while ((e = hash_seq_search(&hs)) != NULL)
		if (i < n)
			v[i++] = e;
	qsort(v, i, sizeof(*v), pgcs_cmp_calls);
	nvict = Max(1, i * 5 / 100);
	nvict = Min(nvict, i);
	for (j = 0; j < nvict; j++)
		hash_search(pgcs_hash, &v[j]->key, HASH_REMOVE, NULL);
	pfree(v);

	SpinLockAcquire(&pgcs->mutex);
	pgcs->dealloc++;
	pgcs->evicted += nvict;
	SpinLockRelease(&pgcs->mutex);
}

/* Add one statement's counters to its entry. */
static void pgcs_store(uint64 queryid, bool toplevel,
		       const struct pgcs_counters *d)
{
	struct pgcs_entry *e;
	struct pgcs_key key;
	bool found;
	int i;

	if (!pgcs || !pgcs_hash || queryid == UINT64CONST(0))
		return;

	memset(&key, 0, sizeof(key));	/* the padding is hashed too */
	key.userid = GetUserId();
	key.dbid = MyDatabaseId;
	key.queryid = queryid;
	key.toplevel = toplevel;

	LWLockAcquire(pgcs->lock, LW_SHARED);
	e = hash_search(pgcs_hash, &key, HASH_FIND, NULL);
	if (!e) {
		LWLockRelease(pgcs->lock);
		LWLockAcquire(pgcs->lock, LW_EXCLUSIVE);
		e = hash_search(pgcs_hash, &key, HASH_FIND, NULL);
		if (!e) {
			while (hash_get_num_entries(pgcs_hash) >= pgcs_max)
				pgcs_dealloc();
			e = hash_search(pgcs_hash, &key, HASH_ENTER, &found);
			if (!found) {
				SpinLockInit(&e->mutex);
				memset(&e->c, 0, sizeof(e->c));
			}
		}
	}

	SpinLockAcquire(&e->mutex);
	e->c.calls += d->calls;
	e->c.wall_ns += d->wall_ns;
	for (i = 0; i < PGCS_NB; i++)
		e->c.bucket_ns[i] += d->bucket_ns[i];
	e->c.preempt += d->preempt;
	e->c.block += d->block;
	e->c.migrate += d->migrate;
	e->c.minflt += d->minflt;
	e->c.majflt += d->majflt;
	e->c.read_bytes += d->read_bytes;
	e->c.write_bytes += d->write_bytes;
	SpinLockRelease(&e->mutex);

	LWLockRelease(pgcs->lock);
}

/* Microseconds as milliseconds with three decimals. */
static void pgcs_fmt_us(char *buf, size_t len, uint64 us)
{
	snprintf(buf, len, UINT64_FORMAT ".%03u", us / 1000,
		 (unsigned int)(us % 1000));
}

/*
 * Log one statement.  The wall time is truncated to the microsecond; each
 * bucket is the difference of the truncated running sums, so the five
 * printed buckets add up exactly to the printed wall time (each is within
 * a microsecond of its own truncation).
 */
static void pgcs_log(const struct pgcs_counters *d, uint64 queryid,
		     bool toplevel, const char *text, int loc, int len)
{
	char t[1 + PGCS_NB][32], msg[512];
	uint64 cum = 0, us, prev = 0;
	int i;

	pgcs_fmt_us(t[0], sizeof(t[0]), (uint64)d->wall_ns / 1000);
	for (i = 0; i < PGCS_NB; i++) {
		cum += (uint64)d->bucket_ns[i];
		us = cum / 1000;
		pgcs_fmt_us(t[1 + i], sizeof(t[1 + i]), us - prev);
		prev = us;
	}

	snprintf(msg, sizeof(msg),
		 "queryid " INT64_FORMAT " wall %sms = cpu %s + runq %s + sleep %s + dsleep %s + iowait %s | preempt " INT64_FORMAT " block " INT64_FORMAT " migrate " INT64_FORMAT " | flt " INT64_FORMAT "/" INT64_FORMAT " | io r" INT64_FORMAT "B w" INT64_FORMAT "B",
		 (int64)queryid, t[0], t[1 + COARSE_STAT_ONCPU],
		 t[1 + COARSE_STAT_RUNQ], t[1 + COARSE_STAT_SLEEP],
		 t[1 + COARSE_STAT_DSLEEP], t[1 + COARSE_STAT_IOWAIT],
		 d->preempt, d->block, d->migrate, d->minflt, d->majflt,
		 d->read_bytes, d->write_bytes);

	if (toplevel || !text) {
		ereport(LOG, (errmsg_internal("pg_coarse_stat: %s", msg),
			      errhidestmt(false)));
		return;
	}
	/* A nested statement: the STATEMENT line is the top-level one. */
	if (loc < 0 || loc > (int)strlen(text)) {
		loc = 0;
		len = 0;
	}
	text += loc;
	if (len <= 0)
		len = strlen(text);
	ereport(LOG, (errmsg_internal("pg_coarse_stat: nested %s", msg),
		      errdetail_internal("Nested statement: %.*s", len, text),
		      errhidestmt(false)));
}

/* One statement measured from @a to @b: the log and the shared hash. */
static void pgcs_done(const struct csf_snap *a, const struct csf_snap *b,
		      uint64 queryid, bool toplevel, const char *text,
		      int loc, int len)
{
	const struct coarse_stat_thread_page *p = &a->p, *q = &b->p;
	struct pgcs_counters d;
	int i;

	if (p->start_ns != q->start_ns)
		return;		/* not the same page: cannot happen */
	d.calls = 1;
	d.wall_ns = (int64)(b->time_ns - a->time_ns);
	for (i = 0; i < PGCS_NB; i++)
		d.bucket_ns[i] = (int64)(q->bucket_ns[i] - p->bucket_ns[i]);
	d.preempt = (int64)(q->nr_preempt - p->nr_preempt);
	d.block = (int64)(q->nr_block - p->nr_block);
	d.migrate = (int64)(q->nr_migrate - p->nr_migrate);
	d.minflt = (int64)(q->min_flt - p->min_flt);
	d.majflt = (int64)(q->maj_flt - p->maj_flt);
	d.read_bytes = (int64)(q->read_bytes - p->read_bytes);
	d.write_bytes = (int64)(q->write_bytes - p->write_bytes);

	pgcs_store(queryid, toplevel, &d);
	if (pgcs_log_min_duration >= 0 &&
	    d.wall_ns >= (int64)pgcs_log_min_duration * 1000000)
		pgcs_log(&d, queryid, toplevel, text, loc, len);
}

/* es_query_cxt goes away (ExecutorEnd, or an error): forget the statement. */
static void pgcs_running_gone(void *arg)
{
	struct pgcs_running *r = arg;

	if (r->qd) {
		dlist_delete(&r->node);
		r->qd = NULL;
	}
}

static void pgcs_ExecutorStart(QueryDesc *qd, int eflags)
{
	struct pgcs_running *r;
	struct csf_snap a;
	bool measure;
	MemoryContext cxt;

	measure = pgcs_enabled(pgcs_nesting) && pgcs_snap(&a);

	if (prev_ExecutorStart)
		prev_ExecutorStart(qd, eflags);
	else
		standard_ExecutorStart(qd, eflags);

	if (!measure)
		return;
	cxt = qd->estate->es_query_cxt;
	r = MemoryContextAlloc(cxt, sizeof(*r));
	r->qd = qd;
	r->toplevel = pgcs_nesting == 0;
	r->snap = a;
	r->cb.func = pgcs_running_gone;
	r->cb.arg = r;
	MemoryContextRegisterResetCallback(cxt, &r->cb);
	dlist_push_head(&pgcs_running_list, &r->node);
}

static void pgcs_ExecutorRun(QueryDesc *qd, ScanDirection direction,
			     uint64 count, bool execute_once)
{
	pgcs_nesting++;
	PG_TRY();
	{
		if (prev_ExecutorRun)
			prev_ExecutorRun(qd, direction, count, execute_once);
		else
			standard_ExecutorRun(qd, direction, count, execute_once);
	}
	PG_FINALLY();
	{
		pgcs_nesting--;
	}
	PG_END_TRY();
}

static void pgcs_ExecutorFinish(QueryDesc *qd)
{
	pgcs_nesting++;
	PG_TRY();
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(qd);
		else
			standard_ExecutorFinish(qd);
	}
	PG_FINALLY();
	{
		pgcs_nesting--;
	}
	PG_END_TRY();
}

static void pgcs_ExecutorEnd(QueryDesc *qd)
{
	struct pgcs_running *r = NULL;
	struct csf_snap a, b;
	dlist_iter it;
	bool toplevel;

	dlist_foreach(it, &pgcs_running_list) {
		struct pgcs_running *x = dlist_container(struct pgcs_running,
							 node, it.cur);

		if (x->qd == qd) {
			r = x;
			break;
		}
	}
	if (!r) {
		if (prev_ExecutorEnd)
			prev_ExecutorEnd(qd);
		else
			standard_ExecutorEnd(qd);
		return;
	}

	/* r is freed with es_query_cxt: keep what is needed after. */
	a = r->snap;
	toplevel = r->toplevel;
	pgcs_running_gone(r);

	if (prev_ExecutorEnd)
		prev_ExecutorEnd(qd);
	else
		standard_ExecutorEnd(qd);

	if (csf_thread_snap(&b) == 0)
		pgcs_done(&a, &b, qd->plannedstmt->queryId, toplevel,
			  qd->sourceText, qd->plannedstmt->stmt_location,
			  qd->plannedstmt->stmt_len);
}

/*
 * Utility statements are measured like executor ones (track_utility), but
 * not EXECUTE, PREPARE and DEALLOCATE: the statement EXECUTE runs is
 * measured by the executor hooks, as a top-level statement.  Every other
 * utility statement counts as a nesting level, so that the executor
 * statements it runs (CREATE TABLE AS, COPY (query), DECLARE CURSOR, a DO
 * block's) are nested.
 */
static void pgcs_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
				bool readOnlyTree,
				ProcessUtilityContext context,
				ParamListInfo params, QueryEnvironment *queryEnv,
				DestReceiver *dest, QueryCompletion *qc)
{
	Node *parsetree = pstmt->utilityStmt;
	bool handled = !IsA(parsetree, ExecuteStmt) &&
		       !IsA(parsetree, PrepareStmt) &&
		       !IsA(parsetree, DeallocateStmt);
	bool toplevel = pgcs_nesting == 0;
	uint64 queryid = pstmt->queryId;
	int loc = pstmt->stmt_location, len = pstmt->stmt_len;
	struct csf_snap a, b;
	bool measure;

	measure = handled && pgcs_track_utility && pgcs_enabled(pgcs_nesting) &&
		  pgcs_snap(&a);

	if (handled)
		pgcs_nesting++;
	PG_TRY();
	{
		if (prev_ProcessUtility)
			prev_ProcessUtility(pstmt, queryString, readOnlyTree,
					    context, params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString,
						readOnlyTree, context, params,
						queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		if (handled)
			pgcs_nesting--;
	}
	PG_END_TRY();

	if (measure && csf_thread_snap(&b) == 0)
		pgcs_done(&a, &b, queryid, toplevel, queryString, loc, len);
}

void _PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	EnableQueryId();

	DefineCustomIntVariable("pg_coarse_stat.log_min_duration",
				"Logs where the wall time of statements at least this long went.",
				"-1 logs nothing, 0 every tracked statement.",
				&pgcs_log_min_duration, -1, -1, INT_MAX,
				PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomEnumVariable("pg_coarse_stat.track",
				 "Which statements are measured: top, all (nested too) or none.",
				 NULL, &pgcs_track, PGCS_TRACK_TOP,
				 pgcs_track_options, PGC_SUSET, 0,
				 NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_coarse_stat.track_utility",
				 "Whether utility statements are measured.",
				 NULL, &pgcs_track_utility, true, PGC_SUSET, 0,
				 NULL, NULL, NULL);
	DefineCustomIntVariable("pg_coarse_stat.max",
				"Maximum number of entries of the pg_coarse_stat view.",
				NULL, &pgcs_max, 5000, 10, INT_MAX / 2,
				PGC_POSTMASTER, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("pg_coarse_stat");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = pgcs_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = pgcs_shmem_startup;

	pgcs_probe();
	if (!pgcs_kernel_ok) {
		ereport(WARNING, (errmsg_internal("pg_coarse_stat: disabled: %s",
						  pgcs_status)));
		return;
	}

	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = pgcs_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = pgcs_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = pgcs_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = pgcs_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = pgcs_ProcessUtility;
}

static void pgcs_check_loaded(void)
{
	if (!pgcs || !pgcs_hash)
		ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("pg_coarse_stat must be loaded via shared_preload_libraries")));
}

static double pgcs_ms(int64 ns)
{
	return (double)ns / 1000000.0;
}

Datum pg_coarse_stat(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
	struct pgcs_entry *e;
	HASH_SEQ_STATUS hs;

	pgcs_check_loaded();
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(pgcs->lock, LW_SHARED);
	hash_seq_init(&hs, pgcs_hash);
	while ((e = hash_seq_search(&hs)) != NULL) {
		Datum values[PGCS_COLS];
		bool nulls[PGCS_COLS] = { false };
		struct pgcs_counters c;
		int i = 0, b;

		SpinLockAcquire(&e->mutex);
		c = e->c;
		SpinLockRelease(&e->mutex);

		values[i++] = ObjectIdGetDatum(e->key.userid);
		values[i++] = ObjectIdGetDatum(e->key.dbid);
		values[i++] = BoolGetDatum(e->key.toplevel);
		values[i++] = Int64GetDatumFast((int64)e->key.queryid);
		values[i++] = Int64GetDatumFast(c.calls);
		values[i++] = Float8GetDatumFast(pgcs_ms(c.wall_ns));
		for (b = 0; b < PGCS_NB; b++)
			values[i++] = Float8GetDatumFast(pgcs_ms(c.bucket_ns[b]));
		values[i++] = Int64GetDatumFast(c.preempt);
		values[i++] = Int64GetDatumFast(c.block);
		values[i++] = Int64GetDatumFast(c.migrate);
		values[i++] = Int64GetDatumFast(c.minflt);
		values[i++] = Int64GetDatumFast(c.majflt);
		values[i++] = Int64GetDatumFast(c.read_bytes);
		values[i++] = Int64GetDatumFast(c.write_bytes);
		Assert(i == PGCS_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
				     nulls);
	}
	LWLockRelease(pgcs->lock);
	return (Datum)0;
}

Datum pg_coarse_stat_reset(PG_FUNCTION_ARGS)
{
	struct pgcs_entry *e;
	HASH_SEQ_STATUS hs;

	pgcs_check_loaded();
	LWLockAcquire(pgcs->lock, LW_EXCLUSIVE);
	hash_seq_init(&hs, pgcs_hash);
	while ((e = hash_seq_search(&hs)) != NULL)
		hash_search(pgcs_hash, &e->key, HASH_REMOVE, NULL);
	SpinLockAcquire(&pgcs->mutex);
	pgcs->dealloc = 0;
	pgcs->evicted = 0;
	pgcs->stats_reset = GetCurrentTimestamp();
	SpinLockRelease(&pgcs->mutex);
	LWLockRelease(pgcs->lock);
	PG_RETURN_VOID();
}

Datum pg_coarse_stat_info(PG_FUNCTION_ARGS)
{
	Datum values[PGCS_INFO_COLS];
	bool nulls[PGCS_INFO_COLS] = { false };
	TupleDesc tupdesc;
	int64 entries, dealloc, evicted;
	TimestampTz reset;

	pgcs_check_loaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	LWLockAcquire(pgcs->lock, LW_SHARED);
	entries = hash_get_num_entries(pgcs_hash);
	SpinLockAcquire(&pgcs->mutex);
	dealloc = pgcs->dealloc;
	evicted = pgcs->evicted;
	reset = pgcs->stats_reset;
	SpinLockRelease(&pgcs->mutex);
	LWLockRelease(pgcs->lock);

	values[0] = BoolGetDatum(pgcs_kernel_ok && !pgcs_backend_off);
	values[1] = CStringGetTextDatum(pgcs_status);
	values[2] = Int32GetDatum(pgcs_max);
	values[3] = Int64GetDatum(entries);
	values[4] = Int64GetDatum(dealloc);
	values[5] = Int64GetDatum(evicted);
	values[6] = TimestampTzGetDatum(reset);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values,
							  nulls)));
}
