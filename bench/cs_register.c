// SPDX-License-Identifier: GPL-2.0
/*
 * cs_register.so: an LD_PRELOAD shim that registers threads with coarse_stat
 * (prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD)) so that an unmodified
 * program such as perf bench runs with every one of its threads registered.
 *
 *	CS_REGISTER=1 LD_PRELOAD=.../cs_register.so perf bench sched pipe
 *
 * With CS_REGISTER=1: the constructor registers the main thread, a wrapper
 * of pthread_create() registers every new thread before it runs the
 * thread's function, and a pthread_atfork() child handler registers the
 * child of a fork() (a child does not inherit a registration:
 * coarse_stat_fork() clears the task's pointers).  The fd is kept open (the
 * registration lasts as long as it); it is O_CLOEXEC, and exec() ends the
 * registration anyway.  If a prctl() fails the shim prints an error and
 * ends the process with status 97, so the run fails.  Each registration
 * writes one line "cs_register: pid P tid T fd F" to the file named by
 * CS_REGISTER_LOG, if set (appended, for counting).  Without CS_REGISTER=1
 * the shim does nothing.
 *
 * Build: gcc -O2 -Wall -shared -fPIC -isystem HDR/usr/include -o cs_register.so cs_register.c -ldl
 * (HDR: make headers O=HDR of the series' tree; bench.sh, bench-native.sh)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cs_allow.h"

/* From the series' UAPI headers (-isystem; <sys/prctl.h> includes them). */
#ifndef PR_COARSE_STAT
#error "PR_COARSE_STAT undefined: build with -isystem DIR/usr/include of the series' make headers"
#endif

static int enabled;

static void cs_register(const char *where)
{
	int fd = prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD, 0L, 0L, 0L);
	const char *log = getenv("CS_REGISTER_LOG");

	if (fd < 0) {
		fprintf(stderr, "cs_register: prctl(PR_COARSE_STAT) in the %s, pid %d tid %ld: %m\n",
			where, getpid(), (long)syscall(SYS_gettid));
		_exit(97);
	}
	if (log) {
		char line[96];
		int lfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		int n = snprintf(line, sizeof(line), "cs_register: pid %d tid %ld fd %d %s\n",
				 getpid(), (long)syscall(SYS_gettid), fd, where);

		if (lfd >= 0) {
			if (write(lfd, line, n) != n)
				_exit(97);
			close(lfd);
		}
	}
	/* fd stays open: the thread stays registered. */
}

static void cs_atfork_child(void)
{
	cs_register("forked child");
}

struct cs_start {
	void *(*fn)(void *);
	void *arg;
};

static void *cs_thread_start(void *p)
{
	struct cs_start s = *(struct cs_start *)p;

	free(p);
	cs_register("new thread");
	return s.fn(s.arg);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct cs_start *s;
	int rc;

	if (!real)
		real = dlsym(RTLD_NEXT, "pthread_create");
	if (!real)
		return 11; /* EAGAIN */
	if (!enabled)
		return real(t, attr, fn, arg);
	s = malloc(sizeof(*s));
	if (!s)
		return 12; /* ENOMEM */
	s->fn = fn;
	s->arg = arg;
	rc = real(t, attr, cs_thread_start, s);
	if (rc)
		free(s);
	return rc;
}

__attribute__((constructor)) static void cs_register_init(void)
{
	const char *e = getenv("CS_REGISTER");

	if (!e || strcmp(e, "1"))
		return;
	enabled = 1;
	pthread_atfork(NULL, NULL, cs_atfork_child);
	cs_allow_registrations();
	cs_register("main thread");
}
