/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The futex ping-pong of cs_bench -i, shared by bench/cs_pingpong.c and
 * bench/bpf/cs_bpf.c (bench/cs_bench.c keeps its own copy).  A round trip: ping stores 1 and wakes, waits while the word is 1;
 * pong waits while it is 0, stores 0 and wakes.  Two context switches per
 * round trip with both threads on one CPU; with one thread per CPU, each
 * side's switch to idle and back.
 */
#ifndef CS_PINGPONG_H
#define CS_PINGPONG_H

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* FUTEX_WAIT_PRIVATE while *w is @val; @timeout_ns 0: no timeout. */
static inline long futex_wait(int *w, int val, uint64_t timeout_ns)
{
	struct timespec ts = { timeout_ns / 1000000000ull, timeout_ns % 1000000000ull };

	return syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, timeout_ns ? &ts : NULL, NULL, 0);
}

static inline long futex_wake(int *w)
{
	return syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* @n round trips, ping's side. */
static inline void ping(int *w, unsigned long n)
{
	while (n--) {
		__atomic_store_n(w, 1, __ATOMIC_RELEASE);
		futex_wake(w);
		while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == 1)
			futex_wait(w, 1, 0);
	}
}

/* @n round trips, pong's side. */
static inline void pong(int *w, unsigned long n)
{
	while (n--) {
		while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == 0)
			futex_wait(w, 0, 0);
		__atomic_store_n(w, 0, __ATOMIC_RELEASE);
		futex_wake(w);
	}
}

/*
 * Start and collect a pair through eventfds, not a pthread barrier: a
 * thread waiting in pthread_barrier_wait() waits on a futex, and a
 * process's private futex hash has 16 buckets (7.3, two CPUs), so the
 * running pair's word can share a bucket with that waiter and every
 * wakeup walk past it, in some runs and not others (tens of instructions
 * per switch; cs_bench does the same).
 */
static inline void pp_post(int fd)
{
	uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static inline void pp_wait(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
}

#endif /* CS_PINGPONG_H */
