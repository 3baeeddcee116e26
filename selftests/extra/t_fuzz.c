// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat fuzzer: for CS_FUZZ_SECONDS (default 10), random prctl()
 * calls, and random mmap(), mprotect(), munmap(), mremap(), madvise() and
 * file operations on the pages' file descriptors and mappings; now and then
 * a thread that registers, hands its page over and exits, or a fork().
 *
 * Every call must succeed or fail with an errno of its list (see
 * allowed[]), and what succeeds must be allowed: no mapping is ever
 * writable, executable, private, offset, longer than the page or able to
 * grow, and MADV_DONTNEED is refused (a PFN mapping); a readable mapping
 * shows the page, never SIGBUS or other memory; snapshots through
 * the vDSO add up.  At the end the debugfs object counters, the static key
 * and the number of open files are back at the start, and the kernel is
 * not tainted.
 *
 * MAP_FIXED and MREMAP_FIXED only ever target an arena of reserved cells, so
 * that nothing of the program's own memory is replaced.  The seed is printed;
 * CS_FUZZ_SEED=<n> replays one; CS_FUZZ_TRACE=1 prints the last calls
 * (and the process's mappings) at the first violations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cs_read.h"
#include "../kselftest_harness.h"
#include "cs_check.h"

/* x86's; elsewhere one more flag the kernel does not know. */
#ifndef MAP_32BIT
#define MAP_32BIT	0x40
#endif

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif

#define MAX_FDS		12
#define MAX_MAPS	32
#define NR_CELLS	16
#define MAX_VIOL	12
#define MAX_ERRNO	134

enum { K_NONE, K_THREAD, K_CPU, K_ANON };

enum {
	OP_PRCTL, OP_OPEN, OP_MMAP, OP_MPROTECT, OP_MUNMAP, OP_MREMAP, OP_MADVISE,
	OP_READ, OP_FDOPS, OP_CLOSE, OP_THREAD, OP_FORK, NR_OPS
};

static const char * const op_name[NR_OPS] = {
	"prctl", "open cpu", "mmap", "mprotect", "munmap", "mremap", "madvise",
	"page read", "fd ops", "close", "thread", "fork",
};

/* What each call may fail with; from the code (see the report in the log). */
static const int allowed[NR_OPS][12] = {
	[OP_PRCTL]	= { EINVAL, ENOMEM, EMFILE, ENFILE },
	/* EACCES: for writing (op_open_cpu() checks that it is only then) */
	[OP_OPEN]	= { EACCES, ENOMEM, EMFILE, ENFILE },
	[OP_MMAP]	= { EINVAL, EACCES, EPERM, ENOMEM, EBADF, EOVERFLOW, EEXIST,
			    EOPNOTSUPP, EAGAIN, ENODEV },
	[OP_MPROTECT]	= { EACCES, EINVAL, ENOMEM },
	[OP_MUNMAP]	= { EINVAL, ENOMEM },
	[OP_MREMAP]	= { EINVAL, EFAULT, ENOMEM, EAGAIN },
	[OP_MADVISE]	= { EINVAL, EACCES, EBADF, EFAULT, ENOMEM, EPERM, EAGAIN, EIO },
	[OP_FDOPS]	= { EINVAL, EBADF, ESPIPE, ENOTTY, EACCES, EPERM, ENODEV,
			    EOPNOTSUPP, EIO },
	[OP_CLOSE]	= { 0 },
	[OP_THREAD]	= { ENOMEM, EAGAIN },
	[OP_FORK]	= { ENOMEM, EAGAIN },
};

struct fd_ent {
	int	fd;
	int	kind;
	size_t	size;
};

struct map_ent {
	char	*addr;
	size_t	len;
	int	kind;
	int	prot;
	int	cell;		/* arena cell it starts, or -1 */
	bool	mixed;		/* part of it has another protection */
	bool	zapped;		/* MADV_DONTNEED: faults in again */
	bool	dead;		/* gone; dropped by map_reap() */
};

struct fuzz {
	__u64		rng;
	size_t		psz, cell, size[4];
	char		*arena;
	struct fd_ent	fd[MAX_FDS];
	int		nfd;
	struct map_ent	map[MAX_MAPS];
	int		nmap;
	unsigned long	calls[NR_OPS], ok[NR_OPS];
	unsigned long	err[NR_OPS][MAX_ERRNO + 1];
	unsigned long	sigbus, viol;
	char		viol_msg[MAX_VIOL][200];
};

#define TRACE_N	6000
static bool trace_on;
static unsigned int trace_n;
static char trace_ring[TRACE_N][160];

static __u64 rnd(struct fuzz *f)
{
	/* xorshift64* */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 0x2545f4914f6cdd1dULL;
}

static unsigned int pick(struct fuzz *f, unsigned int n)
{
	return n ? rnd(f) % n : 0;
}

static bool chance(struct fuzz *f, unsigned int percent)
{
	return pick(f, 100) < percent;
}

static void violation(struct fuzz *f, const char *fmt, ...)
{
	va_list ap;

	if (trace_on && f->viol < 2) {
		unsigned int i;

		for (i = trace_n > TRACE_N ? trace_n - TRACE_N : 0; i < trace_n; i++)
			fprintf(stderr, "  %s\n", trace_ring[i % TRACE_N]);
		va_start(ap, fmt);
		fprintf(stderr, "VIOLATION: ");
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\n");
		va_end(ap);
	}
	if (f->viol < MAX_VIOL) {
		va_start(ap, fmt);
		vsnprintf(f->viol_msg[f->viol], sizeof(f->viol_msg[0]), fmt, ap);
		va_end(ap);
	}
	f->viol++;
}

/* Count the result of a call; an errno outside the op's list is a violation. */
static void result(struct fuzz *f, int op, long ret, int err, const char *what)
{
	unsigned int i;

	f->calls[op]++;
	if (trace_on)
		snprintf(trace_ring[trace_n++ % TRACE_N], 160, "%s%s = %ld %s", op_name[op], what,
			 ret, ret < 0 ? strerrorname_np(err) : "");
	if (ret >= 0) {
		f->ok[op]++;
		return;
	}
	f->err[op][err <= MAX_ERRNO ? err : 0]++;
	for (i = 0; i < ARRAY_SIZE(allowed[op]) && allowed[op][i]; i++)
		if (allowed[op][i] == err)
			return;
	violation(f, "%s: %s: unexpected %s", op_name[op], what, strerrorname_np(err) ?: "?");
}

static size_t page_align(struct fuzz *f, size_t len)
{
	return (len + f->psz - 1) & ~(f->psz - 1);
}

static char *cell_addr(struct fuzz *f, int cell)
{
	return f->arena + cell * f->cell;
}

/* The tracked mapping starting in @cell, or -1. */
static int map_in_cell(struct fuzz *f, int cell)
{
	int i;

	for (i = 0; i < f->nmap; i++)
		if (f->map[i].cell == cell && !f->map[i].dead)
			return i;
	return -1;
}

/* Forget the mappings marked dead (indices change). */
static void map_reap(struct fuzz *f)
{
	int i;

	for (i = 0; i < f->nmap;) {
		if (f->map[i].dead)
			f->map[i] = f->map[--f->nmap];
		else
			i++;
	}
}

static bool all_present(void *addr, size_t len, size_t psz)
{
	unsigned char vec[64];

	if (len / psz > sizeof(vec))
		return false;
	return !mincore(addr, len, vec);
}

/*
 * Keep the arena whole: every page of @cell not under a tracked mapping is
 * reserved (PROT_NONE), so that nothing else is ever placed there.
 */
static void cell_fix(struct fuzz *f, int cell)
{
	char *c = cell_addr(f, cell);
	size_t off, used = 0;
	int i = map_in_cell(f, cell);
	void *p;

	if (i >= 0)
		used = f->map[i].len;
	for (off = used; off < f->cell; off += f->psz) {
		p = mmap(c + off, f->psz, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED && errno != EEXIST)
			violation(f, "arena: cannot reserve %p: %s", c + off, strerror(errno));
	}
}

/*
 * @cell was the target of a MAP_FIXED or MREMAP_FIXED call, which mapped
 * @new_len bytes there if @ok.  What was there is gone then; a failed call
 * may have unmapped it too.  Marks it dead; the caller adds or moves the new
 * mapping, then calls cell_fix() and map_reap().
 */
static void cell_evict(struct fuzz *f, int cell, bool ok, size_t new_len)
{
	int i = map_in_cell(f, cell);
	struct map_ent *m;

	if (i < 0)
		return;
	m = &f->map[i];
	if (ok) {
		if (m->len > new_len)
			munmap(m->addr + new_len, m->len - new_len);
		m->dead = true;
	} else if (!all_present(m->addr, m->len, f->psz)) {
		munmap(m->addr, m->len);
		m->dead = true;
	}
}

static void map_add(struct fuzz *f, void *addr, size_t len, int kind, int prot, int cell)
{
	struct map_ent *m;

	if (f->nmap == MAX_MAPS) {
		munmap(addr, len);
		if (cell >= 0)
			cell_fix(f, cell);
		return;
	}
	m = &f->map[f->nmap++];
	memset(m, 0, sizeof(*m));
	m->addr = addr;
	m->len = page_align(f, len);
	m->kind = kind;
	m->prot = prot;
	m->cell = cell;
}

static void fd_add(struct fuzz *f, int fd, int kind)
{
	if (f->nfd == MAX_FDS) {
		close(fd);
		return;
	}
	f->fd[f->nfd].fd = fd;
	f->fd[f->nfd].kind = kind;
	f->fd[f->nfd].size = f->size[kind];
	f->nfd++;
}

static unsigned long rnd_arg(struct fuzz *f)
{
	static const unsigned long v[] = { 0, 0, 0, 0, 0, 0, 1, 2, -1UL, 82 };

	return chance(f, 90) ? v[pick(f, ARRAY_SIZE(v))] : rnd(f);
}

/*
 * The CPU page's file, opened read-only (valid) or for writing, which it
 * refuses with EACCES (also to root).
 */
static void op_open_cpu(struct fuzz *f)
{
	static const int modes[] = { O_RDONLY, O_RDONLY, O_WRONLY, O_RDWR };
	int mode = modes[pick(f, ARRAY_SIZE(modes))];
	bool valid = mode == O_RDONLY;
	char what[96];
	int ret;

	if (valid && f->nfd == MAX_FDS)
		return;
	ret = open(CS_CPU_PATH, mode | O_CLOEXEC);
	snprintf(what, sizeof(what), "(%s, %#x)", CS_CPU_PATH, mode);
	result(f, OP_OPEN, ret, errno, what);
	if (ret >= 0) {
		if (!valid)
			violation(f, "open%s: accepted", what);
		fd_add(f, ret, K_CPU);
	} else if (valid == (errno == EACCES)) {
		violation(f, "open%s: %s", what, strerror(errno));
	}
}

/* prctl(PR_COARSE_STAT): 2, the CPU page's number in v3, is invalid now. */
static void op_prctl(struct fuzz *f)
{
	static const unsigned long ops[] = {
		PR_COARSE_STAT_THREAD, PR_COARSE_STAT_THREAD, PR_COARSE_STAT_THREAD,
		2, 0, 3, 4, 0x100, -1UL, 1UL << 32 | 1,
	};
	unsigned long op = chance(f, 95) ? ops[pick(f, ARRAY_SIZE(ops))] : rnd(f);
	unsigned long a3 = chance(f, 80) ? 0 : rnd_arg(f);
	unsigned long a4 = chance(f, 80) ? 0 : rnd_arg(f);
	unsigned long a5 = chance(f, 80) ? 0 : rnd_arg(f);
	bool valid = op == PR_COARSE_STAT_THREAD && !a3 && !a4 && !a5;
	char what[96];
	int ret;

	if (chance(f, 30)) {
		op_open_cpu(f);
		return;
	}
	if (valid && f->nfd == MAX_FDS)
		return;
	ret = prctl(PR_COARSE_STAT, op, a3, a4, a5);
	snprintf(what, sizeof(what), "(%#lx, %#lx, %#lx, %#lx)", op, a3, a4, a5);
	result(f, OP_PRCTL, ret, errno, what);
	if (ret >= 0) {
		if (!valid)
			violation(f, "prctl%s: accepted", what);
		fd_add(f, ret, K_THREAD);
	} else if (valid && errno == EINVAL) {
		violation(f, "prctl%s: EINVAL", what);
	} else if (!valid && errno != EINVAL) {
		violation(f, "prctl%s: %s, not EINVAL", what, strerror(errno));
	}
}

static void op_mmap(struct fuzz *f)
{
	struct fd_ent *e = f->nfd ? &f->fd[pick(f, f->nfd)] : NULL;
	size_t size = e ? e->size : f->psz;
	size_t lens[] = {
		size, size, size, f->psz, 0, 1, f->psz - 1, f->psz + 1, size + f->psz,
		2 * size, 1UL << 40, -1UL, -f->psz, pick(f, 4 * size),
	};
	static const int types[] = {
		MAP_SHARED, MAP_SHARED, MAP_SHARED, MAP_SHARED_VALIDATE, MAP_PRIVATE, 0,
	};
	static const int extra[] = {
		MAP_POPULATE, MAP_LOCKED, MAP_NORESERVE, MAP_HUGETLB, MAP_SYNC,
		MAP_GROWSDOWN, MAP_32BIT, MAP_STACK, MAP_ANONYMOUS, 0x4000000,
	};
	int prot = chance(f, 50) ? PROT_READ : pick(f, 8);
	int flags = types[pick(f, ARRAY_SIZE(types))];
	size_t len = lens[pick(f, ARRAY_SIZE(lens))];
	off_t off = 0;
	int fd = e ? e->fd : -1, kind = e ? e->kind : K_NONE, cell = -1;
	unsigned int i;
	char what[160];
	char *hint = NULL, *addr;
	bool shared;
	int err;

	for (i = 0; i < ARRAY_SIZE(extra); i++)
		if (chance(f, 4))
			flags |= extra[i];
	if (flags & MAP_ANONYMOUS) {
		/* small: no populating a terabyte */
		len = f->psz * (1 + pick(f, 2));
		kind = K_ANON;
	} else if (chance(f, 5)) {
		fd = chance(f, 50) ? -1 : 1000;	/* not open */
	}
	if (chance(f, 20)) {
		static const off_t offs[] = { 4096, 1, 8192, -4096, 1L << 62 };

		off = offs[pick(f, ARRAY_SIZE(offs))];
	}
	/* placement: fixed only in the arena, and only as long as a cell */
	switch (pick(f, 10)) {
	case 0:
		hint = (char *)(rnd(f) & 0x7ffffffff000UL);
		break;
	case 1:
	case 2:
		if (len && page_align(f, len) <= f->cell && page_align(f, len) >= len) {
			cell = pick(f, NR_CELLS);
			hint = cell_addr(f, cell);
			flags |= chance(f, 75) ? MAP_FIXED : MAP_FIXED_NOREPLACE;
		}
		break;
	}

	addr = mmap(hint, len, prot, flags, fd, off);
	err = errno;
	snprintf(what, sizeof(what), "(%p, %#zx, prot %#x, flags %#x, %s fd, off %#lx) -> %p",
		 hint, len, prot, flags, kind == K_THREAD ? "thread" : kind == K_CPU ? "cpu" :
		 kind == K_ANON ? "anon" : "no", (long)off, addr);
	result(f, OP_MMAP, addr == MAP_FAILED ? -1 : 0, err, what);
	if (cell >= 0 && (flags & MAP_FIXED))
		cell_evict(f, cell, addr != MAP_FAILED, page_align(f, len));
	if (addr == MAP_FAILED) {
		if (cell >= 0) {
			cell_fix(f, cell);
			map_reap(f);
		}
		return;
	}
	if (cell >= 0 && addr != hint)
		violation(f, "mmap%s: at %p", what, addr);

	if (kind == K_THREAD || kind == K_CPU) {
		shared = (flags & 3) == MAP_SHARED || (flags & 3) == MAP_SHARED_VALIDATE;
		if (!shared || (prot & (PROT_WRITE | PROT_EXEC)) || off ||
		    page_align(f, len) > size || (flags & (MAP_GROWSDOWN | MAP_HUGETLB)))
			violation(f, "mmap%s: mapped", what);
	}
	map_add(f, addr, len, kind, prot, cell);
	if (cell >= 0) {
		cell_fix(f, cell);
		map_reap(f);
	}
}

static struct map_ent *pick_map(struct fuzz *f)
{
	return f->nmap ? &f->map[pick(f, f->nmap)] : NULL;
}

static bool is_page(const struct map_ent *m)
{
	return m->kind == K_THREAD || m->kind == K_CPU;
}

static void op_mprotect(struct fuzz *f)
{
	struct map_ent *m = pick_map(f);
	char *addr;
	size_t len;
	int prot, ret;
	char what[96];
	bool whole;

	if (!m)
		return;
	addr = m->addr;
	len = m->len;
	switch (pick(f, 6)) {
	case 0:		/* first page */
		len = f->psz;
		break;
	case 1:		/* last page */
		addr += len - f->psz;
		len = f->psz;
		break;
	case 2:
		len = 0;
		break;
	case 3:
		addr += 1;
		break;
	}
	whole = addr == m->addr && len == m->len;
	prot = pick(f, 8);
	if (chance(f, 5))
		prot |= chance(f, 50) ? PROT_GROWSDOWN : 0x100;
	ret = mprotect(addr, len, prot);
	snprintf(what, sizeof(what), "(%s +%#lx, %#zx, %#x)", is_page(m) ? "page" : "anon",
		 (long)(addr - m->addr), len, prot);
	result(f, OP_MPROTECT, ret, errno, what);
	if (ret)
		return;
	if (is_page(m) && len && (prot & (PROT_WRITE | PROT_EXEC)))
		violation(f, "mprotect%s: allowed", what);
	if (!len)
		return;
	if (whole) {
		m->prot = prot;
		m->mixed = false;
	} else {
		m->mixed = true;
	}
}

static void op_munmap(struct fuzz *f)
{
	struct map_ent *m = pick_map(f);
	size_t keep = 0;
	char *addr;
	size_t len;
	int ret;
	char what[64];

	if (!m)
		return;
	addr = m->addr;
	len = m->len;
	switch (pick(f, 5)) {
	case 0:		/* keep the head */
		if (m->len > f->psz) {
			keep = f->psz * (1 + pick(f, m->len / f->psz - 1));
			addr += keep;
			len -= keep;
		}
		break;
	case 1:
		addr += 8;
		break;
	case 2:
		len = 0;
		break;
	}
	ret = munmap(addr, len);
	snprintf(what, sizeof(what), "(%p +%#lx, %#zx)", m->addr, (long)(addr - m->addr), len);
	result(f, OP_MUNMAP, ret, errno, what);
	if (ret)
		return;
	if (!len)
		violation(f, "munmap%s: length 0 accepted", what);
	if (keep) {
		m->len = keep;
		/* reserve the tail again: no other mapping may land in the arena */
		if (m->cell >= 0)
			cell_fix(f, m->cell);
		return;
	}
	m->dead = true;
	if (m->cell >= 0)
		cell_fix(f, m->cell);
	map_reap(f);
}

static void op_mremap(struct fuzz *f)
{
	struct map_ent *m = pick_map(f);
	size_t old_len, new_len;
	int flags = 0, cell = -1, old_cell;
	char *addr, *dst = NULL;
	char what[128];

	if (!m)
		return;
	old_len = m->len;
	new_len = m->len;
	switch (pick(f, 8)) {
	case 0:		/* grow in place */
		new_len += f->psz;
		break;
	case 1:		/* grow anywhere */
		new_len += f->psz * (1 + pick(f, 2));
		flags = MREMAP_MAYMOVE;
		break;
	case 2:		/* shrink */
		if (m->len > f->psz)
			new_len = f->psz;
		break;
	case 3:		/* duplicate */
		old_len = 0;
		flags = MREMAP_MAYMOVE;
		break;
	case 4:
		flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP;
		break;
	case 5:
		flags = pick(f, 1U << 8) & ~(MREMAP_MAYMOVE | MREMAP_FIXED);
		break;
	default:	/* move into the arena */
		if (new_len <= f->cell) {
			cell = pick(f, NR_CELLS);
			if (cell == m->cell) {
				cell = -1;
				break;
			}
			dst = cell_addr(f, cell);
			flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		}
		break;
	}
	if (m->kind == K_ANON && (new_len > 4 * f->psz || !old_len))
		return;
	addr = mremap(m->addr, old_len, new_len, flags, dst);
	snprintf(what, sizeof(what), "(%s %p, %#zx, %#zx, %#x%s) -> %p",
		 is_page(m) ? "page" : "anon", m->addr,
		 old_len, new_len, flags, dst ? ", arena" : "", addr);
	result(f, OP_MREMAP, addr == MAP_FAILED ? -1 : 0, errno, what);
	if (cell >= 0)
		cell_evict(f, cell, addr != MAP_FAILED, new_len);
	if (addr == MAP_FAILED) {
		/* a failed mremap() leaves the mapping where it was */
		if (!all_present(m->addr, m->len, f->psz))
			violation(f, "mremap%s failed and lost the mapping", what);
		/*
		 * ... but MREMAP_FIXED unmaps the target range before it can
		 * fail: reserve the cell again, or the kernel may place another
		 * mapping in the hole (and a later cell_fix() replace it).
		 */
		if (cell >= 0) {
			cell_fix(f, cell);
			map_reap(f);
		}
	} else {
		if (is_page(m) && (new_len > m->len || (flags & MREMAP_DONTUNMAP) || !old_len))
			violation(f, "mremap%s: allowed", what);
		if (!old_len || (flags & MREMAP_DONTUNMAP)) {
			/* a second mapping */
			map_add(f, addr, new_len, m->kind, m->prot, cell);
		} else if (addr != m->addr) {
			old_cell = m->cell;
			m->addr = addr;
			m->len = new_len;
			m->cell = cell;
			if (old_cell >= 0)
				cell_fix(f, old_cell);
		} else {
			m->len = new_len;
			if (m->cell >= 0)
				cell_fix(f, m->cell);
		}
	}
	if (cell >= 0)
		cell_fix(f, cell);
	map_reap(f);
}

static void op_madvise(struct fuzz *f)
{
	static const int advice[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_DONTNEED,
		MADV_DONTNEED, MADV_DONTFORK, MADV_DOFORK, MADV_DONTDUMP, MADV_DODUMP,
		MADV_FREE, MADV_REMOVE, MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_COLD,
		MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE, MADV_HUGEPAGE,
		MADV_NOHUGEPAGE, MADV_MERGEABLE, MADV_UNMERGEABLE, MADV_COLLAPSE, 1000,
	};
	struct map_ent *m = pick_map(f);
	int adv = advice[pick(f, ARRAY_SIZE(advice))];
	char what[64];
	int ret;

	if (!m)
		return;
	ret = madvise(m->addr, m->len, adv);
	snprintf(what, sizeof(what), "(%s, %d)", is_page(m) ? "page" : "anon", adv);
	result(f, OP_MADVISE, ret, errno, what);
	if (ret)
		return;
	if (adv == MADV_DONTNEED || adv == MADV_FREE)
		m->zapped = true;
	if (is_page(m) && (adv == MADV_REMOVE || adv == MADV_FREE || adv == MADV_WIPEONFORK ||
			   adv == MADV_POPULATE_WRITE || adv == MADV_DONTNEED))
		violation(f, "madvise%s: allowed", what);
}

/* Read a mapping; through the vDSO too. */
static int vdso_probe(const struct map_ent *m, struct cs_vsnap *v,
		      struct cs_vcpu_snap *c, int *ret)
{
	int sig;

	sig = sigsetjmp(cs_probe_env, 1);
	if (sig)
		return sig;
	cs_probe_arm(1);
	if (m->kind == K_THREAD)
		*ret = cs_vdso_snap((const void *)m->addr, v);
	else
		*ret = cs_vdso_cpu_snap((const void *)m->addr, -1, c);
	cs_probe_arm(0);
	return 0;
}

static void op_read(struct fuzz *f)
{
	struct map_ent *m = pick_map(f);
	struct coarse_stat_hdr h;
	struct cs_vsnap v;
	struct cs_vcpu_snap c;
	int sig, ret = 0;
	bool exited;

	if (!m || !is_page(m) || m->mixed)
		return;
	f->calls[OP_READ]++;
	sig = cs_probe_read(m->addr, &h, sizeof(h));
	if (!(m->prot & PROT_READ)) {
		if (sig != SIGSEGV)
			violation(f, "read of a PROT_NONE mapping: %s",
				  sig ? strsignal(sig) : "ok");
		return;
	}
	if (sig == SIGBUS && m->zapped)
		f->sigbus++;	/* counted, and a violation: nothing zaps the page */
	if (sig) {
		violation(f, "read of a mapping: %s", strsignal(sig));
		return;
	}
	if (h.magic != COARSE_STAT_MAGIC ||
	    h.kind != (m->kind == K_THREAD ? COARSE_STAT_KIND_THREAD : COARSE_STAT_KIND_CPU)) {
		violation(f, "mapping shows magic %#x kind %u", h.magic, h.kind);
		if (trace_on) {
			char l[256];
			FILE *mf = fopen("/proc/self/maps", "r");

			fprintf(stderr, "model: %p len %#zx kind %d cell %d zapped %d\n",
				m->addr, m->len, m->kind, m->cell, m->zapped);
			while (mf && fgets(l, sizeof(l), mf))
				fputs(l, stderr);
			if (mf)
				fclose(mf);
		}
		return;
	}
	sig = vdso_probe(m, &v, &c, &ret);
	if (sig || ret) {
		violation(f, "vDSO snapshot: %s %d", sig ? strsignal(sig) : "", ret);
		return;
	}
	exited = m->kind == K_THREAD && v.p.state == COARSE_STAT_EXITED;
	if (m->kind == K_THREAD &&
	    (cs_bucket_sum(&v.p) != v.time_ns - v.p.start_ns ||
	     (v.p.state >= COARSE_STAT_NR_BUCKETS && !exited) ||
	     exited == !!(v.flags & COARSE_STAT_SNAP_EXTRAPOLATED)))
		violation(f, "thread snapshot: sum %llu, time - start %llu, state %u, %#x",
			  (unsigned long long)cs_bucket_sum(&v.p),
			  (unsigned long long)(v.time_ns - v.p.start_ns), v.p.state,
			  v.flags);
	if (m->kind == K_CPU && (c.update_ns > c.time_ns || c.row.cpu != ~0U))
		violation(f, "CPU snapshot: update_ns %llu after time_ns %llu, row cpu %#x",
			  (unsigned long long)c.update_ns, (unsigned long long)c.time_ns,
			  c.row.cpu);
	f->ok[OP_READ]++;
}

static void op_fdops(struct fuzz *f)
{
	struct fd_ent *e = f->nfd ? &f->fd[pick(f, f->nfd)] : NULL;
	char buf[64] = { 0 };
	struct stat st;
	unsigned int c;
	long ret = 0;
	int n = 0, err;

	if (!e)
		return;
	errno = 0;
	c = pick(f, 9);
	switch (c) {
	case 0:
		ret = read(e->fd, buf, sizeof(buf));
		if (ret >= 0)
			violation(f, "read() of a page fd: %ld", ret);
		break;
	case 1:
		ret = write(e->fd, buf, sizeof(buf));
		if (ret >= 0)
			violation(f, "write() to a page fd: %ld", ret);
		break;
	case 2:
		ret = pread(e->fd, buf, sizeof(buf), 0);
		if (ret >= 0)
			violation(f, "pread() of a page fd: %ld", ret);
		break;
	case 3:
		ret = lseek(e->fd, pick(f, 8192), SEEK_SET);
		break;
	case 4:
		ret = ioctl(e->fd, FIONREAD, &n);
		break;
	case 5:
		ret = ftruncate(e->fd, 0);
		if (!ret)
			violation(f, "ftruncate() of a page fd");
		break;
	case 6:
		ret = fstat(e->fd, &st);
		if (!ret && (size_t)st.st_size != e->size)
			violation(f, "fstat() size %ld", (long)st.st_size);
		break;
	case 7:
		/* the access mode cannot change */
		fcntl(e->fd, F_SETFL, O_RDWR | O_NONBLOCK);
		ret = fcntl(e->fd, F_GETFL);
		if (ret >= 0 && (ret & O_ACCMODE) != O_RDONLY)
			violation(f, "fd became writable: flags %#lx", ret);
		break;
	case 8:
		ret = fsync(e->fd);
		break;
	}
	err = errno;
	/* EIO only from read() and pread() of the CPU page's /proc file */
	if (ret < 0 && err == EIO && (e->kind != K_CPU || (c != 0 && c != 2)))
		violation(f, "file operation %u on a %s fd: EIO", c,
			  e->kind == K_CPU ? "cpu" : "thread");
	result(f, OP_FDOPS, ret, err, "file operation");
}

static void op_close(struct fuzz *f)
{
	int i, fd;

	if (!f->nfd)
		return;
	i = pick(f, f->nfd);
	if (chance(f, 20) && f->nfd < MAX_FDS) {
		fd = fcntl(f->fd[i].fd, F_DUPFD_CLOEXEC, 0);
		result(f, OP_CLOSE, fd, errno, "dup");
		if (fd >= 0)
			fd_add(f, fd, f->fd[i].kind);
		return;
	}
	result(f, OP_CLOSE, close(f->fd[i].fd), errno, "close");
	f->fd[i] = f->fd[--f->nfd];
}

/* A thread registers, maybe maps, hands its page over and exits. */
struct handover {
	int		what;	/* 1: fd, 2: mapping, 3: both */
	struct cs_map	m;
	int		err;
};

static void *handover_fn(void *arg)
{
	struct handover *h = arg;

	h->err = cs_map_thread(&h->m);
	if (h->err)
		return NULL;
	if (!(h->what & 1)) {
		close(h->m.fd);
		h->m.fd = -1;
	}
	if (!(h->what & 2)) {
		munmap((void *)h->m.addr, h->m.len);
		h->m.addr = NULL;
	}
	return NULL;
}

static void op_thread(struct fuzz *f)
{
	struct handover h = { .what = 1 + pick(f, 3) };
	pthread_t th;
	int ret;

	if (f->nfd == MAX_FDS || f->nmap == MAX_MAPS)
		return;
	ret = pthread_create(&th, NULL, handover_fn, &h);
	result(f, OP_THREAD, ret ? -1 : 0, ret, "pthread_create");
	if (ret)
		return;
	pthread_join(th, NULL);
	if (h.err) {
		violation(f, "thread: cannot map its page: %s", strerror(-h.err));
		return;
	}
	if (h.m.fd >= 0)
		fd_add(f, h.m.fd, K_THREAD);
	if (h.m.addr)
		map_add(f, (void *)h.m.addr, h.m.len, K_THREAD, PROT_READ, -1);
}

static void op_fork(struct fuzz *f)
{
	int status;
	pid_t pid;

	pid = fork();
	result(f, OP_FORK, pid, errno, "fork");
	if (pid == 0)
		_exit(0);
	if (pid > 0 && (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)))
		violation(f, "fork: child status %#x", status);
}

static void one_op(struct fuzz *f)
{
	static const struct {
		void (*fn)(struct fuzz *f);
		int weight;
	} ops[] = {
		{ op_prctl, 12 }, { op_mmap, 25 }, { op_mprotect, 10 }, { op_munmap, 10 },
		{ op_mremap, 10 }, { op_madvise, 8 }, { op_read, 12 }, { op_fdops, 6 },
		{ op_close, 8 }, { op_thread, 2 }, { op_fork, 1 },
	};
	int total = 0, i, r;

	for (i = 0; i < (int)ARRAY_SIZE(ops); i++)
		total += ops[i].weight;
	r = pick(f, total);
	for (i = 0; r >= ops[i].weight; i++)
		r -= ops[i].weight;
	ops[i].fn(f);
}

static unsigned int fuzz_seconds(void)
{
	const char *s = getenv("CS_FUZZ_SECONDS");
	int v = s ? atoi(s) : 0;

	return v > 0 ? v : 10;
}

FIXTURE(fuzz) {
	struct cs_counts	base;
	int			base_fds;
	unsigned long		taint;
};

FIXTURE_SETUP(fuzz)
{
	cs_probe_init();
	if (cs_read_base(&self->base))
		SKIP(return, "no %s", CS_DEBUGFS_STATS);
	self->base_fds = cs_nr_fds();
	self->taint = cs_tainted();
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, random_calls, 600)
{
	struct fuzz *f;
	const char *s = getenv("CS_FUZZ_SEED");
	unsigned long total = 0;
	__u64 seed, end;
	struct cs_map m;
	char line[512];
	int i, k, e, n;

	f = calloc(1, sizeof(*f));
	ASSERT_NE(NULL, f);
	seed = s ? strtoull(s, NULL, 0) : ((__u64)time(NULL) << 20 ^ getpid());
	seed = seed ?: 1;
	trace_on = getenv("CS_FUZZ_TRACE");
	f->rng = seed;
	ksft_print_msg("t_fuzz: seed %llu (CS_FUZZ_SEED=%llu replays it)\n",
		       (unsigned long long)seed, (unsigned long long)seed);

	f->psz = sysconf(_SC_PAGESIZE);
	ASSERT_EQ(0, cs_map_thread(&m));
	f->size[K_THREAD] = m.len;
	cs_unmap(&m);
	ASSERT_EQ(0, cs_map_cpu(&m));
	f->size[K_CPU] = m.len;
	cs_unmap(&m);
	f->size[K_ANON] = f->psz;
	f->cell = f->size[K_CPU] > f->size[K_THREAD] ? f->size[K_CPU] : f->size[K_THREAD];
	f->cell += f->psz;	/* room for a mapping one page too long */
	f->arena = mmap(NULL, NR_CELLS * f->cell, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	ASSERT_NE(MAP_FAILED, f->arena);

	end = cs_mono_ns() + fuzz_seconds() * CS_NSEC_PER_SEC;
	while (cs_mono_ns() < end && f->viol < MAX_VIOL) {
		for (i = 0; i < 32; i++)
			one_op(f);
	}

	/* release everything */
	while (f->nmap) {
		struct map_ent *mp = &f->map[f->nmap - 1];

		EXPECT_EQ(0, munmap(mp->addr, mp->len));
		f->nmap--;
	}
	for (i = 0; i < f->nfd; i++)
		EXPECT_EQ(0, close(f->fd[i].fd));
	munmap(f->arena, NR_CELLS * f->cell);

	for (i = 0; i < NR_OPS; i++) {
		total += f->calls[i];
		n = snprintf(line, sizeof(line), "%-10s %7lu calls, %7lu ok", op_name[i],
			     f->calls[i], f->ok[i]);
		for (e = 0; e <= MAX_ERRNO; e++) {
			if (!f->err[i][e] || n >= (int)sizeof(line))
				continue;
			n += snprintf(line + n, sizeof(line) - n, ", %s %lu",
				      e ? strerrorname_np(e) ?: "?" : "E?", f->err[i][e]);
		}
		TH_LOG("%s", line);
	}
	TH_LOG("%lu calls in %u s, %lu SIGBUS after MADV_DONTNEED, seed %llu", total,
	       fuzz_seconds(), f->sigbus, (unsigned long long)seed);
	for (k = 0; k < (int)f->viol && k < MAX_VIOL; k++)
		TH_LOG("violation: %s", f->viol_msg[k]);
	EXPECT_EQ(0, f->viol) TH_LOG("seed %llu", (unsigned long long)seed);
	ksft_print_msg("t_fuzz: %lu calls, %lu violations\n", total, f->viol);

	EXPECT_BASE(&self->base, true, 5000);
	EXPECT_EQ(self->base_fds, cs_nr_fds());
	EXPECT_EQ(self->taint & CS_TAINT_BAD, cs_tainted() & CS_TAINT_BAD)
		TH_LOG("tainted %#lx -> %#lx", self->taint, cs_tainted());
	free(f);
}

int main(int argc, char **argv)
{
	cs_require_coarse_stat();
	return test_harness_run(argc, argv);
}
