// SPDX-License-Identifier: GPL-2.0
/*
 * libcstime.so: the LD_PRELOAD shim of cstime.  It registers every thread of
 * the program with coarse_stat (prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD))
 * as the thread starts, and hands the page's file descriptor to cstime over
 * the Unix socket named by $CSTIME_SOCK (SCM_RIGHTS), then closes its own.
 * cstime maps the page and reads it once it is final (the thread exited or
 * exec'd), so the shim has nothing to do at thread exit: exit_group() and
 * _exit() lose nothing.
 *
 *   the main thread	a constructor (every image: exec'd descendants too)
 *   other threads	a pthread_create() wrapper whose start routine
 *			registers before it calls the program's
 *   a fork() child	a pthread_atfork() child handler
 *   renames		pthread_setname_np() and prctl(PR_SET_NAME) wrappers
 *			tell cstime the new name
 *
 * Every message is one connection, open only while it is sent, and waits for
 * cstime's one-byte answer: cstime maps a page while its owner still lives
 * (mapping a page of an exited thread takes CAP_SYS_PTRACE), and handles the
 * messages of one process in program order.  A process sends one message at
 * a time (a mutex), so the shim holds at most two fds at once.  Only system
 * calls (no malloc(), no stdio) while registering, errno kept, no output
 * unless $CSTIME_DEBUG is set (then to stderr).  Without $CSTIME_SOCK the
 * shim does nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "proto.h"

#ifndef PR_COARSE_STAT
#define PR_COARSE_STAT		82
#define PR_COARSE_STAT_THREAD	1
#endif

#define CST_EXPORT	__attribute__((visibility("default")))

typedef int (*cst_create_fn)(pthread_t *, const pthread_attr_t *,
			     void *(*)(void *), void *);
typedef int (*cst_setname_fn)(pthread_t, const char *);

static pthread_once_t cst_once = PTHREAD_ONCE_INIT;
/*
 * One message at a time per process: cstime handles them one at a time
 * anyway, and a registration holds two fds (page, socket) until answered;
 * unserialised, a burst of thread starts would hold two per thread.
 */
static pthread_mutex_t cst_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sockaddr_un cst_addr;
static socklen_t cst_addrlen;
static int cst_active;		/* registering: $CSTIME_SOCK set and usable */
static int cst_debug;
static cst_create_fn real_create;
static cst_setname_fn real_setname;

static size_t cst_put(char *buf, size_t len, const char *s)
{
	size_t n = strnlen(s, 64);

	memcpy(buf + len, s, n);
	return len + n;
}

static size_t cst_putnum(char *buf, size_t len, long v)
{
	char num[24];
	int i = sizeof(num);

	do {
		num[--i] = '0' + v % 10;
		v /= 10;
	} while (v && i);
	memcpy(buf + len, num + i, sizeof(num) - i);
	return len + sizeof(num) - i;
}

/* Diagnostics, async-signal-safe: "libcstime: tid N: what: errno E". */
static void cst_diag(const char *what, int err)
{
	char buf[192];
	size_t len;
	ssize_t n;

	if (!cst_debug)
		return;
	len = cst_put(buf, 0, "libcstime: tid ");
	len = cst_putnum(buf, len, syscall(SYS_gettid));
	len = cst_put(buf, len, ": ");
	len = cst_put(buf, len, what);
	if (err) {
		len = cst_put(buf, len, ": errno ");
		len = cst_putnum(buf, len, err);
	}
	buf[len++] = '\n';
	n = write(2, buf, len);
	(void)n;
}

static void cst_setup(void)
{
	const char *path = getenv(CST_ENV_SOCK);
	size_t len;

	cst_debug = getenv(CST_ENV_DEBUG) != NULL;
	real_create = (cst_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	real_setname = (cst_setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np");
	if (!path || !*path)
		return;
	len = strlen(path);
	if (len >= sizeof(cst_addr.sun_path) || !real_create) {
		cst_diag("bad " CST_ENV_SOCK " or no pthread_create", 0);
		return;
	}
	cst_addr.sun_family = AF_UNIX;
	memcpy(cst_addr.sun_path, path, len + 1);
	cst_addrlen = offsetof(struct sockaddr_un, sun_path) + len + 1;
	__atomic_store_n(&cst_active, 1, __ATOMIC_RELEASE);
}

static int cst_is_active(void)
{
	return __atomic_load_n(&cst_active, __ATOMIC_ACQUIRE);
}

static void cst_stop(void)
{
	__atomic_store_n(&cst_active, 0, __ATOMIC_RELEASE);
}

/*
 * Send @m (and @fd if not -1) on a new connection and wait for the answer.
 * Raw system calls: no cancellation point.  The caller holds cst_lock.
 * Returns 0 or -1 with errno set.
 */
static int cst_send(const struct cst_msg *m, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	long s, n;
	char ack;
	int err;

	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	s = syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	do
		n = syscall(SYS_connect, s, &cst_addr, cst_addrlen);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = errno;
		/* cstime is gone: nobody to register with any more. */
		if (err == ECONNREFUSED || err == ENOENT)
			cst_stop();
		goto out;
	}
	do
		n = syscall(SYS_sendmsg, s, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = errno;
		goto out;
	}
	do
		n = syscall(SYS_recvfrom, s, &ack, 1, 0, NULL, NULL);
	while (n < 0 && errno == EINTR);
	err = n == 1 ? 0 : n < 0 ? errno : EPIPE;
out:
	syscall(SYS_close, s);
	errno = err;
	return err ? -1 : 0;
}

static void cst_fill(struct cst_msg *m, unsigned int type, unsigned int how)
{
	memset(m, 0, sizeof(*m));
	m->magic = CST_MAGIC;
	m->type = type;
	m->how = how;
	m->tid = syscall(SYS_gettid);
	m->handle = (uint64_t)pthread_self();
	syscall(SYS_prctl, PR_GET_NAME, m->comm, 0L, 0L, 0L);
	m->comm[CST_COMM_LEN - 1] = '\0';
}

/* Register the calling thread; errno is kept. */
static void cst_register(unsigned int how)
{
	struct cst_msg m;
	int saved = errno;
	long fd;

	if (!cst_is_active())
		goto out;
	cst_fill(&m, CST_REG, how);
	pthread_mutex_lock(&cst_lock);
	fd = syscall(SYS_prctl, PR_COARSE_STAT, PR_COARSE_STAT_THREAD,
		     0L, 0L, 0L);
	if (fd < 0) {
		m.type = CST_ERR;
		m.err = errno == EINVAL ? EOPNOTSUPP : errno;
		/* No thread of this image will do better: say so once. */
		if (m.err == EOPNOTSUPP || m.err == EPERM)
			cst_stop();
		cst_diag("prctl(PR_COARSE_STAT)", m.err);
		if (cst_send(&m, -1))
			cst_diag("cannot tell cstime", errno);
	} else {
		if (cst_send(&m, fd))
			cst_diag("cannot pass the page to cstime", errno);
		else
			cst_diag("registered", 0);
		syscall(SYS_close, fd);
	}
	pthread_mutex_unlock(&cst_lock);
out:
	errno = saved;
}

/* Tell cstime that thread @th is now called @name; errno is kept. */
static void cst_rename(pthread_t th, const char *name)
{
	struct cst_msg m;
	int saved = errno;

	if (!cst_is_active())
		return;
	cst_fill(&m, CST_NAME, 0);
	m.handle = (uint64_t)th;
	if (!pthread_equal(th, pthread_self()))
		m.tid = 0;
	if (name) {
		memset(m.comm, 0, sizeof(m.comm));
		strncpy(m.comm, name, CST_COMM_LEN - 1);
	}
	pthread_mutex_lock(&cst_lock);
	if (cst_send(&m, -1))
		cst_diag("cannot pass a new name to cstime", errno);
	pthread_mutex_unlock(&cst_lock);
	errno = saved;
}

static void cst_fork_child(void)
{
	/* Another thread of the parent may have held it: it is not here. */
	pthread_mutex_init(&cst_lock, NULL);
	cst_register(CST_HOW_FORK);
}

__attribute__((constructor)) static void cst_init(void)
{
	pthread_once(&cst_once, cst_setup);
	if (!cst_is_active())
		return;
	if (pthread_atfork(NULL, NULL, cst_fork_child))
		cst_diag("pthread_atfork", ENOMEM);
	cst_register(CST_HOW_MAIN);
}

struct cst_start {
	void	*(*fn)(void *);
	void	*arg;
};

static void *cst_thread_start(void *p)
{
	struct cst_start st = *(struct cst_start *)p;

	free(p);
	cst_register(CST_HOW_THREAD);
	return st.fn(st.arg);
}

CST_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			      void *(*fn)(void *), void *arg)
{
	struct cst_start *st;
	int ret;

	pthread_once(&cst_once, cst_setup);
	if (!real_create)
		return EAGAIN;
	if (!cst_is_active())
		return real_create(th, attr, fn, arg);
	st = malloc(sizeof(*st));
	if (!st)
		return real_create(th, attr, fn, arg);
	st->fn = fn;
	st->arg = arg;
	ret = real_create(th, attr, cst_thread_start, st);
	if (ret)
		free(st);
	return ret;
}

CST_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	int ret;

	pthread_once(&cst_once, cst_setup);
	if (!real_setname)
		return ENOSYS;
	ret = real_setname(th, name);
	if (!ret)
		cst_rename(th, name);
	return ret;
}

CST_EXPORT int prctl(int option, ...)
{
	unsigned long a2, a3, a4, a5;
	va_list ap;
	long ret;

	/* As glibc does: the kernel takes five arguments, whatever is used. */
	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	ret = syscall(SYS_prctl, option, a2, a3, a4, a5);
	if (option == PR_SET_NAME && !ret)
		cst_rename(pthread_self(), NULL);
	return ret;
}
