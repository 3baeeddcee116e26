// SPDX-License-Identifier: GPL-2.0
/*
 * What the CPU page's refresh costs the CPU it runs on: a loop of fixed
 * length, pinned to CPU 0 (where the first opener's refresh timer is started:
 * housekeeping_any_cpu() prefers the opener's CPU), timed with the file
 * closed and with it open and mapped, in turns.  The difference of the
 * medians over the refreshes that ran (the page's nr_refresh) is the cost of
 * one refresh to that CPU: the timer interrupt, the work's kworker and its
 * switches, the walk of every possible CPU.  In a QEMU -icount guest, whose
 * clock counts instructions, it is instructions.
 *
 *   cs_cpu_refresh [-n LOOP] [-r RUNS]
 *
 * Prints "possible_cpus N", the medians, "refreshes K" and
 * "ns_per_refresh X" (instructions under -icount), and for scale
 * "ns_per_proc_stat_read Y": one read of /proc/stat (open, read, close).
 */
#define _GNU_SOURCE
#include <err.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/coarse_stat.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long long spin(long n)
{
	unsigned long long t0 = now_ns();

	for (volatile long i = 0; i < n; i++)
		;
	return now_ns() - t0;
}

static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long median(unsigned long long *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static unsigned long long nr_refresh(const struct coarse_stat_cpu_page *cp)
{
	unsigned long long a = __atomic_load_n(&cp->refresh[0].nr_refresh, __ATOMIC_ACQUIRE);
	unsigned long long b = __atomic_load_n(&cp->refresh[1].nr_refresh, __ATOMIC_ACQUIRE);

	return a > b ? a : b;
}

int main(int argc, char **argv)
{
	long loop = 20000000;
	int runs = 9, opt, i;
	unsigned long long *closed, *open_t, refreshes = 0, mc, mo;
	double per_refresh;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		if (opt == 'n')
			loop = atol(optarg);
		else if (opt == 'r')
			runs = atoi(optarg);
		else
			errx(2, "usage: %s [-n LOOP] [-r RUNS]", argv[0]);
	}
	if (loop <= 0 || runs <= 0)
		errx(2, "LOOP and RUNS must be positive");
	closed = calloc(runs, sizeof(*closed));
	open_t = calloc(runs, sizeof(*open_t));
	if (!closed || !open_t)
		err(1, "calloc");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		err(1, "sched_setaffinity");
	spin(loop);	/* warm up */

	for (i = 0; i < runs; i++) {
		const struct coarse_stat_cpu_page *cp;
		unsigned long long n0;
		struct stat st;
		int fd;

		closed[i] = spin(loop);

		fd = open("/proc/coarse_stat_cpu", O_RDONLY);
		if (fd < 0 || fstat(fd, &st))
			err(1, "/proc/coarse_stat_cpu");
		cp = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (cp == MAP_FAILED)
			err(1, "mmap");
		if (i == 0)
			printf("possible_cpus %u\n", cp->nr_rows - 1);
		/* Past the refresh that the first open runs itself. */
		usleep(1000);
		n0 = nr_refresh(cp);
		open_t[i] = spin(loop);
		refreshes += nr_refresh(cp) - n0;
		munmap((void *)cp, st.st_size);
		close(fd);
	}
	mc = median(closed, runs);
	mo = median(open_t, runs);
	printf("loop %ld runs %d\n", loop, runs);
	printf("median_closed_ns %llu\nmedian_open_ns %llu\n", mc, mo);
	printf("refreshes %llu\n", refreshes);
	if (!refreshes)
		errx(1, "no refresh ran while the file was open");
	per_refresh = ((double)mo - (double)mc) * runs / (double)refreshes;
	printf("ns_per_refresh %.0f\n", per_refresh);

	for (i = 0; i < runs; i++) {
		unsigned long long t0 = now_ns();
		static char buf[1 << 16];
		int k;

		for (k = 0; k < 100; k++) {
			int fd = open("/proc/stat", O_RDONLY);

			if (fd < 0)
				err(1, "/proc/stat");
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		}
		closed[i] = (now_ns() - t0) / 100;
	}
	mc = median(closed, runs);
	printf("ns_per_proc_stat_read %llu\n", mc);
	printf("refresh_per_proc_stat_read %.2f\n", per_refresh / (double)mc);
	return 0;
}
