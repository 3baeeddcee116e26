// SPDX-License-Identifier: GPL-2.0
/*
 * cs_snap_native: cs_bench's snapshot rows -- bare rdtscp, the copy floor,
 * __vdso_csf_snap() and the library's csf_thread_snap() -- on this
 * machine's own CPU, with the vDSO of a kernel build loaded from its image
 * instead of the running kernel's.  It gives the native cost of the
 * series' snapshot, in cycles of a real CPU, on a machine that does not run
 * the series (here: a host whose KVM cannot boot the guest, where the
 * guests' figures come from QEMU's TCG).
 *
 *   cs_snap_native [-q] [-t] [-r REPS] [-L] VDSO_IMAGE
 *
 * -L (a diagnostic) replaces the LFENCE after the counter read in
 * __vdso_csf_snap() with a NOP of its length: what the fence costs.  The
 * snapshot is then not ordered for a reader on another CPU (the retry's
 * load of the sequence count may pass the counter read), so the figures
 * with -L are not those of a correct snapshot.
 *
 * VDSO_IMAGE is arch/x86/entry/vdso/vdso64/vdso64.so.dbg of a build (make
 * bench's -O2 kernel: build/linux-bench-o2).  It is placed as the kernel
 * maps it: one read-only segment at its link address plus a base, after
 * the pages of its data (vdso_u_data and the vclock pages, which it reaches
 * at negative addresses).  Every 32-bit word of those pages is
 * VDSO_CLOCKMODE_TSC, so that the snapshot trusts the TSC as it does in a
 * guest whose clocksource is tsc; the run checks that it extrapolated.  The
 * image's alternatives for RDTSCP are applied as the kernel applies them on
 * a CPU that has it (rdtsc_ordered()); no other alternative is on the
 * snapshot's path, and the code run is otherwise the image's, byte for byte.
 *
 * The page read is a stand-in with the layout of a thread page: the
 * header's magic, kind and CYC_SYNCED, an even sequence count, the state
 * on CPU.  Nobody writes it, as nobody writes a thread's own page between
 * two of its switches.  The library is given that page and the image's
 * function as its first call in a thread would, so that csf_thread_snap()
 * runs the path it takes before every operation.
 *
 * cs_bench.c is included whole (its main() renamed): the rows, the floors,
 * the calibration, the medians, the tables and the targets are its own.
 */
#define main cs_bench_main
#include "cs_bench.c"
#undef main

#include <elf.h>
#include <sys/stat.h>

/* Pages of data reserved before the image: x86-64 uses 6 (7.3). */
#define NATIVE_DATA_PAGES	64

#define NATIVE_RDTSCP		(1 * 32 + 27)	/* X86_FEATURE_RDTSCP */

/* arch/x86/include/asm/alternative.h */
struct native_alt {
	int32_t		instr_offset;
	int32_t		repl_offset;
	uint16_t	cpuid;
	uint16_t	flags;
	uint8_t		instrlen;
	uint8_t		replacementlen;
} __attribute__((packed));

static bool opt_no_lfence;

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

/*
 * Apply the RDTSCP alternatives of the image at @img (@len bytes, the file
 * as read): the replacement, then NOPs up to the original's length.
 * Returns how many were applied.
 */
static int native_alternatives(unsigned char *img, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh;
	const char *names;
	int i, applied = 0;

	if (eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) > len || eh->e_shstrndx >= eh->e_shnum)
		native_die("image", "bad section headers");
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	names = (const char *)img + sh[eh->e_shstrndx].sh_offset;
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

			if (a->cpuid != NATIVE_RDTSCP || a->flags || !have_rdtscp)
				continue;
			if (a->replacementlen > a->instrlen || a->instrlen - a->replacementlen > 8 ||
			    instr < img || instr + a->instrlen > img + len)
				native_die("image", "unexpected RDTSCP alternative");
			memcpy(instr, repl, a->replacementlen);
			memcpy(instr + a->replacementlen, native_nops[a->instrlen - a->replacementlen],
			       a->instrlen - a->replacementlen);
			applied++;
		}
	}
	return applied;
}

/*
 * -L: the first LFENCE after an RDTSCP in the first @span bytes of @fn,
 * made a NOP of the same length.  Returns 0, or -1 if there is none.
 */
static int native_drop_lfence(unsigned char *fn, size_t span)
{
	static const unsigned char rdtscp[] = { 0x0f, 0x01, 0xf9 }, lfence[] = { 0x0f, 0xae, 0xe8 };
	size_t i, j;

	for (i = 0; i + sizeof(rdtscp) <= span; i++) {
		if (memcmp(fn + i, rdtscp, sizeof(rdtscp)))
			continue;
		for (j = i + sizeof(rdtscp); j + sizeof(lfence) <= span && j < i + 32; j++) {
			if (!memcmp(fn + j, lfence, sizeof(lfence))) {
				memcpy(fn + j, native_nops[sizeof(lfence)], sizeof(lfence));
				return 0;
			}
		}
		return -1;
	}
	return -1;
}

/* Load @path after its data pages; returns the image's address. */
static uintptr_t native_load(const char *path, int *alts)
{
	size_t data = NATIVE_DATA_PAGES * page_size, len;
	unsigned char *area, *img;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	struct stat st;
	uint32_t *w;
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
	for (w = (uint32_t *)area; w < (uint32_t *)img; w++)
		*w = 1;		/* VDSO_CLOCKMODE_TSC */
	*alts = native_alternatives(img, len);
	if (opt_no_lfence) {
		unsigned char *fn = csf__elf_sym((uintptr_t)img, CS_VDSO_SNAP, CS_VDSO_VERSION);

		if (!fn || fn < img || native_drop_lfence(fn, img + len - fn > 1024 ? 1024 : img + len - fn))
			native_die(path, "no LFENCE after an RDTSCP in " CS_VDSO_SNAP);
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

int main(int argc, char **argv)
{
	struct coarse_stat_thread_page *pg;
	struct coarse_stat_snap s;
	uintptr_t img;
	void *sym;
	int c, alts;

	while ((c = getopt(argc, argv, "qtr:L")) != -1) {
		switch (c) {
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
			fprintf(stderr, "usage: %s [-q] [-t] [-r REPS] [-L] VDSO_IMAGE\n", argv[0]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: %s [-q] [-t] [-r REPS] [-L] VDSO_IMAGE\n", argv[0]);
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
	sym = csf__elf_sym(img, CS_VDSO_SNAP, CS_VDSO_VERSION);
	if (!sym)
		native_die(argv[optind], "no " CS_VDSO_SNAP);
	memcpy(&vdso_csf_snap, &sym, sizeof(sym));

	pg = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pg == MAP_FAILED)
		native_die("mmap", strerror(errno));
	pg->hdr.magic = COARSE_STAT_MAGIC;
	pg->hdr.abi_version = COARSE_STAT_ABI_VERSION;
	pg->hdr.kind = COARSE_STAT_KIND_THREAD;
	pg->hdr.size = page_size;
	pg->hdr.flags = COARSE_STAT_F_CYC_SYNCED | COARSE_STAT_F_CYC_RELIABLE;
	pg->state = COARSE_STAT_ONCPU;
	pg->start_cyc = pg->last_switch_cyc = pg->wake_cyc = rdtscp_aux(&(unsigned int){ 0 });
	if (mprotect(pg, page_size, PROT_READ))
		native_die("mprotect", strerror(errno));

	/* The snapshot must trust the counter and extrapolate, as in the guest. */
	if (vdso_csf_snap(pg, &s, sizeof(s)) ||
	    s.flags != (COARSE_STAT_SNAP_CYC_OK | COARSE_STAT_SNAP_EXTRAPOLATED) ||
	    s.p.oncpu_cyc == 0)
		native_die(argv[optind], "the image's snapshot did not extrapolate");

	/* What the library's first call in a thread leaves behind. */
	*csf__thread() = pg;
	csf__global()->snap = vdso_csf_snap;
	native_pg = pg;
	bench_pg = pg;
	have_cs = true;
	find_row("vdso_csf_snap")->setup = native_setup;
	opt_rows = "rdtscp,floor,floor_words,vdso_csf_snap,lib_csf_thread_snap";

	if (opt_tsv) {
		printf("#meta\tvdso_image\t%s\n", argv[optind]);
		printf("#meta\tvdso_rdtscp_alternatives\t%d\n", alts);
		printf("#meta\trdtscp\t%s\n", have_rdtscp ? "yes" : "no");
		printf("#meta\tno_lfence\t%s\n", opt_no_lfence ? "yes" : "no");
	} else {
		printf("cs_snap_native: %s, %d RDTSCP alternative(s) applied; rdtscp %s%s\n",
		       argv[optind], alts, have_rdtscp ? "yes" : "no",
		       opt_no_lfence ? "; -L: no LFENCE after the counter read (not a correct snapshot)" : "");
	}
	bench_snapshots();
	print_snapshots();
	print_snap_targets();
	return 0;
}
