// SPDX-License-Identifier: GPL-2.0
/*
 * The time the system is suspended goes to no bucket
 * (Documentation/userspace-api/coarse_stat.rst, "The time base"): every time
 * in the pages is CLOCK_MONOTONIC, which leaves it out, so the buckets grow
 * by CLOCK_MONOTONIC's time, not by CLOCK_BOOTTIME's.  Two threads are
 * followed across one suspend to RAM that the RTC's alarm ends: this one,
 * which writes /sys/power/state and so runs (or waits in the kernel)
 * throughout, and one blocked in read().  The kernel's own account of the
 * suspend, CLOCK_BOOTTIME - CLOCK_MONOTONIC, must grow by at least a
 * second; each thread's buckets must never decrease, add up to exactly
 * time_ns - start_ns before and after, keep their start_ns (nothing is
 * re-based), and grow by what CLOCK_MONOTONIC grew, measured around the
 * snapshots: no slack, the snapshots' times are CLOCK_MONOTONIC readings.
 *
 * QEMU keeps the TSC running across S3: a page that followed a counter, or
 * CLOCK_BOOTTIME, would put the suspend in this thread's on-CPU bucket and
 * in the other's sleep.  Both threads stay on CPU 0, the one that suspends
 * and resumes, so that no migration off a CPU going offline is mixed in.
 *
 * It suspends the machine, so kselftest does not run it: scripts/check.sh
 * does, in a guest of its own (a pc machine with S3 enabled).  Usage:
 * t_suspend [MEM_SLEEP], the mode written to /sys/power/mem_sleep first
 * (default deep, S3).  The program locks itself in memory and opens every
 * file before it suspends, in case the root file system does not come back.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest.h"
#include "cs_read.h"

#define SUSPEND_S	3

struct sleeper {
	int		pfd[2];
	struct cs_map	m;
	int		err;
	pthread_barrier_t ready;
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *s = arg;
	char c;

	s->err = -cs_map_thread(&s->m);
	pthread_barrier_wait(&s->ready);
	if (!s->err && read(s->pfd[0], &c, 1) != 1)
		s->err = errno;
	return NULL;
}

#define __stringify_1(x)	#x
#define __stringify(x)		__stringify_1(x)

static int write_str(int fd, const char *s)
{
	ssize_t n = pwrite(fd, s, strlen(s), 0);

	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Sum of a snapshot's buckets, which run up to its time. */
static __u64 snap_sum(const struct cs_snap *s)
{
	__u64 sum = 0;
	int i;

	for (i = 0; i < CS_NR_BUCKETS; i++)
		sum += s->ns[i];
	return sum;
}

/*
 * One thread's buckets from @a, taken between CLOCK_MONOTONIC readings
 * @a_lo and @a_hi, to @b, taken between @b_lo and @b_hi, across the
 * suspend.  The buckets add up to exactly time_ns - start_ns, so they grew
 * by b.time_ns - a.time_ns; the times must be within their readings, and
 * so the growth within [@b_lo - @a_hi, @b_hi - @a_lo]: CLOCK_MONOTONIC's.
 */
static bool check_thread(const char *who, const struct cs_snap *a, const struct cs_snap *b,
			 __u64 a_lo, __u64 a_hi, __u64 b_lo, __u64 b_hi)
{
	__u64 grew = snap_sum(b) - snap_sum(a);
	bool ok = true;
	struct cs_delta d;
	char buf[256];
	int i;

	cs_diff(a, b, &d);
	ksft_print_msg("%s: %s\n", who, cs_delta_str(&d, buf, sizeof(buf)));
	ksft_print_msg("%s: buckets grew %.3f ms, CLOCK_MONOTONIC %.3f to %.3f ms (CPU %d to %d)\n",
		       who, cs_ms(grew), cs_ms(b_lo - a_hi), cs_ms(b_hi - a_lo), a->cpu, b->cpu);
	for (i = 0; i < CS_NR_BUCKETS; i++) {
		if (b->ns[i] < a->ns[i]) {
			ksft_print_msg("%s: bucket %s went back\n", who, cs_bucket_name[i]);
			ok = false;
		}
	}
	if (snap_sum(a) != a->now - a->v.p.start_ns || snap_sum(b) != b->now - b->v.p.start_ns) {
		ksft_print_msg("%s: the buckets do not add up to time_ns - start_ns\n", who);
		ok = false;
	}
	if (b->v.p.start_ns != a->v.p.start_ns) {
		ksft_print_msg("%s: start_ns moved by %lld ns\n", who,
			       (long long)(b->v.p.start_ns - a->v.p.start_ns));
		ok = false;
	}
	if (a->now < a_lo || a->now > a_hi || b->now < b_lo || b->now > b_hi) {
		ksft_print_msg("%s: time_ns %llu not in [%llu, %llu] or %llu not in [%llu, %llu]\n",
			       who, a->now, a_lo, a_hi, b->now, b_lo, b_hi);
		ok = false;
	}
	if (grew < b_lo - a_hi || grew > b_hi - a_lo) {
		ksft_print_msg("%s: the buckets grew by %.3f ms, not by CLOCK_MONOTONIC's\n", who,
			       cs_ms(grew));
		ok = false;
	}
	return ok;
}

/* Suspend to RAM proper (S3), not to idle, which QEMU has no idle driver for. */
static int set_mem_sleep(const char *mode)
{
	char buf[64] = "";
	int fd = open("/sys/power/mem_sleep", O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	ksft_print_msg("mem_sleep: %.*s", n > 0 ? (int)n : 0, buf);
	n = write_str(fd, mode);
	close(fd);
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "deep";
	__u64 m0a, m0b, m1a, m1b, boot0, boot1, suspended;
	struct sleeper sl = { .m = { .fd = -1 } };
	struct cs_snap sa, sb, pa, pb;
	int state_fd, alarm_fd, ret;
	struct cs_map self;
	cpu_set_t cpu0;
	pthread_t th;
	bool ok;

	ksft_print_header();
	cs_require_coarse_stat();
	if (geteuid())
		ksft_exit_skip("needs root to suspend\n");
	state_fd = open("/sys/power/state", O_WRONLY | O_CLOEXEC);
	alarm_fd = open("/sys/class/rtc/rtc0/wakealarm", O_WRONLY | O_CLOEXEC);
	if (state_fd < 0 || alarm_fd < 0)
		ksft_exit_skip("no /sys/power/state or RTC wake alarm: %s\n", strerror(errno));
	if (set_mem_sleep(mode))
		ksft_exit_fail_msg("mem_sleep %s: %s\n", mode, strerror(errno));
	ksft_set_plan(3);

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
		ksft_exit_fail_msg("CPU 0: %s\n", strerror(errno));
	/* The sleeper inherits the affinity. */
	if (pipe2(sl.pfd, O_CLOEXEC) || pthread_barrier_init(&sl.ready, NULL, 2) ||
	    pthread_create(&th, NULL, sleeper_fn, &sl))
		ksft_exit_fail_msg("sleeper thread: %s\n", strerror(errno));
	pthread_barrier_wait(&sl.ready);
	if (sl.err)
		ksft_exit_fail_msg("sleeper's page: %s\n", strerror(sl.err));
	ret = cs_map_thread(&self);
	if (ret)
		ksft_exit_fail_msg("thread page: %s\n", strerror(-ret));
	/* Nothing may be read from the 9p root after the resume. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		ksft_exit_fail_msg("mlockall: %s\n", strerror(errno));
	/* Let the sleeper block. */
	usleep(100000);

	m0a = cs_clock_ns(CLOCK_MONOTONIC);
	boot0 = cs_clock_ns(CLOCK_BOOTTIME);
	if (cs_snap(cs_thread_page(&self), &sa) || cs_snap(cs_thread_page(&sl.m), &pa))
		ksft_exit_fail_msg("snapshot: %s\n", strerror(errno));
	m0b = cs_clock_ns(CLOCK_MONOTONIC);

	if (write_str(alarm_fd, "0") || write_str(alarm_fd, "+" __stringify(SUSPEND_S)))
		ksft_exit_fail_msg("RTC wake alarm: %s\n", strerror(errno));
	ret = write_str(state_fd, "mem");
	if (ret)
		ksft_exit_fail_msg("suspend to RAM: %s\n", strerror(errno));

	m1a = cs_clock_ns(CLOCK_MONOTONIC);
	if (cs_snap(cs_thread_page(&self), &sb) || cs_snap(cs_thread_page(&sl.m), &pb))
		ksft_exit_fail_msg("snapshot after the resume: %s\n", strerror(errno));
	boot1 = cs_clock_ns(CLOCK_BOOTTIME);
	m1b = cs_clock_ns(CLOCK_MONOTONIC);

	/* What the kernel's timekeeping counts as suspended. */
	suspended = (boot1 - boot0) - (m1b - m0a);
	ksft_print_msg("suspended %.3f ms (CLOCK_BOOTTIME - CLOCK_MONOTONIC)\n", cs_ms(suspended));
	ksft_print_msg("CLOCK_MONOTONIC ran %.3f ms, CLOCK_BOOTTIME %.3f ms\n",
		       cs_ms(m1b - m0a), cs_ms(boot1 - boot0));
	ksft_test_result(suspended >= CS_NSEC_PER_SEC, "suspended\n");

	ok = check_thread("writer", &sa, &sb, m0a, m0b, m1a, m1b);
	ksft_test_result(ok, "writer_on_cpu\n");

	if (write(sl.pfd[1], "x", 1) != 1 || pthread_join(th, NULL))
		ksft_exit_fail_msg("sleeper: %s\n", strerror(errno));
	ok = !sl.err && check_thread("sleeper", &pa, &pb, m0a, m0b, m1a, m1b);
	ksft_test_result(ok, "sleeper_asleep\n");
	ksft_finished();
}
