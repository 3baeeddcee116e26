// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat and CPU hotplug: CPU 1 goes offline and comes back, several
 * times, while
 *
 * - a thread copies the CPU page continuously: row 0 is exactly the sum of
 *   the other rows (offline CPUs included, as in the "cpu" line of
 *   /proc/stat), the ONLINE flags follow the state, an offline CPU's row
 *   keeps its last values, no counter but idle and iowait ever goes back,
 *   and the page keeps being refreshed;
 * - a registered thread pinned to CPU 1, running or asleep, is moved to
 *   another CPU: its page's cpu changes and nr_migrate counts it.
 *
 * The kernel must not complain (no new taint).  CS_HOTPLUG_ROUNDS (default
 * 3) sets the number of offline/online cycles.  Skipped if CPU 1 cannot be
 * taken offline (no cpu1/online file).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "cs_read.h"
#include "../kselftest_harness.h"
#include "cs_check.h"

#define HOT_CPU		1
#define ONLINE_FILE	"/sys/devices/system/cpu/cpu1/online"
#define MAX_GAP_MS	2000	/* longest refresh gap allowed (TCG is slow) */
#define NR_FIELDS	10

static const char * const field_name[NR_FIELDS] = {
	"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
	"guest", "guest_nice",
};

/* The row's counters, in field_name order (they follow cpu and flags). */
static const __u64 *row_fields(const struct coarse_stat_cpu_row *row)
{
	return &row->user;
}

static bool may_go_back(unsigned int f)
{
	/* idle/iowait: NO_HZ times while online, tick counts while offline */
	return f == 3 || f == 4;
}

static unsigned int rounds(void)
{
	const char *s = getenv("CS_HOTPLUG_ROUNDS");
	int v = s ? atoi(s) : 0;

	return v > 0 ? v : 3;
}

static int read_online(void)
{
	char buf[8];

	if (cs_read_file(ONLINE_FILE, buf, sizeof(buf)) < 0)
		return -1;
	return buf[0] == '1';
}

static int set_online(bool on)
{
	int fd, ret = 0;

	fd = open(ONLINE_FILE, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

FIXTURE(hotplug) {
	struct cs_counts	base;
	unsigned long		taint;
	bool			was_online;
	bool			changed;
};

FIXTURE_SETUP(hotplug)
{
	int on;

	cs_probe_init();
	if (access(ONLINE_FILE, W_OK))
		SKIP(return, "%s: %s (CPU 1 cannot go offline)", ONLINE_FILE, strerror(errno));
	on = read_online();
	ASSERT_LE(0, on);
	self->was_online = on;
	if (!on) {
		self->changed = true;
		ASSERT_EQ(0, set_online(true));
	}
	ASSERT_EQ(0, cs_read_base(&self->base));
	self->taint = cs_tainted();
}

FIXTURE_TEARDOWN_PARENT(hotplug)
{
	/* whatever happened: CPU 1 as it was */
	if (read_online() != self->was_online)
		EXPECT_EQ(0, set_online(self->was_online));
}

/* The CPU page and a buffer for copies. */
struct cpu_pg {
	struct cs_map	m;
	void		*buf;
	unsigned int	nr_rows;
};

static const struct coarse_stat_cpu_page *pg_copy(struct cpu_pg *c, void *dst)
{
	if (cs_cpu_copy(cs_cpu_page(&c->m), dst ?: c->buf, c->m.len, NULL) < 0)
		return NULL;
	return dst ?: c->buf;
}

/* Wait for @n refreshes after now; the copy then, or NULL. */
static const struct coarse_stat_cpu_page *wait_refreshes(struct cpu_pg *c, unsigned int n)
{
	const struct coarse_stat_cpu_page *p = pg_copy(c, NULL);
	__u64 target, end = cs_mono_ns() + 5000 * CS_NSEC_PER_MSEC;

	if (!p)
		return NULL;
	target = p->refresh[0].nr_refresh + n;
	while (cs_mono_ns() < end) {
		usleep(1000);
		p = pg_copy(c, NULL);
		if (p && p->refresh[0].nr_refresh >= target)
			return p;
	}
	return NULL;
}

/* What the reader found. */
struct reader {
	struct cpu_pg	*c;
	int		stop;
	unsigned long	copies, failed_copies, refreshes;
	unsigned long	bad_sum, bad_cpu, back[NR_FIELDS], bad_order;
	__u64		max_drop[NR_FIELDS];	/* biggest step back, ns */
	__u64		max_gap_ns;		/* between refreshes seen */
	unsigned long	online_seen, offline_seen;
	char		first_bad[160];
};

static void reader_bad(struct reader *r, const char *what, unsigned int row, unsigned int f)
{
	if (!r->first_bad[0])
		snprintf(r->first_bad, sizeof(r->first_bad), "%s: row %u field %s", what, row,
			 f < NR_FIELDS ? field_name[f] : "-");
}

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	struct cpu_pg *c = r->c;
	void *bufs[2];
	const struct coarse_stat_cpu_page *p, *prev = NULL;
	unsigned int i, f, cur = 0;
	__u64 last_update = 0;

	bufs[0] = aligned_alloc(64, c->m.len);
	bufs[1] = aligned_alloc(64, c->m.len);
	if (!bufs[0] || !bufs[1])
		return NULL;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		p = pg_copy(c, bufs[cur]);
		if (!p) {
			r->failed_copies++;
			continue;
		}
		r->copies++;
		for (f = 0; f < NR_FIELDS; f++) {
			__u64 sum = 0;

			for (i = 1; i < c->nr_rows; i++)
				sum += row_fields(cs_cpu_row(p, i))[f];
			if (sum != row_fields(cs_cpu_row(p, 0))[f]) {
				r->bad_sum++;
				reader_bad(r, "row 0 is not the sum", 0, f);
			}
		}
		for (i = 0; i < c->nr_rows; i++) {
			if (cs_cpu_row(p, i)->cpu != (i ? i - 1 : ~0U)) {
				r->bad_cpu++;
				reader_bad(r, "wrong cpu number", i, NR_FIELDS);
			}
		}
		if (cs_cpu_row(p, HOT_CPU + 1)->flags & COARSE_STAT_CPU_ONLINE)
			r->online_seen++;
		else
			r->offline_seen++;
		if (prev && (p->refresh[0].nr_refresh < prev->refresh[0].nr_refresh ||
			     p->refresh[0].update_ns < prev->refresh[0].update_ns ||
			     (p->refresh[0].nr_refresh != prev->refresh[0].nr_refresh &&
			      p->refresh[0].update_ns == prev->refresh[0].update_ns))) {
			r->bad_order++;
			reader_bad(r, "refresh went back", 0, NR_FIELDS);
		}
		if (prev && p->refresh[0].nr_refresh != prev->refresh[0].nr_refresh) {
			r->refreshes++;
			for (i = 0; i < c->nr_rows; i++) {
				const __u64 *a = row_fields(cs_cpu_row(prev, i));
				const __u64 *b = row_fields(cs_cpu_row(p, i));

				for (f = 0; f < NR_FIELDS; f++) {
					if (b[f] >= a[f])
						continue;
					r->back[f]++;
					if (a[f] - b[f] > r->max_drop[f])
						r->max_drop[f] = a[f] - b[f];
					if (!may_go_back(f))
						reader_bad(r, "went back", i, f);
				}
			}
		}
		if (last_update && p->refresh[0].update_ns != last_update &&
		    p->refresh[0].update_ns - last_update > r->max_gap_ns)
			r->max_gap_ns = p->refresh[0].update_ns - last_update;
		last_update = p->refresh[0].update_ns;
		prev = p;
		cur ^= 1;
		usleep(200);
	}
	free(bufs[0]);
	free(bufs[1]);
	return NULL;
}

TEST_F_TIMEOUT(hotplug, cpu_page_follows_cpu1, 600)
{
	const struct coarse_stat_cpu_page *p;
	const struct coarse_stat_cpu_row *row;
	struct coarse_stat_cpu_row frozen;
	struct reader r = { 0 };
	struct cpu_pg c;
	__u64 v[CS_PROC_STAT_NR], t0, idle_on, idle_off, op_max = 0;
	unsigned int i, f, n = rounds();
	pthread_t th;

	ASSERT_EQ(0, cs_map_cpu(&c.m));
	c.nr_rows = cs_cpu_page(&c.m)->nr_rows;
	ASSERT_LT(HOT_CPU + 1, c.nr_rows);
	c.buf = aligned_alloc(64, c.m.len);
	ASSERT_NE(NULL, c.buf);
	r.c = &c;
	ASSERT_EQ(0, pthread_create(&th, NULL, reader_fn, &r));

	for (i = 0; i < n; i++) {
		p = wait_refreshes(&c, 1);
		ASSERT_NE(NULL, p);
		idle_on = cs_cpu_row(p, HOT_CPU + 1)->idle;

		t0 = cs_mono_ns();
		ASSERT_EQ(0, set_online(false)) TH_LOG("round %u: offline: failed", i);
		t0 = cs_mono_ns() - t0;
		op_max = t0 > op_max ? t0 : op_max;
		TH_LOG("round %u: offline took %.1f ms", i, cs_ms(t0));
		p = wait_refreshes(&c, 2);
		ASSERT_NE(NULL, p) TH_LOG("round %u: no refresh after offline", i);
		row = cs_cpu_row(p, HOT_CPU + 1);
		EXPECT_EQ(0, row->flags & COARSE_STAT_CPU_ONLINE);
		EXPECT_TRUE(cs_cpu_row(p, 1)->flags & COARSE_STAT_CPU_ONLINE);
		EXPECT_TRUE(cs_cpu_row(p, 0)->flags & COARSE_STAT_CPU_ONLINE);
		EXPECT_EQ(-ENOENT, cs_proc_stat_cpu(HOT_CPU, v));
		frozen = *row;
		idle_off = row->idle;

		/* an offline CPU's row stays as it was */
		p = wait_refreshes(&c, 3);
		ASSERT_NE(NULL, p);
		row = cs_cpu_row(p, HOT_CPU + 1);
		for (f = 0; f < NR_FIELDS; f++) {
			const char *name = field_name[f];

			EXPECT_EQ(row_fields(&frozen)[f], row_fields(row)[f])
				TH_LOG("round %u: offline cpu%d: %s changed", i, HOT_CPU, name);
		}
		EXPECT_EQ(frozen.flags, row->flags);

		t0 = cs_mono_ns();
		ASSERT_EQ(0, set_online(true)) TH_LOG("round %u: online: failed", i);
		t0 = cs_mono_ns() - t0;
		op_max = t0 > op_max ? t0 : op_max;
		TH_LOG("round %u: online took %.1f ms", i, cs_ms(t0));
		p = wait_refreshes(&c, 2);
		ASSERT_NE(NULL, p) TH_LOG("round %u: no refresh after online", i);
		row = cs_cpu_row(p, HOT_CPU + 1);
		EXPECT_TRUE(row->flags & COARSE_STAT_CPU_ONLINE);
		EXPECT_EQ(0, cs_proc_stat_cpu(HOT_CPU, v));
		TH_LOG("round %u: cpu%d idle %.3f ms online, %.3f offline, %.3f online again",
		       i, HOT_CPU, cs_ms(idle_on), cs_ms(idle_off), cs_ms(row->idle));
	}

	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	TH_LOG("reader: %lu copies (%lu failed), %lu refreshes", r.copies, r.failed_copies,
	       r.refreshes);
	TH_LOG("reader: cpu%d seen online %lu, offline %lu times", HOT_CPU, r.online_seen,
	       r.offline_seen);
	TH_LOG("reader: longest refresh gap %.1f ms", cs_ms(r.max_gap_ns));
	for (f = 0; f < NR_FIELDS; f++)
		if (r.back[f])
			TH_LOG("reader: %s went back %lu times, at most %.3f ms", field_name[f],
			       r.back[f], cs_ms(r.max_drop[f]));
	if (r.first_bad[0])
		TH_LOG("reader: first problem: %s", r.first_bad);
	EXPECT_EQ(0, r.failed_copies);
	EXPECT_EQ(0, r.bad_sum);
	EXPECT_EQ(0, r.bad_cpu);
	EXPECT_EQ(0, r.bad_order);
	for (f = 0; f < NR_FIELDS; f++) {
		const char *name = field_name[f];

		if (!may_go_back(f))
			EXPECT_EQ(0, r.back[f]) TH_LOG("%s went back", name);
	}
	EXPECT_LT(0, r.offline_seen);
	EXPECT_LT(0, r.online_seen);
	/* A refresh may wait for a hotplug operation: they took up to op_max. */
	EXPECT_GE(MAX_GAP_MS * CS_NSEC_PER_MSEC + op_max, r.max_gap_ns);

	cs_unmap(&c.m);
	free(c.buf);
	EXPECT_EQ(self->taint & CS_TAINT_BAD, cs_tainted() & CS_TAINT_BAD)
		TH_LOG("tainted %#lx -> %#lx", self->taint, cs_tainted());
	EXPECT_BASE(&self->base, false, 2000);
}

/* A registered thread on CPU 1 while it goes away. */
enum { T_START, T_READY, T_GO, T_DONE };

struct pinned {
	int		phase;
	int		sleep_fd[2];	/* the thread waits on [0] in the sleeping case */
	bool		sleeping;	/* asleep rather than running when CPU 1 goes */
	struct cs_map	m;
	struct cs_snap	before, after;
	int		err;
	int		cpu_after;	/* sched_getcpu() after the move */
	char		msg[128];
};

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static void *pinned_fn(void *arg)
{
	struct pinned *t = arg;
	const struct coarse_stat_thread_page *p;
	__u64 end;
	char c;
	int i;

	t->err = pin(HOT_CPU);
	if (t->err) {
		snprintf(t->msg, sizeof(t->msg), "sched_setaffinity: %s", strerror(-t->err));
		goto out;
	}
	t->err = cs_map_thread(&t->m);
	if (t->err) {
		snprintf(t->msg, sizeof(t->msg), "map: %s", strerror(-t->err));
		goto out;
	}
	p = cs_thread_page(&t->m);
	for (i = 0; i < 100 && sched_getcpu() != HOT_CPU; i++)
		usleep(1000);
	if (cs_snap(p, &t->before) || t->before.pg.cpu != HOT_CPU) {
		t->err = -EINVAL;
		snprintf(t->msg, sizeof(t->msg), "page cpu %u, running on %d before",
			 t->before.pg.cpu, sched_getcpu());
		goto out;
	}
	__atomic_store_n(&t->phase, T_READY, __ATOMIC_RELEASE);
	if (t->sleeping) {
		/* woken up after CPU 1 went */
		if (read(t->sleep_fd[0], &c, 1) != 1)
			t->err = -errno;
	} else {
		end = cs_mono_ns() + 60000 * CS_NSEC_PER_MSEC;
		while (sched_getcpu() == HOT_CPU && cs_mono_ns() < end)
			;
	}
	t->cpu_after = sched_getcpu();
	if (cs_snap(p, &t->after)) {
		t->err = -errno;
		snprintf(t->msg, sizeof(t->msg), "snapshot after: %s", strerror(errno));
	}
out:
	__atomic_store_n(&t->phase, T_DONE, __ATOMIC_RELEASE);
	return NULL;
}

static bool wait_phase(struct pinned *t, int phase, int ms)
{
	__u64 end = cs_mono_ns() + ms * CS_NSEC_PER_MSEC;

	while (__atomic_load_n(&t->phase, __ATOMIC_ACQUIRE) < phase) {
		if (cs_mono_ns() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static void run_pinned(struct __test_metadata *_metadata, struct _test_data_hotplug *self,
		       bool sleeping)
{
	struct pinned t = { .sleeping = sleeping };
	int bucket = sleeping ? COARSE_STAT_SLEEP : COARSE_STAT_ONCPU;
	const struct cs_snap *a = &t.before, *b = &t.after;
	struct cs_snap s;
	pthread_t th;
	int i;

	ASSERT_EQ(0, pipe(t.sleep_fd));
	ASSERT_EQ(0, pthread_create(&th, NULL, pinned_fn, &t));
	ASSERT_TRUE(wait_phase(&t, T_READY, 10000)) TH_LOG("%s", t.msg);
	if (sleeping) {
		/* asleep on CPU 1: wait for it (up to 10 s), not a fixed 20 ms */
		for (i = 0; i < 10000; i++) {
			ASSERT_EQ(0, cs_snap(cs_thread_page(&t.m), &s));
			if (s.pg.state == COARSE_STAT_SLEEP)
				break;
			usleep(1000);
		}
		EXPECT_EQ(COARSE_STAT_SLEEP, s.pg.state);
		EXPECT_EQ(HOT_CPU, s.pg.cpu);
	}
	EXPECT_EQ(0, set_online(false));
	if (sleeping) {
		/* still asleep; the page still says where it last ran */
		ASSERT_EQ(0, cs_snap(cs_thread_page(&t.m), &s));
		EXPECT_EQ(COARSE_STAT_SLEEP, s.pg.state);
		EXPECT_EQ(HOT_CPU, s.pg.cpu);
		ASSERT_EQ(1, write(t.sleep_fd[1], "x", 1));
	}
	EXPECT_TRUE(wait_phase(&t, T_DONE, 60000));
	pthread_join(th, NULL);
	EXPECT_EQ(0, set_online(true));
	ASSERT_EQ(0, t.err) TH_LOG("%s", t.msg);

	TH_LOG("%s: cpu %u -> %u (running on %d), nr_migrate %llu -> %llu",
	       sleeping ? "asleep" : "running", a->pg.cpu, b->pg.cpu, t.cpu_after,
	       (unsigned long long)a->pg.nr_migrate, (unsigned long long)b->pg.nr_migrate);
	EXPECT_NE(HOT_CPU, t.cpu_after);
	EXPECT_EQ(t.cpu_after, b->pg.cpu);
	EXPECT_LT(a->pg.nr_migrate, b->pg.nr_migrate);
	EXPECT_EQ(COARSE_STAT_ONCPU, b->pg.state);
	EXPECT_EQ(a->pg.start_ns, b->pg.start_ns);
	EXPECT_EQ(b->pg.last_switch_ns - b->pg.start_ns, cs_bucket_sum(&b->pg));
	/* the time it spent on CPU 1 and after is in the right bucket */
	EXPECT_LT(a->pg.bucket_ns[bucket], b->pg.bucket_ns[bucket]);

	cs_unmap(&t.m);
	close(t.sleep_fd[0]);
	close(t.sleep_fd[1]);
	EXPECT_EQ(self->taint & CS_TAINT_BAD, cs_tainted() & CS_TAINT_BAD)
		TH_LOG("tainted %#lx -> %#lx", self->taint, cs_tainted());
	EXPECT_BASE(&self->base, false, 2000);
}

TEST_F_TIMEOUT(hotplug, running_thread_migrates, 300)
{
	run_pinned(_metadata, self, false);
}

TEST_F_TIMEOUT(hotplug, sleeping_thread_migrates, 300)
{
	run_pinned(_metadata, self, true);
}

int main(int argc, char **argv)
{
	cs_require_coarse_stat();
	return test_harness_run(argc, argv);
}
