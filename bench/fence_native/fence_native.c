// SPDX-License-Identifier: GPL-2.0
/*
 * fence_native: what each design's fenced clock read costs natively, in TSC
 * ticks per operation, on the machine that runs it (project issue 51,
 * item 3: -icount counts a fence as one instruction).  Each operation is a
 * store to a line this thread owns (a write section's count, or a user
 * struct's field) followed by the clock read the design makes after it:
 *
 *   store + rdtsc               no ordering (not a design: the floor)
 *   store + lfence; rdtsc       rdtsc_ordered(): ktime_get_mono_fast_ns(),
 *                               the rseq prototype's and BPF's stamps
 *   store + rdtscp              rdtsc_ordered() where RDTSCP is chosen
 *   store + lock add + lfence; rdtsc
 *                               the series' stamp: smp_mb() (a locked
 *                               instruction) after the odd count, then
 *                               rdtsc_ordered()
 *   store + mfence + lfence; rdtsc
 *                               the same with MFENCE (not used; for scale)
 *
 *   8 stores (8 lines) + lfence; rdtsc, and + lock add + lfence; rdtsc
 *                               the same with a store buffer to drain, as
 *                               a context switch leaves one
 *
 * Per sample: N operations timed with lfence; rdtsc around the loop, an
 * empty loop of the same N (with the same stores) subtracted; min and
 * median over the samples.  A lower bound of what the kernel pays: its
 * stores and loads around the barrier are more and colder.
 *
 *	fence_native [-n N] [-s SAMPLES]
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile uint64_t line[8 * 8] __attribute__((aligned(64)));
static uint64_t sink;

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;

	asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return (uint64_t)hi << 32 | lo;
}

/* @nst stores to @nst lines (a store buffer to drain), then @body. */
#define OP(name, nst, body)						\
static uint64_t name(long n)						\
{									\
	uint64_t t0 = tsc(), acc = 0;					\
	long i;								\
	int j;								\
									\
	for (i = 0; i < n; i++) {					\
		uint32_t lo, hi;					\
									\
		for (j = 0; j < (nst); j++)				\
			line[8 * j] = i;				\
		asm volatile(body : "=a"(lo), "=d"(hi) :: "rcx", "memory"); \
		acc += lo;						\
	}								\
	sink += acc;							\
	return tsc() - t0;						\
}

OP(op_empty, 1, "xor %%eax, %%eax; xor %%edx, %%edx")
OP(op_rdtsc, 1, "rdtsc")
OP(op_lfence, 1, "lfence; rdtsc")
OP(op_rdtscp, 1, "rdtscp")
OP(op_lock, 1, "lock addl $0, -4(%%rsp); lfence; rdtsc")
OP(op_mfence, 1, "mfence; lfence; rdtsc")
OP(op8_empty, 8, "xor %%eax, %%eax; xor %%edx, %%edx")
OP(op8_lfence, 8, "lfence; rdtsc")
OP(op8_lock, 8, "lock addl $0, -4(%%rsp); lfence; rdtsc")

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *id;
		uint64_t (*fn)(long), (*empty)(long);
		const char *what;
	} ops[] = {
		{ "rdtsc", op_rdtsc, op_empty, "store + rdtsc (unordered: the floor)" },
		{ "lfence_rdtsc", op_lfence, op_empty, "store + lfence; rdtsc (rdtsc_ordered(): fast accessor, rseq prototype, BPF)" },
		{ "rdtscp", op_rdtscp, op_empty, "store + rdtscp (rdtsc_ordered() where RDTSCP is chosen)" },
		{ "lock_lfence_rdtsc", op_lock, op_empty, "store + lock add + lfence; rdtsc (the series' stamp: smp_mb() then rdtsc_ordered())" },
		{ "mfence_lfence_rdtsc", op_mfence, op_empty, "store + mfence + lfence; rdtsc (for scale)" },
		{ "8st_lfence_rdtsc", op8_lfence, op8_empty, "8 stores (8 lines) + lfence; rdtsc" },
		{ "8st_lock_lfence_rdtsc", op8_lock, op8_empty, "8 stores (8 lines) + lock add + lfence; rdtsc (a barrier with a store buffer to drain)" },
	};
	long n = 100000;
	int samples = 31, c, i, k;
	uint64_t *v, *e;

	while ((c = getopt(argc, argv, "n:s:")) != -1) {
		if (c == 'n')
			n = atol(optarg);
		else if (c == 's')
			samples = atoi(optarg);
		else
			return 2;
	}
	v = calloc(samples, sizeof(*v));
	e = calloc(samples, sizeof(*e));
	printf("#section\tid\tunit\tmin\tmedian\tdesc\n");
	for (k = 0; k < (int)(sizeof(ops) / sizeof(ops[0])); k++) {
		for (i = 0; i < samples; i++) {
			e[i] = ops[k].empty(n);
			v[i] = ops[k].fn(n);
		}
		qsort(e, samples, sizeof(*e), cmp);
		qsort(v, samples, sizeof(*v), cmp);
		printf("fence\t%s\ttsc/op\t%.1f\t%.1f\t%s\n", ops[k].id,
		       (double)((int64_t)v[0] - (int64_t)e[0]) / n,
		       (double)((int64_t)v[samples / 2] - (int64_t)e[samples / 2]) / n, ops[k].what);
	}
	return sink == 42;
}
