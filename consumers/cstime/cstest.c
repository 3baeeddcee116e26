// SPDX-License-Identifier: GPL-2.0
/*
 * cstest: the program cstime's tests run.  It forces each bucket in a thread
 * of its own and measures, independently of coarse_stat, what it forced
 * (thread CPU clock, CLOCK_MONOTONIC, /proc/thread-self/schedstat and
 * /proc/thread-self/stat), one JSON object per line in a file.
 *
 *   cstest all MEASFILE DATAFILE   the phases below, one after the other
 *   cstest pool N [hold]           N short threads ("hold": all alive at once)
 *   cstest exit CODE               print "ran", exit CODE
 *   cstest signal SIG              print "ran", kill itself with SIG
 *   cstest errno                   print errno as a new thread starts: 0
 *   cstest child-exec              (the image a fork child of "all" execs)
 *
 * Phases of "all": spinner (CPU, on the first CPU), sleeper (20 x 10 ms
 * nanosleep), reader (4 KiB O_DIRECT reads of 4 MiB of DATAFILE, a file or a
 * block device), victim + hog (a
 * SCHED_OTHER thread and a SCHED_FIFO spinner on the last CPU), a fork child
 * (named "forkchild", with a thread "forkthr") that execs "cstest
 * child-exec" (named "execd"), and a pool of 200 threads named "pool".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL
#define SPIN_NS		(300 * NSEC_PER_MSEC)
#define POOL		200

static FILE *meas;
/* A thread's measurements, printed by main() after the join. */
static char mline[8][512];
static atomic_int nmline;

#define MEAS(...)							\
	snprintf(mline[atomic_fetch_add(&nmline, 1) & 7], sizeof(mline[0]), \
		 __VA_ARGS__)
static const char *datafile;
static int ncpu;
static atomic_int victim_ready, hog_done;

static uint64_t clk(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static uint64_t mono(void)
{
	return clk(CLOCK_MONOTONIC);
}

static uint64_t tcpu(void)
{
	return clk(CLOCK_THREAD_CPUTIME_ID);
}

static long tid(void)
{
	return syscall(SYS_gettid);
}

/* /proc/thread-self/schedstat: CPU time and run queue delay, ns. */
static void schedstat(uint64_t *cpu, uint64_t *delay)
{
	unsigned long long a = 0, b = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &a, &b) != 2)
			a = b = 0;
		fclose(f);
	}
	*cpu = a;
	*delay = b;
}

/* Field 42 of /proc/thread-self/stat: delayacct_blkio_ticks. */
static unsigned long long blkio_ticks(void)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	int field;
	FILE *f = fopen("/proc/thread-self/stat", "r");

	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		p = strrchr(buf, ')');	/* after comm; field 3 follows */
		for (field = 2; p && field < 42; field++)
			p = strchr(p + 1, ' ');
		if (p)
			v = strtoull(p + 1, NULL, 10);
	}
	fclose(f);
	return v;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void spin_cpu(uint64_t ns)
{
	uint64_t end = tcpu() + ns;

	while (tcpu() < end)
		;
}

static void *spinner(void *arg)
{
	uint64_t w0 = mono(), c, sc, sd;

	(void)arg;
	pthread_setname_np(pthread_self(), "spinner");
	pin(0);
	spin_cpu(SPIN_NS);
	schedstat(&sc, &sd);
	c = tcpu();
	MEAS("{\"name\":\"spinner\",\"tid\":%ld,\"cpu_ns\":%llu,\"schedstat_cpu_ns\":%llu,\"wall_ns\":%llu}\n",
		tid(), (unsigned long long)c, (unsigned long long)sc,
		(unsigned long long)(mono() - w0));
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec req = { 0, 10 * NSEC_PER_MSEC };
	uint64_t w0 = mono(), in = 0, t;
	int i;

	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	for (i = 0; i < 20; i++) {
		t = mono();
		nanosleep(&req, NULL);
		in += mono() - t;
	}
	MEAS("{\"name\":\"sleeper\",\"tid\":%ld,\"req_ns\":%llu,\"in_sleep_ns\":%llu,\"cpu_ns\":%llu,\"wall_ns\":%llu}\n",
		tid(), 20 * 10 * NSEC_PER_MSEC, (unsigned long long)in,
		(unsigned long long)tcpu(), (unsigned long long)(mono() - w0));
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t w0 = mono(), in = 0, cin = 0, t, c, bytes = 0;
	unsigned long long ticks0;
	size_t sz = 4096;	/* the I/O wait per byte is largest */
	void *buf;
	ssize_t n;
	int fd;

	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	fd = open(datafile, O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, sz)) {
		fprintf(stderr, "cstest: %s: %s\n", datafile, strerror(errno));
		exit(1);
	}
	ticks0 = blkio_ticks();
	for (;;) {
		t = mono();
		c = tcpu();
		n = read(fd, buf, sz);
		cin += tcpu() - c;
		in += mono() - t;
		if (n <= 0)
			break;
		bytes += n;
		if (bytes >= 4 << 20)
			break;
	}
	close(fd);
	MEAS("{\"name\":\"reader\",\"tid\":%ld,\"bytes\":%llu,\"in_read_ns\":%llu,\"cpu_in_read_ns\":%llu,\"blkio_ticks\":%llu,\"clk_tck\":%ld,\"cpu_ns\":%llu,\"wall_ns\":%llu}\n",
		tid(), (unsigned long long)bytes, (unsigned long long)in,
		(unsigned long long)cin, blkio_ticks() - ticks0,
		sysconf(_SC_CLK_TCK), (unsigned long long)tcpu(),
		(unsigned long long)(mono() - w0));
	free(buf);
	return NULL;
}

static void *victim(void *arg)
{
	uint64_t w0, c0, sc0, sd0, sc1, sd1, end;

	(void)arg;
	pthread_setname_np(pthread_self(), "victim");
	w0 = mono();
	c0 = tcpu();
	schedstat(&sc0, &sd0);
	atomic_store(&victim_ready, 1);
	while (!atomic_load(&hog_done))
		;
	end = tcpu() + 20 * NSEC_PER_MSEC;
	while (tcpu() < end)
		;
	schedstat(&sc1, &sd1);
	MEAS("{\"name\":\"victim\",\"tid\":%ld,\"cpu_ns\":%llu,\"offcpu_ns\":%llu,\"run_delay_ns\":%llu,\"wall_ns\":%llu}\n",
		tid(), (unsigned long long)(tcpu() - c0),
		(unsigned long long)(mono() - w0 - (tcpu() - c0)),
		(unsigned long long)(sd1 - sd0),
		(unsigned long long)(mono() - w0));
	return NULL;
}

static void *hog(void *arg)
{
	uint64_t w0 = mono(), c;

	(void)arg;
	pthread_setname_np(pthread_self(), "hog");
	spin_cpu(SPIN_NS);
	c = tcpu();
	atomic_store(&hog_done, 1);
	MEAS("{\"name\":\"hog\",\"tid\":%ld,\"cpu_ns\":%llu,\"wall_ns\":%llu,\"fifo\":1}\n",
		tid(), (unsigned long long)c,
		(unsigned long long)(mono() - w0));
	return NULL;
}

static void run1(void *(*fn)(void *))
{
	pthread_t th;

	if (pthread_create(&th, NULL, fn, NULL)) {
		perror("cstest: pthread_create");
		exit(1);
	}
	pthread_join(th, NULL);
}

static void starve(void)
{
	struct sched_param sp = { .sched_priority = 10 };
	pthread_attr_t va, ha;
	pthread_t v, h;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(ncpu - 1, &set);
	pthread_attr_init(&va);
	pthread_attr_setaffinity_np(&va, sizeof(set), &set);
	pthread_attr_init(&ha);
	pthread_attr_setaffinity_np(&ha, sizeof(set), &set);
	pthread_attr_setinheritsched(&ha, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&ha, SCHED_FIFO);
	pthread_attr_setschedparam(&ha, &sp);
	if (pthread_create(&v, &va, victim, NULL)) {
		perror("cstest: pthread_create");
		exit(1);
	}
	while (!atomic_load(&victim_ready))
		usleep(1000);
	err = pthread_create(&h, &ha, hog, NULL);
	if (err) {
		fprintf(stderr, "cstest: SCHED_FIFO thread: %s\n",
			strerror(err));
		atomic_store(&hog_done, 1);
	} else {
		pthread_join(h, NULL);
	}
	pthread_join(v, NULL);
}

static void print_meas(void)
{
	int i;

	for (i = 0; i < atomic_load(&nmline); i++)
		fputs(mline[i], meas);
	atomic_store(&nmline, 0);
}

static void *forkthr(void *arg)
{
	struct timespec req = { 0, 5 * NSEC_PER_MSEC };

	(void)arg;
	nanosleep(&req, NULL);
	return NULL;
}

static void fork_exec(void)
{
	pthread_t th;
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("cstest: fork");
		exit(1);
	}
	if (!pid) {
		pthread_setname_np(pthread_self(), "forkchild");
		if (pthread_create(&th, NULL, forkthr, NULL))
			_exit(1);
		/* Renamed by its creator: cstime may hear it first. */
		pthread_setname_np(th, "forkthr");
		pthread_join(th, NULL);
		execl("/proc/self/exe", "cstest", "child-exec", (char *)NULL);
		_exit(1);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		fprintf(stderr, "cstest: fork child failed: %#x\n", st);
		exit(1);
	}
	fprintf(meas, "{\"name\":\"fork\",\"pid\":%d}\n", pid);
}

static void *errno_thread(void *arg)
{
	*(int *)arg = errno;
	return NULL;
}

/*
 * errno is 0 at the start of main() and of a thread, whatever a wrapper did
 * before; with every fd in use, so that a registration fails on the way.
 */
static int errno_test(int e_main)
{
	pthread_t th;
	int e = -1, fd, last = -1, err;

	while ((fd = dup(0)) >= 0)
		last = fd;
	err = pthread_create(&th, NULL, errno_thread, &e);
	if (!err)
		pthread_join(th, NULL);
	for (; last > 2; last--)
		close(last);
	if (err)
		return 1;
	printf("errno main %d thread %d\n", e_main, e);
	return 0;
}

static pthread_barrier_t pool_bar;
static int pool_hold;

static void *pool_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "pool");
	spin_cpu(50000);
	if (pool_hold)
		pthread_barrier_wait(&pool_bar);
	return NULL;
}

/* @n threads, small stacks; with @hold all alive at once.  Returns 0. */
static int pool(int n, int hold)
{
	pthread_t *th = calloc(n, sizeof(*th));
	pthread_attr_t a;
	int i, err;

	pool_hold = hold;
	if (hold)
		pthread_barrier_init(&pool_bar, NULL, n + 1);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	for (i = 0; i < n; i++) {
		err = pthread_create(&th[i], &a, pool_thread, NULL);
		if (err) {
			fprintf(stderr, "cstest: pool thread %d: %s\n", i,
				strerror(err));
			exit(1);
		}
	}
	if (hold)
		pthread_barrier_wait(&pool_bar);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec req = { 0, 5 * NSEC_PER_MSEC };
	int e_main = errno;

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (argc >= 3 && !strcmp(argv[1], "exit")) {
		puts("ran");
		return atoi(argv[2]);
	}
	if (argc >= 3 && !strcmp(argv[1], "signal")) {
		puts("ran");
		fflush(stdout);
		kill(getpid(), atoi(argv[2]));
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "errno"))
		return errno_test(e_main);
	if (argc >= 2 && !strcmp(argv[1], "child-exec")) {
		prctl(PR_SET_NAME, "execd", 0, 0, 0);
		nanosleep(&req, NULL);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "pool"))
		return pool(atoi(argv[2]), argc >= 4 && !strcmp(argv[3], "hold"));
	if (argc < 4 || strcmp(argv[1], "all")) {
		fprintf(stderr, "usage: cstest all MEASFILE DATAFILE | pool N [hold] | exit CODE | signal SIG | errno\n");
		return 2;
	}
	meas = fopen(argv[2], "w");
	if (!meas) {
		perror(argv[2]);
		return 1;
	}
	setvbuf(meas, NULL, _IOLBF, 0);
	datafile = argv[3];
	fprintf(meas, "{\"name\":\"main\",\"pid\":%d,\"tid\":%ld}\n", getpid(),
		tid());
	run1(spinner);
	run1(sleeper);
	run1(reader);
	starve();
	print_meas();
	fork_exec();
	pool(POOL, 0);
	fprintf(meas, "{\"name\":\"pool\",\"created\":%d}\n", POOL);
	fclose(meas);
	return 0;
}
