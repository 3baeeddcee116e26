// SPDX-License-Identifier: GPL-2.0
/*
 * cs_bench: what a coarse_stat snapshot costs next to the other ways a thread
 * can learn where its time went, and what coarse_stat adds to a context
 * switch and to the memory of a thread.
 *
 *  a) snapshot cost, same thread, same loop harness: bare rdtscp, a seqcount
 *     copy of the 320-byte thread page done in C with clock_gettime() inside
 *     (the realistic floor) and without (the copy floor), __vdso_coarse_stat_snap(),
 *     the library's csf_thread_snap(), a perf mmap page self-read,
 *     clock_gettime() (also the vDSO's, called directly), getrusage(), /proc
 *     reads, and the same fields by system calls;
 *  b) context switch: futex ping-pong between two threads on one CPU and on
 *     two, unregistered and registered (also on kernels without coarse_stat);
 *     with -i, a fixed number of round trips per repetition, and first with
 *     registrations not yet allowed (the static key off), for a guest
 *     whose clock counts instructions (QEMU -icount shift=0, see -i below);
 *  c) scale: registration and release cost, memory per registered thread.
 *
 * Not part of the series (its kselftests pass or fail; this measures):
 * scripts/build-cs-bench.sh builds it against a patched tree's helpers
 * (tools/testing/selftests/coarse_stat/cs_read.h, the vDSO selftests' ELF
 * parser) and installed UAPI headers; make selftests installs it next to
 * the tests, make bench builds its own.
 *
 * Usage: cs_bench [-q] [-t] [-s] [-i ROUNDS] [-r REPS] [-m THREADS] [-o ROWS]
 *	-q	quick: shorter runs, fewer repetitions
 *	-t	tab-separated output for scripts (see print_tsv_header())
 *	-s	only the context-switch benchmark; runs on any kernel
 *	-i N	N round trips per switch repetition instead of a timed run, and
 *		the pairs "1cpu_keyoff" and "2cpu_keyoff" first, before the
 *		process registers anything (nothing else may have registered
 *		either: the debugfs key count is checked where it exists).  Under
 *		QEMU -icount shift=0 with a 1 GHz TSC the clock advances one ns
 *		per guest instruction, so ns per switch are instructions per
 *		switch, the same in every run; the meta lines ns_per_insn and
 *		tsc_per_insn (a loop of known length) say whether that holds.
 *	-r N	repetitions per measurement (median, min and max are reported)
 *	-m N	threads for the memory measurement
 *	-o IDS	only these snapshot rows (comma-separated ids, as -t prints)
 *
 * Absolute numbers depend on the machine (and mean little under emulation);
 * the tables lead with ratios measured in the same run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __x86_64__
#include <cpuid.h>
#endif
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "coarse_stat.h"
#include "cs_read.h"

#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define MAX_REPS	51

static inline void barrier(void)
{
	asm volatile("" : : : "memory");
}

/* Make the compiler believe that *@p is read, and may have changed. */
static inline void use_mem(const void *p)
{
	asm volatile("" : : "r" (p) : "memory");
}

/* Make the compiler believe that @v is used. */
static inline void use_val(__u64 v)
{
	asm volatile("" : : "r" (v));
}

static bool opt_quick, opt_tsv, opt_switch_only;
static const char *opt_rows;
static int opt_reps;
static unsigned long opt_rounds;	/* -i: round trips per repetition */
static double ns_per_insn, tsc_per_insn;	/* -i: insn_clock() */
static int opt_mem_threads;
static __u64 target_ns;		/* wall time of one timed repetition */

static bool have_rdtscp;
static bool have_cs;		/* PR_COARSE_STAT works */
static long page_size;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#ifdef __aarch64__
/*
 * arm64: the rows keep their x86 names.  "rdtscp" is isb; mrs cntvct_el0 (the
 * ordered read of the counter the pages are written with; no CPU number);
 * the plain read is mrs cntvct_el0 alone; there is no rdpmc.
 */
static inline __u64 rdtscp_aux(__u32 *aux)
{
	__u64 cnt;

	asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r" (cnt) : : "memory");
	*aux = 0;
	return cnt;
}

static inline __u64 lfence_rdtsc(void)
{
	__u32 aux;

	return rdtscp_aux(&aux);
}

static inline __u64 rdtsc_plain(void)
{
	__u64 cnt;

	asm volatile("mrs %0, cntvct_el0" : "=r" (cnt));
	return cnt;
}

/* Two instructions per iteration, as the x86 loop. */
#define INSN_LOOP	"1:\tsubs %0, %0, #1\n\tb.ne 1b"
#else
static inline __u64 rdtscp_aux(__u32 *aux)
{
	__u32 lo, hi, c;

	asm volatile("rdtscp" : "=a" (lo), "=d" (hi), "=c" (c) : : "memory");
	*aux = c;
	return ((__u64)hi << 32) | lo;
}

/* What a CPU without rdtscp uses for an ordered TSC read. */
static inline __u64 lfence_rdtsc(void)
{
	__u32 lo, hi;

	asm volatile("lfence; rdtsc" : "=a" (lo), "=d" (hi) : : "memory");
	return ((__u64)hi << 32) | lo;
}

static inline __u64 rdtsc_plain(void)
{
	__u32 lo, hi;

	asm volatile("rdtsc" : "=a" (lo), "=d" (hi));
	return ((__u64)hi << 32) | lo;
}

#define INSN_LOOP	"1:\tdec %0\n\tjnz 1b"
#endif

/*
 * ns of CLOCK_MONOTONIC and TSC ticks per instruction, from a loop of known
 * length (two instructions per iteration): 1 and 1 when the clock counts
 * instructions (QEMU -icount shift=0, TSC at 1 GHz).  The least of 21 short
 * runs: some of them see no interrupt.
 */
static void insn_clock(double *npi, double *tpi)
{
	const unsigned long n = 250000;
	int i;

	*npi = *tpi = 0;
	for (i = 0; i < 21; i++) {
		unsigned long c = n;
		__u64 t0, t1, c0, c1;
		double ns, tsc;

		t0 = now_ns();
		c0 = rdtsc_plain();
		asm volatile(INSN_LOOP : "+r" (c) : : "cc");
		c1 = rdtsc_plain();
		t1 = now_ns();
		ns = (double)(t1 - t0) / (2.0 * n);
		tsc = (double)(c1 - c0) / (2.0 * n);
		if (!i || ns < *npi)
			*npi = ns;
		if (!i || tsc < *tpi)
			*tpi = tsc;
	}
}

static bool cpu_has_rdtscp(void)
{
#ifdef __x86_64__
	unsigned int a, b, c, d;

	if (!__get_cpuid(0x80000001, &a, &b, &c, &d))
		return false;
	return d & (1U << 27);
#else
	return true;
#endif
}

typedef int (*csf_snap_fn)(const struct coarse_stat_thread_page *page,
			   struct coarse_stat_snap *snap, size_t size,
			   struct coarse_stat_thread_page *copy, size_t copy_size);
static csf_snap_fn vdso_csf_snap;

/* __vdso_coarse_stat_snap() into @s: the snapshot's fields, then the copy. */
static inline int vdso_vsnap(const struct coarse_stat_thread_page *pg, struct cs_vsnap *s)
{
	return vdso_csf_snap(pg, (struct coarse_stat_snap *)s, sizeof(struct coarse_stat_snap),
			     &s->p, sizeof(s->p));
}

/*
 * The vDSO's clock_gettime(), called directly: the clock the snapshot
 * reads, without the C library's wrapper.  Only where its struct timespec
 * is the C library's.
 */
#if defined(__aarch64__)
#define CS_VDSO_CLOCK_GETTIME	"__kernel_clock_gettime"
#elif defined(__x86_64__)
#define CS_VDSO_CLOCK_GETTIME	"__vdso_clock_gettime"
#endif
typedef int (*vdso_clock_fn)(clockid_t clk, struct timespec *ts);
static vdso_clock_fn vdso_clock_gettime;

/* --- the thread page of the benchmarking thread --- */

/*
 * The page the snapshot rows read: this thread's coarse_stat page, or, on a
 * kernel without it, a page-aligned stand-in with the same layout, so that
 * the copy floor can still be measured.
 */
static struct cs_map bench_map = { .fd = -1 };
static const struct coarse_stat_thread_page *bench_pg;
static struct coarse_stat_thread_page *fake_pg;

/* Why a setup function failed, if strerror() would not say. */
static const char *setup_why;

static int no_cs(void)
{
	setup_why = "no coarse_stat in this kernel";
	return -EOPNOTSUPP;
}

static int setup_page(void)
{
	void *p;

	if (bench_pg && bench_pg != fake_pg)
		return 0;
	if (have_cs && !cs_map_thread(&bench_map)) {
		bench_pg = cs_thread_page(&bench_map);
		return 0;
	}
	if (!fake_pg) {
		p = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		fake_pg = p;
		fake_pg->hdr.magic = COARSE_STAT_MAGIC;
		fake_pg->hdr.kind = COARSE_STAT_KIND_THREAD;
		fake_pg->hdr.size = page_size;
	}
	bench_pg = fake_pg;
	return 0;
}

static int setup_vdso(void)
{
	if (!have_cs)
		return no_cs();
	if (!vdso_csf_snap) {
		setup_why = "no __vdso_coarse_stat_snap in the vDSO";
		return -EOPNOTSUPP;
	}
	setup_page();
	return bench_pg == fake_pg ? -ENOENT : 0;
}

/* The current bucket extrapolated to s->time_ns, as the vDSO does. */
static inline void floor_extrapolate(struct cs_vsnap *s)
{
	__u32 state = s->p.state;

	s->flags = 0;
	if (state < COARSE_STAT_NR_BUCKETS) {
		if (s->time_ns > s->p.last_switch_ns)
			s->p.bucket_ns[state] += s->time_ns - s->p.last_switch_ns;
		else
			s->time_ns = s->p.last_switch_ns;
		s->flags = COARSE_STAT_SNAP_EXTRAPOLATED;
	} else {
		s->time_ns = s->p.last_switch_ns;
	}
	s->p.last_switch_ns = s->time_ns;
}

/*
 * The floor: what any reader must do.  The seqcount loop of the UAPI header
 * around a plain structure copy and clock_gettime(CLOCK_MONOTONIC), then the
 * extrapolation of the current bucket, into the same struct cs_vsnap
 * the vDSO fills.
 */
static inline void floor_snap(const struct coarse_stat_thread_page *pg,
			      struct cs_vsnap *s)
{
	__u32 seq;

	do {
		seq = READ_ONCE(pg->seq);
		barrier();
		s->p = *pg;
		s->time_ns = now_ns();
		cs_clock_fence();
	} while ((seq & 1) || seq != READ_ONCE(pg->seq));
	floor_extrapolate(s);
}

/*
 * The same, copying word by word the way the vDSO must (no memcpy(), no
 * string instructions, no vector registers there): separates the cost of
 * the copy method from the cost of the function around it.
 */
static inline void floor_snap_words(const struct coarse_stat_thread_page *pg,
				    struct cs_vsnap *s)
{
	const __u64 *src = (const __u64 *)pg;
	__u64 *dst = (__u64 *)&s->p;
	unsigned int i;
	__u32 seq;

	do {
		seq = READ_ONCE(pg->seq);
		barrier();
		for (i = 0; i < sizeof(*pg) / sizeof(__u64); i++)
			dst[i] = READ_ONCE(src[i]);
		s->time_ns = now_ns();
		cs_clock_fence();
	} while ((seq & 1) || seq != READ_ONCE(pg->seq));
	floor_extrapolate(s);
}

/*
 * The copy floor: the floor's read section without the clock, what copying
 * the page consistently costs by itself (the snapshot's target is a
 * multiple of this plus clock_gettime()).
 */
static inline void copy_snap(const struct coarse_stat_thread_page *pg,
			     struct cs_vsnap *s)
{
	__u32 seq;

	do {
		seq = READ_ONCE(pg->seq);
		barrier();
		s->p = *pg;
		barrier();
	} while ((seq & 1) || seq != READ_ONCE(pg->seq));
}

/* --- perf mmap page --- */

static struct perf_event_mmap_page *perf_pg;
static int perf_fd = -1;
static const char *perf_note = "";

static int perf_open(__u32 type, __u64 config)
{
	struct perf_event_attr attr;
	void *p;
	int fd;

	if (perf_pg)
		munmap(perf_pg, page_size);
	if (perf_fd >= 0)
		close(perf_fd);
	perf_pg = NULL;
	perf_fd = -1;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	p = mmap(NULL, page_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	perf_fd = fd;
	perf_pg = p;
	return 0;
}

static inline __u64 rdpmc(__u32 idx)
{
#ifdef __x86_64__
	__u32 lo, hi;

	asm volatile("rdpmc" : "=a" (lo), "=d" (hi) : "c" (idx));
	return ((__u64)hi << 32) | lo;
#else
	return 0;	/* setup_perf_hw() refuses */
#endif
}

/*
 * The self-read of struct perf_event_mmap_page, as its comment describes:
 * count (with rdpmc when the counter is a PMC this thread may read) and
 * time_enabled/time_running brought up to now with the TSC when
 * cap_user_time is set.
 */
static inline __u64 perf_self_read(const struct perf_event_mmap_page *pc)
{
	__u64 count, enabled, running, cyc = 0, offset = 0, pmc, quot, rem;
	__u32 seq, idx, width, mult = 0;
	__u16 shift = 0;
	bool time;

	do {
		seq = READ_ONCE(pc->lock);
		barrier();
		enabled = pc->time_enabled;
		running = pc->time_running;
		time = pc->cap_user_time;
		if (time) {
			cyc = rdtsc_plain();
			offset = pc->time_offset;
			mult = pc->time_mult;
			shift = pc->time_shift;
		}
		idx = pc->index;
		count = pc->offset;
		if (pc->cap_user_rdpmc && idx) {
			width = pc->pmc_width;
			pmc = rdpmc(idx - 1);
			pmc <<= 64 - width;
			count += (__s64)pmc >> (64 - width);
		}
		barrier();
	} while (READ_ONCE(pc->lock) != seq);
	if (time) {
		quot = cyc >> shift;
		rem = cyc & (((__u64)1 << shift) - 1);
		enabled += offset + quot * mult + ((rem * mult) >> shift);
		running = enabled;
	}
	return count + enabled + running;
}

static int setup_perf_sw(void)
{
	int ret = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);

	if (ret)
		return ret;
	perf_self_read(perf_pg);
	perf_note = perf_pg->cap_user_time ? "task-clock, time via TSC" :
		"task-clock; no cap_user_time: page values only, no TSC read";
	return 0;
}

static int setup_perf_hw(void)
{
	int ret;

#ifndef __x86_64__
	return -EOPNOTSUPP;
#endif
	ret = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);

	if (ret)
		return ret;
	/* The counter gets its index when it is scheduled in. */
	usleep(1000);
	if (!perf_pg->cap_user_rdpmc || !READ_ONCE(perf_pg->index))
		return -EPERM;
	perf_note = perf_pg->cap_user_time ? "cycles with rdpmc, time via TSC" :
		"cycles with rdpmc; no cap_user_time";
	return 0;
}

/* --- /proc files and the syscall bundle --- */

static int schedstat_fd = -1, io_fd = -1;

static int setup_proc(void)
{
	char buf[256];

	if (schedstat_fd < 0)
		schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (schedstat_fd < 0 || pread(schedstat_fd, buf, sizeof(buf), 0) <= 0)
		return -ENOENT;
	return 0;
}

static int setup_bundle(void)
{
	char buf[512];

	if (setup_proc())
		return -ENOENT;
	if (io_fd < 0)
		io_fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
	if (io_fd < 0 || pread(io_fd, buf, sizeof(buf), 0) <= 0)
		return -ENOENT;
	return 0;
}

/* --- the loops: each runs its call @n times --- */

static void run_rdtscp(unsigned long n)
{
	__u64 acc = 0;
	__u32 aux;

	if (have_rdtscp) {
		while (n--)
			acc += rdtscp_aux(&aux);
	} else {
		while (n--)
			acc += lfence_rdtsc();
	}
	use_val(acc);
}

static void run_floor(unsigned long n)
{
	struct cs_vsnap s;

	while (n--) {
		floor_snap(bench_pg, &s);
		use_mem(&s);
	}
}

static void run_floor_words(unsigned long n)
{
	struct cs_vsnap s;

	while (n--) {
		floor_snap_words(bench_pg, &s);
		use_mem(&s);
	}
}

static void run_copy(unsigned long n)
{
	struct cs_vsnap s;

	while (n--) {
		copy_snap(bench_pg, &s);
		use_mem(&s);
	}
}

static void run_vdso(unsigned long n)
{
	struct cs_vsnap s;
	int acc = 0;

	while (n--) {
		acc |= vdso_vsnap(bench_pg, &s);
		use_mem(&s);
	}
	use_val(acc);
}

static int setup_lib(void)
{
	struct csf_snap s;

	if (!have_cs)
		return no_cs();
	if (csf_thread_snap(&s))
		return -errno;
	return 0;
}

static void run_lib(unsigned long n)
{
	struct csf_snap s;
	int acc = 0;

	while (n--) {
		acc |= csf_thread_snap(&s);
		use_mem(&s);
	}
	use_val(acc);
}

static void run_perf(unsigned long n)
{
	__u64 acc = 0;

	while (n--)
		acc += perf_self_read(perf_pg);
	use_val(acc);
}

static void run_clock(clockid_t clk, unsigned long n)
{
	struct timespec ts;

	while (n--) {
		clock_gettime(clk, &ts);
		use_mem(&ts);
	}
}

static void run_mono(unsigned long n)
{
	run_clock(CLOCK_MONOTONIC, n);
}

static int setup_vdso_clock(void)
{
	if (!vdso_clock_gettime) {
		setup_why = "no clock_gettime() of the vDSO found";
		return -EOPNOTSUPP;
	}
	return 0;
}

static void run_vdso_mono(unsigned long n)
{
	struct timespec ts;
	int acc = 0;

	while (n--) {
		acc |= vdso_clock_gettime(CLOCK_MONOTONIC, &ts);
		use_mem(&ts);
	}
	use_val(acc);
}

static void run_thread_cputime(unsigned long n)
{
	run_clock(CLOCK_THREAD_CPUTIME_ID, n);
}

static void run_rusage(unsigned long n)
{
	struct rusage ru;

	while (n--) {
		getrusage(RUSAGE_THREAD, &ru);
		use_mem(&ru);
	}
}

static void run_pread_schedstat(unsigned long n)
{
	char buf[256];
	long acc = 0;

	while (n--)
		acc += pread(schedstat_fd, buf, sizeof(buf), 0);
	use_val(acc);
}

static void run_open_schedstat(unsigned long n)
{
	char buf[256];
	long acc = 0;
	int fd;

	while (n--) {
		fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
		acc += read(fd, buf, sizeof(buf));
		close(fd);
	}
	use_val(acc);
}

static void run_bundle(unsigned long n)
{
	char buf[512];
	struct timespec ts;
	struct rusage ru;
	long acc = 0;

	while (n--) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		getrusage(RUSAGE_THREAD, &ru);
		acc += pread(schedstat_fd, buf, sizeof(buf), 0);
		acc += pread(io_fd, buf, sizeof(buf), 0);
		use_mem(&ts);
		use_mem(&ru);
	}
	use_val(acc);
}

/* --- the harness --- */

struct row {
	const char *id;		/* for -t */
	const char *desc;
	int (*setup)(void);	/* 0 or -errno (row skipped); also run in the seccomp child */
	void (*run)(unsigned long n);
	int syscalls;		/* per call; -1: none expected, checked with seccomp */
	/* results */
	const char *skip;
	char note[96];
	char sys[24];
	unsigned long n;
	double ns[MAX_REPS];
	double med, min, max;
};

static struct row snap_rows[] = {
	{ "rdtscp", "rdtscp (bare)", NULL, run_rdtscp, -1 },
	{ "copy", "seqcount copy of the page in C, no clock (copy floor)", setup_page,
	  run_copy, -1 },
	{ "floor", "seqcount copy of the page + clock_gettime in C (floor)", setup_page,
	  run_floor, -1 },
	{ "floor_words", "the same, copying u64 by u64 as the vDSO must", setup_page,
	  run_floor_words, -1 },
	{ "vdso_csf_snap", "__vdso_coarse_stat_snap()", setup_vdso, run_vdso, -1 },
	{ "lib_csf_thread_snap", "csf_thread_snap() (library)", setup_lib, run_lib, -1 },
	{ "perf_mmap_sw", "perf mmap page self-read", setup_perf_sw, run_perf, -1 },
	{ "perf_mmap_hw", "perf mmap page self-read + rdpmc (HW cycles)", setup_perf_hw,
	  run_perf, -1 },
	{ "vdso_clock_mono", "the vDSO's clock_gettime(CLOCK_MONOTONIC), called directly",
	  setup_vdso_clock, run_vdso_mono, -1 },
	{ "clock_mono", "clock_gettime(CLOCK_MONOTONIC)", NULL, run_mono, -1 },
	{ "clock_thread", "clock_gettime(CLOCK_THREAD_CPUTIME_ID)", NULL, run_thread_cputime, 1 },
	{ "getrusage", "getrusage(RUSAGE_THREAD)", NULL, run_rusage, 1 },
	{ "pread_schedstat", "pread(/proc/thread-self/schedstat), fd kept open", setup_proc,
	  run_pread_schedstat, 1 },
	{ "open_schedstat", "open+read+close /proc/thread-self/schedstat", setup_proc,
	  run_open_schedstat, 3 },
	{ "syscall_bundle", "same fields by syscalls: THREAD_CPUTIME+getrusage+schedstat+io",
	  setup_bundle, run_bundle, 4 },
};

static struct row *find_row(const char *id)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(snap_rows); i++)
		if (!strcmp(snap_rows[i].id, id))
			return &snap_rows[i];
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, min and max of @v[0..@n-1] (sorted in place). */
static void stats(double *v, int n, double *med, double *min, double *max)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*min = v[0];
	*max = v[n - 1];
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double time_row(struct row *r, unsigned long n)
{
	__u64 t0 = now_ns();

	r->run(n);
	return (double)(now_ns() - t0) / n;
}

/* Iterations for one repetition of about target_ns; also the warm-up. */
static unsigned long calibrate(struct row *r)
{
	unsigned long n = 4;
	double ns;

	for (;;) {
		ns = time_row(r, n) * n;
		if (ns >= target_ns / 8 || n >= 1UL << 28)
			break;
		n *= 2;
	}
	n = (double)n * target_ns / (ns > 1 ? ns : 1);
	return n ? n : 1;
}

static int seccomp_kill_all_but_exit(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CS_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}

/*
 * Run @r 1000 times in a child under a seccomp filter that kills the process
 * on any system call but exit_group: surviving proves 0 system calls.
 */
static void check_no_syscall(struct row *r)
{
	struct rlimit no_core = { 0, 0 };
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(r->sys, sizeof(r->sys), "? (fork)");
		return;
	}
	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &no_core);
		/* Mappings are not inherited (VM_DONTCOPY): set up anew. */
		bench_pg = NULL;
		perf_pg = NULL;
		if (r->setup && r->setup())
			_exit(2);
		r->run(16);
		if (seccomp_kill_all_but_exit())
			_exit(3);
		r->run(1000);
		syscall(__NR_exit_group, 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		snprintf(r->sys, sizeof(r->sys), "?");
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		snprintf(r->sys, sizeof(r->sys), "0 (seccomp)");
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
		snprintf(r->sys, sizeof(r->sys), ">=1 (seccomp)");
	else if (WIFSIGNALED(status))
		snprintf(r->sys, sizeof(r->sys), "? (%s)", strsignal(WTERMSIG(status)));
	else
		snprintf(r->sys, sizeof(r->sys), "? (exit %d)", WEXITSTATUS(status));
}

/* Whether @id is one of the comma-separated words of @list. */
static bool in_list(const char *list, const char *id)
{
	size_t len = strlen(id);
	const char *p;

	for (p = list; (p = strstr(p, id)); p += len)
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

static void bench_snapshots(void)
{
	unsigned int i;
	int rep, ret;

	for (i = 0; i < ARRAY_SIZE(snap_rows); i++) {
		struct row *r = &snap_rows[i];

		if (opt_rows && !in_list(opt_rows, r->id)) {
			r->skip = "not selected (-o)";
			continue;
		}
		if (r->setup) {
			setup_why = NULL;
			ret = r->setup();
			if (ret) {
				r->skip = setup_why ? setup_why : strerror(-ret);
				continue;
			}
		}
		if (r->run == run_perf)
			snprintf(r->note, sizeof(r->note), "%s", perf_note);
		r->n = calibrate(r);
		if (r->syscalls < 0)
			check_no_syscall(r);
		else
			snprintf(r->sys, sizeof(r->sys), "%d", r->syscalls);
	}
	/*
	 * Repetitions outside, rows inside: a change of the machine's load
	 * hits every row alike.  The perf rows share one event, so each row
	 * re-opens its own when its turn comes.
	 */
	for (rep = -1; rep < opt_reps; rep++) {
		for (i = 0; i < ARRAY_SIZE(snap_rows); i++) {
			struct row *r = &snap_rows[i];
			double ns;

			if (r->skip)
				continue;
			if (r->run == run_perf)
				r->setup();
			ns = time_row(r, r->n);
			if (rep >= 0)
				r->ns[rep] = ns;
		}
	}
	for (i = 0; i < ARRAY_SIZE(snap_rows); i++) {
		struct row *r = &snap_rows[i];

		if (!r->skip)
			stats(r->ns, opt_reps, &r->med, &r->min, &r->max);
	}
}

static void snap_flags_note(void)
{
	struct cs_vsnap s;
	struct row *r = find_row("vdso_csf_snap");

	if (r->skip)
		return;
	memset(&s, 0, sizeof(s));
	if (vdso_vsnap(bench_pg, &s)) {
		snprintf(r->note, sizeof(r->note), "returned an error!");
		return;
	}
	snprintf(r->note, sizeof(r->note), "snap.flags %s%s",
		 s.flags & COARSE_STAT_SNAP_EXTRAPOLATED ? "EXTRAPOLATED" : "not extrapolated!",
		 s.flags & COARSE_STAT_SNAP_SYSCALL ? "|SYSCALL: the clock by system call" : "");
}

static double ratio(const struct row *r, const char *to)
{
	const struct row *b = find_row(to);

	if (r->skip || !b || b->skip || b->med <= 0)
		return 0;
	return r->med / b->med;
}

static void print_snapshots(void)
{
	unsigned int i;

	if (opt_tsv) {
		for (i = 0; i < ARRAY_SIZE(snap_rows); i++) {
			struct row *r = &snap_rows[i];

			if (r->skip) {
				printf("snap\t%s\tns\t-\t-\t-\t-\t-\t-\t%s (skipped: %s)\n",
				       r->id, r->desc, r->skip);
				continue;
			}
			printf("snap\t%s\tns\t%.2f\t%.2f\t%.2f\t%.3f\t%.3f\t%s\t%s%s%s\n",
			       r->id, r->med, r->min, r->max, ratio(r, "floor"),
			       ratio(r, "rdtscp"), r->sys, r->desc,
			       r->note[0] ? "; " : "", r->note);
		}
		return;
	}
	printf("\na) Snapshot cost, same thread (%d repetitions: median [min .. max])\n\n",
	       opt_reps);
	printf("  x floor  x rdtscp     ns/call  [   min ..    max]  syscalls     what\n");
	for (i = 0; i < ARRAY_SIZE(snap_rows); i++) {
		struct row *r = &snap_rows[i];

		if (r->skip) {
			printf("%65s%s: skipped (%s)\n", "", r->desc, r->skip);
			continue;
		}
		printf("  %7.2f  %8.2f  %10.1f  [%6.1f .. %6.1f]  %-11s  %s%s%s%s\n",
		       ratio(r, "floor"), ratio(r, "rdtscp"), r->med, r->min, r->max,
		       r->sys, r->desc, r->note[0] ? " (" : "", r->note,
		       r->note[0] ? ")" : "");
	}
	if (!have_rdtscp)
		printf("  (no rdtscp on this CPU: \"rdtscp\" rows use lfence; rdtsc)\n");
	if (bench_pg == fake_pg)
		printf("  (no coarse_stat page: the floor copies a stand-in of the same size)\n");
}

/* --- targets --- */

static void goal(const char *what, double value, const char *op, double limit,
		 const char *unit, bool ok)
{
	const char *verdict = ok ? "met" : "MISSED";

	if (opt_tsv)
		printf("target\t%s\t%s\t%.3f\t-\t-\t%s %g\t-\t-\t%s\n",
		       what, unit, value, op, limit, verdict);
	else
		printf("  %-44s %8.2f%s  (target %s %g%s)  %s\n",
		       what, value, unit, op, limit, unit, verdict);
}

static void print_snap_targets(void)
{
	struct row *v = find_row("vdso_csf_snap"), *l = find_row("lib_csf_thread_snap");
	double f = ratio(v, "floor");
	double t = ratio(find_row("clock_thread"), "vdso_csf_snap");
	double b = ratio(find_row("syscall_bundle"), "vdso_csf_snap");
	struct row *cp = find_row("copy"), *clk = find_row("vdso_clock_mono");

	if (v->skip)
		return;
	if (!opt_tsv)
		printf("\n  targets:\n");
	goal("csf_snap / floor", f, "<=", 1.05, "x", f <= 1.05);
	/* The vDSO's clock where it was called directly, else the C library's. */
	if (clk->skip)
		clk = find_row("clock_mono");
	if (!cp->skip && !clk->skip && cp->med + clk->med > 0) {
		double g = v->med / (clk->med + cp->med);

		goal("csf_snap / (clock_gettime + copy floor)", g, "<=", 1.2, "x", g <= 1.2);
	}
	if (!l->skip) {
		double lf = ratio(l, "floor");

		goal("csf_thread_snap / floor", lf, "<=", 1.1, "x", lf <= 1.1);
	}
	if (t > 0)
		goal("CLOCK_THREAD_CPUTIME_ID / csf_snap", t, ">=", 10, "x", t >= 10);
	if (b > 0)
		goal("syscall bundle / csf_snap", b, ">=", 40, "x", b >= 40);
}

/* --- b) context switches --- */

static long futex(int *uaddr, int op, int val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

static void ping(int *w, unsigned long n)
{
	while (n--) {
		__atomic_store_n(w, 1, __ATOMIC_RELEASE);
		futex(w, FUTEX_WAKE_PRIVATE, 1);
		while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == 1)
			futex(w, FUTEX_WAIT_PRIVATE, 1);
	}
}

static void pong(int *w, unsigned long n)
{
	while (n--) {
		while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == 0)
			futex(w, FUTEX_WAIT_PRIVATE, 0);
		__atomic_store_n(w, 0, __ATOMIC_RELEASE);
		futex(w, FUTEX_WAKE_PRIVATE, 1);
	}
}

/*
 * The pairs are started and collected through eventfds, not a pthread
 * barrier: a thread waiting in pthread_barrier_wait() waits on a futex, and
 * a process's private futex hash has 16 buckets (7.3, two CPUs), so the
 * running pair's word often shares a bucket with a waiter of another pair
 * or of the main thread, and every wakeup walks past it: tens of
 * instructions per switch, in some boots and not in others, whatever the
 * kernel.  With eventfds, the ping-pong's own waiter is the only futex
 * waiter of the process while a pair runs.
 */
static void pp_post(int fd)
{
	__u64 one = 1;

	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static void pp_wait(int fd)
{
	__u64 v;

	while (read(fd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
}

struct pp;

struct pp_arg {
	struct pp	*pp;
	int		idx;
};

/* A pair of ping-pong threads, kept for all repetitions. */
struct pp {
	const char	*id;
	const char	*desc;
	bool		two;		/* on two CPUs, else both on one */
	bool		reg;		/* both threads registered */
	bool		keyoff;		/* -i only: before anything registers */
	unsigned int	unreg;		/* index of the pair to compare with */
	int		cpu[2];
	unsigned long	nrounds;	/* round trips per repetition */
	/* control: eventfds, not a barrier (pp_post()) */
	int		go[2];
	int		done;
	struct pp_arg	arg[2];
	pthread_t	th[2];
	bool		quit;
	int		err;
	unsigned long	rounds;
	int		word;
	__u64		ns;
	__u64		switch_in[2];
	/* results */
	const char	*skip;
	double		res[MAX_REPS];
	double		med, min, max;
	double		switches_per_rt;
};

static void *pp_thread(void *data)
{
	struct pp_arg *a = data;
	struct pp *pp = a->pp;
	const struct coarse_stat_thread_page *pg = NULL;
	struct cs_map m = { .fd = -1 };
	cpu_set_t set;
	__u64 t0, before = 0;

	if (pp->cpu[a->idx] >= 0) {
		CPU_ZERO(&set);
		CPU_SET(pp->cpu[a->idx], &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			__atomic_store_n(&pp->err, errno, __ATOMIC_RELAXED);
	}
	if (pp->reg) {
		if (cs_map_thread(&m))
			__atomic_store_n(&pp->err, errno, __ATOMIC_RELAXED);
		else
			pg = cs_thread_page(&m);
	}
	for (;;) {
		pp_wait(pp->go[a->idx]);
		if (pp->quit)
			break;
		if (pg)
			before = READ_ONCE(pg->nr_switch_in);
		if (a->idx == 0) {
			t0 = now_ns();
			ping(&pp->word, pp->rounds);
			pp->ns = now_ns() - t0;
		} else {
			pong(&pp->word, pp->rounds);
		}
		if (pg)
			pp->switch_in[a->idx] = READ_ONCE(pg->nr_switch_in) - before;
		pp_post(pp->done);
	}
	cs_unmap(&m);
	return NULL;
}

static void pp_close(struct pp *pp)
{
	int *fds[] = { &pp->go[0], &pp->go[1], &pp->done };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static int pp_start(struct pp *pp)
{
	int i;

	/* done counts finished threads: each read takes one. */
	pp->done = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	pp->go[0] = eventfd(0, EFD_CLOEXEC);
	pp->go[1] = eventfd(0, EFD_CLOEXEC);
	if (pp->done < 0 || pp->go[0] < 0 || pp->go[1] < 0) {
		pp_close(pp);
		return -EMFILE;
	}
	for (i = 0; i < 2; i++) {
		pp->arg[i].pp = pp;
		pp->arg[i].idx = i;
		if (pthread_create(&pp->th[i], NULL, pp_thread, &pp->arg[i])) {
			/* Let a first thread go, and end before it pings. */
			pp->quit = true;
			if (i) {
				pp_post(pp->go[0]);
				pthread_join(pp->th[0], NULL);
			}
			pp_close(pp);
			return -EAGAIN;
		}
	}
	return 0;
}

/* One repetition: ns per switch (a round trip is two switches). */
static double pp_run(struct pp *pp, unsigned long rounds)
{
	pp->rounds = rounds;
	pp->word = 0;
	pp_post(pp->go[0]);
	pp_post(pp->go[1]);
	pp_wait(pp->done);
	pp_wait(pp->done);
	if (pp->reg)
		pp->switches_per_rt = (double)(pp->switch_in[0] + pp->switch_in[1]) / rounds;
	return (double)pp->ns / (2.0 * rounds);
}

static void pp_stop(struct pp *pp)
{
	pp->quit = true;
	pp_post(pp->go[0]);
	pp_post(pp->go[1]);
	pthread_join(pp->th[0], NULL);
	pthread_join(pp->th[1], NULL);
	pp_close(pp);
}

static struct pp pps[] = {
	{ "1cpu_unreg", "1 CPU, unregistered", .unreg = 0 },
	{ "1cpu_reg", "1 CPU, both registered", .reg = true, .unreg = 0 },
	{ "2cpu_unreg", "2 CPUs, unregistered", .two = true, .unreg = 2 },
	{ "2cpu_reg", "2 CPUs, both registered", .two = true, .reg = true, .unreg = 2 },
	/* -i only, run first: no thread registered, the static key off */
	{ "1cpu_keyoff", "1 CPU, no thread registered (key off)", .keyoff = true, .unreg = 4 },
	{ "2cpu_keyoff", "2 CPUs, no thread registered (key off)", .two = true, .keyoff = true,
	  .unreg = 5 },
};

#define NR_KEYON	4	/* pps[] from NR_KEYON on: the key-off pairs */

/* The debugfs count of the coarse_stat static key; -1 where there is none. */
static long long key_keyoff = -1, key_keyon = -1;

static long long key_count(void)
{
	long long v = -1;

	return cs_debugfs_stat("key", &v) ? -1 : v;
}

/*
 * Start the pairs pps[first .. last), run them opt_reps times, interleaved,
 * and stop them.  Returns the debugfs key count seen while they ran.
 */
static long long bench_pairs(unsigned int first, unsigned int last, const int *cpus, int nr)
{
	unsigned int i, j, n = last - first;
	long long key;
	int rep;

	for (i = first; i < last; i++) {
		struct pp *pp = &pps[i];

		pp->cpu[0] = cpus[0];
		pp->cpu[1] = pp->two ? cpus[1] : cpus[0];
		if (pp->two && nr < 2) {
			pp->skip = "fewer than 2 CPUs";
			continue;
		}
		if (pp->reg && !have_cs) {
			pp->skip = "no coarse_stat in this kernel";
			continue;
		}
		if (pp_start(pp)) {
			pp->skip = "could not start the pair";
			continue;
		}
	}
	key = key_count();
	/* Calibrate on the unregistered pairs; the registered ones use the same rounds. */
	for (i = first; i < last; i++) {
		struct pp *pp = &pps[i];
		double ns;

		if (pp->skip || pp->reg)
			continue;
		if (opt_rounds) {
			pp->nrounds = opt_rounds;
			continue;
		}
		pp_run(pp, 200);
		ns = pp_run(pp, 1000) * 2;
		pp->nrounds = target_ns * 10 / (ns > 1 ? ns : 1);
		if (pp->nrounds < 100)
			pp->nrounds = 100;
	}
	for (i = first; i < last; i++)
		if (pps[i].reg)
			pps[i].nrounds = pps[pps[i].unreg].nrounds;
	/* Every other repetition in reverse order: no pair always goes first. */
	for (rep = -1; rep < opt_reps; rep++) {
		for (j = 0; j < n; j++) {
			struct pp *pp = &pps[first + (rep & 1 ? n - 1 - j : j)];
			double ns;

			if (pp->skip || !pp->nrounds)
				continue;
			ns = pp_run(pp, pp->nrounds);
			if (rep >= 0)
				pp->res[rep] = ns;
		}
	}
	if (key_count() > key)
		key = key_count();
	for (i = first; i < last; i++) {
		struct pp *pp = &pps[i];

		if (pp->skip)
			continue;
		pp_stop(pp);
		if (pp->err) {
			pp->skip = strerror(pp->err);
			continue;
		}
		if (!pp->nrounds) {
			pp->skip = "its unregistered pair did not run";
			continue;
		}
		stats(pp->res, opt_reps, &pp->med, &pp->min, &pp->max);
	}
	return key;
}

static void probe_cs(void)
{
	struct cs_map probe;

	cs_allow_registrations();
	if (!cs_map_thread(&probe)) {
		have_cs = true;
		cs_unmap(&probe);
	}
}

static void bench_switch(void)
{
	int cpus[2] = { -1, -1 }, nr = 0, c;
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (c = 0; c < CPU_SETSIZE && nr < 2; c++)
			if (CPU_ISSET(c, &set))
				cpus[nr++] = c;
	}
	if (opt_rounds) {
		/*
		 * Key off: nobody has allowed registrations since the boot
		 * (kernel.coarse_stat_thread, which probe_cs() sets), if
		 * debugfs shows the key.
		 */
		if (key_count() > 0) {
			key_keyoff = key_count();
			pps[NR_KEYON].skip = "the key is on: registrations allowed since boot";
			pps[NR_KEYON + 1].skip = pps[NR_KEYON].skip;
		} else {
			key_keyoff = bench_pairs(NR_KEYON, ARRAY_SIZE(pps), cpus, nr);
		}
		probe_cs();
	}
	key_keyon = bench_pairs(0, NR_KEYON, cpus, nr);
}

static void print_switch(void)
{
	unsigned int i;

	if (!opt_tsv) {
		printf("\nb) Context switch, futex ping-pong between two threads");
		if (opt_rounds)
			printf(" (%d repetitions of %lu round trips)\n\n", opt_reps, opt_rounds);
		else
			printf(" (%d repetitions)\n\n", opt_reps);
		printf("  x unreg   ns/switch  [   min ..    max]  switch-ins/round trip  what\n");
	}
	for (i = 0; i < ARRAY_SIZE(pps); i++) {
		struct pp *pp = &pps[i];
		struct pp *base = &pps[pp->unreg];
		double x = 0;

		if (pp->keyoff && !opt_rounds)
			continue;
		if (!pp->skip && !base->skip && base->med > 0)
			x = pp->med / base->med;
		if (opt_tsv) {
			if (pp->skip)
				printf("switch\t%s\tns\t-\t-\t-\t-\t-\t-\t%s (skipped: %s)\n",
				       pp->id, pp->desc, pp->skip);
			else
				printf("switch\t%s\tns\t%.1f\t%.1f\t%.1f\t%.4f\t-\t-\t%s\n",
				       pp->id, pp->med, pp->min, pp->max, x, pp->desc);
			continue;
		}
		if (pp->skip) {
			printf("%73s%s: skipped (%s)\n", "", pp->desc, pp->skip);
			continue;
		}
		if (pp->reg)
			printf("  %7.4f  %10.1f  [%6.1f .. %6.1f]  %21.2f  %s\n", x, pp->med,
			       pp->min, pp->max, pp->switches_per_rt, pp->desc);
		else
			printf("  %7.4f  %10.1f  [%6.1f .. %6.1f]  %21s  %s\n", x, pp->med,
			       pp->min, pp->max, "", pp->desc);
	}
	if (!opt_tsv && (!pps[1].skip || !pps[3].skip))
		printf("\n  targets%s:\n", opt_rounds ? " (least of the repetitions)" : "");
	for (i = 0; i < ARRAY_SIZE(pps); i++) {
		struct pp *pp = &pps[i], *base = &pps[pp->unreg];
		double pct, v, b;
		char what[64];

		if (!pp->reg || pp->skip || base->skip || base->med <= 0)
			continue;
		/* Under -i the figures are exact up to interrupts, which only add. */
		v = opt_rounds ? pp->min : pp->med;
		b = opt_rounds ? base->min : base->med;
		pct = 100.0 * (v - b) / b;
		snprintf(what, sizeof(what), "registered switch overhead, %s",
			 pp->two ? "2 CPUs" : "1 CPU");
		goal(what, pct, "<=", 1.5, "%", pct <= 1.5);
	}
}

/* --- c) scale --- */

struct meminfo {
	long long free_b;	/* free pages, per-CPU lists included */
	long long slab_b;
	long long pagetables_b;
};

/*
 * Free memory counted exactly enough to see one page per thread: fold the
 * per-CPU counter deltas first (vm.stat_refresh, root only), and add the
 * pages cached on the per-CPU free lists, which MemFree leaves out
 * (/proc/zoneinfo "count:" lines).
 */
static int read_meminfo(struct meminfo *mi)
{
	char line[256];
	long long v;
	__u64 slab, pt;
	FILE *f;
	int fd;

	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* If this fails, the counters lag by a few pages per CPU. */
		if (write(fd, "1\n", 2) != 2)
			errno = 0;
		close(fd);
	}
	if (cs_proc_key("/proc/meminfo", "Slab", &slab) ||
	    cs_proc_key("/proc/meminfo", "PageTables", &pt))
		return -1;
	mi->slab_b = slab * 1024;
	mi->pagetables_b = pt * 1024;
	mi->free_b = 0;
	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " pages free %lld", &v) == 1 ||
		    sscanf(line, " count: %lld", &v) == 1)
			mi->free_b += v * page_size;
	}
	fclose(f);
	return 0;
}

/* Let freed objects reach their lists (RCU) before counting. */
static void settle_and_read(struct meminfo *mi)
{
	usleep(200000);
	read_meminfo(mi);
}

static double reg_ns[MAX_REPS], rel_ns[MAX_REPS];
static int reg_err;

/* In a thread that never registered: register, snapshot, release, repeatedly. */
static void *reg_thread(void *unused)
{
	unsigned long k = opt_quick ? 100 : 400, i;
	struct cs_vsnap s;
	__u64 t0, t1, t2, reg, rel;
	struct cs_map m;
	int rep;

	for (rep = -1; rep < opt_reps; rep++) {
		reg = 0;
		rel = 0;
		for (i = 0; i < k; i++) {
			t0 = now_ns();
			if (cs_map_thread(&m)) {
				reg_err = errno;
				return NULL;
			}
			if (vdso_csf_snap)
				vdso_vsnap(cs_thread_page(&m), &s);
			else
				floor_snap(cs_thread_page(&m), &s);
			use_mem(&s);
			t1 = now_ns();
			cs_unmap(&m);
			t2 = now_ns();
			reg += t1 - t0;
			rel += t2 - t1;
		}
		if (rep >= 0) {
			reg_ns[rep] = (double)reg / k;
			rel_ns[rep] = (double)rel / k;
		}
	}
	return NULL;
}

struct mem_ctl {
	pthread_barrier_t bar;
	int err;
};

static void *mem_thread(void *data)
{
	struct mem_ctl *ctl = data;
	struct cs_map m = { .fd = -1 };

	pthread_barrier_wait(&ctl->bar);	/* all created */
	pthread_barrier_wait(&ctl->bar);	/* go */
	if (cs_map_thread(&m))
		__atomic_add_fetch(&ctl->err, 1, __ATOMIC_RELAXED);
	else
		use_val(READ_ONCE(cs_thread_page(&m)->seq));
	pthread_barrier_wait(&ctl->bar);	/* registered */
	pthread_barrier_wait(&ctl->bar);	/* release */
	cs_unmap(&m);
	pthread_barrier_wait(&ctl->bar);	/* released */
	pthread_barrier_wait(&ctl->bar);	/* counted: may exit */
	return NULL;
}

static void print_scale_row(const char *id, const char *unit, double med, double min,
			    double max, const char *desc)
{
	if (opt_tsv)
		printf("scale\t%s\t%s\t%.1f\t%.1f\t%.1f\t-\t-\t-\t%s\n", id, unit, med, min, max,
		       desc);
	else
		printf("  %12.1f %-5s [%9.1f .. %9.1f]  %s\n", med, unit, min, max, desc);
}

/* A single measurement: no median, min or max. */
static void print_mem_row(const char *id, double bytes, const char *desc)
{
	if (opt_tsv)
		printf("scale\t%s\tB\t%.0f\t-\t-\t-\t-\t-\t%s\n", id, bytes, desc);
	else
		printf("  %12.0f %-5s %26s  %s\n", bytes, "B", "", desc);
}

static void bench_scale(void)
{
	struct meminfo m0, m1, m2;
	long long th0 = -1, th1 = -1;
	struct mem_ctl ctl;
	pthread_attr_t attr;
	pthread_t *th, t;
	double med, min, max;
	int i, nr;

	if (!opt_tsv)
		printf("\nc) Scale\n\n");
	if (pthread_create(&t, NULL, reg_thread, NULL) == 0)
		pthread_join(t, NULL);
	if (reg_err) {
		if (!opt_tsv)
			printf("  registration failed: %s\n", strerror(reg_err));
	} else {
		stats(reg_ns, opt_reps, &med, &min, &max);
		print_scale_row("register", "ns", med, min, max,
				"register: prctl + fstat + mmap + first snapshot");
		stats(rel_ns, opt_reps, &med, &min, &max);
		print_scale_row("release", "ns", med, min, max, "release: munmap + close");
	}

	nr = opt_mem_threads;
	setup_page();
	th = calloc(nr, sizeof(*th));
	if (!th)
		return;
	memset(&ctl, 0, sizeof(ctl));
	pthread_barrier_init(&ctl.bar, NULL, nr + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (i = 0; i < nr; i++) {
		if (pthread_create(&th[i], &attr, mem_thread, &ctl)) {
			fprintf(stderr, "cs_bench: only %d threads; memory test skipped\n", i);
			/* The barrier waits for nr + 1: cannot continue. */
			exit(1);
		}
	}
	pthread_barrier_wait(&ctl.bar);
	cs_debugfs_stat("threads", &th0);
	settle_and_read(&m0);
	pthread_barrier_wait(&ctl.bar);
	pthread_barrier_wait(&ctl.bar);
	cs_debugfs_stat("threads", &th1);
	settle_and_read(&m1);
	pthread_barrier_wait(&ctl.bar);
	pthread_barrier_wait(&ctl.bar);
	settle_and_read(&m2);
	pthread_barrier_wait(&ctl.bar);
	for (i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	pthread_attr_destroy(&attr);
	pthread_barrier_destroy(&ctl.bar);
	free(th);
	if (ctl.err) {
		if (!opt_tsv)
			printf("  %d of %d threads failed to register\n", ctl.err, nr);
		return;
	}
	print_mem_row("mem_page", bench_pg->hdr.size, "per registered thread: the page (hdr.size)");
	print_mem_row("mem_total", (double)(m0.free_b - m1.free_b) / nr,
		      "per registered thread: free memory decrease, all of it");
	print_mem_row("mem_slab", (double)(m1.slab_b - m0.slab_b) / nr,
		      "per registered thread: of which Slab");
	print_mem_row("mem_pagetables", (double)(m1.pagetables_b - m0.pagetables_b) / nr,
		      "per registered thread: of which PageTables");
	print_mem_row("mem_left", (double)(m0.free_b - m2.free_b) / nr,
		      "per thread, still not free after release (leak check)");
	if (opt_tsv)
		return;
	printf("  (%d threads registered at once", nr);
	if (th0 >= 0 && th1 >= 0)
		printf("; debugfs threads %lld -> %lld", th0, th1);
	printf(")\n");
}

/* --- main --- */

static void print_meta(void)
{
	char model[256] = "?", cs[64] = "?";
	struct utsname u;
	FILE *f;

	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[512];

		while (fgets(line, sizeof(line), f)) {
			char *p = strchr(line, ':');

			if (!strncmp(line, "model name", 10) && p) {
				snprintf(model, sizeof(model), "%s", p + 2);
				model[strcspn(model, "\n")] = 0;
				break;
			}
		}
		fclose(f);
	}
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (fgets(cs, sizeof(cs), f))
			cs[strcspn(cs, "\n")] = 0;
		fclose(f);
	}
	uname(&u);
	if (opt_tsv) {
		printf("#meta\tkernel\t%s %s\n", u.release, u.version);
		printf("#meta\tcpu\t%s\n", model);
		printf("#meta\tnr_cpus\t%ld\n", sysconf(_SC_NPROCESSORS_ONLN));
		printf("#meta\tclocksource\t%s\n", cs);
		printf("#meta\trdtscp\t%s\n", have_rdtscp ? "yes" : "no");
		printf("#meta\tcoarse_stat\t%s\n", have_cs ? "yes" : "no");
		printf("#meta\tvdso_csf_snap\t%s\n", vdso_csf_snap ? "yes" : "no");
		printf("#meta\treps\t%d\n", opt_reps);
		printf("#meta\tquick\t%d\n", opt_quick);
		if (opt_rounds) {
			printf("#meta\trounds\t%lu\n", opt_rounds);
			printf("#meta\tns_per_insn\t%.5f\n", ns_per_insn);
			printf("#meta\ttsc_per_insn\t%.5f\n", tsc_per_insn);
			printf("#meta\tkey_keyoff\t%lld\n", key_keyoff);
			printf("#meta\tkey_keyon\t%lld\n", key_keyon);
		}
		printf("#section\tid\tunit\tmedian\tmin\tmax\t%s\tx_rdtscp\tsyscalls\t%s\n",
		       "x_floor_or_x_unreg", "description");
		return;
	}
	printf("cs_bench: kernel %s, CPU %s, %ld CPUs online, clocksource %s\n",
	       u.release, model, sysconf(_SC_NPROCESSORS_ONLN), cs);
	printf("cs_bench: rdtscp %s, coarse_stat %s, __vdso_coarse_stat_snap %s\n",
	       have_rdtscp ? "yes" : "no (lfence; rdtsc instead)",
	       have_cs ? "yes" : "no (those rows are skipped)",
	       vdso_csf_snap ? "found" : "not in the vDSO");
	if (opt_rounds)
		printf("cs_bench: per instruction %.5f ns, %.5f TSC ticks; %s %lld, %lld\n",
		       ns_per_insn, tsc_per_insn, "debugfs key count, key off and on",
		       key_keyoff, key_keyon);
}

static void help(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-q] [-t] [-s] [-i ROUNDS] [-r REPS] [-m THREADS] [-o ROWS]\n"
		"  -q  quick: shorter runs, fewer repetitions\n"
		"  -t  tab-separated output\n"
		"  -s  only the context-switch benchmark (works without coarse_stat)\n"
		"  -i  ROUNDS round trips per switch repetition, key-off pairs first; implies -s\n"
		"  -r  repetitions (median, min, max; at most %d)\n"
		"  -m  threads for the memory measurement\n"
		"  -o  only these snapshot rows, comma-separated ids as -t prints them\n",
		prog, MAX_REPS);
	exit(2);
}

int main(int argc, char **argv)
{
	void *sym;
	int c;

	while ((c = getopt(argc, argv, "qtsi:r:m:o:h")) != -1) {
		switch (c) {
		case 'q':
			opt_quick = true;
			break;
		case 't':
			opt_tsv = true;
			break;
		case 's':
			opt_switch_only = true;
			break;
		case 'i':
			opt_rounds = strtoul(optarg, NULL, 0);
			if (!opt_rounds)
				help(argv[0]);
			opt_switch_only = true;
			break;
		case 'r':
			opt_reps = atoi(optarg);
			break;
		case 'm':
			opt_mem_threads = atoi(optarg);
			break;
		case 'o':
			opt_rows = optarg;
			break;
		default:
			help(argv[0]);
		}
	}
	if (!opt_reps)
		opt_reps = opt_quick ? 5 : 11;
	if (opt_reps < 1 || opt_reps > MAX_REPS)
		help(argv[0]);
	if (opt_mem_threads <= 0)
		opt_mem_threads = opt_quick ? 200 : 1000;
	target_ns = opt_quick ? 5000000 : 20000000;
	page_size = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);

	have_rdtscp = cpu_has_rdtscp();
	sym = csf__elf_sym(getauxval(AT_SYSINFO_EHDR), CS_VDSO_SNAP, CS_VDSO_VERSION);
	memcpy(&vdso_csf_snap, &sym, sizeof(sym));
#ifdef CS_VDSO_CLOCK_GETTIME
	sym = csf__elf_sym(getauxval(AT_SYSINFO_EHDR), CS_VDSO_CLOCK_GETTIME, CS_VDSO_VERSION);
	memcpy(&vdso_clock_gettime, &sym, sizeof(sym));
#endif
	if (opt_rounds) {
		/* bench_switch() probes after the key-off pairs. */
		insn_clock(&ns_per_insn, &tsc_per_insn);
		bench_switch();
		print_meta();
		print_switch();
		return 0;
	}
	probe_cs();
	print_meta();

	if (!opt_switch_only) {
		bench_snapshots();
		snap_flags_note();
		print_snapshots();
		print_snap_targets();
	}
	bench_switch();
	print_switch();
	if (!opt_switch_only && have_cs)
		bench_scale();
	return 0;
}
