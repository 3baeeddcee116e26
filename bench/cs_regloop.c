// SPDX-License-Identifier: GPL-2.0
/*
 * cs_regloop: what one registration costs on its own, next to the system
 * calls that make and free a file of the same kinds: one thread, which is
 * not registered otherwise, loops N times over
 *
 *  register	prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD) and close(): an
 *		object, a zeroed page, a secure anonymous inode and a file,
 *		freed again by the close (the owner's last reference)
 *  memfd	memfd_create() and close(): an inode of its own and a file
 *  eventfd	eventfd() and close(): a file on the shared anonymous inode
 *
 * after N / 10 of warm-up, and prints per mode one line
 * "cs_regloop: MODE n N ns-per-op T" (CLOCK_MONOTONIC; under QEMU -icount
 * shift=0: guest instructions).  The main thread holds a registration, so
 * that the static key stays on (no loop patches kernel text).
 *
 *	cs_regloop [N]		(default 20000)
 *
 * Build: gcc -O2 -Wall -pthread -isystem HDR/usr/include -o cs_regloop cs_regloop.c
 * (HDR: the series' UAPI headers; scripts/bench-registration.sh)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "cs_allow.h"

#ifndef PR_COARSE_STAT
#error "PR_COARSE_STAT undefined: build with -isystem DIR/usr/include of the series' make headers"
#endif

enum { REGISTER, MEMFD, EVENTFD, NR_MODES };
static const char * const names[NR_MODES] = { "register", "memfd", "eventfd" };

struct job {
	int		mode;
	long		n;
	double		ns;
	int		err;
};

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int one(int mode)
{
	int fd;

	switch (mode) {
	case REGISTER:
		fd = prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD, 0L, 0L, 0L);
		break;
	case MEMFD:
		fd = memfd_create("cs_regloop", 0);
		break;
	default:
		fd = eventfd(0, 0);
		break;
	}
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void *loop_fn(void *arg)
{
	struct job *j = arg;
	long long start;
	long i;

	for (i = 0; i < j->n / 10; i++)
		if (one(j->mode))
			goto fail;
	start = mono_ns();
	for (i = 0; i < j->n; i++)
		if (one(j->mode))
			goto fail;
	j->ns = (double)(mono_ns() - start) / j->n;
	return NULL;
fail:
	perror(names[j->mode]);
	j->err = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	int hold, mode, rc = 0;

	cs_allow_registrations();
	hold = prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD, 0L, 0L, 0L);
	if (hold < 0) {
		perror("prctl(PR_COARSE_STAT)");
		return 3;
	}
	for (mode = 0; mode < NR_MODES; mode++) {
		struct job j = { .mode = mode, .n = n };
		pthread_t th;

		/* A thread of its own: the registrations are its, not main's. */
		if (pthread_create(&th, NULL, loop_fn, &j) || pthread_join(th, NULL) || j.err) {
			rc = 1;
			continue;
		}
		printf("cs_regloop: %s n %ld ns-per-op %.1f\n", names[mode], n, j.ns);
	}
	close(hold);
	return rc;
}
