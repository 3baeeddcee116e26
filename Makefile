# SPDX-License-Identifier: GPL-2.0
# coarse_stat: every task is a target; 'make help' lists them.
#
# BASE=7.3 (the default) is the series patches/ on Debian's linux-source-7.3
# in linux/, outputs in build/; BASE=6.12 the backport backports/6.12/ on
# Debian 12's linux-source-6.12 in linux-6.12/, outputs in build/6.12/
# (scripts/base.sh): 'make check BASE=6.12', 'make lint BASE=6.12', ...
# The two never share an output directory.
#
# LINUX=/path/to/tree builds and tests another kernel tree (out of tree, in
# KBUILD); JOBS=n sets the kernel build's parallelism.  make check LOAD=1
# runs a busy loop per host core beside the tests, REPEAT=N runs the
# kselftests N times (stops at the first failing run).

BASE ?= 7.3
# The tree, series and output root of BASE: scripts/base.sh has the one map.
BASE_MAP := $(shell BASE='$(BASE)' top='$(CURDIR)' sh -c '. scripts/base.sh >&2 && echo "$$base_tree $$base_patches $$base_build"')
ifeq ($(BASE_MAP),)
$(error BASE=$(BASE): the series has two bases, BASE=7.3 (patches/ in linux/, the default) and BASE=6.12 (backports/6.12/ in linux-6.12/))
endif
BASE_TREE    := $(word 1,$(BASE_MAP))
PATCHES      ?= $(word 2,$(BASE_MAP))
BUILD_ROOT   ?= $(word 3,$(BASE_MAP))
LINUX   ?= $(BASE_TREE)
# ARCH=arm64: the arm64 guest (cross-built, booted in qemu-system-aarch64);
# the scripts read ARCH from the environment (make exports it).
ifeq ($(ARCH),arm64)
KBUILD  ?= $(BUILD_ROOT)/linux-arm64
endif
KBUILD  ?= $(BUILD_ROOT)/linux
export BASE LINUX PATCHES BUILD_ROOT KBUILD

BZIMAGE      := $(KBUILD)/arch/x86/boot/bzImage

.DEFAULT_GOAL := all
.PHONY: all help deps linux tree kernel selftests consumers run check check-kasan bench bpf bench-bpf bench-cache bench-native bench-snap-native bench-registration bench-sweep bench-cpu-refresh lint bisect-check b4-check build-matrix man man-series export shell clean distclean

all: tree kernel selftests ## build the kernel tree, the guest kernel and the kselftests (default)

help: ## list the targets
	@echo "BASE=$(BASE): the series $(PATCHES:$(CURDIR)/%=%)/ in $(LINUX:$(CURDIR)/%=%)/, outputs in $(BUILD_ROOT:$(CURDIR)/%=%)/"
	@echo "(BASE=7.3, the default: patches/ in linux/; BASE=6.12: backports/6.12/ in linux-6.12/, and"
	@echo "every build/X below is build/6.12/X)"
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z0-9-]+):.*## /\1\t/' | \
		awk -F'\t' '{ printf "  %-13s %s\n", $$1, $$2 }'

deps: ## install the Debian 12 packages needed (as root; else print the apt-get line)
	@scripts/deps.sh

linux: ## make linux/: Debian's linux-source-7.3 as tag base + patches/ on branch coarse-stat (BASE=6.12: linux-6.12/, linux-source-6.12 + backports/6.12/)
ifeq ($(LINUX),$(BASE_TREE))
	@GET_BASE_STRICT=1 scripts/get-base.sh
else
	@echo "linux: using your tree LINUX=$(LINUX) as it is"
endif

# What the build targets depend on: like "linux", but a tree with work not yet
# exported is used as it is (with a note) instead of refused.
tree:
ifeq ($(LINUX),$(BASE_TREE))
	@scripts/get-base.sh
endif

kernel: tree ## build the guest kernel (tinyconfig + scripts/*.config, debug options) in build/linux
	@scripts/build-kernel.sh debug

selftests: tree ## build and install the kselftests (coarse_stat) in build/kselftest/install
	@scripts/build-selftests.sh

run: deps kernel selftests ## main job: boot the patched kernel in QEMU and show the feature (scripts/demo.sh)
	@scripts/vm.sh -- scripts/demo.sh

LOAD   ?= 0
REPEAT ?= 1

consumers: tree ## build consumers/ (cstime, the PostgreSQL extension pg_coarse_stat) against the series' headers; as root, install the extension
	@scripts/build-consumers.sh

check: deps all consumers ## boot, run the kselftests and the harness checks; last line "N passed, N failed" (LOAD=1: host busy, REPEAT=N: N runs)
	@LOAD=$(LOAD) REPEAT=$(REPEAT) scripts/check.sh

KASAN_KBUILD := $(BUILD_ROOT)/linux-kasan

check-kasan: deps tree selftests ## optional, slow: kselftests on a KASAN+kmemleak kernel (build/linux-kasan), leak scan
	@KBUILD=$(KASAN_KBUILD) scripts/build-kernel.sh kasan
	@VM_KERNEL=$(KASAN_KBUILD)/arch/x86/boot/bzImage VM_DIR=$(BUILD_ROOT)/vm-kasan \
		VM_TIMEOUT=$${VM_TIMEOUT:-3600} CHECK_HARNESS=0 CHECK_KMEMLEAK=1 scripts/check.sh

bench: deps tree ## build kernels without debug options (patched, base, =n), run cs_bench in them (ns and, under -icount, instructions per switch; BENCH_ICOUNT=1: only those; -O2 with tracepoints and BPF, Documentation/bench/O2/, then -Os; BENCH_O2=1 or 0: only one, BENCH_OS=0: without the -Os half; also perf bench sched pipe and messaging, key off/on/registered, BENCH_PERF=0: not; the BPF and rseq versions, BENCH_BPF=0: not; server-like requests, BENCH_SERVER=0: not; the hooks' native cycle lower bound, BENCH_HOOK_NATIVE=0: not; registration throughput against thread create/exit, BENCH_REGISTRATION=0: not), write Documentation/bench/ (BASE=6.12: Documentation/bench/6.12/)
ifeq ($(ARCH),arm64)
	@scripts/bench-arm64.sh
else
	@scripts/bench.sh
endif

bpf: ## build bench/bpf/cs_bpf, the BPF version of the thread page (clang, clang-22, libbpf and bpftool from linux/tools), into build/bpf/
	@scripts/deps.sh bpf || true
	@command -v clang-22 >/dev/null && command -v llvm-objdump-22 >/dev/null || \
		echo "bpf: the __uptr version needs clang-22 and llvm-22 (Debian 12's archive): apt-get install clang-22 llvm-22" >&2
	@mkdir -p $(CURDIR)/build/bpf
	@$(MAKE) --no-print-directory -C bench/bpf O=$(CURDIR)/build/bpf

bench-bpf: bpf ## boot the base and patched O2 bench kernels (BENCH_BPF_BOOTS=N times each: least and spread per row), run cs_bpf bench and its checks (first, tuned, __uptr; empty programs; icount and wall clock), then the rseq prototype's kernel with cs_rseq check and bench (BENCH_BPF_RSEQ=0: not); write Documentation/bench/bpf/ and the four-way table (Documentation/bench/compare.md)
	@scripts/bench-bpf.sh

bench-cache: ## cache lines and L1D/L2 misses per futex round trip (key off, key on, registered; 1 and 2 CPUs) in a QEMU TCG cache model (plugins built from Debian's qemu source), by kernel function; build/bench-cache/results.md
	@scripts/deps.sh qemu-plugins || true
	@scripts/bench-cache.sh

bench-native: ## on real hardware booted into the patched kernel: perf stat (cycles, instructions, cache misses) of the ping-pong, perf bench sched pipe and messaging, key off/on/registered, as ratios; build/bench-native/results.md
	@scripts/deps.sh native || true
	@scripts/bench-native.sh

bench-registration: ## registered against plain thread create/exit (t_stress) and one registration alone (bench/cs_regloop.c) in the -O2 bench kernel (make bench BENCH_O2=1 builds it), 2 vCPUs, -icount and wall clock; Documentation/bench/O2/registration.md
	@scripts/bench-registration.sh

bench-sweep: ## a watchdog's sweep of 10/100/1000 threads at 1 and 20 ms: the pages (csf_page_snap()) against /proc/<tid>/stat + schedstat (pread() of kept fds, open+read+close), -icount and wall clock; Documentation/bench/sweep.md
	@scripts/bench-sweep.sh

bench-cpu-refresh: ## what one refresh of the CPU page costs the CPU it runs on, in instructions (bench/cs_cpu_refresh.c in -icount guests of the -O2 bench kernel with 2 and 8 possible CPUs), next to a read of /proc/stat; Documentation/bench/cpu-refresh.md
	@scripts/bench-cpu-refresh.sh

bench-snap-native: ## the snapshot's cost on this machine's CPU: cs_bench's snapshot rows with make bench's -O2 vDSO image loaded into a host process (bench/cs_snap_native.c), as built and without its LFENCE; Documentation/bench/O2/snap-native.md
	@scripts/bench-snap-native.sh

lint: ## checkpatch, shellcheck, MAINTAINERS, kernel-doc, htmldocs, sparse and W=1 (new findings only)
	@scripts/deps.sh lint || true
	@scripts/lint.sh

bisect-check: ## build the kernel at every commit of linux/ base..coarse-stat (build/bisect; long)
	@scripts/bisect-check.sh

b4-check: ## b4 send --dry-run of patches/ in build/b4: mails, checkpatch, recipients = get_maintainer.pl
	@scripts/deps.sh b4 || true
	@scripts/b4-check.sh

build-matrix: ## build the series as the 0-day bot does: x86_64/i386/arm64/riscv64/ppc64le, COARSE_STAT y/n/unavailable, RT, !SCHED_INFO, !HRT, sched_ext, proxy exec, KUnit (build/matrix, W=1); table in build/matrix/table.md; long, not in CI
	@scripts/deps.sh matrix || true
	@scripts/build-matrix.sh

man: ## render (man -l, into build/man/txt) and lint (mandoc, groff -ww, man-pages conventions) the man pages of man/
	@scripts/deps.sh man || true
	@scripts/man.sh check

man-series: ## the man pages as a [PATCH RFC] series for linux-man in build/man/series (git am-checked on Debian's newest man-pages)
	@scripts/deps.sh man || true
	@scripts/man.sh series

export: ## write linux/ base..coarse-stat back into patches/ (BASE=6.12: linux-6.12/ into backports/6.12/; keeps the cover letter text)
	@scripts/export.sh

shell: deps kernel ## boot the guest with an interactive shell on the console
	@scripts/vm.sh --shell

# The kernel trees of the bases distclean removes, each with its series:
# BASE=7.3 (the default) both, BASE=6.12 linux-6.12/ only.
ifeq ($(BASE),7.3)
DISTCLEAN := 7.3:linux:patches 6.12:linux-6.12:backports/6.12
else
DISTCLEAN := 6.12:linux-6.12:backports/6.12
endif

clean: ## remove build/ (kernel builds, kselftests, VM files, downloads; BASE=6.12: build/6.12/ only); keeps the trees and ccache
	@[ -n "$(BUILD_ROOT)" ] && [ "$(BUILD_ROOT)" != / ] || { echo "clean: BUILD_ROOT='$(BUILD_ROOT)': not removed" >&2; exit 1; }
	rm -rf $(BUILD_ROOT) .linux.*
	-$(MAKE) -s -C consumers/cstime clean
	-$(MAKE) -s -C consumers/pg_coarse_stat clean USE_PGXS=1 2>/dev/null

distclean: ## also remove linux/ and linux-6.12/ (BASE=6.12: linux-6.12/ only); refuses while one has commits not in its series
	@for t in $(DISTCLEAN); do \
		b=$${t%%:*} r=$${t#*:}; d=$${r%%:*} p=$${r#*:}; \
		[ ! -e "$$d/.git" ] || GET_BASE_STRICT=1 BASE=$$b LINUX=$(CURDIR)/$$d PATCHES=$(CURDIR)/$$p \
			scripts/get-base.sh >/dev/null || exit 1; \
	done
	@$(MAKE) --no-print-directory clean
	rm -rf $(foreach t,$(DISTCLEAN),$(word 2,$(subst :, ,$(t))))
