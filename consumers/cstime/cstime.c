// SPDX-License-Identifier: GPL-2.0
/*
 * cstime: a time(1) that says where the wall time of every thread went.
 *
 *   cstime [-j] [-o FILE] [-s KEY] [-n N] [--] COMMAND [ARG...]
 *
 * Runs COMMAND with libcstime.so preloaded (it sits next to this program, or
 * $CSTIME_LIB), which registers every thread with coarse_stat and passes the
 * page's file descriptor here over a Unix socket.  cstime maps each page,
 * polls its fd (EPOLLIN: the owner exited or exec'd, the page is final),
 * reads the final values and lets the page go.  When COMMAND ends it prints
 * one line per thread and a total, and exits with COMMAND's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "coarse_stat.h"
#include "proto.h"

#define NSEC_PER_SEC	1000000000ULL
#define MAX_CONNS	64	/* connections being served at once */
#define FD_RESERVE	(MAX_CONNS + 32)

/* What an epoll event is about: the tag in the upper half of data.u64. */
enum { EV_LISTEN = 1, EV_CHILD, EV_CONN, EV_PAGE };

struct thr {
	const struct coarse_stat_thread_page	*pg;	/* mapped until read */
	size_t		size;
	int		fd;		/* polled; -1 once read or mapping only */
	pid_t		pid;		/* the process, as cstime sees it */
	pid_t		tid;		/* the thread, as cstime sees it (fdinfo) */
	unsigned int	how;		/* enum cst_how */
	bool		done;		/* @s holds the values, @pg is gone */
	bool		running;	/* not final at the end: values to then */
	uint64_t	handle;		/* pthread_t in its process */
	char		comm[CST_COMM_LEN];
	struct csf_snap	s;
};

/*
 * A name for a thread whose registration has not arrived yet, or that had
 * finished when its creator renamed it (@nthr: the threads registered then).
 */
struct pending_name {
	pid_t		pid;
	uint64_t	handle;
	size_t		nthr;
	char		comm[CST_COMM_LEN];
};

enum sort_key {
	K_WALL, K_CPU, K_RUNQ, K_SLEEP, K_DSLEEP, K_IOWAIT, K_PREEMPT, K_BLOCK,
	K_MIGRATE, K_FAULTS, K_IO, K_TID, K_PID, NR_KEYS
};

static const char * const key_name[NR_KEYS] = {
	"wall", "cpu", "runq", "sleep", "dsleep", "iowait", "preempt",
	"block", "migrate", "faults", "io", "tid", "pid"
};

static struct thr *thr;
static size_t nthr, thr_cap, nmaponly;
static struct pending_name *pend;
static size_t npend, pend_cap;
static int ep, lfd, nconn, open_fds;
static bool listening;
static long nofile;
static char sockdir[96], sockpath[108];
static pid_t child;

/* Registrations that failed in the program, and pages lost here. */
static unsigned long nr_err, nr_err_nosup, nr_err_perm, nr_lost;
static int last_err, lost_err;

static void cleanup(void)
{
	if (sockpath[0])
		unlink(sockpath);
	if (sockdir[0])
		rmdir(sockdir);
	sockpath[0] = sockdir[0] = '\0';
}

static void __attribute__((noreturn, format(printf, 2, 3)))
die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("cstime: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	exit(status);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void ep_add(int fd, unsigned int tag, uint32_t idx, uint32_t events)
{
	struct epoll_event ev = {
		.events = events,
		.data.u64 = (uint64_t)tag << 32 | idx,
	};

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die(125, "epoll_ctl: %s", strerror(errno));
}

static void set_listening(bool on)
{
	struct epoll_event ev = {
		.events = on ? EPOLLIN : 0,
		.data.u64 = (uint64_t)EV_LISTEN << 32,
	};

	if (listening != on && !epoll_ctl(ep, EPOLL_CTL_MOD, lfd, &ev))
		listening = on;
}

/* Copy a final page without the vDSO, per the UAPI header's reader rules. */
static void copy_page(const struct coarse_stat_thread_page *pg,
		      size_t size, struct csf_snap *s)
{
	size_t len = pg->hdr.data_size;
	uint32_t seq;

	if (len > sizeof(s->p))
		len = sizeof(s->p);
	if (len > size)
		len = size;
	memset(s, 0, sizeof(*s));
	do {
		seq = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
		memcpy(&s->p, pg, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || seq != __atomic_load_n(&pg->seq, __ATOMIC_RELAXED));
	s->time_ns = s->p.last_switch_ns;
}

/* Take a page's values (final, or up to now at the end) and let it go. */
static void read_thr(struct thr *t)
{
	if (t->done)
		return;
	if (csf_page_snap(t->pg, &t->s))
		copy_page(t->pg, t->size, &t->s);
	t->running = t->s.p.state != COARSE_STAT_EXITED;
	munmap((void *)t->pg, t->size);
	t->pg = NULL;
	if (t->fd >= 0) {
		close(t->fd);
		open_fds--;
	} else {
		nmaponly--;
	}
	t->fd = -1;
	t->done = true;
}

static bool thr_final(const struct thr *t)
{
	return t->done ||
	       __atomic_load_n(&t->pg->state, __ATOMIC_RELAXED) ==
	       COARSE_STAT_EXITED;
}

/* Pages without an fd (cstime was short of them): look at them now. */
static void scan_maponly(void)
{
	size_t i;

	for (i = 0; i < nthr && nmaponly; i++)
		if (!thr[i].done && thr[i].fd < 0 && thr_final(&thr[i]))
			read_thr(&thr[i]);
}

static void *grow(void *p, size_t *cap, size_t n, size_t elsize)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 256;
	p = realloc(p, *cap * elsize);
	if (!p)
		die(125, "out of memory");
	return p;
}

static void set_comm(char *dst, const char *src)
{
	memcpy(dst, src, CST_COMM_LEN);
	dst[CST_COMM_LEN - 1] = '\0';
}

/*
 * The owner of the thread page of @fd as cstime's PID namespace sees it: the
 * "tid:" line of its fdinfo (the page holds no ID), or @fallback.
 */
static pid_t fd_owner(int fd, pid_t fallback)
{
	char path[64], line[128];
	pid_t tid = fallback;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return fallback;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "tid: %d", &tid) == 1)
			break;
	fclose(f);
	return tid > 0 ? tid : fallback;
}

static void add_page(int fd, pid_t pid, const struct cst_msg *m)
{
	const struct coarse_stat_thread_page *pg;
	struct stat st;
	struct thr *t;
	size_t i;

	pg = MAP_FAILED;
	if (!fstat(fd, &st))
		pg = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		lost_err = errno;
		nr_lost++;
		close(fd);
		return;
	}
	if (pg->hdr.magic != COARSE_STAT_MAGIC ||
	    pg->hdr.kind != COARSE_STAT_KIND_THREAD) {
		lost_err = EPROTO;
		nr_lost++;
		munmap((void *)pg, st.st_size);
		close(fd);
		return;
	}
	thr = grow(thr, &thr_cap, nthr, sizeof(*thr));
	t = &thr[nthr];
	memset(t, 0, sizeof(*t));
	t->pg = pg;
	t->size = st.st_size;
	t->pid = pid;
	t->tid = fd_owner(fd, m->tid);
	t->how = m->how;
	t->handle = m->handle;
	set_comm(t->comm, m->comm);
	if (open_fds + FD_RESERVE < nofile) {
		t->fd = fd;
		open_fds++;
		ep_add(fd, EV_PAGE, nthr, EPOLLIN);
	} else {
		/* Short of fds: keep the mapping only, look at it now and then. */
		close(fd);
		t->fd = -1;
		nmaponly++;
	}
	nthr++;
	for (i = 0; i < npend; i++) {
		if (pend[i].pid == pid && pend[i].handle == m->handle) {
			set_comm(t->comm, pend[i].comm);
			pend[i] = pend[--npend];
			break;
		}
	}
}

/*
 * A thread was renamed.  @m->tid is set when it renamed itself (it is alive,
 * waiting for our answer); otherwise the live thread with that pthread_t in
 * that process, or, if its registration has not arrived yet (renamed by its
 * creator at once), the next one to register with it; if none does, the
 * newest one before it, which had finished (rename_finished()).
 */
static void rename_thr(pid_t pid, const struct cst_msg *m)
{
	size_t i;

	for (i = nthr; i-- > 0;) {
		struct thr *t = &thr[i];

		if (t->pid != pid || thr_final(t))
			continue;
		if (m->tid ? m->tid == t->tid :
			     m->handle == t->handle) {
			set_comm(t->comm, m->comm);
			return;
		}
	}
	if (m->tid)
		return;
	pend = grow(pend, &pend_cap, npend, sizeof(*pend));
	pend[npend].pid = pid;
	pend[npend].handle = m->handle;
	pend[npend].nthr = nthr;
	set_comm(pend[npend].comm, m->comm);
	npend++;
}

/*
 * The names still pending at the end: no thread registered with that
 * pthread_t after the rename, so it was for one that had already finished
 * (its creator renamed it late): the newest that registered before it.
 */
static void rename_finished(void)
{
	size_t i, j;

	for (i = 0; i < npend; i++) {
		for (j = pend[i].nthr; j-- > 0;) {
			if (thr[j].pid == pend[i].pid &&
			    thr[j].handle == pend[i].handle) {
				set_comm(thr[j].comm, pend[i].comm);
				break;
			}
		}
	}
	npend = 0;
}

static void close_conn(int c)
{
	close(c);
	nconn--;
	open_fds--;
	if (nconn < MAX_CONNS)
		set_listening(true);
}

static void conn_event(int c)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct cst_msg m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int fd = -1, n_fds, i;
	ssize_t n;

	n = recvmsg(c, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	for (cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n_fds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n_fds; i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(f));
			if (fd < 0)
				fd = f;
			else
				close(f);
		}
	}
	if (n != sizeof(m) || m.magic != CST_MAGIC ||
	    getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		if (fd >= 0)
			close(fd);
		close_conn(c);
		return;
	}
	switch (m.type) {
	case CST_REG:
		if (fd >= 0) {
			add_page(fd, cred.pid, &m);
			fd = -1;
		} else {
			/* MSG_CTRUNC: we had no fd free to take it. */
			lost_err = EMFILE;
			nr_lost++;
		}
		break;
	case CST_ERR:
		nr_err++;
		last_err = m.err;
		if (m.err == EOPNOTSUPP)
			nr_err_nosup++;
		else if (m.err == EPERM)
			nr_err_perm++;
		break;
	case CST_NAME:
		m.comm[CST_COMM_LEN - 1] = '\0';
		rename_thr(cred.pid, &m);
		break;
	}
	if (fd >= 0)
		close(fd);
	/* The answer: the thread may go on (and exit: its page is mapped). */
	n = send(c, "", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	close_conn(c);
}

static void accept_conns(void)
{
	int c;

	while (nconn < MAX_CONNS) {
		c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0) {
			if (errno == EMFILE || errno == ENFILE)
				break;
			return;
		}
		nconn++;
		open_fds++;
		ep_add(c, EV_CONN, c, EPOLLIN);
	}
	set_listening(false);
}

/* Handle what is ready; wait at most @timeout_ms.  Returns events seen. */
static int handle_events(int timeout_ms, bool *child_ready)
{
	struct epoll_event evs[64];
	int n, i;

	n = epoll_wait(ep, evs, 64, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (i = 0; i < n; i++) {
		uint32_t tag = evs[i].data.u64 >> 32;
		uint32_t idx = (uint32_t)evs[i].data.u64;

		switch (tag) {
		case EV_LISTEN:
			accept_conns();
			break;
		case EV_CHILD:
			*child_ready = true;
			break;
		case EV_CONN:
			conn_event(idx);
			break;
		case EV_PAGE:
			read_thr(&thr[idx]);
			break;
		}
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* Output */

static uint64_t key_val(const struct thr *t, enum sort_key k)
{
	const struct coarse_stat_thread_page *p = &t->s.p;

	switch (k) {
	case K_WALL:	return p->last_switch_ns - p->start_ns;
	case K_CPU:	return p->oncpu_ns;
	case K_RUNQ:	return p->runq_ns;
	case K_SLEEP:	return p->sleep_ns;
	case K_DSLEEP:	return p->dsleep_ns;
	case K_IOWAIT:	return p->iowait_ns;
	case K_PREEMPT:	return p->nr_preempt;
	case K_BLOCK:	return p->nr_block;
	case K_MIGRATE:	return p->nr_migrate;
	case K_FAULTS:	return p->min_flt + p->maj_flt;
	case K_IO:	return p->read_bytes + p->write_bytes;
	case K_TID:	return t->tid;
	case K_PID:	return t->pid;
	default:	return 0;
	}
}

static enum sort_key sort_by = K_WALL;

static int cmp_thr(const void *a, const void *b)
{
	const struct thr *x = a, *y = b;
	uint64_t vx = key_val(x, sort_by), vy = key_val(y, sort_by);
	bool asc = sort_by == K_TID || sort_by == K_PID;

	if (vx != vy)
		return (vx < vy) == asc ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->s.p.start_ns < y->s.p.start_ns ? -1 :
	       x->s.p.start_ns > y->s.p.start_ns;
}

/* The fields of a line: a thread's, or the sum of all. */
struct vals {
	uint64_t	wall, b[COARSE_STAT_NR_BUCKETS];
	uint64_t	preempt, block, migrate, minflt, majflt;
	uint64_t	rbytes, wbytes, rchar, wchar, sum_exec, run_delay;
};

static void thr_vals(const struct thr *t, struct vals *v)
{
	const struct coarse_stat_thread_page *p = &t->s.p;
	int i;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < COARSE_STAT_NR_BUCKETS; i++) {
		v->b[i] = p->bucket_ns[i];
		v->wall += p->bucket_ns[i];
	}
	v->preempt = p->nr_preempt;
	v->block = p->nr_block;
	v->migrate = p->nr_migrate;
	v->minflt = p->min_flt;
	v->majflt = p->maj_flt;
	v->rbytes = p->read_bytes;
	v->wbytes = p->write_bytes;
	v->rchar = p->rchar;
	v->wchar = p->wchar;
	v->sum_exec = p->sum_exec_ns;
	v->run_delay = p->run_delay_ns;
}

static void add_vals(struct vals *sum, const struct vals *v)
{
	uint64_t *d = (uint64_t *)sum;
	const uint64_t *s = (const uint64_t *)v;
	size_t i;

	for (i = 0; i < sizeof(*v) / sizeof(uint64_t); i++)
		d[i] += s[i];
}

/* Milliseconds, truncated to the microsecond, as csf_format_diff() does. */
static const char *ms(char *buf, uint64_t ns)
{
	sprintf(buf, "%llu.%03llu", (unsigned long long)(ns / 1000000),
		(unsigned long long)(ns / 1000 % 1000));
	return buf;
}

static void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void print_text_line(FILE *f, const char *comm, const char *pid,
			    const char *tid, const struct vals *v,
			    const char *note)
{
	char b[6][32];
	int i;

	fprintf(f, "%-15s %7s %7s %11s", comm, pid, tid, ms(b[0], v->wall));
	for (i = 0; i < COARSE_STAT_NR_BUCKETS; i++)
		fprintf(f, " %11s", ms(b[1 + i], v->b[i]));
	fprintf(f, " %7llu %7llu %5llu %7llu %6llu %10llu %10llu%s\n",
		(unsigned long long)v->preempt, (unsigned long long)v->block,
		(unsigned long long)v->migrate, (unsigned long long)v->minflt,
		(unsigned long long)v->majflt, (unsigned long long)v->rbytes,
		(unsigned long long)v->wbytes, note);
}

static void print_json_vals(FILE *f, const struct vals *v)
{
	fprintf(f, "\"wall_ns\":%llu,\"cpu_ns\":%llu,\"runq_ns\":%llu,"
		"\"sleep_ns\":%llu,\"dsleep_ns\":%llu,\"iowait_ns\":%llu,"
		"\"preempt\":%llu,\"block\":%llu,\"migrate\":%llu,"
		"\"minflt\":%llu,\"majflt\":%llu,\"read_bytes\":%llu,"
		"\"write_bytes\":%llu,\"rchar\":%llu,\"wchar\":%llu,"
		"\"sum_exec_ns\":%llu,\"run_delay_ns\":%llu",
		(unsigned long long)v->wall,
		(unsigned long long)v->b[COARSE_STAT_ONCPU],
		(unsigned long long)v->b[COARSE_STAT_RUNQ],
		(unsigned long long)v->b[COARSE_STAT_SLEEP],
		(unsigned long long)v->b[COARSE_STAT_DSLEEP],
		(unsigned long long)v->b[COARSE_STAT_IOWAIT],
		(unsigned long long)v->preempt, (unsigned long long)v->block,
		(unsigned long long)v->migrate, (unsigned long long)v->minflt,
		(unsigned long long)v->majflt, (unsigned long long)v->rbytes,
		(unsigned long long)v->wbytes, (unsigned long long)v->rchar,
		(unsigned long long)v->wchar, (unsigned long long)v->sum_exec,
		(unsigned long long)v->run_delay);
}

static const char *err_text(int err)
{
	static char buf[128];

	switch (err) {
	case EOPNOTSUPP:
		return "this kernel has no coarse_stat (CONFIG_COARSE_STAT; prctl PR_COARSE_STAT: EOPNOTSUPP)";
	case EPERM:
		return "registration refused (EPERM): ask the administrator to set kernel.coarse_stat_thread (2: everyone may register)";
	case 0:
		return "no thread registered: a static or set-user-ID program ignores LD_PRELOAD";
	default:
		snprintf(buf, sizeof(buf), "registration failed: %s",
			 strerror(err));
		return buf;
	}
}

struct run {
	char		**argv;
	int		status;		/* waitpid() */
	uint64_t	wall_ns;
	bool		json;
	long		limit;		/* lines to print, -1: all */
	FILE		*out;
};

static void status_text(char *buf, size_t len, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "exited %d", WEXITSTATUS(status));
}

static unsigned long count_procs(void)
{
	unsigned long n = 0;
	size_t i, j;

	/* Sorted by anything: count distinct pids the slow way, once. */
	for (i = 0; i < nthr; i++) {
		for (j = 0; j < i; j++)
			if (thr[j].pid == thr[i].pid)
				break;
		n += j == i;
	}
	return n;
}

static void report(struct run *r)
{
	FILE *f = r->out;
	struct vals v, sum;
	char st[96], b[32];
	unsigned long nproc, nrun = 0;
	size_t i, shown;
	int err = 0;

	/* What went wrong, if nothing or not everything registered. */
	if (nr_err_nosup)
		err = EOPNOTSUPP;
	else if (nr_err_perm)
		err = EPERM;
	else if (nr_err)
		err = last_err;
	status_text(st, sizeof(st), r->status);
	if (!nthr) {
		fprintf(stderr, "cstime: %s; %s %s, wall %s ms\n", err_text(err),
			r->argv[0], st, ms(b, r->wall_ns));
		if (r->json) {
			fprintf(f, "{\"type\":\"total\",\"threads\":0,\"error\":");
			json_str(f, err_text(err));
			fprintf(f, ",\"command_wall_ns\":%llu,\"status\":%d}\n",
				(unsigned long long)r->wall_ns,
				WIFSIGNALED(r->status) ?
				128 + WTERMSIG(r->status) :
				WEXITSTATUS(r->status));
		}
		return;
	}
	if (nr_err)
		fprintf(stderr, "cstime: %lu thread(s) not counted: %s\n",
			nr_err, err_text(err));
	if (nr_lost)
		fprintf(stderr, "cstime: %lu thread(s) lost: their page could not be mapped (%s)\n",
			nr_lost, strerror(lost_err));

	qsort(thr, nthr, sizeof(*thr), cmp_thr);
	nproc = count_procs();
	memset(&sum, 0, sizeof(sum));
	if (!r->json) {
		fprintf(f, "cstime: %s %s, wall %s ms; %zu threads in %lu process%s, sorted by %s\n",
			r->argv[0], st, ms(b, r->wall_ns), nthr, nproc,
			nproc == 1 ? "" : "es", key_name[sort_by]);
		fprintf(f, "%-15s %7s %7s %11s %11s %11s %11s %11s %11s %7s %7s %5s %7s %6s %10s %10s\n",
			"COMM", "PID", "TID", "WALL_MS", "CPU_MS", "RUNQ_MS",
			"SLEEP_MS", "DSLEEP_MS", "IOWAIT_MS", "PREEMPT",
			"BLOCK", "MIGR", "MINFLT", "MAJFLT", "READ_B",
			"WRITE_B");
	}
	for (i = shown = 0; i < nthr; i++) {
		const struct thr *t = &thr[i];
		char pid[16], tid[16];

		thr_vals(t, &v);
		add_vals(&sum, &v);
		nrun += t->running;
		if (r->limit >= 0 && (long)shown >= r->limit)
			continue;
		shown++;
		if (r->json) {
			fprintf(f, "{\"type\":\"thread\",\"comm\":");
			json_str(f, t->comm);
			fprintf(f, ",\"pid\":%d,\"tid\":%d,\"final\":%s,",
				t->pid, t->tid,
				t->running ? "false" : "true");
			print_json_vals(f, &v);
			fprintf(f, ",\"start_ns\":%llu,\"end_ns\":%llu}\n",
				(unsigned long long)t->s.p.start_ns,
				(unsigned long long)t->s.p.last_switch_ns);
		} else {
			snprintf(pid, sizeof(pid), "%d", t->pid);
			snprintf(tid, sizeof(tid), "%d", t->tid);
			print_text_line(f, t->comm, pid, tid, &v,
					t->running ? "  (still running)" : "");
		}
	}
	if (r->json) {
		fprintf(f, "{\"type\":\"total\",\"threads\":%zu,\"processes\":%lu,\"running\":%lu,\"sort\":\"%s\",",
			nthr, nproc, nrun, key_name[sort_by]);
		print_json_vals(f, &sum);
		fprintf(f, ",\"command\":");
		json_str(f, r->argv[0]);
		fprintf(f, ",\"command_wall_ns\":%llu,\"status\":%d,\"not_counted\":%lu,\"lost\":%lu}\n",
			(unsigned long long)r->wall_ns,
			WIFSIGNALED(r->status) ? 128 + WTERMSIG(r->status) :
			WEXITSTATUS(r->status), nr_err, nr_lost);
	} else {
		if (shown < nthr)
			fprintf(f, "... %zu more thread(s)\n", nthr - shown);
		print_text_line(f, "total", "-", "-", &sum, "");
		if (nrun)
			fprintf(f, "(%lu thread(s) of descendants still running: their values run up to now)\n",
				nrun);
	}
}

/* ------------------------------------------------------------------ */
/* Setup */

static void find_lib(char *buf, size_t len)
{
	const char *env = getenv("CSTIME_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		if (!realpath(env, buf))
			die(125, "CSTIME_LIB=%s: %s", env, strerror(errno));
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		die(125, "/proc/self/exe: %s", strerror(errno));
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/libcstime.so", exe) >= len)
		die(125, "path too long");
	if (access(buf, R_OK))
		die(125, "%s: %s", buf, strerror(errno));
	if (strpbrk(buf, " :"))
		die(125, "%s: LD_PRELOAD cannot name a path with ' ' or ':'",
		    buf);
}

static void setup_socket(void)
{
	const char *tmp = getenv("TMPDIR");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!tmp || !*tmp || strlen(tmp) > 64)
		tmp = "/tmp";
	snprintf(sockdir, sizeof(sockdir), "%s/cstime.XXXXXX", tmp);
	if (!mkdtemp(sockdir)) {
		sockdir[0] = '\0';
		die(125, "mkdtemp in %s: %s", tmp, strerror(errno));
	}
	if ((size_t)snprintf(sockpath, sizeof(sockpath), "%s/sock", sockdir) >=
	    sizeof(sockpath))
		die(125, "%s: path too long", sockdir);
	strcpy(sa.sun_path, sockpath);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
		     0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 4096))
		die(125, "socket %s: %s", sockpath, strerror(errno));
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		rl.rlim_cur = rl.rlim_max = 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	nofile = rl.rlim_cur > INT_MAX ? INT_MAX : (long)rl.rlim_cur;
}

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: cstime [-j] [-o FILE] [-s KEY] [-n N] [--] COMMAND [ARG...]\n"
		"  Runs COMMAND and prints, per thread, where its wall time went:\n"
		"  wall = cpu + runq + sleep + dsleep + iowait (ms), and counters.\n"
		"  -j, --json        one JSON object per line: threads, then the total\n"
		"  -o, --output FILE write the report to FILE (default: stderr)\n"
		"  -s, --sort KEY    wall (default), cpu, runq, sleep, dsleep, iowait,\n"
		"                    preempt, block, migrate, faults, io (descending),\n"
		"                    tid, pid (ascending)\n"
		"  -n, --lines N     print the first N threads only (the total has all)\n"
		"Exits with COMMAND's status (128+N if killed by signal N).\n");
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "sort", required_argument, NULL, 's' },
		{ "lines", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct run r = { .limit = -1, .out = stderr };
	char lib[PATH_MAX], *preload;
	const char *outpath = NULL, *old;
	struct sigaction sa = { .sa_handler = forward };
	bool child_ready = false;
	uint64_t t0, drain_end;
	int c, k, pipefd[2], err, pidfd;
	ssize_t n;
	size_t i;

	while ((c = getopt_long(argc, argv, "+jo:s:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			r.json = true;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 's':
			for (k = 0; k < NR_KEYS; k++)
				if (!strcmp(optarg, key_name[k]))
					break;
			if (k == NR_KEYS)
				usage(125);
			sort_by = k;
			break;
		case 'n':
			r.limit = atol(optarg);
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(125);
		}
	}
	if (optind >= argc)
		usage(125);
	r.argv = argv + optind;
	if (outpath) {
		r.out = fopen(outpath, "w");
		if (!r.out)
			die(125, "%s: %s", outpath, strerror(errno));
	}

	find_lib(lib, sizeof(lib));
	setup_socket();
	atexit(cleanup);
	old = getenv("LD_PRELOAD");
	if (asprintf(&preload, "%s%s%s", lib, old && *old ? ":" : "",
		     old ? old : "") < 0)
		die(125, "out of memory");
	if (setenv("LD_PRELOAD", preload, 1) ||
	    setenv(CST_ENV_SOCK, sockpath, 1))
		die(125, "setenv: %s", strerror(errno));

	if (pipe2(pipefd, O_CLOEXEC))
		die(125, "pipe: %s", strerror(errno));
	fflush(NULL);
	t0 = now_ns();
	child = fork();
	if (child < 0)
		die(125, "fork: %s", strerror(errno));
	if (!child) {
		close(pipefd[0]);
		if (r.out != stderr)
			fclose(r.out);
		execvp(r.argv[0], r.argv);
		err = errno;
		n = write(pipefd[1], &err, sizeof(err));
		_exit(127);
	}
	close(pipefd[1]);
	n = read(pipefd[0], &err, sizeof(err));
	close(pipefd[0]);
	if (n == sizeof(err)) {
		waitpid(child, NULL, 0);
		die(err == ENOENT ? 127 : 126, "%s: %s", r.argv[0],
		    strerror(err));
	}

	/* Like time(1): the terminal's signals are for the command. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	raise_nofile();

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die(125, "epoll: %s", strerror(errno));
	ep_add(lfd, EV_LISTEN, 0, EPOLLIN);
	listening = true;
	open_fds = 8;	/* stdio, the socket, epoll, pidfd, output, spare */
	pidfd = syscall(SYS_pidfd_open, child, 0);
	if (pidfd >= 0)
		ep_add(pidfd, EV_CHILD, 0, EPOLLIN);

	for (;;) {
		int timeout = pidfd < 0 || nmaponly ? 50 : -1;

		if (handle_events(timeout, &child_ready) < 0)
			die(125, "epoll_wait: %s", strerror(errno));
		if (nmaponly)
			scan_maponly();
		if ((child_ready || pidfd < 0) &&
		    waitpid(child, &r.status, WNOHANG) == child)
			break;
	}
	r.wall_ns = now_ns() - t0;

	/*
	 * Every thread of the command has exited, and what it sent is queued:
	 * take it all.  Descendants still running may keep registering; stop
	 * after a second of that.
	 */
	drain_end = now_ns() + NSEC_PER_SEC;
	while (handle_events(0, &child_ready) > 0 && now_ns() < drain_end)
		;
	close(lfd);
	cleanup();
	for (i = 0; i < nthr; i++)
		read_thr(&thr[i]);

	rename_finished();
	report(&r);
	if (r.out != stderr && fclose(r.out))
		die(125, "%s: %s", outpath, strerror(errno));
	if (WIFSIGNALED(r.status)) {
		fprintf(stderr, "cstime: command terminated by signal %d\n",
			WTERMSIG(r.status));
		return 128 + WTERMSIG(r.status);
	}
	return WEXITSTATUS(r.status);
}
