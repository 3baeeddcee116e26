/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The coarse_stat hooks of the v4 -O2 bench kernel (build/linux-bench-o2/
 * vmlinux as it was built for v4, 7.3.4+ #2, since rebuilt: the check of
 * these blocks against it is kept as text in scripts/bench-hook-native.sh),
 * instruction for instruction as objdump -d shows them in
 * __schedule(), try_to_wake_up(), ktime_get_mono_fast_ns() and
 * coarse_stat_copy_counters(), in the form they take at run time with the
 * static key on.  Only these differ from the kernel's:
 *
 *  - memory operands that name kernel symbols (tk_fast_mono) name the user
 *    copies below (same addressing mode: RIP-relative, or absolute with an
 *    index; hence a static, non-PIE binary);
 *  - branch targets are local labels (the same branches, taken or not in
 *    the same cases); the out-of-line blocks sit in .subsection 1, away
 *    from the in-line path, as in the kernel;
 *  - the jump label sites are their run-time forms: the coarse_stat key's
 *    NOP5 at the hook site a 5-byte JMP to the block, the
 *    clocksource_read_inlined jmp8 in ktime_get_mono_fast_ns() a 2-byte
 *    NOP, and rdtsc_ordered()'s alternative CLOCK_READ (lfence; rdtsc, or
 *    rdtscp where the CPU has it, as the kernel's ALTERNATIVE_2 picks);
 *  - "jmp __x86_return_thunk" is "ret" (what the kernel patches it to on a
 *    CPU with no retbleed/SRSO return thunk in use), and the callee's
 *    ENDBR64 stays (a NOP without IBT in user space).
 *
 * Kernel addresses of each piece are in the comments (v4, 7.3.4+ #2).
 * The full barrier (smp_mb(): lock addl $0,-4(%rsp)) is as in the kernel.
 *
 * Registers as in the kernel: __schedule(): %r14 prev, %r12 next, %ebx
 * prev_state, %rbp the frame; try_to_wake_up(): %rbx p, %r8 live, %rbp.
 *
 * The _nomb, _nolfence and _bare loops are not the kernel's: the round trip
 * with the barrier replaced by a 6-byte NOP, with the clock read the
 * alternative's unpatched rdtsc (in a second copy of
 * ktime_get_mono_fast_ns()), or both, to see where the ticks go.
 */
#ifndef CLOCK_READ_RDTSCP
#define CLOCK_READ	lfence; rdtsc			/* X86_FEATURE_LFENCE_RDTSC */
#else
#define CLOCK_READ	rdtscp; xchg %ax,%ax		/* X86_FEATURE_RDTSCP, 3 + 2 bytes */
#endif

/* task_struct offsets (v4, from the disassembly) */
#define T_CS_PAGE	0x38	/* coarse_stat_page */
#define T_SCHED_DELAYED 0x35	/* se.sched_delayed (byte) */
#define T_IS_BLOCKED	0x36	/* is_blocked */
#define T_IN_IOWAIT	0x5b8	/* in_iowait bit, testb $8 */
#define T_DUE		0x4e8	/* coarse_stat_counters_due */

	.section .bss
	.balign 4096
	.globl v4_task_a, v4_task_b, v4_page_a, v4_page_b, tk_fast_mono, v4_fake_clock
v4_task_a:	.skip 4096
v4_task_b:	.skip 4096
v4_page_a:	.skip 4096
v4_page_b:	.skip 4096
/* struct tk_fast: seqcount (u32), then base[2], 56 bytes each */
tk_fast_mono:	.skip 128
/* struct clocksource: ->max_cycles at 0x28 */
v4_fake_clock:	.skip 128

	.text

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

/* smp_mb(), or (not the kernel's) a 6-byte NOP in its place */
.macro FULL_MB mb
	.if \mb
	lock addl $0x0,-0x4(%rsp)
	.else
	.byte 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00
	.endif
.endm

/* ktime_get_mono_fast_ns() @ffffffff8134e020, fast path */
.macro KTIME_FAST fence
	endbr64
	push	%r13
	push	%r12
	push	%rbp
	push	%rbx
1:	mov	tk_fast_mono(%rip),%ebp
	mov	%ebp,%eax
	and	$0x1,%eax
	lea	0x0(,%rax,8),%r13
	sub	%rax,%r13
	lea	tk_fast_mono+8(,%r13,8),%r12
	mov	tk_fast_mono+8(,%r13,8),%rdi
	mov	0x28(%r12),%rbx
	xchg	%ax,%ax				/* jmp8 of clocksource_read_inlined, patched */
	CLOCK	\fence				/* rdtsc; nop; nop; nop, patched */
	shl	$0x20,%rdx
	mov	%rdx,%rcx
	or	%rax,%rcx
	mov	0x8(%r12),%rax
	mov	tk_fast_mono+8(,%r13,8),%rdi
	sub	0x10(%r12),%rcx
	mov	0x20(%r12),%rdx
	mov	0x1c(%r12),%esi
	and	%rax,%rcx
	cmp	%rcx,0x28(%rdi)
	jb	9f
	mov	0x18(%r12),%eax
	imul	%rcx,%rax
	mov	%esi,%ecx
	add	%rdx,%rax
	shr	%cl,%rax
	mov	tk_fast_mono(%rip),%edx
	cmp	%edx,%ebp
	jne	1b
	add	%rbx,%rax
	pop	%rbx
	pop	%rbp
	pop	%r12
	pop	%r13
	ret					/* jmp __x86_return_thunk */
9:	ud2					/* ktime_slow: never taken here (max_cycles huge) */
.endm

	.balign 16
ktime_fast:
	KTIME_FAST 1
	.balign 16
ktime_fast_nolfence:				/* not the kernel's: see the top */
	KTIME_FAST 0

/* coarse_stat_copy_counters() @ffffffff812fe8d0 */
	.balign 16
copy_counters:
	endbr64
	mov	%rsi,%rcx
	lea	0xc350(%rdx),%rsi
	mov	%rdx,0xb0(%rdi)
	mov	%rdx,%rax
	mov	%rsi,0x4e8(%rcx)
	mov	0xf8(%rcx),%rsi
	mov	%rsi,0xb8(%rdi)
	mov	0x4f8(%rcx),%rsi
	mov	%rsi,0xc0(%rdi)
	mov	0x4f0(%rcx),%rsi
	mov	%rsi,0xc8(%rdi)
	mov	0x740(%rcx),%rsi
	mov	%rsi,0xd0(%rdi)
	mov	0x748(%rcx),%rsi
	mov	%rsi,0xd8(%rdi)
	mov	0x6d8(%rcx),%rsi
	mov	%rsi,0xe0(%rdi)
	mov	0x6e0(%rcx),%rsi
	mov	%rsi,0xe8(%rdi)
	mov	0x760(%rcx),%rsi
	mov	%rsi,0xf0(%rdi)
	mov	0x768(%rcx),%rsi
	mov	%rsi,0xf8(%rdi)
	mov	0x940(%rcx),%rsi
	mov	%rsi,0x100(%rdi)
	mov	0x948(%rcx),%rsi
	mov	%rsi,0x108(%rdi)
	mov	0x950(%rcx),%rsi
	mov	%rsi,0x110(%rdi)
	mov	0x958(%rcx),%rsi
	mov	%rsi,0x118(%rdi)
	mov	0x960(%rcx),%rsi
	mov	%rsi,0x120(%rdi)
	mov	0x968(%rcx),%rsi
	mov	%rsi,0x128(%rdi)
	mov	0x970(%rcx),%rcx
	mov	%rcx,0x130(%rdi)
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

/*
 * coarse_stat_switch() in __schedule(): site @ffffffff8190d474 (NOP5 ->
 * JMP to ffffffff8190d756), back to ffffffff8190d479.  Out of line as in
 * the kernel: ffffffff8190e605 (blocked: state by /proc letter),
 * ffffffff8190e701 (prev unregistered), ffffffff8190e71f (counter copy),
 * ffffffff8190e746 (switch-in after a wakeup), ffffffff8190e760 (iowait).
 */
.macro SWITCH mb=1, fence=1
	JMP5	10f
	.subsection 1
10:	mov	T_CS_PAGE(%r14),%rax		/* d756 */
	or	T_CS_PAGE(%r12),%rax
	je	99f
	mov	T_CS_PAGE(%r14),%rdi
	mov	T_CS_PAGE(%r12),%r13
	test	%rdi,%rdi
	je	20f
	mov	0x40(%rdi),%eax			/* write_begin(pp) */
	add	$0x1,%eax
	mov	%eax,0x40(%rdi)
	test	%r13,%r13
	je	11f
	mov	0x40(%r13),%eax			/* write_begin(np) */
	add	$0x1,%eax
	mov	%eax,0x40(%r13)
11:	mov	%rdi,-0x48(%rbp)
	FULL_MB	\mb				/* smp_mb() */
	.if \fence
	call	ktime_fast
	.else
	call	ktime_fast_nolfence
	.endif
	mov	-0x48(%rbp),%rdi
	mov	%rax,%rdx
	sub	0x48(%rdi),%rax
	jb	12f
	add	%rax,0x70(%rdi)
	mov	%rdx,0x48(%rdi)
12:	cmpb	$0x0,T_IS_BLOCKED(%r14)
	jne	30f
	addq	$0x1,0x60(%rdi)			/* nr_preempt */
	mov	$0x1,%eax
13:	mov	%eax,0x44(%rdi)			/* d7c9: state */
	cmp	T_DUE(%r14),%rdx
	jae	40f
14:	mov	0x40(%rdi),%eax			/* d7d9: write_end(pp) */
	add	$0x1,%eax
	mov	%eax,0x40(%rdi)
	test	%r13,%r13
	je	99f
15:	mov	0x48(%r13),%rsi			/* d7eb: cs_switch_in() */
	mov	0x44(%r13),%eax
	mov	0x50(%r13),%rcx
	mov	%rsi,%rdi
	and	$0x7,%eax
	sub	%rcx,%rdi
	jb	50f
	mov	%rdx,%rcx
	sub	%rsi,%rcx
	jb	16f
	add	%rcx,0x70(%r13,%rax,8)
	mov	%rdx,0x48(%r13)
16:	addq	$0x1,0x58(%r13)			/* d817 */
	movl	$0x0,0x44(%r13)
	mov	0x40(%r13),%eax			/* write_end(np) */
	add	$0x1,%eax
	mov	%eax,0x40(%r13)
	jmp	99f
30:	addq	$0x1,0x68(%rdi)			/* e605: nr_block */
	testb	$0x8,T_IN_IOWAIT(%r14)
	jne	60f
31:	mov	%ebx,%ecx			/* e618: __task_state_index() */
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
	jmp	13b
20:	mov	0x40(%r13),%eax			/* e701 */
	add	$0x1,%eax
	mov	%eax,0x40(%r13)
	FULL_MB	\mb
	.if \fence
	call	ktime_fast
	.else
	call	ktime_fast_nolfence
	.endif
	mov	%rax,%rdx
	jmp	15b
40:	mov	%r14,%rsi			/* e71f: the counter copy */
	mov	%rdi,-0x48(%rbp)
	call	copy_counters
	mov	-0x48(%rbp),%rdi
	mov	%rax,%rdx
	jmp	14b
50:	sub	%rdi,0x70(%r13,%rax,8)		/* e746 */
	mov	%rdx,%rax
	sub	%rcx,%rax
	jb	51f
	add	%rax,0x78(%r13)
	mov	%rdx,0x48(%r13)
	jmp	16b
60:	cmpb	$0x0,T_SCHED_DELAYED(%r14)	/* e760 */
	je	61f
	cmpb	$0x0,0xe9(%r14)
	je	31b
61:	mov	$0x4,%eax
	jmp	13b
51:	mov	%rcx,0x48(%r13)			/* e77f */
	jmp	16b
	.subsection 0
99:
.endm

/*
 * coarse_stat_wakeup() in try_to_wake_up(): site @ffffffff812cfcbf (NOP5
 * -> JMP to ffffffff812cff82), back to ffffffff812cfcc4.
 */
.macro WAKE mb=1, fence=1
	JMP5	10f
	.subsection 1
10:	cmpq	$0x0,T_CS_PAGE(%rbx)		/* cff82 */
	je	99f
	mov	T_CS_PAGE(%rbx),%r12
	mov	%r8,-0x50(%rbp)
	mov	0x40(%r12),%eax			/* write_begin */
	add	$0x1,%eax
	mov	%eax,0x40(%r12)
	FULL_MB	\mb				/* smp_mb() */
	.if \fence
	call	ktime_fast
	.else
	call	ktime_fast_nolfence
	.endif
	mov	%rax,0x50(%r12)			/* wake_ns */
	mov	0x40(%r12),%eax			/* write_end */
	mov	-0x50(%rbp),%r8
	add	$0x1,%eax
	mov	%eax,0x40(%r12)
	jmp	99f
	.subsection 0
99:
.endm
#define PFX(x)		v4_##x
/* v4 stamps a wakeup whatever the page says. */
#define WAKE_ALONE_PREP
#include "loops.inc"
