// SPDX-License-Identifier: GPL-2.0
/*
 * Nothing an unprivileged user does patches kernel text by default, so
 * nothing it does sends an IPI to an isolated (nohz_full) CPU: by default
 * nobody may register (kernel.coarse_stat_thread = 0) and the hooks' static
 * key is off; the administrator's first non-zero write enables the key, a
 * text patch that interrupts every CPU (x86: function call IPIs, the "CAL"
 * row of /proc/interrupts); after it, an unprivileged loop of "register,
 * exit, sleep 1.2 s" patches nothing.  (Before v5 every thread could
 * register by default, and the key was enabled at a registration and
 * disabled a second after the last one ended: each round of that loop sent
 * IPIs to every CPU.)
 *
 * Needs a guest of its own, booted with nohz_full=2-3 on 4 CPUs
 * (scripts/check.sh), as root, with the default sysctl: no other program
 * may have written it.  The IPIs counted are those CPU 3 takes while each
 * prctl() runs (an enable's patch is done before it returns), and during
 * the administrator's write, which must show them (so that the count can
 * see what it looks for).  Counting over whole seconds instead picks up
 * IPIs a loaded host's guest takes anyway (tens a second in the check run,
 * none on a quiet one).
 *
 * The CPU page's refresh, which any user may start by opening the CPU
 * file, stays off the isolated CPU too (second test).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "cs_read.h"
#include "cs_check.h"

#define CS_ISOLATED_CPU		3
#define CS_ROUNDS		4

/* CPU @cpu's count in the row @row ("CAL:") of /proc/interrupts, or -1. */
static long long irq_row(const char *row, int cpu)
{
	char line[4096], *p;
	long long n = -1;
	FILE *f;
	int i;

	f = fopen("/proc/interrupts", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, row, strlen(row)))
			continue;
		p += strlen(row);
		for (i = 0; i <= cpu; i++)
			n = strtoll(p, &p, 10);
		break;
	}
	fclose(f);
	return n;
}

/* The function call IPIs CPU @cpu took, or -1. */
static long long cal_ipis(int cpu)
{
	return irq_row("CAL:", cpu);
}

/*
 * Register, counting the IPIs CS_ISOLATED_CPU takes during the prctl(): a
 * registration that enabled the key would have sent them before the call
 * returns.  Returns the count, or -1.
 */
static void *register_fn(void *arg)
{
	long long before, after;
	long fd;

	before = cal_ipis(CS_ISOLATED_CPU);
	fd = cs_open(PR_COARSE_STAT_THREAD);
	after = cal_ipis(CS_ISOLATED_CPU);
	if (fd < 0 || before < 0 || after < 0)
		return (void *)-1L;
	close(fd);
	return (void *)(long)(after - before);
}

/*
 * CS_ROUNDS times: a thread registers and exits, then 1.2 s (longer than a
 * deferred disable would wait).  The IPIs CS_ISOLATED_CPU took during the
 * registrations, or -1.
 */
static long long loop_ipis(void)
{
	long long sum = 0;
	pthread_t th;
	void *n;
	int i;

	for (i = 0; i < CS_ROUNDS; i++) {
		if (pthread_create(&th, NULL, register_fn, NULL))
			return -1;
		pthread_join(th, &n);
		if ((long)n < 0)
			return -1;
		sum += (long)n;
		usleep(1200000);
	}
	return sum;
}

static int write_sysctl(const char *val)
{
	int fd = open(CS_THREAD_SYSCTL, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The loops run in a process forked on CPU 0 and kept there: its address
 * space has never been on CPU 3, so no TLB shootdown of it goes there.
 * Results through a pipe: whether a registration as nobody with the default
 * sysctl failed with EPERM (0) or not, the IPIs of the administrator's
 * write of 2, and those of the loop as nobody after it (-1 for a failure).
 */
static void measure(int out)
{
	long long r[3] = { -1, -1, -1 }, before, after, n;
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0)
		_exit(cs_become_nobody() ? 255 :
		      cs_open(PR_COARSE_STAT_THREAD) == -EPERM ? 0 : 1);
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		r[0] = WEXITSTATUS(st);
	before = cal_ipis(CS_ISOLATED_CPU);
	if (!write_sysctl("2")) {
		after = cal_ipis(CS_ISOLATED_CPU);
		if (before >= 0 && after >= 0)
			r[1] = after - before;
		pid = fork();
		if (pid == 0) {
			n = cs_become_nobody() ? -1 : loop_ipis();
			_exit(n < 0 ? 255 : n < 254 ? n : 254);
		}
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) != 255)
			r[2] = WEXITSTATUS(st);
	}
	_exit(write(out, r, sizeof(r)) != sizeof(r));
}

TEST(default_user_sends_no_ipi)
{
	long long r[3], key = -1;
	int pipefd[2], status;
	cpu_set_t set;
	char buf[64];
	pid_t pid;

	if (access(CS_PERIOD_SYSCTL, F_OK))
		SKIP(return, "kernel without CONFIG_COARSE_STAT");
	ASSERT_EQ(0, geteuid()) TH_LOG("needs root for the sysctl");
	ASSERT_LT(0, cs_read_file("/sys/devices/system/cpu/nohz_full", buf, sizeof(buf)));
	ASSERT_EQ(0, strcmp(buf, "2-3\n")) TH_LOG("boot with nohz_full=2-3: %s", buf);
	ASSERT_LE(0, cal_ipis(CS_ISOLATED_CPU)) TH_LOG("no CAL row for CPU %d", CS_ISOLATED_CPU);
	/* The defaults: nobody may register, the hooks' key off. */
	ASSERT_LT(0, cs_read_file(CS_THREAD_SYSCTL, buf, sizeof(buf)));
	EXPECT_EQ(0, strcmp(buf, "0\n")) TH_LOG("default %s: %s", CS_THREAD_SYSCTL, buf);
	ASSERT_EQ(0, cs_debugfs_stat("key", &key));
	ASSERT_EQ(0, key);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(pipefd[0]);
		measure(pipefd[1]);
	}
	close(pipefd[1]);
	ASSERT_EQ(sizeof(r), read(pipefd[0], r, sizeof(r)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(pipefd[0]);
	TH_LOG("default: nobody's registration %s", r[0] == 0 ? "EPERM" : "not EPERM");
	TH_LOG("CPU %d: function call IPIs during the administrator's write %lld,",
	       CS_ISOLATED_CPU, r[1]);
	TH_LOG("during %d registrations as nobody after it %lld", CS_ROUNDS, r[2]);
	EXPECT_EQ(0, r[0]);
	/* The write enables the key: a patch, IPIs (the count sees them). */
	EXPECT_LE(1, r[1]);
	ASSERT_LE(0, r[2]);
	/* Then none from registering; fewer than one per registration allows a stray. */
	EXPECT_GT(CS_ROUNDS, r[2]);
}

/*
 * The CPU page's refresh runs where the kernel puts unpinned timers, off
 * isolated CPUs: nobody, pinned to CPU 3, opens /proc/coarse_stat_cpu (the
 * first open starts the refresh, 100 a second by default) and keeps it
 * open for 2 s, asleep; CPU 3 then takes no more local timer interrupts
 * ("LOC") than in 2 s without the file, while the page's refresh count
 * shows that the refresh ran.  Run after the test above, which leaves the
 * sysctl at 2: the CPU file needs none.
 */
TEST(cpu_file_refresh_off_isolated_cpu)
{
	long long base0, base1, open0, open1, r[2] = { -1, -1 };
	int pipefd[2], status;
	pid_t pid;

	ASSERT_EQ(0, geteuid()) TH_LOG("needs root to become nobody");
	ASSERT_LE(0, irq_row("LOC:", CS_ISOLATED_CPU));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		const struct coarse_stat_cpu_page *cp;
		struct cs_map m;
		cpu_set_t set;
		__u64 n0;

		CPU_ZERO(&set);
		CPU_SET(CS_ISOLATED_CPU, &set);
		if (sched_setaffinity(0, sizeof(set), &set) || cs_become_nobody())
			_exit(1);
		base0 = irq_row("LOC:", CS_ISOLATED_CPU);
		sleep(2);
		base1 = irq_row("LOC:", CS_ISOLATED_CPU);
		open0 = irq_row("LOC:", CS_ISOLATED_CPU);
		if (cs_map_cpu(&m))
			_exit(1);
		cp = m.addr;
		n0 = __atomic_load_n(&cp->refresh[0].nr_refresh, __ATOMIC_RELAXED);
		sleep(2);
		open1 = irq_row("LOC:", CS_ISOLATED_CPU);
		r[0] = base1 - base0;
		r[1] = open1 - open0;
		if (write(pipefd[1], r, sizeof(r)) != sizeof(r))
			_exit(1);
		n0 = __atomic_load_n(&cp->refresh[0].nr_refresh, __ATOMIC_RELAXED) - n0;
		_exit(n0 < 100 ? 2 : 0);
	}
	close(pipefd[1]);
	ASSERT_EQ(sizeof(r), read(pipefd[0], r, sizeof(r)));
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("CPU %d: local timer interrupts in 2 s: %lld without the CPU file,",
	       CS_ISOLATED_CPU, r[0]);
	TH_LOG("%lld with it open", r[1]);
	/* The refresh ran (at least 100 refreshes in 2 s) */
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("opener: status %#x (2: fewer than 100 refreshes)", status);
	/* ... and not on CPU 3, where it would take 200. */
	EXPECT_GE(r[0] + 20, r[1]);
}

TEST_HARNESS_MAIN
