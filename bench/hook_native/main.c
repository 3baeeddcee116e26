// SPDX-License-Identifier: GPL-2.0
/*
 * hook_native: a native lower bound, in cycles, of the coarse_stat hooks'
 * added work, v4 against v5 in one run: hook_v4.S and hook_v5.S hold the
 * instruction sequences that the v4 and v5 -O2 kernels execute for a
 * registered switch and wakeup (objdump of their vmlinux; see each file
 * for what differs), run here in user-space loops, cache-hot, against the
 * same loops with the key-off NOP5 at each site.
 *
 *	hook_native [-n ITERS] [-s SAMPLES] [-r ROUNDS]
 *
 * Each sample times ITERS iterations with the TSC (lfence; rdtsc, or
 * rdtscp); all loops, v4's and v5's, take turns sample by sample (the order
 * reversed every other sample), ROUNDS x SAMPLES samples each; min and
 * median per iteration in TSC ticks.  The instructions per iteration (and
 * among them the full barriers, LFENCEs, TSC reads and calls) are counted
 * by single-stepping one and two iterations of each loop in a child under
 * ptrace.  Prints a tab-separated table (see README.md).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <cpuid.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <x86intrin.h>

extern unsigned char v4_task_a[], v4_task_b[], v4_page_a[], v4_page_b[], tk_fast_mono[], v4_fake_clock[];
extern unsigned char v5_task_a[], v5_task_b[], v5_page_a[], v5_page_b[], v5_time_data[];
extern int timekeeping_suspended;
void v4_rt(unsigned long n), v4_rt_off(unsigned long n);
void v4_rt_copy(unsigned long n), v4_rt_copy_off(unsigned long n);
void v4_wake(unsigned long n), v4_wake_off(unsigned long n);
void v5_rt(unsigned long n), v5_rt_off(unsigned long n);
void v5_rt_copy(unsigned long n), v5_rt_copy_off(unsigned long n);
void v5_wake(unsigned long n), v5_wake_off(unsigned long n);
void v4_rt_nomb(unsigned long n), v4_rt_nolfence(unsigned long n), v4_rt_bare(unsigned long n);
void v5_rt_nomb(unsigned long n), v5_rt_nolfence(unsigned long n), v5_rt_bare(unsigned long n);

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

static void setup_v4(void)
{
	unsigned char *t[2] = { v4_task_a, v4_task_b }, *p[2] = { v4_page_a, v4_page_b };
	int i;

	/* struct tk_fast: seq 0 (even); base[0] at +8 */
	U32(tk_fast_mono, 0) = 0;
	U64(tk_fast_mono, 8 + 0x00) = (uint64_t)v4_fake_clock;	/* clock */
	U64(tk_fast_mono, 8 + 0x08) = ~0ULL;			/* mask */
	U64(tk_fast_mono, 8 + 0x10) = __rdtsc();		/* cycle_last */
	U32(tk_fast_mono, 8 + 0x18) = 1u << 23;			/* mult: ns = tsc / 2 */
	U32(tk_fast_mono, 8 + 0x1c) = 24;			/* shift */
	U64(tk_fast_mono, 8 + 0x20) = 0;			/* xtime_nsec */
	U64(tk_fast_mono, 8 + 0x28) = 1000000000ULL;		/* base */
	U64(v4_fake_clock, 0x28) = ~0ULL;			/* max_cycles */
	for (i = 0; i < 2; i++) {
		U64(t[i], 0x38) = (uint64_t)p[i];	/* coarse_stat_page */
		U8(t[i], 0x35) = 0;			/* se.sched_delayed */
		U8(t[i], 0x36) = 1;			/* is_blocked */
		U8(t[i], 0x5b8) = 0;			/* in_iowait clear */
		U64(t[i], 0x4e8) = ~0ULL;		/* counters_due: never */
		U32(p[i], 0x40) = 0;			/* seq */
		U32(p[i], 0x44) = i ? 2 : 0;		/* b sleeps, a runs */
		U64(p[i], 0x48) = 1000000000ULL;	/* last_switch_ns */
		U64(p[i], 0x50) = 0;			/* wake_ns */
	}
}

static void setup_v5(void)
{
	unsigned char *t[2] = { v5_task_a, v5_task_b }, *p[2] = { v5_page_a, v5_page_b };
	unsigned char *vc = v5_time_data;	/* clock_data[CS_HRES_COARSE] */
	int i;

	timekeeping_suspended = 0;
	U32(vc, 0x00) = 0;				/* seq (even) */
	U32(vc, 0x04) = 1;				/* clock_mode: VDSO_CLOCKMODE_TSC */
	U64(vc, 0x08) = __rdtsc() & INT64_MAX;		/* cycle_last */
	U64(vc, 0x10) = 1ULL << 40;			/* max_cycles: ~500 s at 2 GHz */
	U64(vc, 0x18) = ~0ULL;				/* mask (not read on x86) */
	U32(vc, 0x20) = 8000000;			/* mult: a 2.097 GHz TSC, */
	U32(vc, 0x24) = 24;				/* shift: as the TSC's */
	U64(vc, 0x38) = 1000;				/* basetime[CLOCK_MONOTONIC].sec */
	U64(vc, 0x40) = 123456789ULL << 24;		/* .nsec, shifted */
	for (i = 0; i < 2; i++) {
		U64(t[i], 0x38) = (uint64_t)p[i];	/* coarse_stat_page */
		U8(t[i], 0x35) = 0;			/* on_rq */
		U8(t[i], 0x36) = 1;			/* is_blocked */
		U8(t[i], 0x5b8) = 0;			/* in_iowait clear */
		U64(t[i], 0x4e8) = ~0ULL;		/* counters_due: never */
		U32(p[i], 0x40) = 0;			/* seq */
		U32(p[i], 0x44) = i ? 2 : 0;		/* b sleeps, a runs */
		U64(p[i], 0x48) = 1000000000000ULL;	/* last_switch_ns */
	}
}

/* What one run of a loop executes, counted by single-stepping it. */
struct icount {
	long insns, lock, lfence, rdtsc, rdtscp, call;
};

static void classify(pid_t pid, unsigned long rip, struct icount *c)
{
	unsigned char b[16];
	unsigned long w[2];
	int i = 0;

	w[0] = ptrace(PTRACE_PEEKTEXT, pid, (void *)rip, 0);
	w[1] = ptrace(PTRACE_PEEKTEXT, pid, (void *)(rip + 8), 0);
	memcpy(b, w, sizeof(b));
	c->insns++;
	if (b[0] == 0xf0) {
		c->lock++;
		return;
	}
	while (i < 4 && (b[i] == 0x66 || b[i] == 0xf2 || b[i] == 0xf3 || (b[i] & 0xf0) == 0x40))
		i++;
	if (b[i] == 0xe8)
		c->call++;
	else if (b[i] == 0x0f && b[i + 1] == 0xae && b[i + 2] == 0xe8)
		c->lfence++;
	else if (b[i] == 0x0f && b[i + 1] == 0x31)
		c->rdtsc++;
	else if (b[i] == 0x0f && b[i + 1] == 0x01 && b[i + 2] == 0xf9)
		c->rdtscp++;
}

/* Count fn(n) from its entry to its return, in a traced child. */
static int count_run(void (*fn)(unsigned long), unsigned long n, struct icount *c)
{
	unsigned long entry_sp = 0;
	int st, in = 0, ret = -1;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(1);
		raise(SIGSTOP);
		fn(n);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		goto out;
	for (;;) {
		struct user_regs_struct r;

		if (ptrace(PTRACE_GETREGS, pid, 0, &r))
			break;
		if (!in && r.rip == (unsigned long)fn) {
			in = 1;
			entry_sp = r.rsp;
		}
		if (in) {
			if (r.rsp > entry_sp) {
				ret = 0;
				break;
			}
			classify(pid, r.rip, c);
		}
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0))
			break;
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
			break;
	}
out:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return ret;
}

/* Per iteration: a run of two iterations minus a run of one. */
static int count_iter(void (*fn)(unsigned long), struct icount *c)
{
	struct icount one, two;

	if (count_run(fn, 1, &one) || count_run(fn, 2, &two))
		return -1;
	c->insns = two.insns - one.insns;
	c->lock = two.lock - one.lock;
	c->lfence = two.lfence - one.lfence;
	c->rdtsc = two.rdtsc - one.rdtsc;
	c->rdtscp = two.rdtscp - one.rdtscp;
	c->call = two.call - one.call;
	return 0;
}

/* a - b */
static void icount_sub(struct icount *r, const struct icount *a, const struct icount *b)
{
	r->insns = a->insns - b->insns;
	r->lock = a->lock - b->lock;
	r->lfence = a->lfence - b->lfence;
	r->rdtsc = a->rdtsc - b->rdtsc;
	r->rdtscp = a->rdtscp - b->rdtscp;
	r->call = a->call - b->call;
}

/* a switch: (round trip - 2 wakeups) / 2 */
static void icount_switch(struct icount *r, const struct icount *rt, const struct icount *w)
{
	r->insns = (rt->insns - 2 * w->insns) / 2;
	r->lock = (rt->lock - 2 * w->lock) / 2;
	r->lfence = (rt->lfence - 2 * w->lfence) / 2;
	r->rdtsc = (rt->rdtsc - 2 * w->rdtsc) / 2;
	r->rdtscp = (rt->rdtscp - 2 * w->rdtscp) / 2;
	r->call = (rt->call - 2 * w->call) / 2;
}

struct variant {
	const char *name;
	void (*fn)(unsigned long);
	double *v;		/* per sample, in order */
	double *s;		/* sorted */
	double min, med;
	int nv;
};

/* the loops of each version, v4's from 0, v5's from NBASE */
enum {
	RT, RT_OFF, RT_COPY, RT_COPY_OFF, WAKE, WAKE_OFF, NOMB, NOLFENCE, BARE, NBASE,
};

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	unsigned long n = 200, samples = 2000, rounds = 5, r, s;
	unsigned int a, b, c, d;
	struct variant var[] = {
		{ "v4_rt", v4_rt }, { "v4_rt_off", v4_rt_off },
		{ "v4_rt_copy", v4_rt_copy }, { "v4_rt_copy_off", v4_rt_copy_off },
		{ "v4_wake", v4_wake }, { "v4_wake_off", v4_wake_off },
		{ "v4_rt_nomb", v4_rt_nomb }, { "v4_rt_nolfence", v4_rt_nolfence },
		{ "v4_rt_bare", v4_rt_bare },
		{ "v5_rt", v5_rt }, { "v5_rt_off", v5_rt_off },
		{ "v5_rt_copy", v5_rt_copy }, { "v5_rt_copy_off", v5_rt_copy_off },
		{ "v5_wake", v5_wake }, { "v5_wake_off", v5_wake_off },
		{ "v5_rt_nomb", v5_rt_nomb }, { "v5_rt_nolfence", v5_rt_nolfence },
		{ "v5_rt_bare", v5_rt_bare },
	};
	const int nvar = sizeof(var) / sizeof(var[0]);
	struct variant *vv[2] = { &var[0], &var[NBASE] };
	struct icount ic[sizeof(var) / sizeof(var[0])];
	int opt, k, j, ns, counted = 1;
	double *pr;

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
	setup_v4();
	setup_v5();
	ns = samples * rounds;
	for (k = 0; k < nvar; k++) {
		var[k].v = calloc(ns, sizeof(double));
		var[k].s = calloc(ns, sizeof(double));
		var[k].fn(1000);		/* warm */
	}
	for (k = 0; k < nvar; k++)
		if (count_iter(var[k].fn, &ic[k]))
			counted = 0;
	for (r = 0; r < rounds; r++)
		for (s = 0; s < samples; s++)
			for (j = 0; j < nvar; j++) {
				uint64_t t0, t1;

				k = s & 1 ? nvar - 1 - j : j;
				t0 = tsc();
				var[k].fn(n);
				t1 = tsc();
				var[k].v[var[k].nv++] = (double)(t1 - t0) / n;
			}
	for (k = 0; k < nvar; k++) {
		memcpy(var[k].s, var[k].v, ns * sizeof(double));
		qsort(var[k].s, ns, sizeof(double), cmp);
		var[k].min = var[k].s[0];
		var[k].med = var[k].s[ns / 2];
	}
	printf("#meta\tclock_read\t%s\n", has_rdtscp ? "rdtscp" : "lfence; rdtsc");
#ifdef CLOCK_READ_RDTSCP
	printf("#meta\thook_clock_read\trdtscp\n");
#else
	printf("#meta\thook_clock_read\tlfence; rdtsc\n");
#endif
	printf("#meta\titers\t%lu\n#meta\tsamples\t%d\n", n, ns);
	printf("#id\tunit\tmin\tmedian\tdesc\n");
	for (k = 0; k < nvar; k++)
		printf("%s\ttsc/iter\t%.2f\t%.2f\tloop %s\n", var[k].name, var[k].min, var[k].med, var[k].name);
	for (j = 0; j < 2; j++) {
		struct variant *x = vv[j];
		const char *v = j ? "v5" : "v4";
#define D(i, f)	(x[i].f - x[i + 1].f)
		/* rt = 2 wakeups + 2 switches; wake = 1 wakeup */
		printf("%s_added_wake\ttsc\t%.2f\t%.2f\tregistered wakeup stamp, minus the key-off NOP5\n",
		       v, D(WAKE, min), D(WAKE, med));
		printf("%s_added_roundtrip\ttsc\t%.2f\t%.2f\t2 wakeups + 2 registered switches (1-CPU ping-pong round trip)\n",
		       v, D(RT, min), D(RT, med));
		printf("%s_added_switch\ttsc\t%.2f\t%.2f\tregistered switch (prev and next registered, no copy)\n",
		       v, (D(RT, min) - 2 * D(WAKE, min)) / 2, (D(RT, med) - 2 * D(WAKE, med)) / 2);
		printf("%s_added_switch_copy\ttsc\t%.2f\t%.2f\tregistered switch with the counter copy\n",
		       v, (D(RT_COPY, min) - 2 * D(WAKE, min)) / 2, (D(RT_COPY, med) - 2 * D(WAKE, med)) / 2);
		printf("%s_copy_extra\ttsc\t%.2f\t%.2f\tthe counter copy alone, per switch\n",
		       v, (D(RT_COPY, min) - D(RT, min)) / 2, (D(RT_COPY, med) - D(RT, med)) / 2);
#undef D
	}
	for (j = 0; j < 2; j++) {
		struct variant *x = vv[j];
		const char *v = j ? "v5" : "v4";

		printf("%s_mb_share\ttsc\t%.2f\t%.2f\tround trip minus the same with a NOP for each barrier (4)\n",
		       v, x[RT].min - x[NOMB].min, x[RT].med - x[NOMB].med);
		printf("%s_fence_share\ttsc\t%.2f\t%.2f\tround trip minus the same with the unpatched rdtsc for each clock read (4)\n",
		       v, x[RT].min - x[NOLFENCE].min, x[RT].med - x[NOLFENCE].med);
		printf("%s_bare_roundtrip\ttsc\t%.2f\t%.2f\tround trip with neither, minus the key-off loop\n",
		       v, x[BARE].min - x[RT_OFF].min, x[BARE].med - x[RT_OFF].med);
	}
	/* the ratio: of the mins, of the medians, and the median of the sample pairs' */
	pr = calloc(ns, sizeof(double));
	for (s = 0; s < (unsigned long)ns; s++) {
		double d4 = var[RT].v[s] - var[RT_OFF].v[s];
		double d5 = var[NBASE + RT].v[s] - var[NBASE + RT_OFF].v[s];

		pr[s] = d4 > 0 ? d5 / d4 : 99;
	}
	printf("ratio_roundtrip\tv5/v4\t%.3f\t%.3f\tadded round trip, v5 over v4: ratio of the mins, of the medians\n",
	       (var[NBASE + RT].min - var[NBASE + RT_OFF].min) / (var[RT].min - var[RT_OFF].min),
	       (var[NBASE + RT].med - var[NBASE + RT_OFF].med) / (var[RT].med - var[RT_OFF].med));
	printf("ratio_roundtrip_paired\tv5/v4\t-\t%.3f\tmedian over samples of (v5 rt - v5 off) / (v4 rt - v4 off), same sample index\n",
	       median(pr, ns));
	printf("ratio_bare_roundtrip\tv5/v4\t%.3f\t%.3f\tthe same with neither barrier nor fence (not the kernel's)\n",
	       (var[NBASE + BARE].min - var[NBASE + RT_OFF].min) / (var[BARE].min - var[RT_OFF].min),
	       (var[NBASE + BARE].med - var[NBASE + RT_OFF].med) / (var[BARE].med - var[RT_OFF].med));
	printf("ratio_wake\tv5/v4\t%.3f\t%.3f\tadded wakeup stamp, v5 over v4\n",
	       (var[NBASE + WAKE].min - var[NBASE + WAKE_OFF].min) / (var[WAKE].min - var[WAKE_OFF].min),
	       (var[NBASE + WAKE].med - var[NBASE + WAKE_OFF].med) / (var[WAKE].med - var[WAKE_OFF].med));
	/* the instructions the hooks add, per iteration */
	printf("#count\tid\tinsns\tfull_barriers\tlfence\trdtsc\trdtscp\tcalls\n");
	if (counted) {
		for (j = 0; j < 2; j++) {
			struct icount *x = &ic[j ? NBASE : 0], rt, rtc, w, sw, swc;
			const char *v = j ? "v5" : "v4";
			struct { const char *id; struct icount *c; } row[] = {
				{ "roundtrip", &rt }, { "wake", &w }, { "switch", &sw },
				{ "switch_copy", &swc },
			};

			icount_sub(&rt, &x[RT], &x[RT_OFF]);
			icount_sub(&rtc, &x[RT_COPY], &x[RT_COPY_OFF]);
			icount_sub(&w, &x[WAKE], &x[WAKE_OFF]);
			icount_switch(&sw, &rt, &w);
			icount_switch(&swc, &rtc, &w);
			for (k = 0; k < 4; k++)
				printf("#count\t%s_%s\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\n", v, row[k].id,
				       row[k].c->insns, row[k].c->lock, row[k].c->lfence,
				       row[k].c->rdtsc, row[k].c->rdtscp, row[k].c->call);
		}
	} else {
		printf("#count\t-\tptrace single-step not available here\n");
	}
	/* sanity: the pages moved as the kernel's would */
	fprintf(stderr, "hook_native: v4 page_a seq %u nr_block %lu switch_in %lu, page_b seq %u, counters_ns %lu\n",
		U32(v4_page_a, 0x40), (unsigned long)U64(v4_page_a, 0x68), (unsigned long)U64(v4_page_a, 0x58),
		U32(v4_page_b, 0x40), (unsigned long)U64(v4_page_a, 0xb0));
	fprintf(stderr, "hook_native: v5 page_a seq %u nr_block %lu switch_in %lu, page_b seq %u state %u, counters_ns %lu, oncpu %lu runq %lu sleep %lu ns\n",
		U32(v5_page_a, 0x40), (unsigned long)U64(v5_page_a, 0x60), (unsigned long)U64(v5_page_a, 0x50),
		U32(v5_page_b, 0x40), U32(v5_page_b, 0x44), (unsigned long)U64(v5_page_a, 0xa8),
		(unsigned long)U64(v5_page_a, 0x68), (unsigned long)U64(v5_page_a, 0x70),
		(unsigned long)U64(v5_page_a, 0x78));
	return 0;
}
