// SPDX-License-Identifier: GPL-2.0
/*
 * cs_rseq: self-timing checks and the bench of the rseq-style prototype
 * (bench/rseq/0001-*.patch, CONFIG_COARSE_STAT_RSEQ): a thread registers
 * rseq with a 128-byte struct rseq (RSEQ ABI v2) and enables the
 * scheduling-time fields with prctl(PR_RSEQ_SCHED_TIME); rseq's
 * exit-to-user fast path rewrites them after every switch-in.  glibc
 * registers its own struct rseq for every thread (32 bytes on Debian 12's
 * 2.36): main() re-executes the program with glibc.pthread.rseq=0 so that
 * each thread registers the larger one itself, as a glibc that registers
 * the kernel's feature size would.
 *
 *	cs_rseq check			TAP lines, exit 1 if any check failed
 *	cs_rseq bench [-i ROUNDS] [-r REPS]
 *					the futex ping-pong of bench/pingpong.h
 *					(nobody registered, another thread
 *					registered, both registered; 1 CPU and
 *					2) and read costs, as TSV rows in the
 *					format of bench/bpf/cs_bpf bench
 *
 * Under QEMU -icount shift=0 (scripts/vm.sh VM_ICOUNT=1) one TSC tick and
 * one CLOCK_MONOTONIC ns are one guest instruction: tsc/rt is instructions
 * per round trip, tsc/call instructions per read.
 *
 * Build: make -C bench/rseq (static; carries a copy of the prototype's
 * struct rseq, which the build host's headers do not have).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../pingpong.h"

/* A copy of the prototype's include/uapi/linux/rseq.h additions. */
struct cs_sched_time {			/* struct rseq_sched_time */
	__u32 gen;
	__u32 __reserved;
	__u64 switch_in_ns;
	__u64 oncpu_ns;
	__u64 runq_ns;
	__u64 sleep_ns;
	__u64 dsleep_ns;
	__u64 iowait_ns;
	__u64 start_ns;
	__u64 nr_switch_in;
	__u64 nr_preempt;
	__u64 nr_block;
	__u64 nr_migrate;
};

struct cs_rseq {			/* struct rseq with sched_time */
	__u32 cpu_id_start;
	__u32 cpu_id;
	__u64 rseq_cs;
	__u32 flags;
	__u32 node_id;
	__u32 mm_cid;
	__u32 slice_ctrl;
	struct cs_sched_time st;	/* offset 32, the old reserved byte */
} __attribute__((aligned(128)));	/* rseq_alloc_align() of 128 bytes */

_Static_assert(sizeof(struct cs_rseq) == 128, "struct rseq with sched_time is 128 bytes");

#define PR_RSEQ_SCHED_TIME		83
#define PR_RSEQ_SCHED_TIME_GET		1
#define PR_RSEQ_SCHED_TIME_SET		2
#define PR_RSEQ_SCHED_TIME_ENABLE	0x01
#define CS_RSEQ_SIG			0x53053053	/* x86's RSEQ_SIG */
#define CS_ENOTSUPP			524

/* glibc 2.35+: nonzero when glibc registered rseq for the threads. */
extern const unsigned int __rseq_size __attribute__((weak));

enum { ONCPU, RUNQ, SLEEP, DSLEEP, IOWAIT, NR_BUCKETS };
static const char *const bname[NR_BUCKETS] = { "oncpu", "runq", "sleep", "dsleep", "iowait" };

/* A snapshot: the struct's values, the on-CPU bucket extrapolated to now. */
struct snap {
	uint64_t now;		/* CLOCK_MONOTONIC of the read */
	uint64_t b[NR_BUCKETS];
	uint64_t start, switch_in, nr_switch_in, nr_preempt, nr_block, nr_migrate;
	uint32_t gen;
	unsigned int retries;
};

static __thread struct cs_rseq rs;
static __thread bool rs_registered;
#define area (rs.st)

static inline uint64_t ts_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline uint64_t now_ns(void)
{
	return ts_ns(CLOCK_MONOTONIC);
}

static inline uint64_t rdtscp(void)
{
	uint32_t lo, hi, aux;

	asm volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	return (uint64_t)hi << 32 | lo;
}

static long st_prctl(unsigned long op, unsigned long arg)
{
	return prctl(PR_RSEQ_SCHED_TIME, op, arg, 0, 0);
}

/* This thread's rseq registration, 128 bytes: ABI v2. */
static int rseq_reg(void)
{
	if (rs_registered)
		return 0;
	if (syscall(__NR_rseq, &rs, sizeof(rs), 0, CS_RSEQ_SIG))
		return -1;
	rs_registered = true;
	return 0;
}

static int rseq_unreg(void)
{
	if (syscall(__NR_rseq, &rs, sizeof(rs), 1 /* RSEQ_FLAG_UNREGISTER */, CS_RSEQ_SIG))
		return -1;
	rs_registered = false;
	return 0;
}

static int reg_self(void)
{
	if (rseq_reg())
		return -1;
	return st_prctl(PR_RSEQ_SCHED_TIME_SET, PR_RSEQ_SCHED_TIME_ENABLE) ? -1 : 0;
}

static int unreg_self(void)
{
	return st_prctl(PR_RSEQ_SCHED_TIME_SET, 0) ? -1 : 0;
}

/*
 * The reader: the kernel writes the fields from this thread's own context
 * (return to user space), so a read torn by a preemption or a signal
 * handler shows a changed gen; compiler barriers suffice.
 */
static inline void snap_read(const struct cs_sched_time *a, struct snap *s)
{
	uint32_t g;

	s->retries = 0;
	for (;;) {
		g = __atomic_load_n(&a->gen, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->switch_in = a->switch_in_ns;
		s->b[ONCPU] = a->oncpu_ns;
		s->b[RUNQ] = a->runq_ns;
		s->b[SLEEP] = a->sleep_ns;
		s->b[DSLEEP] = a->dsleep_ns;
		s->b[IOWAIT] = a->iowait_ns;
		s->start = a->start_ns;
		s->nr_switch_in = a->nr_switch_in;
		s->nr_preempt = a->nr_preempt;
		s->nr_block = a->nr_block;
		s->nr_migrate = a->nr_migrate;
		s->now = now_ns();
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (g == __atomic_load_n(&a->gen, __ATOMIC_RELAXED))
			break;
		s->retries++;
	}
	s->gen = g;
	/* On a CPU since switch_in: extrapolate (never below what was published). */
	if (s->now > s->switch_in)
		s->b[ONCPU] += s->now - s->switch_in;
}

static uint64_t bsum(const struct snap *s)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < NR_BUCKETS; i++)
		t += s->b[i];
	return t;
}

#define D(b, a, f) ((int64_t)((b)->f - (a)->f))

/* /proc/self/task/TID/schedstat: run (sum_exec_runtime) and wait (run_delay), ns. */
static int schedstat(uint64_t *run, uint64_t *wait)
{
	char path[64];
	unsigned long long r, w, n;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat", (long)syscall(SYS_gettid));
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%llu %llu %llu", &r, &w, &n) == 3;
	fclose(f);
	*run = r;
	*wait = w;
	return ok ? 0 : -1;
}

/* Interrupt time of all CPUs (/proc/stat irq + softirq), ns, tick-granular. */
static uint64_t irq_ns(void)
{
	unsigned long long v[7] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6]);
	fclose(f);
	if (n != 7)
		return 0;
	return (v[5] + v[6]) * (1000000000ULL / sysconf(_SC_CLK_TCK));
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void spin_until(uint64_t t)
{
	while (now_ns() < t)
		;
}

/* --- TAP ------------------------------------------------------------------ */

static int ntest, nfail;

static void result(const char *name, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void result(const char *name, bool ok, const char *fmt, ...)
{
	char detail[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	ntest++;
	if (!ok)
		nfail++;
	printf("%sok %d - %s  # %s\n", ok ? "" : "not ", ntest, name, detail);
	fflush(stdout);
}

static void skip(const char *name, const char *why)
{
	ntest++;
	printf("ok %d - %s  # SKIP %s\n", ntest, name, why);
	fflush(stdout);
}

static void bucket_str(char *buf, size_t sz, const struct snap *b, const struct snap *a)
{
	int i, len = 0;

	for (i = 0; i < NR_BUCKETS; i++)
		len += snprintf(buf + len, sz - len, "%s%s +%.3f", i ? ", " : "", bname[i],
				D(b, a, b[i]) / 1e6);
	snprintf(buf + len, sz - len, " ms");
}

/* --- checks ---------------------------------------------------------------- */

/*
 * Every charge is a difference of the kernel's CLOCK_MONOTONIC stamps
 * (ktime_get_mono_fast_ns()) and the extrapolation uses the reader's
 * clock_gettime(): the published buckets sum exactly to switch_in - start,
 * the extrapolated ones to now - start.
 */
static void check_sum(const char *when)
{
	char name[128];
	struct snap s;
	int64_t pub, ext;

	snap_read(&area, &s);
	pub = (int64_t)(bsum(&s) - (s.now > s.switch_in ? s.now - s.switch_in : 0)) -
	      (int64_t)(s.switch_in - s.start);
	ext = (int64_t)bsum(&s) - (int64_t)(s.now - s.start);
	snprintf(name, sizeof(name), "buckets sum to the wall time since enabling (%s)", when);
	result(name, pub == 0 && ext == 0 && s.switch_in <= s.now + 1000,
	       "published sum - (switch_in - start) = %lld ns, extrapolated sum - (now - start) = %lld ns, "
	       "now - switch_in %.3f ms, wall %.3f ms",
	       (long long)pub, (long long)ext, ((int64_t)(s.now - s.switch_in)) / 1e6,
	       (s.now - s.start) / 1e6);
}

static bool check_register(void)
{
	uint64_t t0, t1;
	struct snap s;
	long r, g;

	if (rseq_reg()) {
		result("enable", false, "rseq(128 bytes): %s", strerror(errno));
		return false;
	}
	memset(&area, 0xff, sizeof(area));
	t0 = now_ns();
	r = reg_self();
	t1 = now_ns();
	if (r) {
		result("enable", false, "prctl(PR_RSEQ_SCHED_TIME): %s (not the prototype's kernel?)",
		       strerror(errno));
		return false;
	}
	snap_read(&area, &s);
	/* Filled before prctl() returned: start inside the call, on CPU since. */
	result("enable: the fields are filled before prctl() returns",
	       area.__reserved == 0 && s.gen >= 1 && s.gen < 100 &&
	       s.start >= t0 && s.start <= t1 && s.switch_in >= s.start &&
	       s.b[RUNQ] + s.b[SLEEP] + s.b[DSLEEP] + s.b[IOWAIT] <= t1 - t0,
	       "reserved %u, gen %u, start - t0 %lld ns, t1 - start %lld ns, switch_in - start %lld ns",
	       area.__reserved, s.gen, (long long)(s.start - t0), (long long)(t1 - s.start),
	       (long long)(s.switch_in - s.start));
	r = st_prctl(PR_RSEQ_SCHED_TIME_SET, PR_RSEQ_SCHED_TIME_ENABLE);
	g = st_prctl(PR_RSEQ_SCHED_TIME_GET, 0);
	result("enable twice: no change, GET says enabled",
	       r == 0 && g == PR_RSEQ_SCHED_TIME_ENABLE && area.start_ns == s.start,
	       "SET: %ld, GET: %ld, start unchanged: %d", r, g, area.start_ns == s.start);
	return true;
}

/* Busy spin: extrapolated on-CPU time against CLOCK_THREAD_CPUTIME_ID. */
static void check_busy(void)
{
	uint64_t c0, c1, irq, r0, w0, r1, w1;
	int64_t on, cpu, diff, tick = 1000000000LL / sysconf(_SC_CLK_TCK), wait;
	struct snap a, b;
	char bs[256];

	sched_yield();
	schedstat(&r0, &w0);
	irq = irq_ns();
	c0 = ts_ns(CLOCK_THREAD_CPUTIME_ID);
	snap_read(&area, &a);
	spin_until(a.now + 200000000);
	snap_read(&area, &b);
	c1 = ts_ns(CLOCK_THREAD_CPUTIME_ID);
	irq = irq_ns() - irq;
	schedstat(&r1, &w1);
	on = D(&b, &a, b[ONCPU]);
	cpu = (int64_t)(c1 - c0);
	diff = on - cpu;
	wait = (int64_t)(w1 - w0);
	bucket_str(bs, sizeof(bs), &b, &a);
	/*
	 * The CPU-time reads bracket the snapshots by a few us.  Interrupts
	 * are on CPU here but not in the thread's CPU time
	 * (IRQ_TIME_ACCOUNTING): more by at most the interrupt time
	 * /proc/stat counted meanwhile (all CPUs) and two of its ticks.
	 */
	result("busy spin 200 ms: on CPU (extrapolated) matches CLOCK_THREAD_CPUTIME_ID",
	       diff >= -(cpu / 200 + 100000) &&
	       diff <= cpu / 200 + 100000 + (int64_t)irq + 2 * tick,
	       "on CPU %.3f ms, thread CPU time %.3f ms, diff %+.3f ms, interrupts %.3f ms; %s",
	       on / 1e6, cpu / 1e6, diff / 1e6, irq / 1e6, bs);
	/* Off the CPU only while queued, as long as schedstat says it waited. */
	result("busy spin: run queue time as schedstat's wait, no sleep",
	       D(&b, &a, b[RUNQ]) <= wait + wait / 10 + 200000 &&
	       D(&b, &a, b[SLEEP]) + D(&b, &a, b[DSLEEP]) + D(&b, &a, b[IOWAIT]) == 0,
	       "runq +%.3f ms, schedstat wait +%.3f ms, preemptions +%lld, blocks +%lld",
	       D(&b, &a, b[RUNQ]) / 1e6, wait / 1e6, (long long)D(&b, &a, nr_preempt),
	       (long long)D(&b, &a, nr_block));
}

/*
 * nanosleep(100 ms): the sleep bucket grows by the wall time between the
 * snapshots less what the thread ran or waited for a CPU meanwhile, which
 * /proc/self/task/TID/schedstat says independently (its reads bracket the
 * snapshots, so it can only say more).  A vCPU that stands still between
 * arming the timer and blocking (TCG) shortens the sleep and lengthens
 * run + wait alike: the bound follows what was measured.  Not in schedstat
 * (but on CPU or queued here): interrupt time (IRQ_TIME_ACCOUNTING), which
 * /proc/stat resolves to a USER_HZ tick only, so two of its ticks are
 * allowed as in t_thread and cs_bpf, and a vCPU stall between the wakeup's
 * stamp and the enqueue, where schedstat's wait starts.  The detail prints
 * the unexplained rest, wall - sleep - (run + wait), which is what to look
 * at for tightness (some us under -icount).
 */
static void check_sleep(void)
{
	struct timespec ts = { 0, 100000000 };
	uint64_t r0, w0, r1, w1, t_call;
	int64_t sl, wall, rw, irq, tick = 1000000000LL / sysconf(_SC_CLK_TCK);
	struct snap a, b;
	char bs[256];

	irq = irq_ns();
	if (schedstat(&r0, &w0)) {
		result("nanosleep 100 ms: sleep bucket", false, "no schedstat: %s", strerror(errno));
		return;
	}
	snap_read(&area, &a);
	t_call = now_ns();
	nanosleep(&ts, NULL);
	snap_read(&area, &b);
	schedstat(&r1, &w1);
	irq = irq_ns() - irq;
	sl = D(&b, &a, b[SLEEP]);
	wall = (int64_t)(b.now - a.now);
	rw = (int64_t)((r1 - r0) + (w1 - w0));
	bucket_str(bs, sizeof(bs), &b, &a);
	result("nanosleep 100 ms: sleep grew by the wall time less schedstat's run + wait",
	       sl <= wall && sl >= wall - rw - irq - 2 * tick - 200000 &&
	       b.now >= t_call + 100000000 &&
	       D(&b, &a, b[DSLEEP]) + D(&b, &a, b[IOWAIT]) == 0 && D(&b, &a, nr_block) >= 1,
	       "sleep +%.3f ms, wall %.3f ms, schedstat run + wait +%.3f ms, unexplained %+.3f ms, "
	       "interrupts %.3f ms, blocks +%lld; %s",
	       sl / 1e6, wall / 1e6, rw / 1e6, (wall - sl - rw) / 1e6, irq / 1e6,
	       (long long)D(&b, &a, nr_block), bs);
}

/* Timed futex waits: one block each, a switch-in and a new generation each. */
static void check_futex_blocks(void)
{
	const int n = 50;
	int word = 0, i;
	struct snap a, b;
	int64_t blk, sw, g;

	snap_read(&area, &a);
	for (i = 0; i < n; i++)
		futex_wait(&word, 0, 200000);
	snap_read(&area, &b);
	blk = D(&b, &a, nr_block);
	sw = D(&b, &a, nr_switch_in);
	g = (int64_t)(uint32_t)(b.gen - a.gen);
	result("timed futex waits: a block, a switch-in and a publication each",
	       blk >= n / 2 && blk <= n && sw >= blk && g >= blk,
	       "%d waits: blocks +%lld, switch-ins +%lld, publications +%lld", n,
	       (long long)blk, (long long)sw, (long long)g);
}

/* Migrations: affinity changes move the thread (se.nr_migrations). */
static void check_migrate(void)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	struct snap a, b;
	int64_t m;

	if (ncpu < 2) {
		skip("migrations counted", "one CPU");
		return;
	}
	pin(0);
	snap_read(&area, &a);
	for (i = 1; i <= 10; i++)
		pin(i & 1);
	snap_read(&area, &b);
	m = D(&b, &a, nr_migrate);
	result("migrations counted", m >= 10 && m <= 12, "10 affinity changes: nr_migrate +%lld",
	       (long long)m);
	pin(0);
}

/* Run queue: two spinners on one CPU; the registered one's runq vs schedstat. */
static volatile int rival_stop;

static void *rival(void *arg)
{
	(void)arg;
	pin(0);
	while (!rival_stop)
		;
	return NULL;
}

static void check_runq(void)
{
	uint64_t r0, w0, r1, w1;
	int64_t rq, wait, on, wall;
	struct snap a, b;
	pthread_t th;
	char bs[256];

	pin(0);
	rival_stop = 0;
	if (pthread_create(&th, NULL, rival, NULL)) {
		result("shared CPU: run queue", false, "pthread_create failed");
		return;
	}
	usleep(20000);
	schedstat(&r0, &w0);
	snap_read(&area, &a);
	spin_until(a.now + 200000000);
	snap_read(&area, &b);
	schedstat(&r1, &w1);
	rival_stop = 1;
	pthread_join(th, NULL);
	rq = D(&b, &a, b[RUNQ]);
	on = D(&b, &a, b[ONCPU]);
	wall = (int64_t)(b.now - a.now);
	wait = (int64_t)(w1 - w0);
	bucket_str(bs, sizeof(bs), &b, &a);
	result("shared CPU 200 ms: run queue time matches schedstat's wait",
	       rq > wall / 5 && rq <= wait + wait / 20 + 200000 && rq >= wait - wait / 20 - 1000000 &&
	       on + rq == wall && D(&b, &a, nr_preempt) >= 1,
	       "runq +%.3f ms, schedstat wait +%.3f ms, oncpu +%.3f ms, wall %.3f ms, preemptions +%lld; %s",
	       rq / 1e6, wait / 1e6, on / 1e6, wall / 1e6, (long long)D(&b, &a, nr_preempt), bs);
}

/* O_DIRECT reads of the guest's scratch disk are I/O wait. */
static void check_iowait(void)
{
	const char *dev = getenv("COARSE_STAT_SCRATCH_DEV");
	const int n = 8, sz = 1 << 20;
	struct snap a, b;
	int64_t io, blk;
	void *buf;
	int fd, i, ok = 1;

	if (!dev || !*dev) {
		skip("O_DIRECT disk reads are I/O wait", "no $COARSE_STAT_SCRATCH_DEV");
		return;
	}
	fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, sz)) {
		result("O_DIRECT disk reads are I/O wait", false, "%s: %s", dev, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	snap_read(&area, &a);
	for (i = 0; i < n && ok; i++)
		ok = pread(fd, buf, sz, (off_t)i * sz) == sz;
	snap_read(&area, &b);
	close(fd);
	free(buf);
	io = D(&b, &a, b[IOWAIT]);
	blk = D(&b, &a, nr_block);
	if (ok && !blk) {
		skip("O_DIRECT disk reads are I/O wait", "no read waited");
		return;
	}
	result("O_DIRECT disk reads are I/O wait",
	       ok && io > 0 && D(&b, &a, b[SLEEP]) == 0 && D(&b, &a, b[DSLEEP]) == 0,
	       "%d reads of 1 MiB: iowait +%.3f ms, sleep +%.3f, dsleep +%.3f, blocks +%lld",
	       n, io / 1e6, D(&b, &a, b[SLEEP]) / 1e6, D(&b, &a, b[DSLEEP]) / 1e6,
	       (long long)blk);
}

/*
 * A torn read is detected: a signal handler (which runs after the kernel
 * published on the way to it, if the thread was switched) reads while the
 * interrupted read is in the middle; here forced by a handler that changes
 * nothing but a generation-based read that spans a block must retry.
 */
static void check_torn(void)
{
	uint32_t g0, g1;
	uint64_t v;
	int word = 0, retried = 0, i;
	struct snap s;

	for (i = 0; i < 20; i++) {
		/* A read interrupted by a block: the kernel published in between. */
		g0 = __atomic_load_n(&area.gen, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		v = area.oncpu_ns;
		futex_wait(&word, 0, 100000);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		g1 = __atomic_load_n(&area.gen, __ATOMIC_RELAXED);
		(void)v;
		retried += g0 != g1;
	}
	snap_read(&area, &s);
	result("a read spanning a switch sees the generation change", retried >= 10,
	       "%d of 20 reads spanning a timed futex wait saw gen change; gen now %u", retried,
	       s.gen);
}

/* fork: the child is not registered and its copy of the struct stays still. */
static void check_fork(void)
{
	int st, p[2];
	pid_t pid;
	char c = 0;

	if (pipe(p))
		return;
	pid = fork();
	if (pid == 0) {
		struct timespec ts = { 0, 20000000 };
		uint32_t g = area.gen;
		long r = st_prctl(PR_RSEQ_SCHED_TIME_GET, 0);

		nanosleep(&ts, NULL);
		c = r == 0 ? 1 : 2;
		if (c == 1 && area.gen != g)
			c = 3;
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		c = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	result("fork: the child has it disabled, its copy is never written", c == 1,
	       "%s", c == 1 ? "GET in the child: 0; gen unchanged after a sleep" :
	       c == 2 ? "the child had it enabled" : c == 3 ? "the child's copy changed" :
	       "the child did not answer");
}

/* exec ends the registration: the new image finds none and can register. */
static int exec_child(void)
{
	/* exec dropped rseq and the fields; GET: 0. */
	if (st_prctl(PR_RSEQ_SCHED_TIME_GET, 0) != 0)
		return 2;
	if (reg_self())
		return 3;
	return unreg_self() ? 4 : 0;
}

static void check_exec(const char *self)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		if (reg_self())
			_exit(5);
		execl(self, self, "exec-child", (char *)NULL);
		_exit(6);
	}
	waitpid(pid, &st, 0);
	result("exec disables it", WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "exit status %d (0: GET after exec 0, then enable and disable; "
	       "2: still enabled; 3: enable failed; 4: disable failed; "
	       "5: enable before exec failed; 6: exec failed)",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/*
 * Bad arguments: a clear errno and nothing enabled.  In a thread of its
 * own (no rseq registration yet).
 */
static void *bad_thread(void *arg)
{
	static const struct { const char *what; unsigned long op, a3, a4; int err; } c[] = {
		{ "op 3", 3, 0, 0, EINVAL },
		{ "SET, unknown bit 0x2", PR_RSEQ_SCHED_TIME_SET, 2, 0, EINVAL },
		{ "GET, arg3 1", PR_RSEQ_SCHED_TIME_GET, 1, 0, EINVAL },
		{ "SET, arg4 1", PR_RSEQ_SCHED_TIME_SET, PR_RSEQ_SCHED_TIME_ENABLE, 1, EINVAL },
		{ "SET without rseq", PR_RSEQ_SCHED_TIME_SET, PR_RSEQ_SCHED_TIME_ENABLE, 0, ENXIO },
	};
	static __thread struct cs_rseq small;	/* registered with 32 bytes: ABI v1 */
	char *detail = arg;
	int i, bad = 0, e, len = 0;
	long r;

	for (i = 0; i < (int)(sizeof(c) / sizeof(c[0])); i++) {
		errno = 0;
		r = prctl(PR_RSEQ_SCHED_TIME, c[i].op, c[i].a3, c[i].a4, 0);
		e = errno;
		len += snprintf(detail + len, 512 - len, "%s: %s; ", c[i].what,
				r ? strerror(e) : "success");
		bad |= !(r == -1 && e == c[i].err);
	}
	/* An ABI v1 registration (the original 32 bytes) has no room for it. */
	if (syscall(__NR_rseq, &small, 32, 0, CS_RSEQ_SIG)) {
		len += snprintf(detail + len, 512 - len, "rseq(32): %s; ", strerror(errno));
		bad = 1;
	} else {
		r = st_prctl(PR_RSEQ_SCHED_TIME_SET, PR_RSEQ_SCHED_TIME_ENABLE);
		e = errno;
		len += snprintf(detail + len, 512 - len, "SET on a 32-byte rseq: %s; ",
				r ? (e == CS_ENOTSUPP ? "ENOTSUPP" : strerror(e)) : "success");
		bad |= !(r == -1 && e == CS_ENOTSUPP);
		bad |= small.st.gen != 0;
		syscall(__NR_rseq, &small, 32, 1, CS_RSEQ_SIG);
	}
	/* None of it left it enabled. */
	r = st_prctl(PR_RSEQ_SCHED_TIME_GET, 0);
	snprintf(detail + len, 512 - len, "then GET: %ld", r);
	bad |= r != 0;
	return (void *)(long)bad;
}

static void check_bad(void)
{
	char detail[512] = "";
	pthread_t th;
	void *bad = (void *)1;

	if (!pthread_create(&th, NULL, bad_thread, detail))
		pthread_join(th, &bad);
	result("bad arguments: EINVAL/ENXIO/ENOTSUPP, nothing enabled or written", !bad, "%s",
	       detail);
}

/* rseq unregistration disables the fields: a new registration has them off. */
static void check_rseq_unregister(void)
{
	long before = st_prctl(PR_RSEQ_SCHED_TIME_GET, 0), after = -2;
	int u = rseq_unreg(), r = -1;

	if (!u) {
		r = rseq_reg();
		after = st_prctl(PR_RSEQ_SCHED_TIME_GET, 0);
	}
	result("rseq unregistration disables it",
	       before == PR_RSEQ_SCHED_TIME_ENABLE && !u && !r && after == 0,
	       "GET before %ld; unregister %d, register again %d; GET after %ld", before, u, r,
	       after);
}

static void *check_thread(void *arg)
{
	const char *self = arg;

	/* A thread of its own: the main thread stays unregistered for fork/exec. */
	if (!check_register())
		return NULL;
	check_sum("after registration");
	check_busy();
	check_sum("after the spin");
	check_sleep();
	check_sum("after the sleep");
	check_futex_blocks();
	check_torn();
	check_migrate();
	check_runq();
	check_iowait();
	check_fork();
	check_sum("at the end");
	result("disable", unreg_self() == 0 && st_prctl(PR_RSEQ_SCHED_TIME_GET, 0) == 0,
	       "SET 0, then GET: 0");
	if (reg_self() == 0)
		check_rseq_unregister();
	else
		result("rseq unregistration disables it", false, "enable: %s", strerror(errno));
	check_exec(self);
	check_bad();
	return NULL;
}

static int cmd_check(const char *self)
{
	struct utsname u;
	pthread_t th;

	uname(&u);
	printf("TAP version 13\n# cs_rseq check on %s\n", u.release);
	pthread_create(&th, NULL, check_thread, (void *)self);
	pthread_join(th, NULL);
	printf("1..%d\n# %d passed, %d failed\n", ntest, ntest - nfail, nfail);
	return nfail ? 1 : 0;
}

/* --- bench ----------------------------------------------------------------- */

#define MAX_REPS	16
#define READ_CALLS	100000

static unsigned long opt_rounds = 20000;
static int opt_reps = 3;

struct pair {
	int cpu[2];
	bool reg, quit;
	int word, go[2], done, err;
	unsigned long rounds;
	uint64_t tsc, ns, sw_in[2];
};

struct pair_arg {
	struct pair *pp;
	int idx;
};

static void *pair_thread(void *data)
{
	struct pair_arg *a = data;
	struct pair *pp = a->pp;
	uint64_t t0, n0, before = 0;

	if (pin(pp->cpu[a->idx]))
		__atomic_store_n(&pp->err, errno, __ATOMIC_RELAXED);
	/* rseq registered in every state, as glibc registers it for every thread. */
	if (rseq_reg() || (pp->reg && reg_self()))
		__atomic_store_n(&pp->err, errno, __ATOMIC_RELAXED);
	for (;;) {
		pp_wait(pp->go[a->idx]);
		if (pp->quit)
			break;
		if (pp->reg)
			before = area.nr_switch_in;
		if (a->idx == 0) {
			n0 = now_ns();
			t0 = rdtscp();
			ping(&pp->word, pp->rounds);
			pp->tsc = rdtscp() - t0;
			pp->ns = now_ns() - n0;
		} else {
			pong(&pp->word, pp->rounds);
		}
		if (pp->reg)
			pp->sw_in[a->idx] = area.nr_switch_in - before;
		pp_post(pp->done);
	}
	if (pp->reg)
		unreg_self();
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void stats(double *v, int n, double *min, double *med, double *max)
{
	qsort(v, n, sizeof(*v), cmp_d);
	*min = v[0];
	*max = v[n - 1];
	*med = v[n / 2];
}

static int run_pair(const char *state, bool two, bool reg, const char *desc)
{
	double tsc[MAX_REPS], ns[MAX_REPS], min, med, max, nmin, nmed, nmax, swrt = 0;
	struct pair_arg arg[2];
	pthread_t th[2];
	struct pair pp;
	int i, rep;

	memset(&pp, 0, sizeof(pp));
	pp.cpu[0] = 0;
	pp.cpu[1] = two ? 1 : 0;
	pp.reg = reg;
	pp.done = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	pp.go[0] = eventfd(0, EFD_CLOEXEC);
	pp.go[1] = eventfd(0, EFD_CLOEXEC);
	if (pp.done < 0 || pp.go[0] < 0 || pp.go[1] < 0) {
		fprintf(stderr, "cs_rseq: eventfd: %s\n", strerror(errno));
		exit(1);
	}
	for (i = 0; i < 2; i++) {
		arg[i].pp = &pp;
		arg[i].idx = i;
		pthread_create(&th[i], NULL, pair_thread, &arg[i]);
	}
	for (rep = -1; rep < opt_reps; rep++) {
		pp.rounds = rep < 0 ? opt_rounds / 10 : opt_rounds;
		pp.word = 0;
		pp_post(pp.go[0]);
		pp_post(pp.go[1]);
		pp_wait(pp.done);
		pp_wait(pp.done);
		if (rep < 0)
			continue;
		tsc[rep] = (double)pp.tsc / pp.rounds;
		ns[rep] = (double)pp.ns / pp.rounds;
		if (reg)
			swrt = (double)(pp.sw_in[0] + pp.sw_in[1]) / pp.rounds;
	}
	pp.quit = true;
	pp_post(pp.go[0]);
	pp_post(pp.go[1]);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	close(pp.go[0]);
	close(pp.go[1]);
	close(pp.done);
	if (pp.err) {
		fprintf(stderr, "cs_rseq: %s %s: %s\n", state, two ? "2cpu" : "1cpu",
			strerror(pp.err));
		printf("pingpong\t%s_%s\ttsc/rt\t-\t-\t-\t-\tfailed: %s\n", state,
		       two ? "2cpu" : "1cpu", strerror(pp.err));
		return -1;
	}
	stats(tsc, opt_reps, &min, &med, &max);
	stats(ns, opt_reps, &nmin, &nmed, &nmax);
	printf("pingpong\t%s_%s\ttsc/rt\t%.1f\t%.1f\t%.1f\t%.1f\t%s, %s", state,
	       two ? "2cpu" : "1cpu", min, med, max, nmin, two ? "2 CPUs" : "1 CPU", desc);
	if (reg)
		printf(" (switch-ins per round trip seen in the structs: %.2f)", swrt);
	printf("\n");
	fflush(stdout);
	if (reg && swrt < 1.0) {
		fprintf(stderr, "cs_rseq: %s: %.2f switch-ins per round trip\n", state, swrt);
		return -1;
	}
	return 0;
}

static int run_state(const char *state, bool reg, const char *desc)
{
	int rc = run_pair(state, false, reg, desc);

	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		rc |= run_pair(state, true, reg, desc);
	return rc;
}

typedef void (*read_fn)(void);
static volatile uint64_t sink;

static void rd_rdtscp(void)
{
	sink += rdtscp();
}

static void rd_clock(void)
{
	sink += now_ns();
}

static void rd_thread_cputime(void)
{
	sink += ts_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* One snapshot: the generation loop, clock_gettime() and the extrapolation. */
static void rd_rseq(void)
{
	struct snap s;

	snap_read(&area, &s);
	sink += s.b[ONCPU];
}

static void run_read(const char *id, read_fn fn, const char *desc)
{
	double tsc[MAX_REPS], ns[MAX_REPS], min, med, max, nmin, nmed, nmax;
	int reps = opt_reps < 5 ? 5 : opt_reps, rep, i;

	if (reps > MAX_REPS)
		reps = MAX_REPS;
	for (rep = -1; rep < reps; rep++) {
		uint64_t n0 = now_ns(), t0 = rdtscp(), t1, n1;

		for (i = 0; i < READ_CALLS; i++)
			fn();
		t1 = rdtscp();
		n1 = now_ns();
		if (rep >= 0) {
			tsc[rep] = (double)(t1 - t0) / READ_CALLS;
			ns[rep] = (double)(n1 - n0) / READ_CALLS;
		}
	}
	stats(tsc, reps, &min, &med, &max);
	stats(ns, reps, &nmin, &nmed, &nmax);
	printf("read\t%s\ttsc/call\t%.1f\t%.1f\t%.1f\t%.1f\t%s\n", id, min, med, max, nmin, desc);
	fflush(stdout);
}

/* A registered thread that waits: the key on, the pair not registered. */
static int holder_fd[2];

static void *holder_thread(void *arg)
{
	char c = 0;

	(void)arg;
	c = reg_self() ? 1 : 0;
	if (write(holder_fd[1], &c, 1) != 1)
		return NULL;
	/* Wait for the word to leave (blocked in read: no switches). */
	if (read(holder_fd[0], &c, 1) < 0)
		c = 0;
	unreg_self();
	return NULL;
}

static void *read_thread(void *arg)
{
	(void)arg;
	if (reg_self()) {
		fprintf(stderr, "cs_rseq: register: %s\n", strerror(errno));
		return NULL;
	}
	run_read("rseq_read", rd_rseq,
		 "rseq prototype: gen loop + clock_gettime + extrapolation (no system call)");
	unreg_self();
	return NULL;
}

static int cmd_bench(void)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), rc = 0, p1[2], p2[2];
	struct utsname u;
	pthread_t th;
	char c;

	uname(&u);
	printf("#meta\tkernel\t%s\n#meta\tnr_cpus\t%d\n#meta\trounds\t%lu\n#meta\treps\t%d\n",
	       u.release, ncpu, opt_rounds, opt_reps);
	printf("#section\tid\tunit\tmin\tmedian\tmax\tns_min\tdesc\n");
	fflush(stdout);

	run_read("rdtscp", rd_rdtscp, "bare rdtscp (the floor)");
	run_read("clock_gettime", rd_clock, "clock_gettime(CLOCK_MONOTONIC), vDSO");
	run_read("thread_cputime", rd_thread_cputime,
		 "clock_gettime(CLOCK_THREAD_CPUTIME_ID), a system call");
	pthread_create(&th, NULL, read_thread, NULL);
	pthread_join(th, NULL);

	/* Nobody registered: the key is off (it goes off at the last unregister). */
	rc |= run_state("rseq_none", false, "rseq prototype, no thread registered (key off)");
	if (st_prctl(PR_RSEQ_SCHED_TIME_GET, 0) == -1 && errno == EINVAL) {
		/* Not the prototype's kernel (the base): this state only. */
		printf("#meta\trseq\tno\n");
		return rc ? 1 : 0;
	}
	/* Another thread registered: key on, the pair unregistered. */
	if (pipe(p1) || pipe(p2))
		return 1;
	holder_fd[0] = p2[0];
	holder_fd[1] = p1[1];
	pthread_create(&th, NULL, holder_thread, NULL);
	if (read(p1[0], &c, 1) != 1 || c) {
		fprintf(stderr, "cs_rseq: the holder did not register\n");
		return 1;
	}
	rc |= run_state("rseq_unreg", false,
			"rseq prototype, another thread registered (key on), the pair not");
	rc |= run_state("rseq_reg", true, "rseq prototype, both threads registered");
	if (write(p2[1], &c, 1) != 1)
		return 1;
	pthread_join(th, NULL);
	/* And off again. */
	rc |= run_state("rseq_none_after", false,
			"rseq prototype, no thread registered again (key off)");
	return rc ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: cs_rseq check | bench [-i ROUNDS] [-r REPS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	/* Each thread registers its own 128-byte rseq: not glibc's. */
	if (&__rseq_size && __rseq_size && !getenv("CS_RSEQ_REEXEC")) {
		setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
		setenv("CS_RSEQ_REEXEC", "1", 1);
		execv("/proc/self/exe", argv);
		fprintf(stderr, "cs_rseq: re-exec: %s\n", strerror(errno));
		return 2;
	}
	if (argc >= 2 && !strcmp(argv[1], "exec-child"))
		return exec_child();
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "check"))
		return cmd_check(argv[0][0] == '/' ? argv[0] : "/proc/self/exe");
	if (strcmp(argv[1], "bench"))
		usage();
	optind = 2;
	while ((c = getopt(argc, argv, "i:r:")) != -1) {
		switch (c) {
		case 'i':
			opt_rounds = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			opt_reps = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!opt_rounds || opt_reps < 1 || opt_reps > MAX_REPS)
		usage();
	return cmd_bench();
}
