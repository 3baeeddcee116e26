# SPDX-License-Identifier: GPL-2.0
# coarse_stat: every task is a target; 'make help' lists them.
#
# LINUX=/path/to/tree builds and tests another kernel tree (out of tree, in
# KBUILD); JOBS=n sets the kernel build's parallelism.  make check LOAD=1
# runs a busy loop per host core beside the tests, REPEAT=N runs the
# kselftests N times (stops at the first failing run).

LINUX   ?= $(CURDIR)/linux
# ARCH=arm64: the arm64 guest (cross-built, booted in qemu-system-aarch64);
# the scripts read ARCH from the environment (make exports it).
ifeq ($(ARCH),arm64)
KBUILD  ?= $(CURDIR)/build/linux-arm64
endif
KBUILD  ?= $(CURDIR)/build/linux
export LINUX KBUILD

BZIMAGE      := $(KBUILD)/arch/x86/boot/bzImage

.DEFAULT_GOAL := all
.PHONY: all help deps linux tree kernel selftests run check check-kasan bench lint bisect-check b4-check export shell clean distclean

all: tree kernel selftests ## build the kernel tree, the guest kernel and the kselftests (default)

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z0-9-]+):.*## /\1\t/' | \
		awk -F'\t' '{ printf "  %-13s %s\n", $$1, $$2 }'

deps: ## install the Debian 12 packages needed (as root; else print the apt-get line)
	@scripts/deps.sh

linux: ## make linux/: Debian's linux-source-6.12 as tag base + patches/ on branch coarse-stat
ifeq ($(LINUX),$(CURDIR)/linux)
	@GET_BASE_STRICT=1 scripts/get-base.sh
else
	@echo "linux: using your tree LINUX=$(LINUX) as it is"
endif

# What the build targets depend on: like "linux", but a tree with work not yet
# exported is used as it is (with a note) instead of refused.
tree:
ifeq ($(LINUX),$(CURDIR)/linux)
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

check: deps all ## boot, run the kselftests and the harness checks; last line "N passed, N failed" (LOAD=1: host busy, REPEAT=N: N runs)
	@LOAD=$(LOAD) REPEAT=$(REPEAT) scripts/check.sh

KASAN_KBUILD := $(CURDIR)/build/linux-kasan

check-kasan: deps tree selftests ## optional, slow: kselftests on a KASAN+kmemleak kernel (build/linux-kasan), leak scan
	@KBUILD=$(KASAN_KBUILD) scripts/build-kernel.sh kasan
	@VM_KERNEL=$(KASAN_KBUILD)/arch/x86/boot/bzImage VM_DIR=$(CURDIR)/build/vm-kasan \
		VM_TIMEOUT=$${VM_TIMEOUT:-3600} CHECK_HARNESS=0 CHECK_KMEMLEAK=1 scripts/check.sh

bench: deps tree ## build kernels without debug options (patched, base, =n), run cs_bench in them (ns and, under -icount, instructions per switch; BENCH_ICOUNT=1: only those; BENCH_O2=1: -O2 with tracepoints, Documentation/bench/O2/), write Documentation/bench/
ifeq ($(ARCH),arm64)
	@scripts/bench-arm64.sh
else
	@scripts/bench.sh
endif

lint: ## checkpatch, shellcheck, MAINTAINERS, kernel-doc, htmldocs, sparse and W=1 (new findings only)
	@scripts/deps.sh lint || true
	@scripts/lint.sh

bisect-check: ## build the kernel at every commit of linux/ base..coarse-stat (build/bisect; long)
	@scripts/bisect-check.sh

b4-check: ## b4 send --dry-run of patches/ in build/b4: mails, checkpatch, recipients = get_maintainer.pl
	@scripts/deps.sh b4 || true
	@scripts/b4-check.sh

export: ## write linux/ base..coarse-stat back into patches/ (keeps the cover letter text)
	@scripts/export.sh

shell: deps kernel ## boot the guest with an interactive shell on the console
	@scripts/vm.sh --shell

clean: ## remove build/ (kernel builds, kselftests, VM files); keeps linux/ and ccache
	rm -rf build .linux.*

distclean: clean ## also remove linux/ (refuses while it has commits not in patches/)
	@[ ! -e linux/.git ] || GET_BASE_STRICT=1 LINUX=$(CURDIR)/linux scripts/get-base.sh >/dev/null
	rm -rf linux
