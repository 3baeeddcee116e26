// SPDX-License-Identifier: GPL-2.0
/*
 * cs_bpf_empty.bpf.c: programs that return at once, on the tracepoints the
 * BPF versions use (project issue 51 item 2): cs_bpf bench attaches
 * sched_switch alone (empty_switch: what the tuned and __uptr versions'
 * self mode attach) and sched_switch + sched_wakeup (empty_live: the live
 * view's pair), so the table shows the attach and dispatch cost with no
 * program body: the tracepoint's static call taken, the raw tracepoint
 * entry (__bpf_trace_*, bpf_trace_run*, __bpf_trace_run(): RCU read lock
 * without migration, the per-program recursion guard, the run context)
 * and the call of an empty JITed program.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(cs_empty_switch)
{
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(cs_empty_wakeup)
{
	return 0;
}
