// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat under allocation failures.  With /proc/thread-self/fail-nth,
 * the Nth slab or page allocation of the calling thread fails, for N = 1, 2,
 * ... until a call completes without reaching the Nth allocation.  Every call
 * must then either succeed or fail with an errno of its list, and leave
 * nothing behind: the debugfs object counters and the number of open file
 * descriptors are back where they were, and the thread registers fine
 * afterwards.
 *
 * Calls: prctl(PR_COARSE_STAT) for a new thread page, for the page of a
 * thread that has one, for a paused page, and for the CPU page; mmap() of
 * both; the whole open-map-snapshot-unmap-close sequence; mremap() moving a
 * mapping; fork() with a mapping made inheritable by MADV_DOFORK.  Also
 * EMFILE when no file descriptor is left.
 *
 * Needs CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and
 * CONFIG_FAULT_INJECTION_DEBUG_FS.  failslab and fail_page_alloc skip
 * allocations that may sleep and order-0 pages by default; the fixture turns
 * both off, and the failure reports (stack dumps), and restores them.
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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cs_read.h"
#include "../kselftest_harness.h"
#include "cs_check.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FAILSLAB	CS_DEBUGFS "/failslab"
#define FAIL_PAGE	CS_DEBUGFS "/fail_page_alloc"
#define MAX_NTH		2000
#define NR_KNOBS	8

/* A debugfs fault injection setting, as found and as the tests want it. */
struct knob {
	const char	*path;
	const char	*want;
	char		saved[32];
	bool		found;
};

static const struct {
	const char *path, *want;
} knob_list[NR_KNOBS] = {
	{ FAILSLAB "/ignore-gfp-wait", "N" },
	{ FAILSLAB "/verbose", "0" },
	{ FAILSLAB "/cache-filter", "N" },
	{ FAIL_PAGE "/ignore-gfp-wait", "N" },
	{ FAIL_PAGE "/ignore-gfp-highmem", "Y" },
	{ FAIL_PAGE "/min-order", "0" },
	{ FAIL_PAGE "/verbose", "0" },
	{ FAIL_PAGE "/probability", NULL },	/* only checked */
};

static int write_str(const char *path, const char *s)
{
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int read_str(const char *path, char *buf, size_t size)
{
	ssize_t n = cs_read_file(path, buf, size);

	if (n < 0)
		return n;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* /proc/thread-self/fail-nth of the calling thread, opened once. */
static int nth_open(void)
{
	return open(FAIL_NTH, O_RDWR | O_CLOEXEC);
}

static int nth_set(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(fd, buf, len, 0) == len ? 0 : -errno;
}

/* Allocations left before the injected failure: 0 means it happened. */
static int nth_left(int fd)
{
	char buf[16] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		return -1;
	return atoi(buf);
}

/* The header at @addr says @kind. */
static bool page_is(const void *addr, unsigned int kind)
{
	const struct coarse_stat_hdr *h = addr;

	return h->magic == COARSE_STAT_MAGIC && h->kind == kind;
}

struct fault_ctx {
	const struct cs_counts	*base;
	struct cs_map	m;		/* mapped before the loop */
	int		op;		/* PR_COARSE_STAT_THREAD or _CPU */
	int		fd;		/* what the calls opened, or -1 */
	void		*addr;		/* what the calls mapped, or NULL */
	void		*dst;		/* mremap() target */
	__u64		start_ns;	/* of the page in @m */
	bool		snap_ok;
	bool		dofork;		/* fork() copies the mapping in @m */
};

/* What one round does.  The calls return >= 0 or -errno. */
struct fault_op {
	const char	*name;
	/* before each round, without injection: 0 or -errno */
	int		(*setup)(struct fault_ctx *c);
	/* the calls, with injection */
	long		(*call)(struct fault_ctx *c);
	/* after each round, without injection: check and undo; 0 if fine */
	int		(*after)(struct __test_metadata *_metadata, struct fault_ctx *c, long ret);
	/* what the calls may fail with, 0-terminated */
	int		errnos[4];
	/* counters above the baseline after each round */
	int		threads, attached, paused, cpu_users;
};

FIXTURE(fault) {
	struct cs_counts	base;
	struct knob		knob[NR_KNOBS];
	int			nth_fd;
	int			base_fds;
};

FIXTURE_SETUP(fault)
{
	struct cs_map m;
	char buf[32];
	unsigned int i;

	if (access(FAIL_NTH, W_OK))
		SKIP(return, "no %s (CONFIG_FAULT_INJECTION)", FAIL_NTH);
	if (cs_read_counts(&self->base))
		SKIP(return, "no %s", CS_DEBUGFS_STATS);
	if (access(FAILSLAB, F_OK))
		SKIP(return, "no %s (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)",
		     FAILSLAB);
	if (access(FAIL_PAGE, F_OK))
		TH_LOG("no %s (CONFIG_FAIL_PAGE_ALLOC): only slab allocations fail", FAIL_PAGE);
	ASSERT_EQ(0, read_str(FAILSLAB "/probability", buf, sizeof(buf)));
	if (strcmp(buf, "0"))
		SKIP(return, "failslab probability is %s: other fault injection is on", buf);

	for (i = 0; i < NR_KNOBS; i++) {
		struct knob *k = &self->knob[i];

		k->path = knob_list[i].path;
		k->want = knob_list[i].want;
		if (read_str(k->path, k->saved, sizeof(k->saved)))
			continue;
		if (!k->want) {
			if (strcmp(k->saved, "0"))
				SKIP(return, "%s is %s: other fault injection is on",
				     k->path, k->saved);
			continue;
		}
		ASSERT_EQ(0, write_str(k->path, k->want)) TH_LOG("cannot set %s", k->path);
		k->found = true;
		ASSERT_EQ(0, read_str(k->path, buf, sizeof(buf)));
		ASSERT_STREQ(k->want, buf);
	}

	/* the CPU page is allocated on first use and kept: not in the loops */
	ASSERT_EQ(0, cs_map_cpu(&m));
	cs_unmap(&m);
	ASSERT_EQ(0, cs_read_base(&self->base));
	self->nth_fd = nth_open();
	ASSERT_LE(0, self->nth_fd);
	self->base_fds = cs_nr_fds();
	ASSERT_LT(0, self->base_fds);
}

FIXTURE_TEARDOWN_PARENT(fault)
{
	const struct knob *k;
	int ret;

	for (k = self->knob; k < self->knob + NR_KNOBS; k++) {
		if (!k->found)
			continue;
		ret = write_str(k->path, k->saved);
		EXPECT_EQ(0, ret) TH_LOG("cannot restore %s", k->path);
	}
}

static bool errno_ok(const struct fault_op *op, int err)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(op->errnos) && op->errnos[i]; i++)
		if (op->errnos[i] == err)
			return true;
	return false;
}

/*
 * Run @op with its 1st, 2nd, ... allocation failing, until a round completes
 * without reaching the allocation that was to fail.
 */
static void run_rounds(struct __test_metadata *_metadata, struct _test_data_fault *self,
		       const struct fault_op *op, struct fault_ctx *c)
{
	struct cs_counts want = self->base, now;
	unsigned int n, failed = 0, survived = 0;
	int left = 0, fds, first_err = 0;
	long ret;

	want.threads += op->threads;
	want.attached += op->attached;
	want.paused += op->paused;
	want.cpu_users += op->cpu_users;
	c->base = &self->base;
	c->fd = -1;
	c->addr = NULL;

	/* once without injection, so that what it touches is faulted in */
	if (op->setup)
		ASSERT_EQ(0, op->setup(c));
	ret = op->call(c);
	ASSERT_LE(0, ret) TH_LOG("%s without injection: %s", op->name, strerror(-ret));
	ASSERT_EQ(0, op->after(_metadata, c, ret)) TH_LOG("%s without injection", op->name);

	for (n = 1; n <= MAX_NTH; n++) {
		c->fd = -1;
		c->addr = NULL;
		c->snap_ok = false;
		if (op->setup)
			ASSERT_EQ(0, op->setup(c));
		ASSERT_EQ(0, nth_set(self->nth_fd, n));
		ret = op->call(c);
		left = nth_left(self->nth_fd);
		nth_set(self->nth_fd, 0);
		ASSERT_LE(0, left);

		if (ret < 0) {
			EXPECT_TRUE(errno_ok(op, -ret))
				TH_LOG("%s, allocation %u failing: unexpected error %s",
				       op->name, n, strerror(-ret));
			EXPECT_EQ(0, left)
				TH_LOG("%s failed (%s) without an injected failure",
				       op->name, strerror(-ret));
			if (!first_err)
				first_err = -ret;
			failed++;
		} else if (!left) {
			survived++;
		}
		EXPECT_EQ(0, op->after(_metadata, c, ret))
			TH_LOG("%s, allocation %u failing: bad state after %s", op->name, n,
			       ret < 0 ? strerror(-ret) : "success");
		EXPECT_TRUE(cs_wait_counts(&want, &now, false, 2000))
			TH_LOG("%s, %u (%s): threads %+lld attached %+lld paused %+lld cpus %+lld",
			       op->name, n, ret < 0 ? strerror(-ret) : "success",
			       now.threads - want.threads, now.attached - want.attached,
			       now.paused - want.paused, now.cpu_users - want.cpu_users);
		fds = cs_nr_fds();
		EXPECT_EQ(self->base_fds + !!op->threads + !!op->cpu_users, fds)
			TH_LOG("%s, allocation %u failing: %d file descriptors, %d before",
			       op->name, n, fds, self->base_fds);
		if (_metadata->exit_code || left)
			break;
	}
	EXPECT_NE(0, left) TH_LOG("%s: still failing after %u allocations", op->name, MAX_NTH);
	TH_LOG("%s: %u allocations; %u calls failed (first with %s), %u succeeded anyway",
	       op->name, n - 1, failed, first_err ? strerror(first_err) : "-", survived);
	/* the injection works and reaches the calls */
	EXPECT_LT(0, failed);
}

/* Every test ends with this: the thread registers, nothing is left over. */
static void check_register(struct __test_metadata *_metadata, struct _test_data_fault *self)
{
	struct cs_snap s;
	struct cs_map m;

	ASSERT_EQ(0, cs_map_thread(&m));
	ASSERT_EQ(0, cs_snap(cs_thread_page(&m), &s));
	EXPECT_EQ(syscall(SYS_gettid), cs_fd_tid(m.fd));
	EXPECT_EQ(s.pg.last_switch_ns - s.pg.start_ns, cs_bucket_sum(&s.pg));
	cs_unmap(&m);
	EXPECT_BASE(&self->base, true, 3000);
	EXPECT_EQ(self->base_fds, cs_nr_fds());
}

/* The page in c->m is live and still the one it was. */
static int check_same_page(struct fault_ctx *c)
{
	struct cs_snap s;

	if (cs_snap(cs_thread_page(&c->m), &s))
		return -1;
	if (s.pg.state != COARSE_STAT_ONCPU)
		return -1;
	if (c->start_ns && s.pg.start_ns != c->start_ns)
		return -1;
	c->start_ns = s.pg.start_ns;
	return 0;
}

static long call_prctl(struct fault_ctx *c)
{
	long ret = cs_open(c->op);

	if (ret < 0)
		return -errno;
	c->fd = ret;
	return ret;
}

/* Map what the call opened and check it is the right kind of page. */
static int check_new_fd(struct fault_ctx *c, long ret)
{
	struct cs_map m;
	int err;

	if (ret < 0)
		return 0;
	err = cs_map_fd(ret, &m);
	if (!err && !page_is(m.addr, c->op == CS_OP_CPU ?
			     COARSE_STAT_KIND_CPU : COARSE_STAT_KIND_THREAD))
		err = -1;
	m.fd = ret;
	cs_unmap(&m);
	return err;
}

static int after_prctl(struct __test_metadata *_metadata, struct fault_ctx *c, long ret)
{
	return check_new_fd(c, ret);
}

TEST_F_TIMEOUT(fault, prctl_thread_new_page, 300)
{
	struct fault_ctx c = { .op = PR_COARSE_STAT_THREAD };
	struct fault_op op = {
		.name = "prctl(THREAD), new page",
		.call = call_prctl, .after = after_prctl,
		.errnos = { ENOMEM },
	};

	run_rounds(_metadata, self, &op, &c);
	check_register(_metadata, self);
}

/* The thread has a page and a mapping: another fd for the same page. */
static int after_prctl_existing(struct __test_metadata *_metadata, struct fault_ctx *c, long ret)
{
	return check_new_fd(c, ret) ?: check_same_page(c);
}

TEST_F_TIMEOUT(fault, prctl_thread_existing_page, 300)
{
	struct fault_ctx c = { .op = PR_COARSE_STAT_THREAD };
	struct fault_op op = {
		.name = "prctl(THREAD), existing page",
		.call = call_prctl, .after = after_prctl_existing,
		.errnos = { ENOMEM },
		.threads = 1, .attached = 1,
	};

	ASSERT_EQ(0, cs_map_thread(&c.m));
	ASSERT_EQ(0, check_same_page(&c));
	run_rounds(_metadata, self, &op, &c);
	cs_unmap(&c.m);
	check_register(_metadata, self);
}

/* The page was paused by a release in another thread: restart it. */
static void *close_fd_fn(void *arg)
{
	close(*(int *)arg);
	return NULL;
}

static int setup_paused(struct fault_ctx *c)
{
	struct cs_counts want = *c->base, now;
	pthread_t th;
	int fd;

	fd = prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD, 0L, 0L, 0L);
	if (fd < 0)
		return -errno;
	if (pthread_create(&th, NULL, close_fd_fn, &fd))
		return -EAGAIN;
	pthread_join(th, NULL);
	want.threads++;
	want.attached++;
	want.paused++;
	return cs_wait_counts(&want, &now, false, 1000) ? 0 : -ESTALE;
}

static int after_paused(struct __test_metadata *_metadata, struct fault_ctx *c, long ret)
{
	struct cs_counts want = *c->base, now;
	struct cs_snap s;
	struct cs_map m;
	int err = 0;

	if (ret < 0) {
		/* a failed restart leaves it paused; restart without injection */
		want.threads++;
		want.attached++;
		want.paused++;
		if (!cs_wait_counts(&want, &now, false, 1000)) {
			TH_LOG("failed restart: threads %+lld attached %+lld paused %+lld",
			       now.threads - c->base->threads, now.attached - c->base->attached,
			       now.paused - c->base->paused);
			err = -1;
		}
		ret = prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD, 0L, 0L, 0L);
		if (ret < 0)
			return -1;
	}
	/* restarted: a fresh, live page; closing it frees the object */
	if (cs_map_fd(ret, &m)) {
		close(ret);
		return -1;
	}
	if (cs_snap(cs_thread_page(&m), &s) ||
	    s.pg.state != COARSE_STAT_ONCPU || s.pg.nr_switch_in > 1000)
		err = -1;
	cs_unmap(&m);
	return err;
}

TEST_F_TIMEOUT(fault, prctl_thread_paused_page, 300)
{
	struct fault_ctx c = { .op = PR_COARSE_STAT_THREAD };
	struct fault_op op = {
		.name = "prctl(THREAD), paused page",
		.setup = setup_paused, .call = call_prctl, .after = after_paused,
		.errnos = { ENOMEM },
	};

	run_rounds(_metadata, self, &op, &c);
	check_register(_metadata, self);
}

TEST_F_TIMEOUT(fault, prctl_cpu_page, 300)
{
	struct fault_ctx c = { .op = CS_OP_CPU };
	struct fault_op op = {
		.name = "prctl(CPU)",
		.call = call_prctl, .after = after_prctl,
		.errnos = { ENOMEM },
	};

	run_rounds(_metadata, self, &op, &c);
	check_register(_metadata, self);
}

/* mmap() of an open fd. */
static long call_mmap(struct fault_ctx *c)
{
	void *addr = mmap(NULL, c->m.len, PROT_READ, MAP_SHARED, c->m.fd, 0);

	if (addr == MAP_FAILED)
		return -errno;
	c->addr = addr;
	return 0;
}

static int after_mmap(struct __test_metadata *_metadata, struct fault_ctx *c, long ret)
{
	int err = 0;

	if (ret >= 0) {
		if (!page_is(c->addr, c->op == CS_OP_CPU ?
			     COARSE_STAT_KIND_CPU : COARSE_STAT_KIND_THREAD))
			err = -1;
		if (munmap(c->addr, c->m.len))
			err = -1;
	}
	if (c->op == PR_COARSE_STAT_THREAD && check_same_page(c))
		err = -1;
	return err;
}

TEST_F_TIMEOUT(fault, mmap_thread_page, 300)
{
	struct fault_ctx c = { .op = PR_COARSE_STAT_THREAD };
	struct fault_op op = {
		.name = "mmap(thread page)",
		.call = call_mmap, .after = after_mmap,
		.errnos = { ENOMEM },
		.threads = 1, .attached = 1,
	};

	ASSERT_EQ(0, cs_map_thread(&c.m));
	ASSERT_EQ(0, check_same_page(&c));
	run_rounds(_metadata, self, &op, &c);
	cs_unmap(&c.m);
	check_register(_metadata, self);
}

TEST_F_TIMEOUT(fault, mmap_cpu_page, 300)
{
	struct fault_ctx c = { .op = CS_OP_CPU };
	struct fault_op op = {
		.name = "mmap(CPU page)",
		.call = call_mmap, .after = after_mmap,
		.errnos = { ENOMEM },
		.cpu_users = 2,		/* the fd and the mapping */
	};

	ASSERT_EQ(0, cs_map_cpu(&c.m));
	run_rounds(_metadata, self, &op, &c);
	cs_unmap(&c.m);
	check_register(_metadata, self);
}

/*
 * The whole sequence with one failing allocation somewhere: open, map,
 * snapshot, unmap, close.  munmap() may fail too.
 */
static long call_sequence(struct fault_ctx *c)
{
	struct cs_vsnap v;
	struct stat st;
	void *addr;
	int fd;

	fd = cs_open(c->op);
	if (fd < 0)
		return -errno;
	c->fd = fd;
	if (fstat(fd, &st))
		return -errno;
	addr = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED)
		return -errno;
	c->addr = addr;
	c->m.len = st.st_size;
	if (c->op == PR_COARSE_STAT_THREAD)
		/* no fdinfo read here: allocations may be failing */
		c->snap_ok = !cs_vdso_snap(addr, &v) && v.p.hdr.magic == COARSE_STAT_MAGIC &&
			     v.p.state == COARSE_STAT_ONCPU;
	else
		c->snap_ok = page_is(addr, COARSE_STAT_KIND_CPU);
	if (munmap(addr, st.st_size))
		return -errno;
	c->addr = NULL;
	close(fd);
	c->fd = -1;
	return 0;
}

static int after_sequence(struct __test_metadata *_metadata, struct fault_ctx *c, long ret)
{
	bool mapped = c->addr;

	if (c->addr)
		munmap(c->addr, c->m.len);
	if (c->fd >= 0)
		close(c->fd);
	/* a mapping that was made shows the page */
	return (mapped || ret >= 0) && !c->snap_ok ? -1 : 0;
}

TEST_F_TIMEOUT(fault, sequence_thread_page, 300)
{
	struct fault_ctx c = { .op = PR_COARSE_STAT_THREAD };
	struct fault_op op = {
		.name = "open, map, snapshot, unmap, close (thread page)",
		.call = call_sequence, .after = after_sequence,
		.errnos = { ENOMEM },
	};

	run_rounds(_metadata, self, &op, &c);
	check_register(_metadata, self);
}

TEST_F_TIMEOUT(fault, sequence_cpu_page, 300)
{
	struct fault_ctx c = { .op = CS_OP_CPU };
	struct fault_op op = {
		.name = "open, map, unmap, close (CPU page)",
		.call = call_sequence, .after = after_sequence,
		.errnos = { ENOMEM },
	};

	run_rounds(_metadata, self, &op, &c);
	check_register(_metadata, self);
}

/* mremap() moving the mapping onto a reserved page. */
static int setup_mremap(struct fault_ctx *c)
{
	c->dst = mmap(NULL, c->m.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return c->dst == MAP_FAILED ? -errno : 0;
}

static long call_mremap(struct fault_ctx *c)
{
	void *addr = mremap((void *)c->m.addr, c->m.len, c->m.len,
			    MREMAP_MAYMOVE | MREMAP_FIXED, c->dst);

	if (addr == MAP_FAILED)
		return -errno;
	c->addr = addr;
	return 0;
}

static int after_mremap(struct __test_metadata *_metadata, struct fault_ctx *c, long ret)
{
	unsigned char vec;

	if (ret >= 0) {
		if (c->addr != c->dst)
			return -1;
		/* the old place is empty */
		if (!mincore((void *)c->m.addr, c->m.len, &vec) || errno != ENOMEM)
			return -1;
		c->m.addr = c->addr;
	} else {
		/* the target may be a reservation or a hole */
		munmap(c->dst, c->m.len);
		if (mincore((void *)c->m.addr, c->m.len, &vec)) {
			TH_LOG("failed mremap(): the mapping is gone");
			return -1;
		}
	}
	return check_same_page(c);
}

TEST_F_TIMEOUT(fault, mremap_thread_page, 300)
{
	struct fault_ctx c = { .op = PR_COARSE_STAT_THREAD };
	struct fault_op op = {
		.name = "mremap(thread page, move)",
		.setup = setup_mremap, .call = call_mremap, .after = after_mremap,
		.errnos = { ENOMEM },
		.threads = 1, .attached = 1,
	};

	ASSERT_EQ(0, cs_map_thread(&c.m));
	ASSERT_EQ(0, check_same_page(&c));
	run_rounds(_metadata, self, &op, &c);
	cs_unmap(&c.m);
	check_register(_metadata, self);
}

/*
 * fork() copying a mapping made inheritable with MADV_DOFORK.  The child
 * sees the parent's page, read-only.  Where the advice is refused (7.3 does
 * on VM_SPECIAL mappings), the child has the file descriptor, not the
 * mapping.
 */
static long call_fork(struct fault_ctx *c)
{
	const struct coarse_stat_thread_page *p = c->m.addr;
	unsigned char vec;
	struct stat st;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (fstat(c->m.fd, &st) || st.st_size != (off_t)c->m.len)
			_exit(3);
		if (!c->dofork)
			_exit(!mincore((void *)p, c->m.len, &vec) || errno != ENOMEM ? 4 : 0);
		if (p->hdr.magic != COARSE_STAT_MAGIC || cs_fd_tid(c->m.fd) != getppid())
			_exit(1);
		if (!mprotect((void *)p, c->m.len, PROT_READ | PROT_WRITE) || errno != EACCES)
			_exit(2);
		_exit(0);
	}
	return pid;
}

/*
 * The child's kernel stack must come from the cache of freed stacks that
 * each CPU keeps (kernel/fork.c), not from vmalloc(): a failure in there
 * warns in the kernel log (the stack is not allocated with __GFP_NOWARN),
 * and is none of coarse_stat's.  The test runs on one CPU, and before each
 * round a child exits there: its stack is released to that CPU's cache
 * when it switches out for the last time, which the sleep lets it do.
 * Injected failures of the page allocator print nothing, and failslab is
 * not verbose.
 */
static int setup_fork(struct fault_ctx *c)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	usleep(1000);
	return 0;
}

static int after_fork(struct __test_metadata *_metadata, struct fault_ctx *c, long ret)
{
	int status;

	if (ret > 0) {
		if (waitpid(ret, &status, 0) != ret)
			return -1;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("child: status %#x", status);
			return -1;
		}
	}
	return check_same_page(c);
}

TEST_F_TIMEOUT(fault, fork_with_mapping, 300)
{
	struct fault_ctx c = { .op = PR_COARSE_STAT_THREAD };
	struct fault_op op = {
		.name = "fork() with MADV_DOFORK mapping",
		.setup = setup_fork, .call = call_fork, .after = after_fork,
		.errnos = { ENOMEM, EAGAIN },
		.threads = 1, .attached = 1,
	};

	cpu_set_t old, one;

	/* on one CPU, for setup_fork() */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(old), &old));
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(0, cs_map_thread(&c.m));
	c.dofork = !madvise((void *)c.m.addr, c.m.len, MADV_DOFORK);
	if (!c.dofork) {
		ASSERT_EQ(EINVAL, errno);
		TH_LOG("MADV_DOFORK refused: the child gets the file descriptor only");
		op.name = "fork() with a mapping";
	}
	ASSERT_EQ(0, check_same_page(&c));
	run_rounds(_metadata, self, &op, &c);
	cs_unmap(&c.m);
	check_register(_metadata, self);
	EXPECT_EQ(0, sched_setaffinity(0, sizeof(old), &old));
}

/* No file descriptor left: EMFILE, and nothing allocated. */
TEST_F_TIMEOUT(fault, no_fd_left, 300)
{
	static const int ops[] = { PR_COARSE_STAT_THREAD, CS_OP_CPU };
	struct cs_counts want = self->base;
	struct rlimit old, rl;
	struct cs_map m;
	int fds[64], n, i, k, ret;

	ASSERT_EQ(0, cs_map_thread(&m));
	ASSERT_EQ(0, close(m.fd));
	m.fd = -1;
	/* the page has the mapping only */
	want.threads = self->base.threads + 1;
	want.attached = self->base.attached + 1;
	EXPECT_BASE(&want, false, 1000);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	rl = old;
	rl.rlim_cur = self->base_fds + 16;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (n = 0; n < (int)ARRAY_SIZE(fds); n++) {
		fds[n] = dup(self->nth_fd);
		if (fds[n] < 0)
			break;
	}
	ASSERT_EQ(EMFILE, errno);
	for (k = 0; k < (int)ARRAY_SIZE(ops); k++) {
		errno = 0;
		ret = cs_open(ops[k]);
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(EMFILE, errno);
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	/* nothing new (the counters cannot be read without a free fd) */
	EXPECT_BASE(&want, false, 1000);
	cs_unmap(&m);
	check_register(_metadata, self);
}

int main(int argc, char **argv)
{
	cs_require_coarse_stat();
	return test_harness_run(argc, argv);
}
