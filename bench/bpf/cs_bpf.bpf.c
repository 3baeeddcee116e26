// SPDX-License-Identifier: GPL-2.0
/*
 * cs_bpf.bpf.c: the coarse_stat thread page done with BPF (project issue 26,
 * a reference to measure the series against; not part of the series).
 *
 * tp_btf programs on sched_switch, sched_wakeup and sched_migrate_task keep,
 * for registered threads only, the five buckets and the counts of the
 * series' hooks (linux/kernel/sched/coarse_stat.h) with the same rules, in
 * CLOCK_MONOTONIC ns (bpf_ktime_get_ns()) instead of cycles:
 *   switch-out: on CPU charged; preempted or left TASK_RUNNING -> run queue
 *	and nr_preempt, else nr_block and sleep/dsleep by prev_state, iowait
 *	by p->in_iowait;
 *   wakeup: stamps wake_ns (not for current, as the series);
 *   switch-in: the sleep charged up to the stamp, the run queue after it;
 *   migration to another CPU: nr_migrate, cpu.
 *
 * Registration: task storage (BPF_MAP_TYPE_TASK_STORAGE, user space keys
 * it with a pidfd of the thread) holding the slot; an unregistered task
 * costs one bpf_task_storage_get() that finds no storage.  A global count of
 * registered threads, the static key's analogue, skips even that while none
 * is registered.
 *
 * Publication: slot N is page N of the BPF_F_MMAPABLE array "pages", which
 * user space mmap()s read-only and reads under the sequence count: odd,
 * data, even.  The count is written with BPF_XCHG (a fetching atomic, fully
 * ordered in every JIT: x86 xchg, arm64 swpal or ldaxr/stlxr + dmb ish), so
 * the odd count is visible before any data store and every data store
 * before the even count; the compiler cannot move plain stores across an
 * atomic either.  The writers of one page are serialised as the series'
 * hooks are: the switch and the wakeup run under the runqueue lock, the
 * migration with the task off every CPU under its pi_lock or runqueue lock.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cs_bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* One store: user space may be reading the page. */
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cs_bpf_reg);
} regs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, CS_BPF_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct cs_bpf_slot);
} pages SEC(".maps");

/* Registered threads: user space counts them (the static key's analogue). */
__u32 nr_registered = 0;
/* cs_bpf check's deliberate fault: 1 = no wakeup stamps. */
const volatile __u32 break_wakeup = 0;

static __always_inline void write_begin(struct cs_bpf_page *pg)
{
	__u32 s = pg->seq;

	__sync_lock_test_and_set(&pg->seq, s + 1);
}

static __always_inline void write_end(struct cs_bpf_page *pg)
{
	__u32 s = pg->seq;

	__sync_lock_test_and_set(&pg->seq, s + 1);
}

static __always_inline struct cs_bpf_page *page_of(struct task_struct *p)
{
	struct cs_bpf_reg *r;
	__u32 slot;

	r = bpf_task_storage_get(&regs, p, 0, 0);
	if (!r)
		return 0;
	slot = r->slot;
	/* The page is the first member of the slot. */
	return bpf_map_lookup_elem(&pages, &slot);
}

/* The bucket index read from a user-visible page, clamped. */
static __always_inline __u32 clamp_state(__u32 s)
{
	return s < CS_BPF_NR_BUCKETS ? s : CS_BPF_RUNQ;
}

static __always_inline void switch_out(struct cs_bpf_page *pg, struct task_struct *tsk,
				       bool preempt, unsigned int prev_state, __u64 now)
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
		if (BPF_CORE_READ_BITFIELD(tsk, in_iowait))
			state = CS_BPF_IOWAIT;
		else	/* TASK_UNINTERRUPTIBLE is 2 */
			state = CS_BPF_SLEEP + ((prev_state >> 1) & 1);
	}
	WRITE_ONCE(pg->state, state);
}

static __always_inline void switch_in(struct cs_bpf_page *pg, __u64 now)
{
	__u64 last = pg->last_switch_ns, wake = pg->wake_ns;
	__u32 state = clamp_state(pg->state);

	if (wake > last) {
		/* A wakeup ended the sleep: sleep up to it, run queue after. */
		pg->bucket_ns[state] += wake - last;
		if (now >= wake) {
			pg->bucket_ns[CS_BPF_RUNQ] += now - wake;
			pg->last_switch_ns = now;
		} else {
			pg->last_switch_ns = wake;
		}
	} else if (now >= last) {
		pg->bucket_ns[state] += now - last;
		pg->last_switch_ns = now;
	}
	WRITE_ONCE(pg->state, CS_BPF_ONCPU);
	pg->nr_switch_in++;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(cs_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct cs_bpf_page *pp, *np;
	__u64 now;

	if (!nr_registered)
		return 0;
	pp = page_of(prev);
	np = page_of(next);
	/*
	 * Both open before the one clock read that serves both, as in the
	 * series.  (Not "if (!pp && !np)": clang ORs the pointers, which the
	 * verifier refuses.)
	 */
	if (pp) {
		write_begin(pp);
		if (np)
			write_begin(np);
		now = bpf_ktime_get_ns();
		switch_out(pp, prev, preempt, prev_state, now);
		write_end(pp);
		if (np) {
			switch_in(np, now);
			write_end(np);
		}
	} else if (np) {
		write_begin(np);
		now = bpf_ktime_get_ns();
		switch_in(np, now);
		write_end(np);
	}
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(cs_wakeup, struct task_struct *p)
{
	struct cs_bpf_page *pg;

	if (!nr_registered || break_wakeup)
		return 0;
	/* The series does not stamp a wakeup of current (no runqueue lock). */
	if (p == bpf_get_current_task_btf())
		return 0;
	pg = page_of(p);
	if (!pg)
		return 0;
	write_begin(pg);
	pg->wake_ns = bpf_ktime_get_ns();
	pg->nr_wakeup++;
	write_end(pg);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(cs_migrate, struct task_struct *p, int dest_cpu)
{
	struct cs_bpf_page *pg;

	if (!nr_registered)
		return 0;
	/* set_task_cpu() counts only a move to another CPU. */
	if (BPF_CORE_READ(p, thread_info.cpu) == (__u32)dest_cpu)
		return 0;
	pg = page_of(p);
	if (!pg)
		return 0;
	write_begin(pg);
	pg->cpu = dest_cpu;
	pg->nr_migrate++;
	write_end(pg);
	return 0;
}
