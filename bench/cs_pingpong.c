// SPDX-License-Identifier: GPL-2.0
/*
 * cs_pingpong: the futex ping-pong of cs_bench -i (two threads, a round trip
 * is two context switches and two wakeups) in ONE state per run, between two
 * marker instructions that the QEMU cache plugin of scripts/bench-cache.sh
 * (build/qemu-plugins/libcs_cache.so, window=on) counts between.
 *
 *	cs_pingpong -s keyoff|keyon|reg -c 1|2 [-n ROUNDS] [-w WARMUP]
 *
 *  keyoff	no thread of the process registered (nothing else may be: the
 *		debugfs key count is checked where it exists), the static key off
 *  keyon	the main thread registered (it waits in pthread_join), the two
 *		ping-pong threads not: key on, these two unregistered
 *  reg		both ping-pong threads registered (prctl(PR_COARSE_STAT,
 *		PR_COARSE_STAT_THREAD) and mmap of the page, as a reader does)
 *  -c 1	both threads on CPU 0; -c 2: ping on CPU 0, pong on CPU 1
 *  -n		round trips counted (2000), after -w warm-up round trips (500)
 *
 * The ping thread executes the start marker "nopl 0x43534331(%rax)" after
 * the warm-up and the stop marker "nopl 0x43534330(%rax)" after the counted
 * round trips; both are NOPs on any CPU.  The pong thread runs the same loop
 * without a break, so the window holds steady-state round trips only.
 * Prints one line "cs_pingpong: state S cpus C rounds N warmup W key K ns T",
 * T the CLOCK_MONOTONIC ns between the markers (under QEMU -icount shift=0:
 * the guest instructions executed in the window, on all vCPUs).
 * Exit status 0, 1 on error, 3 when the kernel has no coarse_stat (keyon
 * and reg) or the key is on in keyoff.
 *
 * Build: gcc -O2 -Wall -pthread -isystem HDR/usr/include -o cs_pingpong cs_pingpong.c
 * (HDR: make headers O=HDR of the series' tree; bench-cache.sh, bench-native.sh)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pingpong.h"
#include "cs_allow.h"

/* From the series' UAPI headers (-isystem; <sys/prctl.h> includes them). */
#ifndef PR_COARSE_STAT
#error "PR_COARSE_STAT undefined: build with -isystem DIR/usr/include of the series' make headers"
#endif

#define MARK_START()	asm volatile(".byte 0x0f, 0x1f, 0x80, 0x31, 0x43, 0x53, 0x43" ::: "memory")
#define MARK_STOP()	asm volatile(".byte 0x0f, 0x1f, 0x80, 0x30, 0x43, 0x53, 0x43" ::: "memory")

static int word;
static unsigned long rounds = 2000, warmup = 500;
static int ncpus = 1, reg_pair;
static volatile int err;
static unsigned long long window_ns;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cs_register(void)
{
	struct stat st;
	void *p;
	int fd;

	cs_allow_registrations();
	fd = prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD, 0L, 0L, 0L);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st))
		return -1;
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? -1 : 0;	/* fd and mapping stay */
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "cs_pingpong: sched_setaffinity(CPU %d): %m\n", cpu);
		err = 1;
	}
}

static void *ping_thread(void *arg)
{
	unsigned long long t0;

	(void)arg;
	pin(0);
	if (reg_pair && cs_register()) {
		fprintf(stderr, "cs_pingpong: prctl(PR_COARSE_STAT) in ping: %m\n");
		err = 1;
	}
	ping(&word, warmup);
	t0 = now_ns();
	MARK_START();
	ping(&word, rounds);
	MARK_STOP();
	window_ns = now_ns() - t0;
	return NULL;
}

static void *pong_thread(void *arg)
{
	(void)arg;
	pin(ncpus > 1 ? 1 : 0);
	if (reg_pair && cs_register()) {
		fprintf(stderr, "cs_pingpong: prctl(PR_COARSE_STAT) in pong: %m\n");
		err = 1;
	}
	pong(&word, warmup + rounds);
	return NULL;
}

/* The debugfs count of the coarse_stat static key; -1 where there is none. */
static long long key_count(void)
{
	FILE *f = fopen("/sys/kernel/debug/coarse_stat/stats", "r");
	char line[128];
	long long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "key %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: cs_pingpong -s keyoff|keyon|reg -c 1|2 [-n ROUNDS] [-w WARMUP]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *state = NULL;
	pthread_t t[2];
	long long key;
	int c;

	while ((c = getopt(argc, argv, "s:c:n:w:")) != -1) {
		switch (c) {
		case 's':
			state = optarg;
			break;
		case 'c':
			ncpus = atoi(optarg);
			break;
		case 'n':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			warmup = strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (!state || (ncpus != 1 && ncpus != 2) || !rounds)
		usage();
	if (ncpus > sysconf(_SC_NPROCESSORS_ONLN)) {
		fprintf(stderr, "cs_pingpong: -c %d but %ld CPUs online\n", ncpus,
			sysconf(_SC_NPROCESSORS_ONLN));
		return 1;
	}
	if (!strcmp(state, "keyoff")) {
		if (key_count() > 0) {
			fprintf(stderr, "cs_pingpong: the static key is on (count %lld) in keyoff\n",
				key_count());
			return 3;
		}
	} else if (!strcmp(state, "keyon")) {
		if (cs_register()) {
			fprintf(stderr, "cs_pingpong: prctl(PR_COARSE_STAT): %m (no coarse_stat?)\n");
			return 3;
		}
	} else if (!strcmp(state, "reg")) {
		reg_pair = 1;
		cs_allow_registrations();
		if (prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD, 0L, 0L, 0L) < 0) {
			fprintf(stderr, "cs_pingpong: prctl(PR_COARSE_STAT): %m (no coarse_stat?)\n");
			return 3;
		}
		/*
		 * The probe registered the main thread too (its fd stays open):
		 * it waits in pthread_join throughout, as in keyon.
		 */
	} else {
		usage();
	}
	key = key_count();
	if (pthread_create(&t[1], NULL, pong_thread, NULL) ||
	    pthread_create(&t[0], NULL, ping_thread, NULL)) {
		fprintf(stderr, "cs_pingpong: pthread_create failed\n");
		return 1;
	}
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	if (key_count() > key)
		key = key_count();
	printf("cs_pingpong: state %s cpus %d rounds %lu warmup %lu key %lld ns %llu\n",
	       state, ncpus, rounds, warmup, key, window_ns);
	return err;
}
