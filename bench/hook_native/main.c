// SPDX-License-Identifier: GPL-2.0
/*
 * hook_native: a native lower bound, in cycles, of the coarse_stat hooks'
 * added work: hook.S holds the instruction sequences that the v4 -O2 bench
 * kernel executes for a registered switch and wakeup (objdump of its
 * vmlinux, see hook.S for what differs), run here in a user-space loop,
 * cache-hot, against the same loop with the key-off NOP5 at each site.
 *
 *	hook_native [-n ITERS] [-s SAMPLES] [-r ROUNDS]
 *
 * Each sample times ITERS iterations with the TSC (lfence; rdtsc, or
 * rdtscp); the variants take turns sample by sample, ROUNDS x SAMPLES
 * samples each; min and median per iteration in TSC ticks.  Prints a
 * tab-separated table (see README.md).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cpuid.h>
#include <sched.h>
#include <x86intrin.h>

extern unsigned char task_a[], task_b[], page_a[], page_b[], tk_fast_mono[], fake_clock[];
void hook_rt(unsigned long n), hook_rt_off(unsigned long n);
void hook_rt_copy(unsigned long n), hook_rt_copy_off(unsigned long n);
void hook_wake(unsigned long n), hook_wake_off(unsigned long n);

#define U64(base, off)	(*(uint64_t *)((base) + (off)))
#define U32(base, off)	(*(uint32_t *)((base) + (off)))
#define U8(base, off)	(*(uint8_t *)((base) + (off)))

static int has_rdtscp;

static inline uint64_t tsc(void)
{
	unsigned int aux;

	if (has_rdtscp)
		return __rdtscp(&aux);
	_mm_lfence();
	return __rdtsc();
}

static void setup(void)
{
	unsigned char *t[2] = { task_a, task_b }, *p[2] = { page_a, page_b };
	uint64_t now0;
	int i;

	/* struct tk_fast: seq 0 (even); base[0] at +8 */
	U32(tk_fast_mono, 0) = 0;
	U64(tk_fast_mono, 8 + 0x00) = (uint64_t)fake_clock;	/* clock */
	U64(tk_fast_mono, 8 + 0x08) = ~0ULL;			/* mask */
	U64(tk_fast_mono, 8 + 0x10) = __rdtsc();		/* cycle_last */
	U32(tk_fast_mono, 8 + 0x18) = 1u << 23;			/* mult: ns = tsc / 2 */
	U32(tk_fast_mono, 8 + 0x1c) = 24;			/* shift */
	U64(tk_fast_mono, 8 + 0x20) = 0;			/* xtime_nsec */
	U64(tk_fast_mono, 8 + 0x28) = 1000000000ULL;		/* base */
	U64(fake_clock, 0x28) = ~0ULL;				/* max_cycles */
	now0 = 1000000000ULL;
	for (i = 0; i < 2; i++) {
		U64(t[i], 0x38) = (uint64_t)p[i];	/* coarse_stat_page */
		U8(t[i], 0x35) = 0;			/* se.sched_delayed */
		U8(t[i], 0x36) = 1;			/* is_blocked */
		U8(t[i], 0x5b8) = 0;			/* in_iowait clear */
		U64(t[i], 0x4e8) = ~0ULL;		/* counters_due: never */
		U32(p[i], 0x40) = 0;			/* seq */
		U32(p[i], 0x44) = i ? 2 : 0;		/* b sleeps, a runs */
		U64(p[i], 0x48) = now0;			/* last_switch_ns */
		U64(p[i], 0x50) = 0;			/* wake_ns */
	}
}

struct variant {
	const char *name;
	void (*fn)(unsigned long);
	double *v;
	int nv;
};

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned long n = 200, samples = 2000, rounds = 5, r, s, i;
	unsigned int a, b, c, d;
	struct variant var[] = {
		{ "rt", hook_rt }, { "rt_off", hook_rt_off },
		{ "rt_copy", hook_rt_copy }, { "rt_copy_off", hook_rt_copy_off },
		{ "wake", hook_wake }, { "wake_off", hook_wake_off },
	};
	const int nvar = sizeof(var) / sizeof(var[0]);
	double mn[6], md[6];
	int opt, k;

	while ((opt = getopt(argc, argv, "n:s:r:")) != -1) {
		switch (opt) {
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 's': samples = strtoul(optarg, NULL, 0); break;
		case 'r': rounds = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: hook_native [-n ITERS] [-s SAMPLES] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (__get_cpuid(0x80000001, &a, &b, &c, &d))
		has_rdtscp = !!(d & (1u << 27));
	setup();
	for (k = 0; k < nvar; k++) {
		var[k].v = calloc(samples * rounds, sizeof(double));
		var[k].fn(1000);		/* warm */
	}
	for (r = 0; r < rounds; r++)
		for (s = 0; s < samples; s++)
			for (k = 0; k < nvar; k++) {
				uint64_t t0, t1;

				t0 = tsc();
				var[k].fn(n);
				t1 = tsc();
				var[k].v[var[k].nv++] = (double)(t1 - t0) / n;
			}
	for (k = 0; k < nvar; k++) {
		qsort(var[k].v, var[k].nv, sizeof(double), cmp);
		mn[k] = var[k].v[0];
		md[k] = var[k].v[var[k].nv / 2];
	}
	printf("#meta\tclock_read\t%s\n", has_rdtscp ? "rdtscp" : "lfence; rdtsc");
	printf("#meta\titers\t%lu\n#meta\tsamples\t%lu\n", n, samples * rounds);
	printf("#id\tunit\tmin\tmedian\tdesc\n");
	for (k = 0; k < nvar; k++)
		printf("%s\ttsc/iter\t%.2f\t%.2f\tloop %s\n", var[k].name, mn[k], md[k], var[k].name);
	/* rt = 2 wakeups + 2 switches; wake = 1 wakeup */
	printf("added_wake\ttsc\t%.2f\t%.2f\tregistered wakeup stamp, minus the key-off NOP5\n",
	       mn[4] - mn[5], md[4] - md[5]);
	printf("added_roundtrip\ttsc\t%.2f\t%.2f\t2 wakeups + 2 registered switches (1-CPU ping-pong round trip)\n",
	       mn[0] - mn[1], md[0] - md[1]);
	printf("added_switch\ttsc\t%.2f\t%.2f\tregistered switch (prev and next registered, no copy)\n",
	       ((mn[0] - mn[1]) - 2 * (mn[4] - mn[5])) / 2, ((md[0] - md[1]) - 2 * (md[4] - md[5])) / 2);
	printf("added_switch_copy\ttsc\t%.2f\t%.2f\tregistered switch with the counter copy\n",
	       ((mn[2] - mn[3]) - 2 * (mn[4] - mn[5])) / 2, ((md[2] - md[3]) - 2 * (md[4] - md[5])) / 2);
	printf("copy_extra\ttsc\t%.2f\t%.2f\tthe counter copy alone, per switch\n",
	       ((mn[2] - mn[3]) - (mn[0] - mn[1])) / 2, ((md[2] - md[3]) - (md[0] - md[1])) / 2);
	/* sanity: the pages moved as the kernel's would */
	fprintf(stderr, "hook_native: page_a seq %u nr_block %lu switch_in %lu, page_b seq %u, counters_ns %lu\n",
		U32(page_a, 0x40), (unsigned long)U64(page_a, 0x68), (unsigned long)U64(page_a, 0x58),
		U32(page_b, 0x40), (unsigned long)U64(page_a, 0xb0));
	(void)i;
	return 0;
}
