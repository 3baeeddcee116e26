// SPDX-License-Identifier: GPL-2.0
/*
 * The coarse_stat user-space pieces, end to end: csfcat (tools/coarse_stat),
 * the eventloop sample (samples/coarse_stat) and the header-only library
 * they use (tools/lib/coarse_stat/coarse_stat.h).
 *
 * csfcat and eventloop are built next to this program and run from there.
 * Their output is checked against independent sources (/proc/stat, the
 * clock) and against what the programs did; the library's snapshots against
 * clock_gettime(CLOCK_MONOTONIC), which their times are.  The library's error
 * paths that this kernel cannot produce (no coarse_stat, no vDSO symbol, a
 * page of another kind) are reached through stand-ins for prctl() and
 * getauxval().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"

/*
 * The library calls prctl(), open() (of the CPU page) and getauxval(); these
 * stand-ins pass the calls on unless a test asks them to pretend.
 */
enum fake {
	FAKE_NONE,
	FAKE_NO_COARSE_STAT,	/* prctl(PR_COARSE_STAT) fails with EINVAL, no CPU page file */
	FAKE_NO_VDSO,		/* getauxval(AT_SYSINFO_EHDR) is 0 */
	FAKE_PAGE_BAD_MAGIC,	/* the thread page is not a coarse_stat page */
};

static enum fake fake;

static int fake_prctl(int option, ...);
static int fake_open(const char *path, int flags, ...);
static unsigned long fake_getauxval(unsigned long type);

#define prctl fake_prctl
#define open fake_open
#define getauxval fake_getauxval
#include "../../../lib/coarse_stat/coarse_stat.h"
#undef prctl
#undef open
#undef getauxval
#include "cs_block.h"

/* A memfd holding a thread page like the kernel's, but with a bad magic. */
static int fake_page_fd(void)
{
	struct coarse_stat_thread_page pg = {
		.hdr = {
			.magic = 0x12345678,
			.kind = COARSE_STAT_KIND_THREAD,
			.size = 4096,
			.data_size = sizeof(pg),
		},
	};
	int fd = memfd_create("fake_coarse_stat", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, 4096) ||
	    pwrite(fd, &pg, sizeof(pg), 0) != sizeof(pg))
		return -1;
	return fd;
}

static int fake_prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);

	if (option == PR_COARSE_STAT && a[0] == PR_COARSE_STAT_THREAD &&
	    fake == FAKE_PAGE_BAD_MAGIC)
		return fake_page_fd();
	if (option == PR_COARSE_STAT && fake == FAKE_NO_COARSE_STAT) {
		errno = EINVAL;
		return -1;
	}
	return prctl(option, a[0], a[1], a[2], a[3]);
}

static int fake_open(const char *path, int flags, ...)
{
	if (!strcmp(path, CSF_CPU_PAGE_PATH) && fake == FAKE_NO_COARSE_STAT) {
		errno = ENOENT;
		return -1;
	}
	return open(path, flags);
}

static unsigned long fake_getauxval(unsigned long type)
{
	if (type == AT_SYSINFO_EHDR && fake == FAKE_NO_VDSO)
		return 0;
	return getauxval(type);
}

#define MAPS_NAME	"anon_inode:[coarse_stat]"
#define OUT_SIZE	(256 * 1024)

/* The library's errno for a kernel without coarse_stat. */
#define ERR_NO_COARSE_STAT	EOPNOTSUPP

/* Whether the library works here; if not, *@why says why. */
static bool csf_works(const char **why)
{
	struct csf_snap s;

	*why = csf_thread_snap(&s) ? csf_strerror(errno) : NULL;
	return !*why;
}

/* The path of @name next to this program. */
static void tool_path(const char *name, char *path, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", path, size - 1);
	char *slash;

	path[n > 0 ? n : 0] = '\0';
	slash = strrchr(path, '/');
	if (!slash || slash + 1 + strlen(name) >= path + size)
		snprintf(path, size, "./%s", name);
	else
		snprintf(slash, path + size - slash, "/%s", name);
}

/*
 * Run @argv, its stdout and stderr into @out (NUL-terminated).  Returns the
 * exit status, or -1 if it could not run or did not exit normally.
 */
static int run(const char * const argv[], char *out, size_t size)
{
	size_t len = 0;
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(pfd[1]);
	while (len + 1 < size && (n = read(pfd[0], out + len, size - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* "cpu" and "cpuN" lines, "intr" and "softirq" of /proc/stat or csfcat. */
#define MAX_CPUS	64
#define NR_FIELDS	10

struct stat_lines {
	bool			has[1 + MAX_CPUS];	/* [0]: "cpu", [1 + N]: cpuN */
	unsigned long long	v[1 + MAX_CPUS][NR_FIELDS];
	int			nr_cpu_lines;
	bool			has_intr, has_softirq;
};

static void parse_stat(const char *text, struct stat_lines *s)
{
	const char *line;
	char *p;
	int i, cpu;

	memset(s, 0, sizeof(*s));
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (!strncmp(line, "cpu ", 4)) {
			i = 0;
			p = (char *)line + 4;
		} else if (sscanf(line, "cpu%d ", &cpu) == 1 && cpu >= 0 && cpu < MAX_CPUS) {
			i = 1 + cpu;
			p = strchr(line, ' ');
			s->nr_cpu_lines++;
		} else {
			if (!strncmp(line, "intr ", 5))
				s->has_intr = true;
			else if (!strncmp(line, "softirq ", 8))
				s->has_softirq = true;
			continue;
		}
		s->has[i] = true;
		for (cpu = 0; cpu < NR_FIELDS; cpu++)
			s->v[i][cpu] = strtoull(p, &p, 10);
	}
}

static int read_proc_stat(char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd = open("/proc/stat", O_RDONLY);

	if (fd < 0)
		return -1;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(fd);
	return 0;
}

static const char * const stat_field[NR_FIELDS] = {
	"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
	"guest", "guest_nice",
};

/*
 * Registrations on for every test and tool run here, as root, where nobody
 * may register (kernel.coarse_stat_thread = 0, the default); cs_read.h's
 * cs_allow_registrations(), which this program, a user of the library
 * alone, does not include.
 */
static void __attribute__((constructor)) allow_registrations(void)
{
	int fd = open("/proc/sys/kernel/coarse_stat_thread", O_RDWR | O_CLOEXEC);
	char c = 0;

	if (fd < 0)
		return;
	if (read(fd, &c, 1) == 1 && c == '0' && lseek(fd, 0, SEEK_SET) == 0 &&
	    write(fd, "2", 1) == 1)
		ksft_print_msg("set kernel.coarse_stat_thread to 2 (it was 0, the default)\n");
	close(fd);
}

/*
 * csfcat cpu, between two reads of /proc/stat: every field of every line
 * must lie between the two, give or take 2 ticks and 1% for the rounding
 * and the page's refresh period.  A field in the wrong unit, in the wrong
 * place or from the wrong CPU lands outside.
 */
TEST(csfcat_cpu_matches_proc_stat)
{
	char *before, *after, *out;
	struct stat_lines *a, *b, *c;
	char csfcat[PATH_MAX];
	const char * const argv[] = { csfcat, "cpu", NULL };
	int i, f, status, checked = 0;
	const char *why;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	before = malloc(OUT_SIZE);
	after = malloc(OUT_SIZE);
	out = malloc(OUT_SIZE);
	a = malloc(sizeof(*a));
	b = malloc(sizeof(*b));
	c = malloc(sizeof(*c));
	ASSERT_TRUE(before && after && out && a && b && c);
	tool_path("csfcat", csfcat, sizeof(csfcat));

	ASSERT_EQ(0, read_proc_stat(before, OUT_SIZE));
	status = run(argv, out, OUT_SIZE);
	ASSERT_EQ(0, read_proc_stat(after, OUT_SIZE));
	ASSERT_EQ(0, status) TH_LOG("csfcat cpu: %s", out);
	parse_stat(before, b);
	parse_stat(after, a);
	parse_stat(out, c);

	ASSERT_TRUE(c->has[0]) TH_LOG("no \"cpu \" line in: %s", out);
	ASSERT_EQ(0, strncmp(out, "cpu  ", 5)) TH_LOG("not /proc/stat's format: %s", out);
	EXPECT_EQ(a->nr_cpu_lines, c->nr_cpu_lines) TH_LOG("online CPU lines");
	for (i = 0; i <= MAX_CPUS; i++) {
		if (!c->has[i])
			continue;
		ASSERT_TRUE(a->has[i] && b->has[i]) TH_LOG("cpu%d not in /proc/stat", i - 1);
		for (f = 0; f < NR_FIELDS; f++) {
			unsigned long long v = c->v[i][f], lo = b->v[i][f], hi = a->v[i][f];
			unsigned long long slack = 2 + hi / 100;

			EXPECT_TRUE(v + slack >= lo && v <= hi + slack)
				TH_LOG("cpu line %d %s: csfcat %llu, /proc/stat %llu .. %llu",
				       i, stat_field[f], v, lo, hi);
			checked++;
		}
	}
	TH_LOG("%d fields checked; cpu line: %.*s", checked,
	       (int)(strchr(out, '\n') - out), out);

	/* The CPU page has no interrupt counts: csfcat prints none. */
	EXPECT_FALSE(c->has_intr || c->has_softirq) TH_LOG("csfcat cpu: %s", out);
	free(before);
	free(after);
	free(out);
	free(a);
	free(b);
	free(c);
}

/* The numbers of a csf_format_diff() line. */
struct diff_line {
	double			wall, bucket[COARSE_STAT_NR_BUCKETS];
	unsigned long long	preempt, block, migrate, minflt, majflt;
	unsigned long long	syscr, syscw, rbytes, wbytes;
};

static int parse_diff(const char *s, struct diff_line *d)
{
	s = strstr(s, "wall ");
	if (!s)
		return -1;
	return sscanf(s,
		      "wall %lfms = cpu %lf + runq %lf + sleep %lf + dsleep %lf + iowait %lf | preempt %llu block %llu migrate %llu | flt %llu/%llu | sysc r%llu w%llu | io r%lluB w%lluB",
		      &d->wall, &d->bucket[0], &d->bucket[1], &d->bucket[2],
		      &d->bucket[3], &d->bucket[4], &d->preempt, &d->block,
		      &d->migrate, &d->minflt, &d->majflt, &d->syscr, &d->syscw,
		      &d->rbytes, &d->wbytes) == 15 ? 0 : -1;
}

static double bucket_sum(const struct diff_line *d)
{
	double sum = 0;
	int i;

	for (i = 0; i < COARSE_STAT_NR_BUCKETS; i++)
		sum += d->bucket[i];
	return sum;
}

/* csfcat self 100: 50 ms in the sleep bucket, 50 ms on the CPU. */
TEST(csfcat_self)
{
	char csfcat[PATH_MAX], out[4096];
	const char * const argv[] = { csfcat, "self", "100", NULL };
	const char *prefix = "sleep 50 ms + spin 50 ms: wall ";
	struct diff_line d;
	const char *why;
	int tries;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	tool_path("csfcat", csfcat, sizeof(csfcat));
	/*
	 * A loaded host can stretch the 50 ms sleep a lot; a bucket mix-up
	 * (spin counted as sleep or the reverse) still leaves one under 45.
	 * But a vCPU that stands still between arming the timer and blocking
	 * (cs_stall: milliseconds) moves that much of the sleep to the CPU,
	 * and csfcat cannot be watched from here: one run in three must do.
	 */
	for (tries = 1; ; tries++) {
		ASSERT_EQ(0, run(argv, out, sizeof(out))) TH_LOG("csfcat self 100: %s", out);
		TH_LOG("%s", out);
		ASSERT_EQ(0, strncmp(out, prefix, strlen(prefix)));
		ASSERT_EQ(0, parse_diff(out, &d));
		if ((d.bucket[COARSE_STAT_SLEEP] >= 45 && d.bucket[COARSE_STAT_ONCPU] >= 45) ||
		    tries == 3)
			break;
	}
	EXPECT_TRUE(d.bucket[COARSE_STAT_SLEEP] >= 45 && d.bucket[COARSE_STAT_SLEEP] <= 1000);
	EXPECT_TRUE(d.bucket[COARSE_STAT_ONCPU] >= 45 && d.bucket[COARSE_STAT_ONCPU] <= 1000);
	EXPECT_TRUE(d.wall >= 100 && d.wall <= 2000);
	/* Each number is truncated to the microsecond. */
	EXPECT_TRUE(bucket_sum(&d) <= d.wall + 0.0005 && bucket_sum(&d) >= d.wall - 0.01)
		TH_LOG("buckets add up to %.3f, wall %.3f", bucket_sum(&d), d.wall);
	EXPECT_LE(1, d.block);
}

/* One report of the eventloop sample. */
struct report {
	char	name[64];
	char	mostly[64];
	double	wall;
	double	ms[COARSE_STAT_NR_BUCKETS];
	bool	has_fields;
	unsigned long long	preempt, block;
	double	sum_exec, run_delay;	/* as of the last switch-out */
};

/* The sample's bucket lines and "mostly" labels, in enum coarse_stat_state order. */
static const char * const loop_bucket[COARSE_STAT_NR_BUCKETS] = {
	"cpu", "runq", "sleep", "dsleep", "iowait",
};

static const char * const loop_mostly[COARSE_STAT_NR_BUCKETS] = {
	"mostly on cpu", "mostly waiting for a cpu", "mostly sleeping",
	"mostly in uninterruptible sleep", "mostly waiting for I/O",
};

#define MAX_REPORTS	32

struct loop_run {
	unsigned long	planned, ops, slow;
	int		nr;
	struct report	r[MAX_REPORTS];
};

static int parse_loop(const char *out, struct loop_run *l)
{
	const char *p;
	struct report *r = NULL;

	memset(l, 0, sizeof(*l));
	if (sscanf(out, "eventloop: %lu operations", &l->planned) != 1)
		return -1;
	for (p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		struct diff_line d;
		char word[16];
		size_t len;
		double ms;
		int i, n = 0;

		if (sscanf(p, "slow op %*u: %n", &n) == 0 && n > 0 && l->nr < MAX_REPORTS) {
			r = &l->r[l->nr++];
			if (sscanf(p + n, "%63[^\n]", r->name) != 1)
				return -1;
		} else if (r && !strncmp(p, "  wall      ", 12)) {
			if (sscanf(p, "  wall %*f ms, %63[^\n(]", r->mostly) != 1)
				return -1;
			len = strlen(r->mostly);
			while (len && r->mostly[len - 1] == ' ')
				r->mostly[--len] = '\0';
		} else if (r && !strncmp(p, "  wall ", 7)) {
			if (parse_diff(p, &d) == 0)
				r->wall = d.wall;
		} else if (r && sscanf(p, "  %15s %lf ms%n", word, &ms, &n) == 2 && n > 0 &&
			   p[n] == '\n') {
			for (i = 0; i < COARSE_STAT_NR_BUCKETS; i++)
				if (!strcmp(word, loop_bucket[i]))
					r->ms[i] = ms;
		} else if (r && sscanf(p, "  switches  preempt %llu block %llu",
				       &r->preempt, &r->block) == 2) {
			continue;
		} else if (r && sscanf(p, "  schedstat sum_exec %lf ms, run_delay %lf",
				       &r->sum_exec, &r->run_delay) == 2) {
			continue;
		} else if (r && !strncmp(p, "  all cpus  user +", 18)) {
			r->has_fields = true;
		} else if (sscanf(p, "%lu operations, %lu slow", &l->ops, &l->slow) == 2) {
			r = NULL;
		}
	}
	return 0;
}

static const struct report *find_report(const struct loop_run *l, const char *name)
{
	int i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->r[i].name, name))
			return &l->r[i];
	return NULL;
}

/*
 * The sample reports every operation over its 10 ms threshold, and only
 * those, each with the bucket that took most of its time.  The three slow
 * by design are there with their time in the right bucket.  A fast one that
 * a slow guest (KASAN under emulation) or a stalled host stretched past
 * 10 ms is reported too, rightly, and so is one whose overhead outgrew its
 * sleep: the test checks the report against its own numbers.  A vCPU can
 * stand still for milliseconds (cs_stall) before a sleep blocks: that time
 * is on the CPU, and in the schedstat sum_exec the page copied at the block
 * (or waiting: run_delay, or the page's runq, which begins earlier, at the
 * wakeup, when it goes through the wakelist), so the sleep and the vfork
 * wait are bounded by those (if they blocked at all: not when the vCPU stood
 * still for the whole sleep); the spin by the clock is on the CPU unless
 * preempted.  But a vCPU also stands still inside interrupt handlers, time
 * that is not in sum_exec (IRQ_TIME_ACCOUNTING) and that the report does not
 * show: a run that misses both bounds is made again, up to three.
 */
static const struct slow_op { const char *name; int bucket; double ms; } slow[] = {
	{ "sleep 25 ms", COARSE_STAT_SLEEP, 25 },
	{ "spin 30 ms", COARSE_STAT_ONCPU, 30 },
	{ "vfork child sleeps 20 ms", COARSE_STAT_DSLEEP, 20 },
};

/* The least time of @op's report @r that belongs in @op's bucket. */
static double slow_want(const struct slow_op *op, const struct report *r)
{
	double want, waited;

	if (op->bucket == COARSE_STAT_ONCPU)
		return r->preempt ? op->ms * 0.99 - r->ms[COARSE_STAT_RUNQ] : op->ms * 0.9;
	/* The wait begins at the wakeup, run_delay at the enqueue after it. */
	waited = r->ms[COARSE_STAT_RUNQ] > r->run_delay ? r->ms[COARSE_STAT_RUNQ] : r->run_delay;
	want = r->block ? op->ms * 0.99 - r->sum_exec - waited - 2 : 0;
	return want < op->ms * 0.9 ? want : op->ms * 0.9;
}

/* Whether every slow operation is reported with its time in its bucket. */
static bool slow_ok(const struct loop_run *l)
{
	const struct report *r;
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(slow); i++) {
		r = find_report(l, slow[i].name);
		if (!r || r->ms[slow[i].bucket] < slow_want(&slow[i], r))
			return false;
	}
	return true;
}

/*
 * The stall detector sample: three workers, each with one operation of
 * 400 ms against a budget of 100 ms, watched every 20 ms from another CPU:
 * one spins (on a CPU), one is starved by a SCHED_FIFO thread on its CPU
 * (waiting for a CPU), one waits on a futex (asleep).  While each one is
 * stalled the watchdog must name where it is, from its page, and when the
 * operation ends the worker prints where its time went.
 */
static const struct {
	const char	*name, *state;
	int		bucket;
} stall_want[] = {
	{ "spinner",	"oncpu",	COARSE_STAT_ONCPU },
	{ "starved",	"runq",		COARSE_STAT_RUNQ },
	{ "blocked",	"sleep",	COARSE_STAT_SLEEP },
};

/* The bucket a "wall ... = cpu A + runq B + ..." line has most of, or -1. */
static int diff_biggest(const char *line)
{
	double ms[COARSE_STAT_NR_BUCKETS], wall;
	const char *p = strstr(line, "wall ");
	int i, big = 0;

	if (!p || sscanf(p, "wall %lfms = cpu %lf + runq %lf + sleep %lf + dsleep %lf + iowait %lf",
			 &wall, &ms[0], &ms[1], &ms[2], &ms[3], &ms[4]) != 6)
		return -1;
	for (i = 1; i < COARSE_STAT_NR_BUCKETS; i++)
		if (ms[i] > ms[big])
			big = i;
	return big;
}

TEST(stallwatch_names_the_stall)
{
	char tool[PATH_MAX], name[16], state[16];
	const char * const argv[] = { tool, "-b", "100", "-p", "20", "-o", "400", NULL };
	unsigned int i, stalls[3] = { 0 }, right[3] = { 0 }, slows[3] = { 0 };
	unsigned long long ms;
	const char *why, *line;
	char *out;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "the sample needs two CPUs");
	if (geteuid())
		SKIP(return, "the starved worker needs SCHED_FIFO (root)");
	out = malloc(OUT_SIZE);
	ASSERT_NE(NULL, out);
	tool_path("stallwatch", tool, sizeof(tool));
	ASSERT_EQ(0, run(argv, out, OUT_SIZE)) TH_LOG("stallwatch: %s", out);

	for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		bool is_stall = sscanf(line, "stall: %15s op 1: %llu ms over 100 ms, now [%15[^]]]",
				       name, &ms, state) == 3;
		bool is_slow = !is_stall && sscanf(line, "slow: %15s op 1: %llu", name, &ms) == 2;

		if (!is_stall && !is_slow)
			continue;
		for (i = 0; i < ARRAY_SIZE(stall_want); i++)
			if (!strcmp(name, stall_want[i].name))
				break;
		ASSERT_GT(ARRAY_SIZE(stall_want), i) TH_LOG("unknown worker: %.120s", line);
		if (is_slow) {
			slows[i]++;
			/* the operation lasted what it was made to last, mostly there */
			EXPECT_LE(400, ms) TH_LOG("%.200s", line);
			EXPECT_EQ(stall_want[i].bucket, diff_biggest(line)) TH_LOG("%.200s", line);
			continue;
		}
		EXPECT_LT(100, ms) TH_LOG("reported under budget: %.200s", line);
		/*
		 * The stall's cause lasts the operation's 400 ms from about
		 * its start; a look in the last 50 ms may see it over (the
		 * starved worker back on its CPU), so those are not judged.
		 */
		if (ms > 350)
			continue;
		stalls[i]++;
		/* now, and so far: where the operation's time went */
		if (!strcmp(state, stall_want[i].state) &&
		    diff_biggest(line) == stall_want[i].bucket)
			right[i]++;
		else
			TH_LOG("%s: %.240s", stall_want[i].name, line);
	}
	for (i = 0; i < ARRAY_SIZE(stall_want); i++) {
		TH_LOG("%s: %u stall reports, %u naming [%s], %u slow reports", stall_want[i].name,
		       stalls[i], right[i], stall_want[i].state, slows[i]);
		/* 250 ms judged, a look every 20 ms: several */
		EXPECT_LE(3, stalls[i]);
		EXPECT_EQ(1, slows[i]);
		/*
		 * Only a kernel thread preempting the spinner for a moment can
		 * make a look at it see the run queue: four in five there; the
		 * others have nowhere else to be: all.
		 */
		EXPECT_LE(stalls[i] * (stall_want[i].bucket == COARSE_STAT_ONCPU ? 4 : 5),
			  right[i] * 5);
	}
	free(out);
}

TEST(eventloop_reports_slow_ops)
{
	char eventloop[PATH_MAX];
	const char * const argv[] = { eventloop, NULL };
	int i, j, big, tries, extra = 0;
	struct loop_run *l;
	double want;
	const char *why;
	char *out;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	out = malloc(OUT_SIZE);
	l = malloc(sizeof(*l));
	ASSERT_TRUE(out && l);
	tool_path("eventloop", eventloop, sizeof(eventloop));

	for (tries = 1; ; tries++) {
		ASSERT_EQ(0, run(argv, out, OUT_SIZE)) TH_LOG("eventloop: %s", out);
		ASSERT_EQ(0, parse_loop(out, l)) TH_LOG("eventloop: %s", out);
		if (slow_ok(l) || tries == 3)
			break;
		TH_LOG("run %d: a slow operation's time is not in its bucket; again: %s",
		       tries, out);
	}
	EXPECT_EQ(l->planned, l->ops);
	EXPECT_EQ(253, l->ops) TH_LOG("the sample's operation list changed?");
	EXPECT_EQ(l->nr, l->slow);

	for (i = 0; i < l->nr; i++) {
		const struct report *r = &l->r[i];

		EXPECT_LE(10, r->wall) TH_LOG("%s: reported, but took %.3f ms", r->name, r->wall);
		EXPECT_TRUE(r->has_fields) TH_LOG("%s: no field lines", r->name);
		for (big = 0, j = 1; j < COARSE_STAT_NR_BUCKETS; j++)
			if (r->ms[j] > r->ms[big])
				big = j;
		EXPECT_STREQ(loop_mostly[big], r->mostly) TH_LOG("%s", r->name);
		if (!strcmp(r->name, "compute") || !strcmp(r->name, "yield x20")) {
			/* repeated: a guest that stands still can stretch several */
			TH_LOG("fast by design, took %.3f ms: %s", r->wall, r->mostly);
			extra++;
		} else {
			/* the others run once */
			ASSERT_EQ(r, find_report(l, r->name)) TH_LOG("%s reported twice", r->name);
		}
	}
	for (i = 0; i < (int)ARRAY_SIZE(slow); i++) {
		const struct report *r = find_report(l, slow[i].name);

		ASSERT_NE(NULL, r) TH_LOG("%s not reported: %s", slow[i].name, out);
		want = slow_want(&slow[i], r);
		TH_LOG("%s: %s %.3f ms of %.3f, at least %.3f", slow[i].name,
		       loop_bucket[slow[i].bucket], r->ms[slow[i].bucket], r->wall, want);
		TH_LOG("%s: sum_exec %.3f run_delay %.3f preempt %llu block %llu", slow[i].name,
		       r->sum_exec, r->run_delay, r->preempt, r->block);
		EXPECT_LE(want, r->ms[slow[i].bucket]);
		if (strcmp(loop_mostly[slow[i].bucket], r->mostly))
			TH_LOG("%s: %s (overhead beyond the %.0f ms)", slow[i].name,
			       r->mostly, slow[i].ms);
	}
	EXPECT_EQ(ARRAY_SIZE(slow) + extra, l->nr) TH_LOG("unknown reports: %s", out);
	TH_LOG("%lu operations, %lu slow", l->ops, l->slow);
	free(out);
	free(l);
}

/*
 * The longest line csf_format_diff() can write fits CSF_DIFF_BUFSZ, exactly:
 * every difference INT64_MIN (each field 2^63 below the other, read as a
 * signed difference).
 */
TEST(format_diff_worst_case)
{
	static struct csf_snap a, b;
	const __u64 big = 1ULL << 63;
	char buf[2 * CSF_DIFF_BUFSZ];
	int ret, i;

	b.time_ns = big;
	for (i = 0; i < COARSE_STAT_NR_BUCKETS; i++)
		b.p.bucket_ns[i] = big;
	b.p.nr_preempt = big;
	b.p.nr_block = big;
	b.p.nr_migrate = big;
	b.p.min_flt = big;
	b.p.maj_flt = big;
	b.p.syscr = big;
	b.p.syscw = big;
	b.p.read_bytes = big;
	b.p.write_bytes = big;

	ret = csf_format_diff(buf, sizeof(buf), &a, &b);
	TH_LOG("%d bytes: %s", ret, buf);
	EXPECT_EQ(CSF_DIFF_BUFSZ - 1, ret);
	EXPECT_EQ(ret, (int)strlen(buf));
	EXPECT_NE(NULL, strstr(buf, "wall -9223372036854.775ms"));
	EXPECT_NE(NULL, strstr(buf, "io r-9223372036854775808B w-9223372036854775808B"));

	/* Truncated like snprintf(). */
	EXPECT_EQ(ret, csf_format_diff(buf, 10, &a, &b));
	EXPECT_EQ(9, strlen(buf));

	/* Signed: in the wrong order, with a minus sign. */
	memset(&b, 0, sizeof(b));
	b.time_ns = 1500000;
	b.p.nr_block = 2;
	csf_format_diff(buf, sizeof(buf), &a, &b);
	EXPECT_NE(NULL, strstr(buf, "wall 1.500ms")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "block 2 ")) TH_LOG("%s", buf);
	csf_format_diff(buf, sizeof(buf), &b, &a);
	EXPECT_NE(NULL, strstr(buf, "wall -1.500ms")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "block -2 ")) TH_LOG("%s", buf);

	/* Snapshots of two pages cannot be compared: another start. */
	b.p.start_ns = 1;
	errno = 0;
	EXPECT_EQ(-1, csf_format_diff(buf, sizeof(buf), &a, &b));
	EXPECT_EQ(EINVAL, errno);
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The line agrees with the snapshots' own numbers. */
TEST(format_diff_matches_snaps)
{
	__u64 asleep = 0;
	char buf[CSF_DIFF_BUFSZ];
	struct csf_snap a, b;
	struct diff_line d;
	int i;
	const char *why;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	ASSERT_EQ(0, csf_thread_snap(&a));
	/* 20 ms asleep for sure: a nanosleep() need not even block (cs_block.h) */
	ASSERT_EQ(0, cs_block(20 * 1000 * 1000, &asleep));
	ASSERT_EQ(0, csf_thread_snap(&b));
	EXPECT_TRUE(csf_snap_extrapolated(&a) && csf_snap_extrapolated(&b));
	EXPECT_EQ(a.p.start_ns, b.p.start_ns);
	EXPECT_EQ(sizeof(struct coarse_stat_snap), a.size);
	EXPECT_EQ(sizeof(a.p), a.data_size);
	ASSERT_LT(0, csf_format_diff(buf, sizeof(buf), &a, &b));
	TH_LOG("%s", buf);
	ASSERT_EQ(0, parse_diff(buf, &d));

	/* ns in the snapshots, truncated to the microsecond in the line */
	EXPECT_EQ((b.time_ns - a.time_ns) / 1000, (uint64_t)(d.wall * 1000 + 0.5));
	for (i = 0; i < COARSE_STAT_NR_BUCKETS; i++)
		EXPECT_EQ((b.p.bucket_ns[i] - a.p.bucket_ns[i]) / 1000,
			  (uint64_t)(d.bucket[i] * 1000 + 0.5));
	EXPECT_EQ(b.p.nr_block - a.p.nr_block, d.block);
	EXPECT_EQ(b.p.min_flt - a.p.min_flt, d.minflt);
	EXPECT_EQ(b.p.syscw - a.p.syscw, d.syscw);
	TH_LOG("certainly asleep %.3f ms", asleep / 1e6);
	/* One clock: all the time it was seen asleep is in the sleep bucket. */
	EXPECT_LE(asleep, b.p.sleep_ns - a.p.sleep_ns);
	EXPECT_LE(19.0, asleep / 1e6);
	EXPECT_LE(1, d.block);
}

/*
 * The library's snapshots are the caller's CLOCK_MONOTONIC: time_ns lies
 * between clock_gettime() before and after the call, the buckets add up to
 * time_ns - start_ns, and the CPU row's age is time_ns - update_ns.  On
 * the default clocksource the vDSO reads the clock itself (no SYSCALL).
 */
TEST(snap_times)
{
	unsigned long bad_time = 0, bad_sum = 0, bad_flags = 0, bad_cpu = 0;
	struct csf_cpu_snap c;
	struct csf_snap s;
	char cs[64] = "";
	__u32 want;
	__u64 t0, t1, sum;
	const char *why;
	int i, j, fd;
	ssize_t n;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY);
	n = fd < 0 ? -1 : read(fd, cs, sizeof(cs) - 1);
	if (fd >= 0)
		close(fd);
	cs[n > 0 ? strcspn(cs, "\n") : 0] = '\0';
#ifdef __aarch64__
	want = strcmp(cs, "arch_sys_counter") ? COARSE_STAT_SNAP_SYSCALL : 0;
#else
	want = strcmp(cs, "tsc") ? COARSE_STAT_SNAP_SYSCALL : 0;
#endif
	TH_LOG("clocksource %s", cs);
	for (i = 0; i < 2000; i++) {
		t0 = mono_ns();
		ASSERT_EQ(0, csf_thread_snap(&s));
		t1 = mono_ns();
		if (s.time_ns < t0 || s.time_ns > t1)
			bad_time++;
		for (sum = 0, j = 0; j < COARSE_STAT_NR_BUCKETS; j++)
			sum += s.p.bucket_ns[j];
		if (sum != s.time_ns - s.p.start_ns)
			bad_sum++;
		if (s.flags != (COARSE_STAT_SNAP_EXTRAPOLATED | want))
			bad_flags++;
		t0 = mono_ns();
		ASSERT_EQ(0, csf_cpu_snap(&c, CSF_CPU_ALL));
		t1 = mono_ns();
		if (c.time_ns < t0 || c.time_ns > t1 || c.update_ns > c.time_ns ||
		    c.flags != want)
			bad_cpu++;
	}
	EXPECT_EQ(0, bad_time);
	EXPECT_EQ(0, bad_sum);
	EXPECT_EQ(0, bad_flags) TH_LOG("last flags %#x", s.flags);
	EXPECT_EQ(0, bad_cpu) TH_LOG("last CPU snapshot: time %llu update %llu flags %#x",
				     (unsigned long long)c.time_ns,
				     (unsigned long long)c.update_ns, c.flags);
}

/* Lines of /proc/self/maps that map a thread page. */
static int count_maps(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, MAPS_NAME "\n"))
			n++;
	fclose(f);
	return n;
}

#define NR_THREADS	8

struct thread_arg {
	pthread_barrier_t		*barrier;
	int				ret, err;
	const struct coarse_stat_thread_page	*pg, *pg2;
	struct csf_snap			s, s2;
};

static void *thread_fn(void *data)
{
	struct thread_arg *t = data;

	t->ret = csf_thread_snap(&t->s);
	t->err = errno;
	csf_thread_page(&t->pg);
	csf_thread_snap(&t->s2);
	csf_thread_page(&t->pg2);
	pthread_barrier_wait(t->barrier);	/* all mapped */
	pthread_barrier_wait(t->barrier);	/* counted */
	return NULL;
}

/* Each thread maps its own page once, and it goes when the thread exits. */
TEST(threads_own_pages)
{
	struct thread_arg t[NR_THREADS];
	pthread_t th[NR_THREADS];
	pthread_barrier_t barrier;
	const struct coarse_stat_thread_page *mine;
	int i, j, base, during, after;
	const char *why;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	ASSERT_EQ(0, csf_thread_page(&mine));
	base = count_maps();
	ASSERT_EQ(1, base) TH_LOG("no \"%s\" line in /proc/self/maps", MAPS_NAME);

	pthread_barrier_init(&barrier, NULL, NR_THREADS + 1);
	memset(t, 0, sizeof(t));
	for (i = 0; i < NR_THREADS; i++) {
		t[i].barrier = &barrier;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, thread_fn, &t[i]));
	}
	pthread_barrier_wait(&barrier);
	during = count_maps();
	pthread_barrier_wait(&barrier);
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(th[i], NULL);
	after = count_maps();

	for (i = 0; i < NR_THREADS; i++) {
		EXPECT_EQ(0, t[i].ret) TH_LOG("thread %d: %s", i, strerror(t[i].err));
		EXPECT_NE(mine->start_ns, t[i].s.p.start_ns);
		EXPECT_EQ(t[i].pg, t[i].pg2);	/* mapped once */
		EXPECT_EQ(t[i].s.p.start_ns, t[i].s2.p.start_ns);
		EXPECT_TRUE(csf_snap_extrapolated(&t[i].s));
		EXPECT_NE(mine, t[i].pg);
		for (j = 0; j < i; j++)
			EXPECT_NE(t[j].pg, t[i].pg);
	}
	EXPECT_EQ(base + NR_THREADS, during);
	EXPECT_EQ(base, after) TH_LOG("pages left mapped after the threads exited");
	TH_LOG("thread page mappings: %d, with %d threads %d, after joining %d",
	       base, NR_THREADS, during, after);
	pthread_barrier_destroy(&barrier);
}

/* After fork() the child maps a page of its own, the parent keeps its own. */
TEST(fork_child_maps_own_page)
{
	const struct coarse_stat_thread_page *pg;
	__u64 parent_start;
	struct csf_cpu_snap c;
	struct csf_snap s;
	int status;
	pid_t pid;
	const char *why;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	ASSERT_EQ(0, csf_cpu_snap(&c, CSF_CPU_ALL));
	ASSERT_EQ(0, csf_thread_page(&pg));
	parent_start = pg->start_ns;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Exit status: which check failed. */
		if (csf_thread_snap(&s))
			_exit(1);
		/* its own page (maybe mapped where the parent's is) */
		if (s.p.start_ns == parent_start)
			_exit(2);
		if (count_maps() != 1)
			_exit(3);
		if (csf_cpu_snap(&c, CSF_CPU_ALL))
			_exit(4);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child check %d failed", WEXITSTATUS(status));
	ASSERT_EQ(0, csf_thread_snap(&s));
	EXPECT_EQ(pg->start_ns, s.p.start_ns);
	EXPECT_EQ(1, count_maps());
}

/* The vDSO's clock_gettime(), a symbol every vDSO has, as the architecture names it. */
#ifdef __aarch64__
#define VDSO_CLOCK_GETTIME	"__kernel_clock_gettime"
#else
#define VDSO_CLOCK_GETTIME	"__vdso_clock_gettime"
#endif

/* The vDSO lookup, with DT_HASH and with DT_GNU_HASH only. */
TEST(vdso_lookup)
{
	uintptr_t vdso = getauxval(AT_SYSINFO_EHDR);
	int (*gettime)(clockid_t clk, struct timespec *ts);
	const struct csf__elf_ehdr *eh = (const void *)vdso;
	const struct csf__elf_phdr *ph = (const void *)(vdso + eh->e_phoff);
	struct timespec t0, t1, t2;
	long long n0, n1, n2;
	size_t size = 0;
	struct csf__elf_dyn *dyn = NULL;
	void *sym, *copy, *csf;
	int i;

	ASSERT_NE(0, vdso);
	sym = csf__elf_sym(vdso, VDSO_CLOCK_GETTIME, CSF__VDSO_VERSION);
	ASSERT_NE(NULL, sym);
	memcpy(&gettime, &sym, sizeof(sym));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, gettime(CLOCK_MONOTONIC, &t1));
	clock_gettime(CLOCK_MONOTONIC, &t2);
	n0 = t0.tv_sec * 1000000000LL + t0.tv_nsec;
	n1 = t1.tv_sec * 1000000000LL + t1.tv_nsec;
	n2 = t2.tv_sec * 1000000000LL + t2.tv_nsec;
	EXPECT_TRUE(n0 <= n1 && n1 <= n2);

	EXPECT_EQ(NULL, csf__elf_sym(vdso, VDSO_CLOCK_GETTIME, "LINUX_9.9"));
	EXPECT_EQ(NULL, csf__elf_sym(vdso, "__vdso_no_such_function", CSF__VDSO_VERSION));
	EXPECT_EQ(NULL, csf__elf_sym(0, VDSO_CLOCK_GETTIME, CSF__VDSO_VERSION));
	csf = csf__elf_sym(vdso, CSF__VDSO_SNAP, CSF__VDSO_VERSION);
	TH_LOG(CSF__VDSO_SNAP " %s", csf ? "found" : "missing");

	/* A copy of the image whose DT_HASH is hidden: the GNU hash counts. */
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	}
	copy = aligned_alloc(4096, (size + 4095) & ~4095UL);
	ASSERT_NE(NULL, copy);
	memcpy(copy, (void *)vdso, size);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (struct csf__elf_dyn *)((char *)copy + ph[i].p_offset);
	ASSERT_NE(NULL, dyn);
	for (i = 0; dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_HASH)
			dyn[i].d_tag = DT_DEBUG;
	}
	EXPECT_EQ((char *)sym - (char *)vdso,
		  (char *)csf__elf_sym((uintptr_t)copy, VDSO_CLOCK_GETTIME, CSF__VDSO_VERSION) -
		  (char *)copy);
	if (csf)
		EXPECT_EQ((char *)csf - (char *)vdso,
			  (char *)csf__elf_sym((uintptr_t)copy, CSF__VDSO_SNAP, CSF__VDSO_VERSION) -
			  (char *)copy);
	EXPECT_EQ(NULL, csf__elf_sym((uintptr_t)copy, "__vdso_no_such_function",
				     CSF__VDSO_VERSION));
	free(copy);
}

/* A kernel without coarse_stat: EOPNOTSUPP, and nothing is remembered. */
TEST(error_no_coarse_stat)
{
	const struct coarse_stat_thread_page *pg;
	struct csf_cpu_snap c;
	struct csf_snap s;
	const char *why;

	fake = FAKE_NO_COARSE_STAT;
	errno = 0;
	EXPECT_EQ(-1, csf_thread_snap(&s));
	EXPECT_EQ(ERR_NO_COARSE_STAT, errno);
	errno = 0;
	EXPECT_EQ(-1, csf_thread_page(&pg));
	EXPECT_EQ(ERR_NO_COARSE_STAT, errno);
	errno = 0;
	EXPECT_EQ(-1, csf_cpu_snap(&c, CSF_CPU_ALL));
	EXPECT_EQ(ERR_NO_COARSE_STAT, errno);
	/* 32-bit programs are served: the message does not blame them. */
	EXPECT_NE(NULL, strstr(csf_strerror(ERR_NO_COARSE_STAT), "without CONFIG_COARSE_STAT"));
	EXPECT_EQ(NULL, strstr(csf_strerror(ERR_NO_COARSE_STAT), "32-bit"))
		TH_LOG("%s", csf_strerror(ERR_NO_COARSE_STAT));
	EXPECT_EQ(0, count_maps());

	fake = FAKE_NONE;
	if (!csf_works(&why))
		SKIP(return, "%s", why);
	EXPECT_EQ(0, csf_cpu_snap(&c, CSF_CPU_ALL));
}

/* A vDSO without the functions: ENOENT; the pages themselves still map. */
TEST(error_no_vdso_symbol)
{
	const struct coarse_stat_thread_page *pg;
	struct csf_cpu_snap c;
	struct csf_snap s;

	fake = FAKE_NO_VDSO;
	if (csf_thread_page(&pg))
		SKIP(return, "%s", csf_strerror(errno));
	errno = 0;
	EXPECT_EQ(-1, csf_thread_snap(&s));
	EXPECT_EQ(ENOENT, errno);
	errno = 0;
	EXPECT_EQ(-1, csf_cpu_snap(&c, CSF_CPU_ALL));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(COARSE_STAT_MAGIC, pg->hdr.magic);
}

static void *fake_page_thread(void *data)
{
	const struct coarse_stat_thread_page *pg;
	struct csf_snap s;
	int *err = data;

	err[0] = csf_thread_snap(&s) ? errno : 0;
	err[1] = csf_thread_page(&pg) ? errno : 0;
	return NULL;
}

/* A page that is not a coarse_stat page: EPROTO. */
TEST(error_bad_pages)
{
	pthread_t th;
	int err[2];
	const char *why;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	fake = FAKE_PAGE_BAD_MAGIC;
	ASSERT_EQ(0, pthread_create(&th, NULL, fake_page_thread, err));
	pthread_join(th, NULL);
	EXPECT_EQ(EPROTO, err[0]);
	EXPECT_EQ(EPROTO, err[1]);

	fake = FAKE_NONE;
	ASSERT_EQ(0, pthread_create(&th, NULL, fake_page_thread, err));
	pthread_join(th, NULL);
	EXPECT_EQ(0, err[0]);
	EXPECT_EQ(0, err[1]);
}

static void *emfile_thread(void *data)
{
	struct csf_snap s;
	int *err = data;

	*err = csf_thread_snap(&s) ? errno : 0;
	return NULL;
}

/* Out of file descriptors: the prctl()'s EMFILE. */
TEST(error_emfile)
{
	struct rlimit old, lim;
	int fds[64], n = 0, err = 0;
	pthread_t th;
	const char *why;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	lim = old;
	lim.rlim_cur = 32;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &lim));
	while (n < 64 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
		n++;
	ASSERT_EQ(EMFILE, errno);
	ASSERT_EQ(0, pthread_create(&th, NULL, emfile_thread, &err));
	pthread_join(th, NULL);
	while (n--)
		close(fds[n]);
	setrlimit(RLIMIT_NOFILE, &old);
	EXPECT_EQ(EMFILE, err);
}

/* Rows: all CPUs and each possible CPU; nothing else. */
TEST(cpu_rows)
{
	const struct coarse_stat_cpu_page *pg;
	struct csf_cpu_snap all, one;
	long nr = sysconf(_SC_NPROCESSORS_CONF);
	const char *why;

	if (!csf_works(&why))
		SKIP(return, "%s", why);
	ASSERT_EQ(0, csf_cpu_page(&pg));
	ASSERT_EQ(0, csf_cpu_snap(&all, CSF_CPU_ALL));
	EXPECT_EQ((__u32)-1, all.row.cpu);
	EXPECT_LE(nr + 1, pg->nr_rows);
	ASSERT_EQ(0, csf_cpu_snap(&one, 0));
	EXPECT_EQ(0, one.row.cpu);
	EXPECT_LE(one.row.idle, all.row.idle + 1000000000ULL);
	errno = 0;
	EXPECT_EQ(-1, csf_cpu_snap(&one, pg->nr_rows - 1));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, csf_cpu_snap(&one, -2));
	EXPECT_EQ(EINVAL, errno);
}

TEST(csfcat_usage)
{
	char csfcat[PATH_MAX], out[4096];
	const char * const help[] = { csfcat, "--help", NULL };
	const char * const bad[] = { csfcat, "nonsense", NULL };

	tool_path("csfcat", csfcat, sizeof(csfcat));
	EXPECT_EQ(0, run(help, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "Usage: "));
	EXPECT_EQ(2, run(bad, out, sizeof(out)));
}

TEST_HARNESS_MAIN
