// SPDX-License-Identifier: GPL-2.0
/*
 * cs_snap_native: cs_bench's snapshot rows -- the ordered counter read, the
 * copy floor, the C floor, the image's own clock_gettime(CLOCK_MONOTONIC),
 * __vdso_coarse_stat_snap() and the library's csf_thread_snap() -- on this
 * machine's own CPU, with the vDSO of a kernel build loaded from its image
 * instead of the running kernel's.  It gives the native cost of the
 * series' snapshot, in cycles of a real CPU, on a machine that does not run
 * the series (here: a host whose KVM cannot boot the guest, where the
 * guests' figures come from QEMU's TCG).
 *
 *   cs_snap_native [-q] [-t] [-r REPS] [-L] VDSO_IMAGE
 *   cs_snap_native -D
 *
 * -L (a diagnostic) replaces every LFENCE of __vdso_coarse_stat_snap()'s own code
 * with a NOP of its length: the __arch_coarse_stat_clock_fence() after the
 * clock computation, before the page's sequence re-check (the image's code
 * has no other: the counter read's own fence is an alternative, applied at
 * load, and left alone).  What the fence costs; the snapshot is then not
 * ordered for a reader on another CPU (the re-check's load of the sequence
 * count may pass the counter read), so the figures with -L are not those
 * of a correct snapshot.  The TSV says where the NOPs went (#meta
 * no_lfence_at, offsets in the image): scripts/bench-snap-native.sh checks
 * them against objdump.
 *
 * -D prints the layout of struct vdso_clock this program assumes (field,
 * offset), for scripts/bench-snap-native.sh to compare with the image's
 * DWARF (pahole).
 *
 * VDSO_IMAGE is arch/x86/entry/vdso/vdso64/vdso64.so.dbg of a build (make
 * bench's -O2 kernel: build/linux-bench-o2).  It is placed as the kernel
 * maps it: one read-only segment at its link address plus a base, after
 * the pages of its data, which it reaches at negative addresses
 * (vdso_u_time_data, from the image's symbol table).  The data is a
 * struct vdso_time_data as the kernel's timekeeping would leave it with
 * the tsc clocksource: clock_data[CS_HRES_COARSE] in VDSO_CLOCKMODE_TSC,
 * an even sequence count, cycle_last the TSC at the setup, mult and shift
 * from the TSC's frequency (measured against the host's CLOCK_MONOTONIC),
 * and basetime[CLOCK_MONOTONIC] the host's CLOCK_MONOTONIC at that TSC
 * value: the image's clock then follows the host's.  Nobody writes it
 * while the rows run, as no timekeeper update happens in a real
 * snapshot's few nanoseconds.  The image's alternatives for the ordered
 * TSC read are applied as the kernel applies them: RDTSCP on a CPU that
 * has it, else LFENCE; RDTSC (rdtsc_ordered()); no other alternative is on
 * the snapshot's path, and the code run is otherwise the image's, byte for
 * byte.  The run checks that the image's clock_gettime() and snapshot
 * follow the host's clock, and that the snapshot extrapolated without a
 * system call.
 *
 * The page read is a stand-in with the layout of a thread page: the
 * header's magic, version and kind, an even sequence count, the state on
 * CPU, its times (start, last switch, wakeup, counters) the clock's value
 * at the setup.  Nobody writes it, as nobody writes a thread's own page
 * between two of its switches.  The library is given that page and the
 * image's function as its first call in a thread would, so that
 * csf_thread_snap() runs the path it takes before every operation.
 *
 * cs_bench.c is included whole (its main() renamed): the rows, the floors,
 * the calibration, the medians, the tables and the targets are its own.
 */
#define main cs_bench_main
#include "cs_bench.c"
#undef main

#include <elf.h>
#include <sys/stat.h>

#ifndef __x86_64__
#error "cs_snap_native runs the x86-64 vDSO image"
#endif

/* cs_bench's rows run here. */
#define NATIVE_ROWS	"rdtscp,copy,floor,floor_words,vdso_clock_mono,clock_mono," \
			"vdso_csf_snap,lib_csf_thread_snap"

/* Pages of data reserved before the image: x86-64 uses 6 (7.3). */
#define NATIVE_DATA_PAGES	64

/* arch/x86/include/asm/cpufeatures.h */
#define NATIVE_RDTSCP		(1 * 32 + 27)	/* X86_FEATURE_RDTSCP */
#define NATIVE_LFENCE_RDTSC	(20 * 32 + 2)	/* X86_FEATURE_LFENCE_RDTSC */

/* arch/x86/include/asm/alternative.h */
struct native_alt {
	int32_t		instr_offset;
	int32_t		repl_offset;
	uint16_t	cpuid;
	uint16_t	flags;
	uint8_t		instrlen;
	uint8_t		replacementlen;
} __attribute__((packed));

/*
 * include/vdso/datapage.h on x86-64 (GENERIC_VDSO_OVERFLOW_PROTECT: with
 * max_cycles).  -D prints it; the script compares it with the image's DWARF.
 */
#define NATIVE_VDSO_BASES	(CLOCK_TAI + 1)
#define NATIVE_CLOCKMODE_TSC	1			/* VDSO_CLOCKMODE_TSC */

struct native_vdso_clock {
	uint32_t	seq;
	int32_t		clock_mode;
	uint64_t	cycle_last;
	uint64_t	max_cycles;
	uint64_t	mask;
	uint32_t	mult;
	uint32_t	shift;
	struct {
		uint64_t	sec;
		uint64_t	nsec;
	} basetime[NATIVE_VDSO_BASES];
};

/* clock_data[CS_HRES_COARSE] opens struct vdso_time_data (no arch data). */
#define NATIVE_CLOCK_DATA_OFFSET	0

/* The image's alternative sites of the ordered TSC read (for -L). */
#define NATIVE_MAX_SITES	16
static struct {
	size_t	off, len;
} native_sites[NATIVE_MAX_SITES];
static int native_nr_sites;

static bool opt_no_lfence;
static char native_lfence_at[128];	/* -L: where the NOPs went */
static double native_tsc_hz;
static struct native_vdso_clock *native_vc;

typedef int (*native_clock_fn)(clockid_t clk, struct timespec *ts);

static const unsigned char native_nops[][8] = {
	{ 0 },
	{ 0x90 },
	{ 0x66, 0x90 },
	{ 0x0f, 0x1f, 0x00 },
	{ 0x0f, 0x1f, 0x40, 0x00 },
	{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

static void __attribute__((noreturn)) native_die(const char *what, const char *why)
{
	fprintf(stderr, "cs_snap_native: %s: %s\n", what, why);
	exit(1);
}

static const Elf64_Shdr *native_shdrs(const unsigned char *img, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

	if (eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > len ||
	    eh->e_shstrndx >= eh->e_shnum)
		native_die("image", "bad section headers");
	return (const Elf64_Shdr *)(img + eh->e_shoff);
}

/*
 * The value and size of @name in the image's full symbol table (.symtab:
 * the .so.dbg has it; the data symbols such as vdso_u_time_data are not
 * dynamic).  Returns false if it is not there.
 */
static bool native_sym(const unsigned char *img, size_t len, const char *name,
		       uint64_t *value, uint64_t *size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh = native_shdrs(img, len);
	int i;

	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *str;
		size_t n, k;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset + sh[i].sh_size > len ||
		    sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size > len)
			continue;
		sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
		str = (const char *)img + sh[sh[i].sh_link].sh_offset;
		n = sh[i].sh_size / sizeof(*sym);
		for (k = 0; k < n; k++) {
			if (sym[k].st_name >= sh[sh[i].sh_link].sh_size ||
			    strcmp(str + sym[k].st_name, name))
				continue;
			*value = sym[k].st_value;
			*size = sym[k].st_size;
			return true;
		}
	}
	return false;
}

/*
 * Apply the alternatives of the ordered TSC read in the image at @img
 * (@len bytes, the file as read), as the kernel does: RDTSCP where the CPU
 * has it, else LFENCE; RDTSC (X86_FEATURE_LFENCE_RDTSC: every CPU the
 * kernel runs the vDSO's TSC mode on, Intel and AMD with a serialising
 * LFENCE), the replacement then NOPs up to the original's length.  Returns
 * how many were applied.
 */
static int native_alternatives(unsigned char *img, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh = native_shdrs(img, len);
	const char *names = (const char *)img + sh[eh->e_shstrndx].sh_offset;
	int want = have_rdtscp ? NATIVE_RDTSCP : NATIVE_LFENCE_RDTSC;
	int i, applied = 0;

	for (i = 0; i < eh->e_shnum; i++) {
		const struct native_alt *a;
		size_t n, k;

		if (strcmp(names + sh[i].sh_name, ".altinstructions"))
			continue;
		if (sh[i].sh_offset + sh[i].sh_size > len)
			native_die("image", "bad .altinstructions");
		a = (const struct native_alt *)(img + sh[i].sh_offset);
		n = sh[i].sh_size / sizeof(*a);
		for (k = 0; k < n; k++, a++) {
			unsigned char *instr = (unsigned char *)&a->instr_offset + a->instr_offset;
			const unsigned char *repl = (const unsigned char *)&a->repl_offset +
						    a->repl_offset;

			if (a->cpuid != want || a->flags)
				continue;
			if (a->replacementlen > a->instrlen || a->instrlen - a->replacementlen > 8 ||
			    instr < img || instr + a->instrlen > img + len ||
			    native_nr_sites == NATIVE_MAX_SITES)
				native_die("image", "unexpected alternative of the TSC read");
			memcpy(instr, repl, a->replacementlen);
			memcpy(instr + a->replacementlen, native_nops[a->instrlen - a->replacementlen],
			       a->instrlen - a->replacementlen);
			native_sites[native_nr_sites].off = instr - img;
			native_sites[native_nr_sites].len = a->instrlen;
			native_nr_sites++;
			applied++;
		}
	}
	return applied;
}

static bool native_in_site(size_t off, size_t len)
{
	int i;

	for (i = 0; i < native_nr_sites; i++)
		if (off < native_sites[i].off + native_sites[i].len &&
		    native_sites[i].off < off + len)
			return true;
	return false;
}

/*
 * -L: every LFENCE in [@off, @off + @size) of the image, outside the sites
 * of the TSC read's alternatives, made a NOP of the same length.  Returns
 * how many; their offsets go to native_lfence_at.
 */
static int native_drop_lfence(unsigned char *img, size_t off, size_t size)
{
	static const unsigned char lfence[] = { 0x0f, 0xae, 0xe8 };
	size_t i, used = 0;
	int n = 0;

	for (i = off; i + sizeof(lfence) <= off + size; i++) {
		if (memcmp(img + i, lfence, sizeof(lfence)) || native_in_site(i, sizeof(lfence)))
			continue;
		memcpy(img + i, native_nops[sizeof(lfence)], sizeof(lfence));
		if (used < sizeof(native_lfence_at))
			used += snprintf(native_lfence_at + used, sizeof(native_lfence_at) - used,
					 "%s%#zx", n ? "," : "", i);
		n++;
		i += sizeof(lfence) - 1;
	}
	return n;
}

/* An ordered TSC read, as the image's (the replacement applied). */
static uint64_t native_tsc(void)
{
	uint32_t aux;

	return have_rdtscp ? rdtscp_aux(&aux) : lfence_rdtsc();
}

/* The host's CLOCK_MONOTONIC at a TSC read: *@tsc, returns the ns. */
static uint64_t native_pair(uint64_t *tsc)
{
	uint64_t t0, t1, best = ~0ULL, ns = 0;
	int i;

	/* The tightest of a few brackets: no interrupt in between. */
	for (i = 0; i < 16; i++) {
		uint64_t c;

		t0 = now_ns();
		c = native_tsc();
		t1 = now_ns();
		if (t1 - t0 < best) {
			best = t1 - t0;
			ns = t0 + (t1 - t0) / 2;
			*tsc = c;
		}
	}
	return ns;
}

/* kernel/time/clocksource.c: clocks_calc_mult_shift() */
static void native_mult_shift(uint32_t *mult, uint32_t *shift, uint64_t from, uint64_t to,
			      uint32_t maxsec)
{
	uint64_t tmp;
	uint32_t sft, sftacc = 32;

	tmp = ((uint64_t)maxsec * from) >> 32;
	while (tmp) {
		tmp >>= 1;
		sftacc--;
	}
	for (sft = 32; sft > 0; sft--) {
		tmp = (uint64_t)to << sft;
		tmp += from / 2;
		tmp /= from;
		if ((tmp >> sftacc) == 0)
			break;
	}
	*mult = tmp;
	*shift = sft;
}

/*
 * The vDSO's time data as timekeeping leaves it with the tsc clocksource:
 * the TSC's frequency measured against CLOCK_MONOTONIC over 200 ms, the
 * conversion as the kernel computes it for a clocksource (600 s without
 * overflow), the base the host's CLOCK_MONOTONIC at cycle_last.
 */
static void native_time_data(struct native_vdso_clock *vc)
{
	struct timespec pause = { 0, 200000000 };
	uint64_t c0, c1, t0, t1;

	t0 = native_pair(&c0);
	nanosleep(&pause, NULL);
	t1 = native_pair(&c1);
	if (t1 <= t0 || c1 <= c0)
		native_die("TSC", "does not advance with CLOCK_MONOTONIC");
	native_tsc_hz = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);

	memset(vc, 0, sizeof(*vc));
	vc->seq = 0;
	vc->clock_mode = NATIVE_CLOCKMODE_TSC;
	vc->mask = ~0ULL;
	native_mult_shift(&vc->mult, &vc->shift, (uint64_t)(native_tsc_hz + 0.5), 1000000000ULL,
			  600);
	/* clocks_calc_max_nsecs(): the cycles whose product fits, 11 % adjustment left. */
	vc->max_cycles = ~0ULL / (vc->mult + vc->mult / 9);
	t0 = native_pair(&c0);
	vc->cycle_last = c0 & (~0ULL >> 1);	/* the vDSO masks the TSC with S64_MAX */
	vc->basetime[CLOCK_MONOTONIC].sec = t0 / 1000000000;
	vc->basetime[CLOCK_MONOTONIC].nsec = (t0 % 1000000000) << vc->shift;
}

/* Load @path after its data pages; returns the image's address. */
static uintptr_t native_load(const char *path, int *alts)
{
	size_t data = NATIVE_DATA_PAGES * page_size, len;
	uint64_t vd_off, fn_off, fn_size;
	unsigned char *area, *img, *vd;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	struct stat st;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		native_die(path, strerror(errno));
	len = st.st_size;
	area = mmap(NULL, data + len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		native_die("mmap", strerror(errno));
	img = area + data;
	if (pread(fd, img, len, 0) != (ssize_t)len)
		native_die(path, "short read");
	close(fd);
	eh = (const Elf64_Ehdr *)img;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64 ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(*ph) > len)
		native_die(path, "not an x86-64 vDSO image");
	/* One segment, linked at 0, the file as it is (what vdso2c checks). */
	ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_vaddr != ph[i].p_offset ||
						ph[i].p_offset + ph[i].p_filesz > len))
			native_die(path, "a segment not at its file offset");

	/* The time data where the image expects it; the timens page after it. */
	if (!native_sym(img, len, "vdso_u_time_data", &vd_off, &fn_size))
		native_die(path, "no vdso_u_time_data in its symbol table (the .so.dbg has it)");
	vd = img + (int64_t)vd_off;
	if ((int64_t)vd_off >= 0 || vd < area || vd + 2 * page_size > img)
		native_die(path, "vdso_u_time_data not in the pages before the image");
	native_vc = (struct native_vdso_clock *)(vd + NATIVE_CLOCK_DATA_OFFSET);
	native_time_data(native_vc);

	*alts = native_alternatives(img, len);
	if (opt_no_lfence) {
		if (!native_sym(img, len, CS_VDSO_SNAP, &fn_off, &fn_size) || !fn_size ||
		    fn_off + fn_size > len)
			native_die(path, "no " CS_VDSO_SNAP " of known size in its symbol table");
		if (!native_drop_lfence(img, fn_off, fn_size))
			native_die(path, "no LFENCE in " CS_VDSO_SNAP);
	}
	if (mprotect(area, data, PROT_READ) ||
	    mprotect(img, (len + page_size - 1) & ~(page_size - 1), PROT_READ | PROT_EXEC))
		native_die("mprotect", strerror(errno));
	return (uintptr_t)img;
}

static struct coarse_stat_thread_page *native_pg;

/* The vDSO row's setup, also in the child that checks for system calls. */
static int native_setup(void)
{
	bench_pg = native_pg;
	return 0;
}

/* -D: the layout assumed, "struct.field offset", for the script. */
static void native_layout(void)
{
#define NATIVE_FIELD(f) \
	printf("vdso_clock.%s\t%zu\n", #f, offsetof(struct native_vdso_clock, f))
	NATIVE_FIELD(seq);
	NATIVE_FIELD(clock_mode);
	NATIVE_FIELD(cycle_last);
	NATIVE_FIELD(max_cycles);
	NATIVE_FIELD(mask);
	NATIVE_FIELD(mult);
	NATIVE_FIELD(shift);
	NATIVE_FIELD(basetime);
#undef NATIVE_FIELD
	printf("vdso_clock.size\t%zu\n", sizeof(struct native_vdso_clock));
	printf("vdso_time_data.clock_data\t%d\n", NATIVE_CLOCK_DATA_OFFSET);
}

/* Whether @ns is the host's CLOCK_MONOTONIC of [@t0, @t1], within 1 ms. */
static bool native_near(uint64_t ns, uint64_t t0, uint64_t t1)
{
	return ns + 1000000 >= t0 && ns <= t1 + 1000000;
}

int main(int argc, char **argv)
{
	struct coarse_stat_thread_page *pg;
	struct cs_vsnap s;
	native_clock_fn clk;
	struct timespec ts;
	uint64_t t0, t1, sum;
	uintptr_t img;
	void *sym;
	int c, i, alts;

	while ((c = getopt(argc, argv, "qtr:LD")) != -1) {
		switch (c) {
		case 'D':
			native_layout();
			return 0;
		case 'L':
			opt_no_lfence = true;
			break;
		case 'q':
			opt_quick = true;
			break;
		case 't':
			opt_tsv = true;
			break;
		case 'r':
			opt_reps = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-q] [-t] [-r REPS] [-L] VDSO_IMAGE | -D\n",
				argv[0]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: %s [-q] [-t] [-r REPS] [-L] VDSO_IMAGE | -D\n", argv[0]);
		return 2;
	}
	if (!opt_reps)
		opt_reps = opt_quick ? 5 : 11;
	if (opt_reps < 1 || opt_reps > MAX_REPS)
		native_die("-r", "out of range");
	target_ns = opt_quick ? 5000000 : 20000000;
	page_size = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	have_rdtscp = cpu_has_rdtscp();

	img = native_load(argv[optind], &alts);
	if (!alts)
		native_die(argv[optind], "no alternative of the TSC read applied");
	sym = csf__elf_sym(img, CS_VDSO_SNAP, CS_VDSO_VERSION);
	if (!sym)
		native_die(argv[optind], "no " CS_VDSO_SNAP);
	memcpy(&vdso_csf_snap, &sym, sizeof(sym));
	sym = csf__elf_sym(img, CS_VDSO_CLOCK_GETTIME, CS_VDSO_VERSION);
	if (!sym)
		native_die(argv[optind], "no " CS_VDSO_CLOCK_GETTIME);
	memcpy(&clk, &sym, sizeof(sym));
	vdso_clock_gettime = clk;

	/* The image's clock follows the host's, without a system call. */
	t0 = now_ns();
	if (clk(CLOCK_MONOTONIC, &ts))
		native_die(argv[optind], "its clock_gettime(CLOCK_MONOTONIC) failed");
	t1 = now_ns();
	if (!native_near(ts.tv_sec * 1000000000ULL + ts.tv_nsec, t0, t1))
		native_die(argv[optind], "its CLOCK_MONOTONIC is not the host's");

	pg = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pg == MAP_FAILED)
		native_die("mmap", strerror(errno));
	pg->hdr.magic = COARSE_STAT_MAGIC;
	pg->hdr.data_size = sizeof(*pg);
	pg->hdr.kind = COARSE_STAT_KIND_THREAD;
	pg->hdr.size = page_size;
	pg->state = COARSE_STAT_ONCPU;
	clk(CLOCK_MONOTONIC, &ts);
	pg->start_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	pg->last_switch_ns = pg->counters_ns = pg->start_ns;
	if (mprotect(pg, page_size, PROT_READ))
		native_die("mprotect", strerror(errno));

	/*
	 * The snapshot must extrapolate with the image's own clock: the
	 * host's time, no system call, the buckets adding up.
	 */
	t0 = now_ns();
	if (vdso_vsnap(pg, &s))
		native_die(argv[optind], "the image's snapshot failed");
	t1 = now_ns();
	for (sum = 0, i = 0; i < COARSE_STAT_NR_BUCKETS; i++)
		sum += s.p.bucket_ns[i];
	if (s.flags != COARSE_STAT_SNAP_EXTRAPOLATED)
		native_die(argv[optind], s.flags & COARSE_STAT_SNAP_SYSCALL ?
			   "the image's snapshot took the clock by system call" :
			   "the image's snapshot did not extrapolate");
	if (!native_near(s.time_ns, t0, t1) || s.time_ns <= pg->start_ns ||
	    s.p.last_switch_ns != s.time_ns || sum != s.time_ns - s.p.start_ns ||
	    s.p.oncpu_ns != sum)
		native_die(argv[optind], "the image's snapshot is not of the host's clock");

	/* What the library's first call in a thread leaves behind. */
	*csf__thread() = pg;
	csf__global()->snap = vdso_csf_snap;
	native_pg = pg;
	bench_pg = pg;
	have_cs = true;
	find_row("vdso_csf_snap")->setup = native_setup;
	opt_rows = NATIVE_ROWS;

	if (opt_tsv) {
		printf("#meta\tvdso_image\t%s\n", argv[optind]);
		printf("#meta\tvdso_tsc_alternatives\t%d sites, %s\n", alts,
		       have_rdtscp ? "rdtscp" : "lfence; rdtsc");
		printf("#meta\trdtscp\t%s\n", have_rdtscp ? "yes" : "no");
		printf("#meta\ttsc_hz\t%.0f\n", native_tsc_hz);
		printf("#meta\tvdso_mult_shift\t%u %u\n", native_vc->mult, native_vc->shift);
		printf("#meta\tno_lfence\t%s\n", opt_no_lfence ? "yes" : "no");
		if (opt_no_lfence)
			printf("#meta\tno_lfence_at\t%s\n", native_lfence_at);
	} else {
		printf("cs_snap_native: %s, %d TSC read alternative(s) applied (%s)\n",
		       argv[optind], alts, have_rdtscp ? "rdtscp" : "lfence; rdtsc");
		printf("cs_snap_native: TSC %.0f Hz, mult %u shift %u\n", native_tsc_hz,
		       native_vc->mult, native_vc->shift);
		if (opt_no_lfence)
			printf("cs_snap_native: -L: no LFENCE before the sequence re-check (%s)\n",
			       native_lfence_at);
	}
	bench_snapshots();
	snap_flags_note();
	print_snapshots();
	print_snap_targets();
	return 0;
}
