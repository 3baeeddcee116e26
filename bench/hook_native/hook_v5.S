/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The coarse_stat hooks of the v5 -O2 kernel (build/linux-bench-o2/vmlinux),
 * instruction for instruction as objdump -d shows them in __schedule(),
 * try_to_wake_up() and coarse_stat_copy_counters(), in the form they take
 * at run time with the static key on.  v5 calls no clock function: the
 * hooks read the vDSO's CLOCK_MONOTONIC data in line
 * (ktime_get_mono_vdso_ns_ordered(): smp_mb(), then the vDSO reader with
 * rdtsc_ordered()).  Only these differ from the kernel's:
 *
 *  - memory operands that name kernel symbols (vdso_k_time_data, a pointer
 *    to the struct vdso_time_data; timekeeping_suspended) name the user
 *    copies below, RIP-relative as in the kernel;
 *  - branch targets are local labels (the same branches, taken or not in
 *    the same cases); the out-of-line blocks sit in .subsection 1, as in
 *    the kernel.  The fallbacks that call ktime_get_mono_fast_ns() (clock
 *    mode not TSC, timekeeping suspended) or __ktime_get_mono_vdso_ns_slow()
 *    (delta >= max_cycles) are ud2: the data below never take them;
 *  - the jump label sites are their run-time forms: the coarse_stat key's
 *    NOP5 at the hook site a 5-byte JMP to the block, and rdtsc_ordered()'s
 *    alternative (rdtsc; nop; nop; nop in the vmlinux) CLOCK_READ:
 *    lfence; rdtsc, or rdtscp where the CPU has it, as the kernel's
 *    ALTERNATIVE_2 picks;
 *  - "jmp __x86_return_thunk" is "ret", and the callee's ENDBR64 stays.
 *
 * Kernel addresses of each piece are in the comments (v5, 7.3.4+).  The
 * full barrier (lock addl $0,-4(%rsp)) is as in the kernel.
 *
 * Registers as in the kernel: __schedule(): %r14 prev, %r12 next, %ebx
 * prev_state, %rbp the frame; try_to_wake_up(): %rbx p.
 *
 * The _nomb, _nolfence and _bare loops are not the kernel's: the round
 * trip with the barrier replaced by a 6-byte NOP, with CLOCK_READ replaced
 * by the alternative's unpatched rdtsc (no LFENCE, no RDTSCP), or both, to
 * see where the ticks go.
 */
#ifndef CLOCK_READ_RDTSCP
#define CLOCK_READ	lfence; rdtsc			/* X86_FEATURE_LFENCE_RDTSC */
#else
#define CLOCK_READ	rdtscp; xchg %ax,%ax		/* X86_FEATURE_RDTSCP, 3 + 2 bytes */
#endif

/* task_struct offsets (v5, from the disassembly) */
#define T_CS_PAGE	0x38	/* coarse_stat_page */
#define T_ON_RQ		0x35	/* on_rq (u8) */
#define T_IS_BLOCKED	0x36	/* is_blocked (u8) */
#define T_IN_IOWAIT	0x5b8	/* in_iowait bit, testb $8 */
#define T_DUE		0x4e8	/* coarse_stat_counters_due */

	.section .bss
	.balign 4096
	.globl v5_task_a, v5_task_b, v5_page_a, v5_page_b, v5_time_data, timekeeping_suspended
v5_task_a:	.skip 4096
v5_task_b:	.skip 4096
v5_page_a:	.skip 4096
v5_page_b:	.skip 4096
/* struct vdso_time_data: clock_data[CS_HRES_COARSE] (struct vdso_clock) first */
v5_time_data:	.skip 4096
timekeeping_suspended:	.skip 64

	.section .data
	.balign 64
	.globl vdso_k_time_data
vdso_k_time_data:	.quad v5_time_data	/* struct vdso_time_data *vdso_k_time_data */

	.text
	.globl hook_v5_text			/* where check_v5.py looks */
hook_v5_text:

/* coarse_stat_copy_counters() @ffffffff812fef80 */
	.balign 16
copy_counters:
	endbr64
	mov	%rsi,%rcx
	lea	0xc350(%rdx),%rsi
	mov	%rdx,0xa8(%rdi)
	mov	%rdx,%rax
	mov	%rsi,0x4e8(%rcx)
	mov	0xf8(%rcx),%rsi
	mov	%rsi,0xb0(%rdi)
	mov	0x4f8(%rcx),%rsi
	mov	%rsi,0xb8(%rdi)
	mov	0x4f0(%rcx),%rsi
	mov	%rsi,0xc0(%rdi)
	mov	0x740(%rcx),%rsi
	mov	%rsi,0xc8(%rdi)
	mov	0x748(%rcx),%rsi
	mov	%rsi,0xd0(%rdi)
	mov	0x6d8(%rcx),%rsi
	mov	%rsi,0xd8(%rdi)
	mov	0x6e0(%rcx),%rsi
	mov	%rsi,0xe0(%rdi)
	mov	0x760(%rcx),%rsi
	mov	%rsi,0xe8(%rdi)
	mov	0x768(%rcx),%rsi
	mov	%rsi,0xf0(%rdi)
	mov	0x958(%rcx),%rsi
	mov	%rsi,0xf8(%rdi)
	mov	0x960(%rcx),%rsi
	mov	%rsi,0x100(%rdi)
	mov	0x968(%rcx),%rsi
	mov	%rsi,0x108(%rdi)
	mov	0x970(%rcx),%rsi
	mov	%rsi,0x110(%rdi)
	mov	0x978(%rcx),%rsi
	mov	%rsi,0x118(%rdi)
	mov	0x980(%rcx),%rsi
	mov	%rsi,0x120(%rdi)
	mov	0x988(%rcx),%rcx
	mov	%rcx,0x128(%rdi)
	ret					/* jmp __x86_return_thunk */

/* A 5-byte JMP, as the kernel patches a jump label's NOP5. */
.macro JMP5 target
	.byte 0xe9
	.long \target - . - 4
.endm

/* The key-off form of a hook site: the NOP5 (nopl 0x0(%rax,%rax,1)). */
.macro NOP5
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
.endm

/* smp_mb(), or (not the kernel's) a 6-byte NOP in its place */
.macro FULL_MB mb
	.if \mb
	lock addl $0x0,-0x4(%rsp)
	.else
	.byte 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00
	.endif
.endm

/* rdtsc_ordered() patched, or (not the kernel's) the unpatched rdtsc */
.macro CLOCK fence
	.if \fence
	CLOCK_READ
	.else
	rdtsc
	nop
	nop
	nop
	.endif
.endm

/*
 * coarse_stat_switch() in __schedule(): site @ffffffff819a3474 (NOP5 ->
 * JMP to ffffffff819a3756), back to ffffffff819a3479.  Out of line as in
 * the kernel: ffffffff819a4652 (blocked: state by /proc letter),
 * ffffffff819a4736 (prev unregistered), ffffffff819a482e (counter copy),
 * ffffffff819a487a (iowait), ffffffff819a4811 and ffffffff819a485d (odd
 * vDSO sequence count: pause and read again).
 */
.macro SWITCH mb=1, fence=1
	JMP5	10f
	.subsection 1
10:	mov	T_CS_PAGE(%r14),%rax		/* 3756 */
	or	T_CS_PAGE(%r12),%rax
	je	99f
	mov	T_CS_PAGE(%r14),%r9
	mov	T_CS_PAGE(%r12),%r13
	test	%r9,%r9
	je	20f
	mov	0x40(%r9),%eax			/* write_begin(pp) */
	add	$0x1,%eax
	mov	%eax,0x40(%r9)
	test	%r13,%r13
	je	11f
	mov	0x40(%r13),%eax			/* write_begin(np) */
	add	$0x1,%eax
	mov	%eax,0x40(%r13)
11:	FULL_MB	\mb				/* 3792: smp_mb() */
	mov	vdso_k_time_data(%rip),%rsi
12:	mov	(%rsi),%edi			/* 379f: vdso_read_begin() */
	test	$0x1,%dil
	jne	70f
	mov	timekeeping_suspended(%rip),%eax
	test	%eax,%eax
	jne	71f
	mov	0x4(%rsi),%eax			/* clock_mode */
	cmp	$0x1,%eax			/* VDSO_CLOCKMODE_TSC */
	jne	71f
	CLOCK	\fence				/* 37c5: rdtsc; nop; nop; nop, patched */
	shl	$0x20,%rdx
	or	%rax,%rdx
	btr	$0x3f,%rdx			/* & S64_MAX */
	sub	0x8(%rsi),%rdx			/* - cycle_last */
	cmp	0x10(%rsi),%rdx			/* max_cycles */
	jae	72f
	mov	0x40(%rsi),%r8			/* basetime[CLOCK_MONOTONIC].nsec */
	mov	0x20(%rsi),%eax			/* mult */
	mov	0x24(%rsi),%ecx			/* shift */
	mov	0x38(%rsi),%r10			/* basetime[CLOCK_MONOTONIC].sec */
	mov	(%rsi),%r11d			/* vdso_read_retry() */
	cmp	%edi,%r11d
	jne	12b
	imul	%rdx,%rax
	imul	$0x3b9aca00,%r10,%rdx
	add	%r8,%rax
	shr	%cl,%rax
	add	%rax,%rdx
13:	mov	%rdx,%rax			/* 380e: cs_switch_out() */
	sub	0x48(%r9),%rax
	jb	14f
	add	%rax,0x68(%r9)			/* oncpu_ns */
	mov	%rdx,0x48(%r9)
14:	cmpb	$0x0,T_IS_BLOCKED(%r14)		/* 381f */
	jne	30f
	addq	$0x1,0x58(%r9)			/* nr_preempt */
	mov	$0x1,%eax
15:	mov	%eax,0x44(%r9)			/* 3834: state */
	cmp	T_DUE(%r14),%rdx
	jae	40f
16:	mov	0x40(%r9),%eax			/* 3845: write_end(pp) */
	add	$0x1,%eax
	mov	%eax,0x40(%r9)
	test	%r13,%r13
	je	99f
	mov	%rdx,%rcx			/* cs_switch_in() */
	sub	0x48(%r13),%rcx
	jb	17f
	mov	0x44(%r13),%eax
	and	$0x7,%eax
	add	%rcx,0x68(%r13,%rax,8)
	mov	%rdx,0x48(%r13)
17:	addq	$0x1,0x50(%r13)			/* 3872: nr_switch_in */
	movl	$0x0,0x44(%r13)
	mov	0x40(%r13),%eax			/* write_end(np) */
	add	$0x1,%eax
	mov	%eax,0x40(%r13)
	jmp	99f
30:	addq	$0x1,0x60(%r9)			/* 4652: nr_block */
	testb	$0x8,T_IN_IOWAIT(%r14)
	jne	60f
31:	mov	%ebx,%ecx			/* 4665: __task_state_index() */
	mov	%ebx,%eax
	and	$0x402,%ecx
	and	$0x7f,%eax
	cmp	$0x402,%ecx
	mov	$0x80,%ecx
	cmove	%ecx,%eax
	and	$0x90,%bh
	mov	$0x2,%ecx
	cmovne	%ecx,%eax
	mov	$0xffffffff,%ecx
	bsr	%eax,%ecx
	mov	$0x24024d0,%eax
	lea	0x3(%rcx,%rcx,2),%ecx
	sar	%cl,%eax
	and	$0x7,%eax
	jmp	15b
20:	mov	0x40(%r13),%eax			/* 4736: prev unregistered */
	add	$0x1,%eax
	mov	%eax,0x40(%r13)
	FULL_MB	\mb
	mov	vdso_k_time_data(%rip),%rsi
21:	mov	(%rsi),%r8d			/* 474e */
	test	$0x1,%r8b
	jne	73f
	mov	timekeeping_suspended(%rip),%eax
	test	%eax,%eax
	jne	74f
	mov	0x4(%rsi),%eax
	cmp	$0x1,%eax
	jne	74f
	CLOCK	\fence
	shl	$0x20,%rdx
	or	%rax,%rdx
	btr	$0x3f,%rdx
	sub	0x8(%rsi),%rdx
	cmp	0x10(%rsi),%rdx
	jae	75f
	mov	0x40(%rsi),%r11
	mov	0x20(%rsi),%eax
	mov	0x24(%rsi),%ecx
	mov	0x38(%rsi),%rdi
	mov	(%rsi),%r9d
	cmp	%r8d,%r9d
	jne	21b
	imul	%rdx,%rax
	imul	$0x3b9aca00,%rdi,%rdi
	add	%r11,%rax
	shr	%cl,%rax
	add	%rdi,%rax
	mov	%rax,%rcx			/* 47be */
	sub	0x48(%r13),%rcx
	jb	17b
	mov	0x44(%r13),%edx
	and	$0x7,%edx
	add	%rcx,0x68(%r13,%rdx,8)
	mov	%rax,0x48(%r13)
	jmp	17b
40:	mov	%r9,%rdi			/* 482e: the counter copy */
	mov	%r14,%rsi
	mov	%r9,-0x48(%rbp)
	call	copy_counters
	mov	-0x48(%rbp),%r9
	mov	%rax,%rdx
	jmp	16b
60:	cmpb	$0x0,T_ON_RQ(%r14)		/* 487a: iowait unless still queued */
	jne	31b
	mov	$0x4,%eax
	jmp	15b
70:	pause					/* 4811 */
	jmp	12b
73:	pause					/* 485d */
	jmp	21b
71:	ud2					/* 47fc: ktime_get_mono_fast_ns() */
72:	ud2					/* 489d: __ktime_get_mono_vdso_ns_slow() */
74:	ud2					/* 4853 */
75:	ud2					/* 4849 */
	.subsection 0
99:
.endm

/*
 * coarse_stat_wakeup() in try_to_wake_up(): site @ffffffff812cffbf (NOP5
 * -> JMP to ffffffff812d0282), back to ffffffff812cffc4.  Out of line:
 * ffffffff812d08c0 (odd sequence count).
 */
.macro WAKE mb=1, fence=1
	JMP5	10f
	.subsection 1
10:	cmpq	$0x0,T_CS_PAGE(%rbx)		/* 0282 */
	je	99f
	mov	T_CS_PAGE(%rbx),%r12
	testb	$0x6,0x44(%r12)			/* cs_sleeping() */
	je	99f
	mov	0x40(%r12),%eax			/* write_begin */
	add	$0x1,%eax
	mov	%eax,0x40(%r12)
	FULL_MB	\mb				/* 02aa: smp_mb() */
	mov	vdso_k_time_data(%rip),%rsi
11:	mov	(%rsi),%edi			/* 02b7 */
	test	$0x1,%dil
	jne	70f
	mov	timekeeping_suspended(%rip),%eax
	test	%eax,%eax
	jne	71f
	mov	0x4(%rsi),%eax
	sub	$0x1,%eax
	jne	71f
	CLOCK	\fence				/* 02dd */
	shl	$0x20,%rdx
	or	%rax,%rdx
	btr	$0x3f,%rdx
	mov	%rdx,%r10
	sub	0x8(%rsi),%r10
	cmp	0x10(%rsi),%r10
	jae	72f
	mov	0x40(%rsi),%r9
	mov	0x20(%rsi),%eax
	mov	0x24(%rsi),%ecx
	mov	0x38(%rsi),%rdx
	mov	(%rsi),%r11d
	cmp	%r11d,%edi
	jne	11b
	imul	%r10,%rax
	imul	$0x3b9aca00,%rdx,%rdx
	add	%r9,%rax
	shr	%cl,%rax
	add	%rdx,%rax
	mov	%rax,%rcx			/* 0329: coarse_stat_account() */
	sub	0x48(%r12),%rcx
	jb	12f
	mov	0x44(%r12),%edx
	and	$0x7,%edx
	add	%rcx,0x68(%r12,%rdx,8)
	mov	%rax,0x48(%r12)
12:	movl	$0x1,0x44(%r12)			/* 0345: COARSE_STAT_RUNQ */
	mov	0x40(%r12),%eax			/* write_end */
	add	$0x1,%eax
	mov	%eax,0x40(%r12)
	jmp	99f
70:	pause					/* 08c0 */
	jmp	11b
71:	ud2					/* 07b8: ktime_get_mono_fast_ns() */
72:	ud2					/* 08c7: __ktime_get_mono_vdso_ns_slow() */
	.subsection 0
99:
.endm
#define PFX(x)		v5_##x
/*
 * v5's stamp writes only a page that says its task sleeps (cs_sleeping()),
 * so the wakeup-alone loop first stores SLEEP to B's state, as B's blocking
 * switch-out would (its _off form stores it too).
 */
#define WAKE_ALONE_PREP	movl $0x2, v5_page_b+0x44	/* COARSE_STAT_SLEEP */
#include "loops.inc"
