// SPDX-License-Identifier: GPL-2.0
/*
 * cs_sweep: what one watchdog sweep over N worker threads costs, through
 * the coarse_stat pages and through /proc, in one run.
 *
 * A watchdog (samples/coarse_stat/stallwatch.c) looks at its workers at a
 * cadence and asks whether any of them is stalled and where its time goes.
 * Here N workers (10, 100, 1000) run on the last CPU: the even ones block on
 * a futex and wake by its timeout, the odd ones spin for SPIN_US and then
 * block the same way, so that a sweep finds some running or queued and most
 * asleep; the naps (2N ms, at least 20 ms, +-50 % at random) keep the
 * wakeups near 500 per second and the spinning near 2.5 % of their CPU
 * whatever N.  The main thread, on CPU 0,
 * is the watchdog.  Each worker registers (csf_thread_page()) and hands its
 * mapping to it.  A sweep looks once at every worker, one of three ways:
 *
 *  pages	csf_page_snap() of its page (vDSO, no system call): the state
 *		now and the five buckets up to now
 *  pread	pread(fd, buf, n, 0) of /proc/self/task/<tid>/stat (state,
 *		utime, stime) and of .../schedstat (run time, run delay), the
 *		files opened once: the strongest /proc watchdog
 *  open	the same two files opened, read and closed every sweep, as many
 *		tools do
 *
 * and does the same little work with what it read: the time since its last
 * look at that worker, whether the worker ran the whole time (busy) or
 * waited for a CPU more than half of it (starved).  Per N and per cadence
 * (PERIOD_MS: 1 and 20), BLOCKS blocks, each of SWEEPS sweeps per method
 * at that cadence (absolute deadlines; a sweep that overruns its period
 * starts the next at once), the methods in a rotating order; a block's
 * figure is its mean per sweep.  Prints per N, period and method
 *
 *	cs_sweep: n N period_ms P method M sweeps S blocks B ns min X med Y max Z overruns O
 *
 * (CLOCK_MONOTONIC ns per sweep: the least, median and most of the block
 * means; under QEMU -icount shift=0, guest instructions), what the sweeps
 * saw (states by each method, busy and starved verdicts), the busy share of
 * each CPU meanwhile (under -icount the other vCPU's instructions during a
 * sweep count in its time too), and the cost of the two clock reads that
 * bracket a sweep.
 *
 *	cs_sweep [-n N[,N...]] [-p MS[,MS...]] [-s SWEEPS] [-b BLOCKS] [-u SPIN_US]
 *
 * Exit status 3: no coarse_stat here (or registration refused).
 *
 * Build: gcc -O2 -Wall -pthread -isystem HDR/usr/include \
 *	-I linux/tools/lib/coarse_stat -o cs_sweep cs_sweep.c
 * (HDR: the series' UAPI headers; scripts/bench-sweep.sh)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/types.h>

#include "coarse_stat.h"

#define NSEC_PER_USEC	1000ULL
#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL
#define MAX_LIST	8
#define STAT_BUFSZ	512

enum { M_PAGES, M_PREAD, M_OPEN, NR_METHODS };
static const char * const method_name[NR_METHODS] = { "pages", "pread", "open" };

/* /proc's letters: R, S, D, other (I, T, t, X, Z, P). */
enum { PS_R, PS_S, PS_D, PS_OTHER, NR_PS };

struct worker {
	unsigned int				idx;
	pthread_t				thread;
	atomic_int				ready;	/* 1 mapped, -errno failed */
	pid_t					tid;
	const struct coarse_stat_thread_page	*page;
	/* The watcher's. */
	int					fd_stat, fd_sched;
	char					path_stat[64], path_sched[64];
	__u64					pg_time, pg_oncpu, pg_runq;
	__u64					pr_time, pr_cpu, pr_delay;
};

/* What the sweeps saw, per method. */
struct seen {
	unsigned long	state[COARSE_STAT_NR_BUCKETS + 1];	/* pages; + exited */
	unsigned long	ps[NR_PS];				/* /proc */
	unsigned long	busy, starved;
};

static atomic_uint stop_word;
static unsigned int spin_us = 100;
static __u64 nap_ns;
static int worker_cpu = -1, watch_cpu = -1;
static long clk_tck;

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_until(__u64 t)
{
	struct timespec ts = { t / NSEC_PER_SEC, t % NSEC_PER_SEC };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("cs_sweep: sched_setaffinity");
}

static void die(const char *what)
{
	fprintf(stderr, "cs_sweep: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* xorshift32: the workers' jitter, seeded by their index. */
static __u32 rnd(__u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Block on the futex for 50-150 % of the nap, or until told to stop. */
static void nap(__u32 *seed)
{
	__u64 ns = nap_ns / 2 + (__u64)rnd(seed) % (nap_ns + 1);
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	syscall(SYS_futex, &stop_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	__u32 seed = 2654435761U * (w->idx + 1);
	const struct coarse_stat_thread_page *pg;
	__u64 end;

	w->tid = gettid();
	pin(worker_cpu);
	if (csf_thread_page(&pg)) {
		atomic_store(&w->ready, -errno);
		return NULL;
	}
	w->page = pg;
	atomic_store(&w->ready, 1);

	/* A random phase, then: (spin,) block, wake, again. */
	rnd(&seed);
	while (!atomic_load_explicit(&stop_word, memory_order_relaxed)) {
		nap(&seed);
		if (!(w->idx & 1))
			continue;
		end = mono_ns() + spin_us * NSEC_PER_USEC;
		while (mono_ns() < end &&
		       !atomic_load_explicit(&stop_word, memory_order_relaxed))
			;
	}
	return NULL;
}

/*
 * A watchdog's verdict on one worker from what it read: the time since the
 * last look @dt, on CPU @cpu of it, waiting for a CPU @wait of it.
 */
static void verdict(struct seen *sn, __u64 dt, __u64 cpu, __u64 wait)
{
	if (!dt)
		return;
	if (cpu >= dt - dt / 10)
		sn->busy++;
	else if (wait > dt / 2)
		sn->starved++;
}

static void sweep_pages(struct worker *ws, unsigned int n, struct seen *sn)
{
	struct csf_snap s;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct worker *w = &ws[i];

		if (csf_page_snap(w->page, &s))
			die("csf_page_snap");
		sn->state[s.p.state < COARSE_STAT_NR_BUCKETS ? s.p.state :
			  COARSE_STAT_NR_BUCKETS]++;
		if (w->pg_time)
			verdict(sn, s.time_ns - w->pg_time, s.p.oncpu_ns - w->pg_oncpu,
				s.p.runq_ns - w->pg_runq);
		w->pg_time = s.time_ns;
		w->pg_oncpu = s.p.oncpu_ns;
		w->pg_runq = s.p.runq_ns;
	}
}

/* Skip @n space-separated fields of @p. */
static const char *skip_fields(const char *p, unsigned int n)
{
	while (n--) {
		p = strchr(p, ' ');
		if (!p)
			return NULL;
		p++;
	}
	return p;
}

/*
 * One worker's /proc/<tid>/stat (state, utime + stime) and schedstat (run
 * time, run delay): @st and @sc are the two files' text, NUL-terminated.
 */
static void proc_look(struct worker *w, const char *st, const char *sc,
		      __u64 now, struct seen *sn)
{
	unsigned long long ut, stm, exec, delay;
	const char *p = strrchr(st, ')');
	char *e;

	if (!p || p[1] != ' ')
		goto bad;
	p += 2;
	switch (*p) {
	case 'R':
		sn->ps[PS_R]++;
		break;
	case 'S':
		sn->ps[PS_S]++;
		break;
	case 'D':
		sn->ps[PS_D]++;
		break;
	default:
		sn->ps[PS_OTHER]++;
		break;
	}
	/* Field 3 is the state; utime and stime are fields 14 and 15. */
	p = skip_fields(p, 11);
	if (!p)
		goto bad;
	ut = strtoull(p, &e, 10);
	stm = strtoull(e, &e, 10);
	exec = strtoull(sc, &e, 10);
	delay = strtoull(e, &e, 10);
	(void)exec;	/* sum_exec_runtime: lags while the thread runs */
	/* The ticks: what /proc gives for "on CPU" without a lag. */
	ut = (ut + stm) * (NSEC_PER_SEC / clk_tck);
	if (w->pr_time)
		verdict(sn, now - w->pr_time, ut - w->pr_cpu, delay - w->pr_delay);
	w->pr_time = now;
	w->pr_cpu = ut;
	w->pr_delay = delay;
	return;
bad:
	fprintf(stderr, "cs_sweep: cannot parse /proc/self/task/%d/stat: %s\n", w->tid, st);
	exit(1);
}

static ssize_t read_at0(int fd, char *buf, size_t len, const char *path)
{
	ssize_t r = pread(fd, buf, len - 1, 0);

	if (r <= 0) {
		fprintf(stderr, "cs_sweep: pread %s: %s\n", path, r ? strerror(errno) : "empty");
		exit(1);
	}
	buf[r] = 0;
	return r;
}

static void sweep_pread(struct worker *ws, unsigned int n, struct seen *sn)
{
	char st[STAT_BUFSZ], sc[128];
	__u64 now = mono_ns();
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct worker *w = &ws[i];

		read_at0(w->fd_stat, st, sizeof(st), w->path_stat);
		read_at0(w->fd_sched, sc, sizeof(sc), w->path_sched);
		proc_look(w, st, sc, now, sn);
	}
}

static void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		die(path);
	r = read(fd, buf, len - 1);
	if (r <= 0) {
		fprintf(stderr, "cs_sweep: read %s: %s\n", path, r ? strerror(errno) : "empty");
		exit(1);
	}
	buf[r] = 0;
	close(fd);
}

static void sweep_open(struct worker *ws, unsigned int n, struct seen *sn)
{
	char st[STAT_BUFSZ], sc[128];
	__u64 now = mono_ns();
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct worker *w = &ws[i];

		read_file(w->path_stat, st, sizeof(st));
		read_file(w->path_sched, sc, sizeof(sc));
		proc_look(w, st, sc, now, sn);
	}
}

static void sweep(int m, struct worker *ws, unsigned int n, struct seen *sn)
{
	switch (m) {
	case M_PAGES:
		sweep_pages(ws, n, sn);
		break;
	case M_PREAD:
		sweep_pread(ws, n, sn);
		break;
	default:
		sweep_open(ws, n, sn);
		break;
	}
}

/* @sweeps sweeps at @period_ns: the mean cost of one. */
static double block(int m, struct worker *ws, unsigned int n, __u64 period_ns,
		    unsigned int sweeps, struct seen *sn, unsigned int *overruns)
{
	__u64 next, t0, t1, sum = 0;
	unsigned int i;

	next = mono_ns() + period_ns;
	for (i = 0; i < sweeps; i++) {
		sleep_until(next);
		t0 = mono_ns();
		sweep(m, ws, n, sn);
		t1 = mono_ns();
		sum += t1 - t0;
		next += period_ns;
		if (next <= t1) {
			(*overruns)++;
			next = t1;
		}
	}
	return (double)sum / sweeps;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Busy and total jiffies of @cpu from /proc/stat. */
static void cpu_times(int cpu, unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	char name[16], line[256];
	FILE *f = fopen("/proc/stat", "r");
	size_t len;
	int k;

	*busy = *total = 0;
	if (!f)
		return;
	len = snprintf(name, sizeof(name), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, len))
			continue;
		if (sscanf(line + len, "%llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]) < 5)
			break;
		for (k = 0; k < 8; k++)
			*total += v[k];
		*busy = *total - v[3] - v[4];	/* less idle and iowait */
		break;
	}
	fclose(f);
}

static double busy_pct(unsigned long long b0, unsigned long long t0,
		       unsigned long long b1, unsigned long long t1)
{
	return t1 > t0 ? 100.0 * (b1 - b0) / (t1 - t0) : 0;
}

static void run_period(struct worker *ws, unsigned int n, unsigned int period_ms,
		       unsigned int sweeps, unsigned int blocks)
{
	double *mean[NR_METHODS];
	unsigned int overruns[NR_METHODS] = { 0 };
	struct seen sn[NR_METHODS];
	unsigned long long b0[2], t0[2], b1[2], t1[2];
	int cpus[2] = { watch_cpu < 0 ? 0 : watch_cpu, worker_cpu < 0 ? 0 : worker_cpu };
	unsigned int b, k;
	int m;

	memset(sn, 0, sizeof(sn));
	for (m = 0; m < NR_METHODS; m++) {
		mean[m] = calloc(blocks, sizeof(double));
		if (!mean[m])
			die("calloc");
	}
	for (k = 0; k < 2; k++)
		cpu_times(cpus[k], &b0[k], &t0[k]);
	for (b = 0; b < blocks; b++) {
		for (k = 0; k < NR_METHODS; k++) {
			struct seen warm;

			m = (b + k) % NR_METHODS;
			memset(&warm, 0, sizeof(warm));
			sweep(m, ws, n, &warm);		/* unmeasured */
			mean[m][b] = block(m, ws, n, period_ms * NSEC_PER_MSEC, sweeps,
					   &sn[m], &overruns[m]);
		}
	}
	for (k = 0; k < 2; k++)
		cpu_times(cpus[k], &b1[k], &t1[k]);

	for (m = 0; m < NR_METHODS; m++) {
		qsort(mean[m], blocks, sizeof(double), cmp_double);
		printf("cs_sweep: n %u period_ms %u method %s sweeps %u blocks %u ns min %.0f med %.0f max %.0f overruns %u\n",
		       n, period_ms, method_name[m], sweeps, blocks, mean[m][0],
		       blocks % 2 ? mean[m][blocks / 2] :
		       (mean[m][blocks / 2 - 1] + mean[m][blocks / 2]) / 2,
		       mean[m][blocks - 1], overruns[m]);
		free(mean[m]);
	}
	printf("cs_sweep: n %u period_ms %u seen pages oncpu %lu runq %lu sleep %lu dsleep %lu iowait %lu exited %lu busy %lu starved %lu\n",
	       n, period_ms, sn[M_PAGES].state[0], sn[M_PAGES].state[1],
	       sn[M_PAGES].state[2], sn[M_PAGES].state[3], sn[M_PAGES].state[4],
	       sn[M_PAGES].state[5], sn[M_PAGES].busy, sn[M_PAGES].starved);
	for (m = M_PREAD; m < NR_METHODS; m++)
		printf("cs_sweep: n %u period_ms %u seen %s R %lu S %lu D %lu other %lu busy %lu starved %lu\n",
		       n, period_ms, method_name[m], sn[m].ps[PS_R], sn[m].ps[PS_S],
		       sn[m].ps[PS_D], sn[m].ps[PS_OTHER], sn[m].busy, sn[m].starved);
	printf("cs_sweep: n %u period_ms %u cpu %d busy %.1f %% cpu %d busy %.1f %%\n",
	       n, period_ms, cpus[0], busy_pct(b0[0], t0[0], b1[0], t1[0]),
	       cpus[1], busy_pct(b0[1], t0[1], b1[1], t1[1]));
}

static void run_n(unsigned int n, const unsigned int *periods, unsigned int nr_periods,
		  unsigned int sweeps, unsigned int blocks)
{
	struct worker *ws = calloc(n, sizeof(*ws));
	pthread_attr_t attr;
	unsigned int i;
	int r;

	if (!ws)
		die("calloc");
	nap_ns = (n < 10 ? 20 : 2 * n) * NSEC_PER_MSEC;
	atomic_store(&stop_word, 0);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	for (i = 0; i < n; i++) {
		ws[i].idx = i;
		errno = pthread_create(&ws[i].thread, &attr, worker_fn, &ws[i]);
		if (errno)
			die("pthread_create");
	}
	pthread_attr_destroy(&attr);
	for (i = 0; i < n; i++) {
		while (!(r = atomic_load(&ws[i].ready)))
			usleep(1000);
		if (r > 0)
			continue;
		fprintf(stderr, "cs_sweep: registration: %s%s\n", csf_strerror(-r),
			r == -EPERM ? " (ask the administrator to set kernel.coarse_stat_thread)" : "");
		exit(3);
	}
	for (i = 0; i < n; i++) {
		struct worker *w = &ws[i];

		snprintf(w->path_stat, sizeof(w->path_stat), "/proc/self/task/%d/stat", w->tid);
		snprintf(w->path_sched, sizeof(w->path_sched), "/proc/self/task/%d/schedstat",
			 w->tid);
		w->fd_stat = open(w->path_stat, O_RDONLY | O_CLOEXEC);
		w->fd_sched = open(w->path_sched, O_RDONLY | O_CLOEXEC);
		if (w->fd_stat < 0 || w->fd_sched < 0)
			die(w->path_stat);
	}
	printf("cs_sweep: n %u workers: %u blocking, %u spinning %u us, naps %llu ms +-50 %%\n",
	       n, n - n / 2, n / 2, spin_us, (unsigned long long)(nap_ns / NSEC_PER_MSEC));
	for (i = 0; i < nr_periods; i++)
		run_period(ws, n, periods[i], sweeps, blocks);

	atomic_store(&stop_word, 1);
	syscall(SYS_futex, &stop_word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	for (i = 0; i < n; i++) {
		pthread_join(ws[i].thread, NULL);
		close(ws[i].fd_stat);
		close(ws[i].fd_sched);
	}
	free(ws);
}

static unsigned int parse_list(const char *s, unsigned int *v)
{
	unsigned int k = 0;
	char *e;

	while (*s && k < MAX_LIST) {
		v[k] = strtoul(s, &e, 10);
		if (e == s || !v[k])
			break;
		k++;
		s = *e == ',' ? e + 1 : e;
	}
	if (*s) {
		fprintf(stderr, "cs_sweep: bad list near \"%s\"\n", s);
		exit(2);
	}
	return k;
}

/* The two clock reads around a sweep, alone. */
static double clock_floor(void)
{
	__u64 sum = 0, t0;
	int i;

	for (i = 0; i < 10000; i++) {
		t0 = mono_ns();
		sum += mono_ns() - t0;
	}
	return sum / 10000.0;
}

int main(int argc, char **argv)
{
	unsigned int ns[MAX_LIST] = { 10, 100, 1000 }, periods[MAX_LIST] = { 1, 20 };
	unsigned int nr_ns = 3, nr_periods = 2, sweeps = 20, blocks = 5, i;
	struct rlimit rl;
	int opt, ncpu;

	while ((opt = getopt(argc, argv, "n:p:s:b:u:")) != -1) {
		switch (opt) {
		case 'n':
			nr_ns = parse_list(optarg, ns);
			break;
		case 'p':
			nr_periods = parse_list(optarg, periods);
			break;
		case 's':
			sweeps = atoi(optarg);
			break;
		case 'b':
			blocks = atoi(optarg);
			break;
		case 'u':
			spin_us = atoi(optarg);
			break;
		default:
			fputs("usage: cs_sweep [-n N[,N...]] [-p MS[,MS...]] [-s SWEEPS] [-b BLOCKS] [-u SPIN_US]\n",
			      stderr);
			return 2;
		}
	}
	if (!nr_ns || !nr_periods || !sweeps || !blocks) {
		fputs("cs_sweep: empty list, no sweeps or no blocks\n", stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	clk_tck = sysconf(_SC_CLK_TCK);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > 1) {
		watch_cpu = 0;
		worker_cpu = ncpu - 1;
	}
	pin(watch_cpu);

	/* Two files per worker, kept open. */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rlim_t want = 0;

		for (i = 0; i < nr_ns; i++)
			if (2 * (rlim_t)ns[i] + 64 > want)
				want = 2 * (rlim_t)ns[i] + 64;
		if (rl.rlim_cur < want) {
			rl.rlim_cur = want;
			if (rl.rlim_max < want)
				rl.rlim_max = want;
			if (setrlimit(RLIMIT_NOFILE, &rl))
				die("setrlimit(RLIMIT_NOFILE)");
		}
	}
	printf("cs_sweep: cpus %d watcher cpu %d workers cpu %d clk_tck %ld\n",
	       ncpu, watch_cpu, worker_cpu, clk_tck);
	printf("cs_sweep: clock floor ns %.0f\n", clock_floor());
	for (i = 0; i < nr_ns; i++)
		run_n(ns[i], periods, nr_periods, sweeps, blocks);
	return 0;
}
