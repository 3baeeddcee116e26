/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cs_bpf: the BPF reference implementation of the coarse_stat thread page
 * (project issue 26; not part of the series).  What the BPF programs
 * (cs_bpf.bpf.c, the tuned version cs_bpf_tuned.bpf.c of issue 39, the
 * __uptr version cs_bpf_uptr.bpf.c of issue 51) and user space (cs_bpf.c)
 * share: the page (of one slot of the BPF_F_MMAPABLE array map "pages",
 * struct cs_bpf_slot; in the __uptr version the thread's own page), and the
 * task storage values.
 *
 * Times are CLOCK_MONOTONIC ns (bpf_ktime_get_ns()); the series' page counts
 * cycles.  The buckets and counts follow kernel/sched/coarse_stat.h.
 */
#ifndef CS_BPF_H
#define CS_BPF_H

#define CS_BPF_MAX_SLOTS	64
#define CS_BPF_PAGE_SIZE	4096	/* one slot per page: mmap()ed alone */

enum {
	CS_BPF_ONCPU	= 0,
	CS_BPF_RUNQ	= 1,
	CS_BPF_SLEEP	= 2,
	CS_BPF_DSLEEP	= 3,
	CS_BPF_IOWAIT	= 4,
	CS_BPF_NR_BUCKETS = 5,
};

struct cs_bpf_page {
	__u32	seq;		/* odd while the programs write */
	__u32	state;		/* CS_BPF_ONCPU ... CS_BPF_IOWAIT */
	__u64	last_switch_ns;	/* the buckets are charged up to this */
	__u64	wake_ns;	/* the last wakeup's stamp */
	__u64	bucket_ns[CS_BPF_NR_BUCKETS];
	__u64	start_ns;	/* registration */
	__u32	cpu;
	__u32	tid;
	__u64	nr_switch_in;
	__u64	nr_preempt;
	__u64	nr_block;
	__u64	nr_migrate;
	__u64	nr_wakeup;	/* stamps taken (not in the series' page) */
};

/* The value of the array "pages": one page per slot. */
struct cs_bpf_slot {
	struct cs_bpf_page	pg;
	__u8	__pad[CS_BPF_PAGE_SIZE - sizeof(struct cs_bpf_page)];
};

/* Task storage: the slot of a registered thread. */
struct cs_bpf_reg {
	__u32	slot;
	__u32	__pad;
};

/*
 * The tuned version's task storage (cs_bpf_tuned.bpf.c): the slot, and
 * what the switch-in needs that the page does not show.
 */
struct cs_bpf_treg {
	__u32	slot;
	__u32	__pad;
	__u64	run_delay;	/* sched_info.run_delay at the last switch-out */
	__u64	nr_migrations;	/* se.nr_migrations at registration */
};

/* cs_bpf_treg.run_delay before the first switch-out, if not known. */
#define CS_BPF_RUN_DELAY_UNKNOWN	(~0ULL)

/*
 * The __uptr version's task storage (cs_bpf_uptr.bpf.c, issue 51): a
 * pointer to the thread's own page in its own memory, which the kernel
 * pins at bpf_map_update_elem() (the address is taken in the caller's mm)
 * and unpins when the storage goes; then what the tuned version keeps.
 * User space sees the pointer as a plain one (__uptr empty there).
 */
#ifndef __uptr
#define __uptr
#endif
struct cs_bpf_ureg {
	struct cs_bpf_page __uptr *pg;
	__u64	run_delay;	/* as cs_bpf_treg */
	__u64	nr_migrations;
};

#endif /* CS_BPF_H */
