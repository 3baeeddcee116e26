// SPDX-License-Identifier: GPL-2.0
/*
 * cs_server: a server-like request loop next to the 5 us futex ping-pong of
 * cs_pingpong (project issue 38, item 7): a "server" thread blocks on a
 * futex for 50-500 us per request, so that a registered thread's counter
 * copy at switch-out (coarse_stat_copy_counters(), once the last copy is
 * at least counters_us = 50 us old) runs at nearly every switch-out, as it
 * does for a real server thread.
 *
 *	cs_server -s none|server|both -c 1|2 [-n REQUESTS] [-w WARMUP]
 *		  [-r REPS] [-S SEED] [-m MIN_US] [-M MAX_US]
 *
 * A request: the client thread works a seeded-random MIN_US..MAX_US
 * (default 50..500) microseconds, then stores 1 in the futex word, wakes
 * the server and waits while the word is 1; the server, blocked while the
 * word is 0, stores 0 and wakes the client (the reply), and blocks again.
 * So the server blocks for the client's work each request, and the client
 * blocks for the server's reply.  Per request, with both threads on one
 * CPU (-c 1): two context switches and two wakeups, as a ping-pong round
 * trip, but the server's block lasts 50-500 us, and the client ran that
 * long since its own last switch-out; -c 2 (server on CPU 0, client on CPU
 * 1): each side switches to and from idle.
 *
 * The work is "1: dec; jnz 1b", two instructions per iteration, of
 * US * 500 iterations: US microseconds under QEMU -icount shift=0 (one
 * instruction, one ns), whatever it takes elsewhere.  The same seed gives
 * the same works in every state and run; the work's own instructions are
 * printed (work_insn) so that they can be subtracted.
 *
 *  none	no thread of the process registered (on a coarse_stat kernel
 *		the static key must be off: the debugfs key count is checked)
 *  server	the server thread registered (prctl(PR_COARSE_STAT,
 *		PR_COARSE_STAT_THREAD) and mmap of its page), the client not
 *  both	both registered
 *
 * The counter copies: after each request, each thread loads the
 * counters_ns of its own page (a static dummy when unregistered, so that
 * every state runs the same instructions) and counts the changes: the copies
 * it made, at least (two copies between two loads count once).  The
 * switch-outs come from the page's nr_block and nr_preempt.
 *
 * Markers: the client executes "nopl 0x43534331(%rax)" after the warm-up
 * and "nopl 0x43534330(%rax)" after the counted requests (NOPs), as
 * cs_pingpong does.  Prints per repetition one line (tab-separated):
 *
 *   server STATE CPUS REQUESTS NS WORK_INSN SRV_COPIES CLI_COPIES SRV_SWOUT CLI_SWOUT KEY
 *
 * NS the CLOCK_MONOTONIC ns between the markers (under -icount shift=0:
 * the guest instructions executed in the window on all vCPUs), WORK_INSN
 * the work loop's instructions in the window, *_COPIES and *_SWOUT counted
 * in the window (-1: that thread is not registered).  Exit status 0, 1 on
 * error, 3 when the kernel has no coarse_stat (server, both) or the key is
 * on in "none".
 *
 * Build: gcc -O2 -Wall -static -pthread -isystem HDR/usr/include -o cs_server cs_server.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
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

#ifndef PR_COARSE_STAT
#error "PR_COARSE_STAT undefined: build with -isystem DIR/usr/include of the series' make headers"
#endif
#include <linux/coarse_stat.h>

#define MARK_START()	asm volatile(".byte 0x0f, 0x1f, 0x80, 0x31, 0x43, 0x53, 0x43" ::: "memory")
#define MARK_STOP()	asm volatile(".byte 0x0f, 0x1f, 0x80, 0x30, 0x43, 0x53, 0x43" ::: "memory")

static int word;
static unsigned long rounds = 2000, warmup = 200;
static int ncpus = 1, reg_server, reg_client;
static volatile int err;
static unsigned long *iters;		/* work loop iterations per request */
static unsigned long long window_ns;
static __u64 dummy_counters_ns;

struct side {
	const volatile struct coarse_stat_thread_page *pg;
	const volatile __u64 *cn;	/* &pg->counters_ns or the dummy */
	long copies;			/* changes seen in the window */
	long swout;			/* nr_block + nr_preempt in the window */
};

static struct side srv, cli;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static const struct coarse_stat_thread_page *cs_register(void)
{
	struct stat st;
	void *p;
	int fd;

	cs_allow_registrations();
	fd = prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD, 0L, 0L, 0L);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st))
		return NULL;
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;	/* fd and mapping stay */
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "cs_server: sched_setaffinity(CPU %d): %m\n", cpu);
		err = 1;
	}
}

static void side_init(struct side *s, int reg, const char *who)
{
	s->pg = NULL;
	s->cn = &dummy_counters_ns;
	if (!reg)
		return;
	s->pg = cs_register();
	if (!s->pg) {
		fprintf(stderr, "cs_server: prctl(PR_COARSE_STAT) in %s: %m\n", who);
		err = 1;
		return;
	}
	s->cn = &s->pg->counters_ns;
}

static long side_swout(const struct side *s)
{
	return s->pg ? (long)(s->pg->nr_block + s->pg->nr_preempt) : 0;
}

/* US microseconds of work under -icount: two instructions per iteration. */
static inline void work(unsigned long n)
{
	if (n)
		asm volatile("1: dec %0\n\tjnz 1b" : "+r" (n) :: "cc");
}

/* One request, the client's side; returns whether counters_ns changed. */
static inline int request(unsigned long n, __u64 *last)
{
	__u64 v;

	work(n);
	__atomic_store_n(&word, 1, __ATOMIC_RELEASE);
	futex_wake(&word);
	while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 1)
		futex_wait(&word, 1, 0);
	v = *cli.cn;
	if (v != *last) {
		*last = v;
		return 1;
	}
	return 0;
}

static void *client_thread(void *arg)
{
	unsigned long i, n = warmup + rounds;
	unsigned long long t0;
	__u64 last = 0;
	long copies = 0, sw0;

	(void)arg;
	pin(ncpus > 1 ? 1 : 0);
	side_init(&cli, reg_client, "client");
	for (i = 0; i < warmup; i++)
		request(iters[i], &last);
	sw0 = side_swout(&cli);
	t0 = now_ns();
	MARK_START();
	for (; i < n; i++)
		copies += request(iters[i], &last);
	MARK_STOP();
	window_ns = now_ns() - t0;
	cli.copies = cli.pg ? copies : -1;
	cli.swout = cli.pg ? side_swout(&cli) - sw0 : -1;
	return NULL;
}

static void *server_thread(void *arg)
{
	unsigned long i, n = warmup + rounds;
	__u64 last = 0, v;
	long copies = 0, sw0 = 0;

	(void)arg;
	pin(0);
	side_init(&srv, reg_server, "server");
	for (i = 0; i < n; i++) {
		if (i == warmup) {
			sw0 = side_swout(&srv);
			copies = 0;
		}
		while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 0)
			futex_wait(&word, 0, 0);
		v = *srv.cn;
		if (v != last) {
			last = v;
			copies++;
		}
		__atomic_store_n(&word, 0, __ATOMIC_RELEASE);
		futex_wake(&word);
	}
	srv.copies = srv.pg ? copies : -1;
	srv.swout = srv.pg ? side_swout(&srv) - sw0 : -1;
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
	fprintf(stderr, "usage: cs_server -s none|server|both -c 1|2 [-n REQUESTS] [-w WARMUP] [-r REPS]\n"
			"\t\t [-S SEED] [-m MIN_US] [-M MAX_US]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long min_us = 50, max_us = 500, reps = 3, i, r;
	unsigned long long work_insn;
	uint64_t seed = 38, x;
	const char *state = NULL;
	long long key;
	int c;

	while ((c = getopt(argc, argv, "s:c:n:w:r:S:m:M:")) != -1) {
		switch (c) {
		case 's': state = optarg; break;
		case 'c': ncpus = atoi(optarg); break;
		case 'n': rounds = strtoul(optarg, NULL, 0); break;
		case 'w': warmup = strtoul(optarg, NULL, 0); break;
		case 'r': reps = strtoul(optarg, NULL, 0); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'm': min_us = strtoul(optarg, NULL, 0); break;
		case 'M': max_us = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!state || (ncpus != 1 && ncpus != 2) || !rounds || !reps || max_us < min_us)
		usage();
	if (ncpus > sysconf(_SC_NPROCESSORS_ONLN)) {
		fprintf(stderr, "cs_server: -c %d but %ld CPUs online\n", ncpus,
			sysconf(_SC_NPROCESSORS_ONLN));
		return 1;
	}
	if (!strcmp(state, "none")) {
		if (key_count() > 0) {
			fprintf(stderr, "cs_server: the static key is on (count %lld) in none\n",
				key_count());
			return 3;
		}
	} else if (!strcmp(state, "server")) {
		reg_server = 1;
	} else if (!strcmp(state, "both")) {
		reg_server = reg_client = 1;
	} else {
		usage();
	}
	if (reg_server) {
		/* Probe in a throwaway thread would register it: ask errno only. */
		const struct coarse_stat_thread_page *pg;
		pthread_t t;

		if (pthread_create(&t, NULL, (void *(*)(void *))cs_register, NULL) ||
		    pthread_join(t, (void **)&pg) || !pg) {
			fprintf(stderr, "cs_server: prctl(PR_COARSE_STAT) failed (no coarse_stat?)\n");
			return 3;
		}
	}

	/* The works, seeded: the same sequence in every state and run. */
	iters = calloc(warmup + rounds, sizeof(*iters));
	if (!iters)
		return 1;
	x = seed ? seed : 1;
	work_insn = 0;
	for (i = 0; i < warmup + rounds; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		iters[i] = (min_us + x % (max_us - min_us + 1)) * 500;
		if (i >= warmup)
			work_insn += 2 * iters[i];
	}

	for (r = 0; r < reps && !err; r++) {
		pthread_t t[2];

		word = 0;
		key = key_count();
		if (pthread_create(&t[1], NULL, server_thread, NULL) ||
		    pthread_create(&t[0], NULL, client_thread, NULL)) {
			fprintf(stderr, "cs_server: pthread_create failed\n");
			return 1;
		}
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		if (key_count() > key)
			key = key_count();
		printf("server\t%s\t%d\t%lu\t%llu\t%llu\t%ld\t%ld\t%ld\t%ld\t%lld\n",
		       state, ncpus, rounds, window_ns, work_insn, srv.copies, cli.copies,
		       srv.swout, cli.swout, key);
		fflush(stdout);
	}
	return err;
}
