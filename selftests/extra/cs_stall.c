// SPDX-License-Identifier: GPL-2.0
/*
 * How long can a vCPU stand still while its clock runs on?
 *
 * A thread pinned to one CPU reads CLOCK_MONOTONIC (the clock the pages
 * are written with) in a loop and keeps the largest gaps between consecutive
 * reads, once with the other CPUs idle and once with a thread spinning on
 * each of them.  Under
 * single-threaded QEMU TCG the vCPUs take turns on one host thread, so a
 * gap is time the guest counts as on-CPU for whatever ran there (like steal
 * time); the timing checks of the other tests are designed to hold against
 * it.  Not a test: run it by hand (cs_stall [-s SECONDS] [-c CPU]).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cs_read.h"

#define NR_WORST	5

struct gaps {
	__u64	reads;
	__u64	worst[NR_WORST];	/* ns, largest first */
	__u64	over[4];		/* gaps over 0.1, 0.5, 1 and 2 ms */
};

static int stop;

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static void *burner(void *arg)
{
	if (pin((long)arg))
		return NULL;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

static void add_gap(struct gaps *g, __u64 gap)
{
	static const __u64 limit[4] = { 100000, 500000, 1000000, 2000000 };
	int i, j;

	for (i = 0; i < 4; i++)
		if (gap > limit[i])
			g->over[i]++;
	for (i = 0; i < NR_WORST && gap <= g->worst[i]; i++)
		;
	if (i == NR_WORST)
		return;
	for (j = NR_WORST - 1; j > i; j--)
		g->worst[j] = g->worst[j - 1];
	g->worst[i] = gap;
}

/* Spin for @secs on @cpu; gaps between clock reads in @mono. */
static void measure(int cpu, unsigned int secs, struct gaps *mono)
{
	__u64 end, m, m0;

	memset(mono, 0, sizeof(*mono));
	pin(cpu);
	m0 = cs_mono_ns();
	end = m0 + secs * CS_NSEC_PER_SEC;
	do {
		m = cs_mono_ns();
		add_gap(mono, m - m0);
		mono->reads++;
		m0 = m;
	} while (m < end);
}

static void report(const char *what, const struct gaps *g)
{
	int i;

	printf("  %-9s %10llu reads; largest gaps ms:", what, (unsigned long long)g->reads);
	for (i = 0; i < NR_WORST; i++)
		printf(" %.3f", cs_ms(g->worst[i]));
	printf("; gaps over 0.1/0.5/1/2 ms: %llu/%llu/%llu/%llu\n",
	       (unsigned long long)g->over[0], (unsigned long long)g->over[1],
	       (unsigned long long)g->over[2], (unsigned long long)g->over[3]);
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int secs = 5;
	struct gaps mono;
	pthread_t th[64];
	int opt, cpu = 0, n = 0, i;

	while ((opt = getopt(argc, argv, "s:c:")) != -1) {
		if (opt == 's')
			secs = atoi(optarg);
		else if (opt == 'c')
			cpu = atoi(optarg);
		else
			return 2;
	}
	printf("cs_stall: CPU %d of %ld, %u s each\n", cpu, ncpu, secs);
	measure(cpu, secs, &mono);
	printf("other CPUs idle:\n");
	report("MONOTONIC", &mono);

	for (i = 0; i < ncpu && n < 64; i++)
		if (i != cpu && !pthread_create(&th[n], NULL, burner, (void *)(long)i))
			n++;
	usleep(100000);
	measure(cpu, secs, &mono);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("other CPUs busy (%d spinning threads):\n", n);
	report("MONOTONIC", &mono);
	return 0;
}
