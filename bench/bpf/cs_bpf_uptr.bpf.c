// SPDX-License-Identifier: GPL-2.0
/*
 * cs_bpf_uptr.bpf.c: the BPF version of the coarse_stat thread page as the
 * BPF maintainers would write it (project issue 51 item 2; not part of the
 * series): the tuned version's accounting (cs_bpf_tuned.bpf.c: switch-in
 * run-queue time from sched_info, counts from the task, the
 * task->bpf_storage test before any helper call, links attached only
 * while a thread is registered, exec ends a registration), with two
 * changes:
 *
 * - The page is the thread's own memory, reached through a __uptr in its
 *   task storage (struct cs_bpf_ureg).  The thread registers with
 *   bpf_map_update_elem() on its own pidfd and the address of a page it
 *   mapped; the kernel pins that page (pin_user_pages_fast() in the
 *   caller's mm, FOLL_LONGTERM) and the programs write it through the
 *   kernel's direct map, from any context.  There is no shared array: a
 *   registrant can only ever hand the programs memory of its own, so no
 *   registrant can write another thread's page (cs_bpf --uptr check
 *   tests it).  The storage, and the pin, go with the task (exit), at exec
 *   (the exec program), or at bpf_map_delete_elem().
 * - The sequence count is closed with a BPF store-release (BPF_STX |
 *   BPF_ATOMIC, imm BPF_STORE_REL; clang 21+ with -mcpu=v4 emits it for
 *   __atomic_store_n(..., __ATOMIC_RELEASE); the Makefile checks the
 *   object with llvm-objdump).  The x86-64 JIT emits a plain mov for it
 *   (TSO), arm64's an stlr.  The open (odd count before the data) has no
 *   BPF instruction of its own short of a fully ordered atomic (BPF has no
 *   smp_wmb()): here a plain store and a compiler barrier, which is the
 *   x86-64 smp_wmb(); an arm64 build would need a fetching atomic there.
 *
 * Self mode only (no wakeup program): the live view's wakeup stamp is the
 * tuned version's cs_wakeup, unchanged by __uptr.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cs_bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))
#define barrier()		asm volatile("" ::: "memory")

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cs_bpf_ureg);
} regs SEC(".maps");

/* Registrations ended by an exec (user space reads it to count down). */
__u32 nr_exec_ended = 0;
/* cs_bpf check's deliberate fault: 1 = no run-queue time from sched_info. */
const volatile __u32 break_runq = 0;

static __always_inline void write_begin(struct cs_bpf_page *pg)
{
	WRITE_ONCE(pg->seq, pg->seq + 1);
	barrier();
}

/* The close: every data store visible before the even count. */
static __always_inline void write_end(struct cs_bpf_page *pg)
{
	__atomic_store_n(&pg->seq, pg->seq + 1, __ATOMIC_RELEASE);
}

static __always_inline __u32 clamp_state(__u32 s)
{
	return s < CS_BPF_NR_BUCKETS ? s : CS_BPF_RUNQ;
}

/* As in cs_bpf_tuned.bpf.c. */
static __always_inline __u64 runq_wait(struct task_struct *p, struct cs_bpf_ureg *r)
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

static __always_inline void switch_out(struct cs_bpf_page *pg, struct cs_bpf_ureg *r,
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
		if (BPF_CORE_READ_BITFIELD(tsk, in_iowait))
			state = CS_BPF_IOWAIT;
		else	/* TASK_UNINTERRUPTIBLE is 2 */
			state = CS_BPF_SLEEP + ((prev_state >> 1) & 1);
	}
	WRITE_ONCE(pg->state, state);
	r->run_delay = tsk->sched_info.run_delay;
}

static __always_inline void switch_in(struct cs_bpf_page *pg, struct cs_bpf_ureg *r,
				      struct task_struct *tsk, __u64 now)
{
	__u64 last = pg->last_switch_ns, wake = pg->wake_ns, q;
	__u32 state = clamp_state(pg->state);

	if (wake > last) {
		pg->bucket_ns[state] += wake - last;
		last = wake;
	} else if (now > last) {
		q = runq_wait(tsk, r);
		if (q < now - last) {
			pg->bucket_ns[state] += now - q - last;
			last = now - q;
		}
		if (state >= CS_BPF_SLEEP) {
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
	pg->nr_migrate = tsk->se.nr_migrations - r->nr_migrations;
	pg->cpu = bpf_get_smp_processor_id();
}

SEC("tp_btf/sched_switch")
int BPF_PROG(cs_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct cs_bpf_ureg *pr = 0, *nr = 0;
	struct cs_bpf_page *pp = 0, *np = 0;
	__u64 now;

	if (prev->bpf_storage)
		pr = bpf_task_storage_get(&regs, prev, 0, 0);
	if (next->bpf_storage)
		nr = bpf_task_storage_get(&regs, next, 0, 0);
	/* The __uptr: the pinned page's kernel address, or NULL. */
	if (pr)
		pp = pr->pg;
	if (nr)
		np = nr->pg;
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

/* An exec ends the registration, as the series ends it (and unpins the page). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(cs_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct cs_bpf_ureg *r;
	struct cs_bpf_page *pg;

	if (!p->bpf_storage)
		return 0;
	r = bpf_task_storage_get(&regs, p, 0, 0);
	if (!r)
		return 0;
	pg = r->pg;
	if (pg) {
		write_begin(pg);
		pg->tid = 0;
		write_end(pg);
	}
	bpf_task_storage_delete(&regs, p);
	__sync_fetch_and_add(&nr_exec_ended, 1);
	return 0;
}
