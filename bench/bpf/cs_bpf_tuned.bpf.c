// SPDX-License-Identifier: GPL-2.0
/*
 * cs_bpf_tuned.bpf.c: the strongest BPF version of the coarse_stat thread
 * page (project issue 39 item 1; not part of the series), beside the first
 * one (cs_bpf.bpf.c), with the same page (struct cs_bpf_page) and rules.
 * What it does differently, and why:
 *
 * - Only tp_btf/sched_switch is needed for a thread timing itself.  The
 *   run-queue share of the time since the switch-out comes at the
 *   switch-in from the scheduler's own sched_info: run_delay (closed
 *   waits) grown since the switch-out plus, for the open wait,
 *   rq->clock - last_queued, which is exactly what sched_info_arrive()
 *   adds to run_delay right after this tracepoint.  No wakeup program, no
 *   helper call for it.  The wakeup program (cs_wakeup) is attached only
 *   for the cross-thread ("live") view: without it a woken thread that
 *   waits on the run queue reads as asleep to another thread until it
 *   runs.
 * - The migration count and the CPU are read from the task at the
 *   switch-in (se.nr_migrations, less its value at registration) instead
 *   of from a sched_migrate_task program.
 * - Every switch first tests prev->bpf_storage and next->bpf_storage (two
 *   loads): a task that was never given any task storage (by this or any
 *   other BPF program) costs no helper call.  Only a task with storage
 *   pays bpf_task_storage_get(); only a registered one the clock read.
 * - No global count: user space attaches the links at the first
 *   registration and destroys them when the last one goes, so "nobody
 *   registered" is the tracepoint off, as the series' static key.
 * - tp_btf/sched_process_exec ends a registration at exec, as the series
 *   does: the storage is deleted and the page's tid cleared.
 * - The sequence count is closed with a plain store after a compiler
 *   barrier, not an xchg: see write_end().
 *
 * The clock of the page stays bpf_ktime_get_ns() (CLOCK_MONOTONIC), read
 * once per switch with a registered thread on either side: rq->clock is
 * sched_clock(), which user space cannot read to extrapolate, so it is used
 * for the run-queue duration only (a difference of two rq->clock stamps).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cs_bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* One store: user space may be reading the page. */
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))
#define barrier()		asm volatile("" ::: "memory")

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cs_bpf_treg);
} regs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, CS_BPF_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct cs_bpf_slot);
} pages SEC(".maps");

/* Registrations ended by an exec (user space reads it to count down). */
__u32 nr_exec_ended = 0;
/* cs_bpf check's deliberate fault: 1 = no run-queue time from sched_info. */
const volatile __u32 break_runq = 0;

/*
 * The sequence count, without an xchg.  A store-release (BPF_STORE_REL,
 * LLVM 21; Debian 12's clang is 14) is what the close needs: every data
 * store visible before the even count.  On x86-64 the JIT emits a plain
 * mov for BPF_STX_MEM and for a store-release alike (TSO: stores are not
 * reordered with older stores), so a compiler barrier and a plain store
 * give the same machine code.  The open needs the odd count visible before
 * the data stores after it: on x86 again a plain store followed by a
 * compiler barrier, as smp_wmb() is there.  This is x86-only: on arm64 a
 * plain store may pass older ones (the close needs stlr, the open dmb
 * ishst); that build would have to use BPF_STORE_REL and a fence.
 */
static __always_inline void write_begin(struct cs_bpf_page *pg)
{
	WRITE_ONCE(pg->seq, pg->seq + 1);
	barrier();
}

static __always_inline void write_end(struct cs_bpf_page *pg)
{
	barrier();
	WRITE_ONCE(pg->seq, pg->seq + 1);
}

static __always_inline struct cs_bpf_page *page_of(struct cs_bpf_treg *r)
{
	__u32 slot = r->slot;

	/* An array lookup: inlined by the verifier, no call. */
	return bpf_map_lookup_elem(&pages, &slot);
}

/* The bucket index read from a user-visible page, clamped. */
static __always_inline __u32 clamp_state(__u32 s)
{
	return s < CS_BPF_NR_BUCKETS ? s : CS_BPF_RUNQ;
}

/*
 * The time @p waited on a run queue since its switch-out, in sched_clock
 * ns: the waits sched_info already closed (a migration dequeues and
 * re-enqueues) and the open one, up to this switch's rq->clock, which
 * __schedule() updated before this tracepoint.  sched_info_arrive() adds
 * the same difference to run_delay right after it.  rq is next's through
 * its cfs_rq (CONFIG_FAIR_GROUP_SCHED, set for every class).
 */
static __always_inline __u64 runq_wait(struct task_struct *p, struct cs_bpf_treg *r)
{
	__u64 q = 0, lq, clk;

	if (break_runq)
		return 0;
	if (r->run_delay != CS_BPF_RUN_DELAY_UNKNOWN)
		q = p->sched_info.run_delay - r->run_delay;
	lq = p->sched_info.last_queued;
	if (lq) {
		clk = p->se.cfs_rq->rq->clock;
		if (clk > lq)
			q += clk - lq;
	}
	return q;
}

static __always_inline void switch_out(struct cs_bpf_page *pg, struct cs_bpf_treg *r,
				       struct task_struct *tsk, bool preempt,
				       unsigned int prev_state, __u64 now)
{
	__u32 state;

	if (now >= pg->last_switch_ns) {
		pg->bucket_ns[CS_BPF_ONCPU] += now - pg->last_switch_ns;
		pg->last_switch_ns = now;
	}
	if (preempt || !prev_state) {
		pg->nr_preempt++;
		state = CS_BPF_RUNQ;
	} else {
		pg->nr_block++;
		if (BPF_CORE_READ_BITFIELD(tsk, in_iowait))	/* a direct load in tp_btf */
			state = CS_BPF_IOWAIT;
		else	/* TASK_UNINTERRUPTIBLE is 2 */
			state = CS_BPF_SLEEP + ((prev_state >> 1) & 1);
	}
	WRITE_ONCE(pg->state, state);
	/* Private, not on the page: the base of the next runq_wait(). */
	r->run_delay = tsk->sched_info.run_delay;
}

static __always_inline void switch_in(struct cs_bpf_page *pg, struct cs_bpf_treg *r,
				      struct task_struct *tsk, __u64 now)
{
	__u64 last = pg->last_switch_ns, wake = pg->wake_ns, q;
	__u32 state = clamp_state(pg->state);

	if (wake > last) {
		/* Live mode: the wakeup program stamped the end of the sleep. */
		pg->bucket_ns[state] += wake - last;
		last = wake;
	} else if (now > last) {
		/* The run-queue wait is the tail of the time since the switch-out. */
		q = runq_wait(tsk, r);
		if (q < now - last) {
			pg->bucket_ns[state] += now - q - last;
			last = now - q;
		}
		if (state >= CS_BPF_SLEEP) {
			/* The wakeup as the enqueue's rq->clock placed it. */
			pg->wake_ns = last;
			pg->nr_wakeup++;
		}
	}
	if (now >= last) {
		pg->bucket_ns[CS_BPF_RUNQ] += now - last;
		last = now;
	}
	pg->last_switch_ns = last;
	WRITE_ONCE(pg->state, CS_BPF_ONCPU);
	pg->nr_switch_in++;
	/* Counted by set_task_cpu(), a move to another CPU, as the series. */
	pg->nr_migrate = tsk->se.nr_migrations - r->nr_migrations;
	pg->cpu = bpf_get_smp_processor_id();	/* inlined on x86-64 */
}

SEC("tp_btf/sched_switch")
int BPF_PROG(cs_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct cs_bpf_treg *pr = 0, *nr = 0;
	struct cs_bpf_page *pp = 0, *np = 0;
	__u64 now;

	/*
	 * The filter: no task storage at all on either side, nothing to do.
	 * Two loads, no helper call; the common case of a system with a few
	 * registered threads.
	 */
	if (prev->bpf_storage)
		pr = bpf_task_storage_get(&regs, prev, 0, 0);
	if (next->bpf_storage)
		nr = bpf_task_storage_get(&regs, next, 0, 0);
	if (pr)
		pp = page_of(pr);
	if (nr)
		np = page_of(nr);
	/* Both open before the one clock read that serves both, as in the series. */
	if (pp && pr) {
		write_begin(pp);
		if (np)
			write_begin(np);
		now = bpf_ktime_get_ns();
		switch_out(pp, pr, prev, preempt, prev_state, now);
		write_end(pp);
		if (np && nr) {
			switch_in(np, nr, next, now);
			write_end(np);
		}
	} else if (np && nr) {
		write_begin(np);
		now = bpf_ktime_get_ns();
		switch_in(np, nr, next, now);
		write_end(np);
	}
	return 0;
}

/* Live mode only: stamps the wakeup for another thread's reader. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(cs_wakeup, struct task_struct *p)
{
	struct cs_bpf_treg *r;
	struct cs_bpf_page *pg;

	if (!p->bpf_storage)
		return 0;
	/* The series does not stamp a wakeup of current (no runqueue lock). */
	if (p == bpf_get_current_task_btf())	/* inlined on x86-64 */
		return 0;
	r = bpf_task_storage_get(&regs, p, 0, 0);
	if (!r)
		return 0;
	pg = page_of(r);
	if (!pg)
		return 0;
	write_begin(pg);
	pg->wake_ns = bpf_ktime_get_ns();
	pg->nr_wakeup++;
	write_end(pg);
	return 0;
}

/* An exec ends the registration, as the series ends it. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(cs_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct cs_bpf_treg *r;
	struct cs_bpf_page *pg;

	if (!p->bpf_storage)
		return 0;
	r = bpf_task_storage_get(&regs, p, 0, 0);
	if (!r)
		return 0;
	pg = page_of(r);
	if (pg) {
		/* Readers of the page see the registration end. */
		write_begin(pg);
		pg->tid = 0;
		write_end(pg);
	}
	bpf_task_storage_delete(&regs, p);
	__sync_fetch_and_add(&nr_exec_ended, 1);
	return 0;
}
