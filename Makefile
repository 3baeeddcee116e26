# SPDX-License-Identifier: GPL-2.0
# coarse_stat: every task is a target; 'make help' lists them.
#
# LINUX=/path/to/tree builds and tests another kernel tree (out of tree, in
# KBUILD); JOBS=n sets the kernel build's parallelism.

LINUX   ?= $(CURDIR)/linux
KBUILD  ?= $(CURDIR)/build/linux
export LINUX KBUILD

BZIMAGE      := $(KBUILD)/arch/x86/boot/bzImage
NODEBUG      := $(CURDIR)/build/linux-nodebug

.DEFAULT_GOAL := all
.PHONY: all help deps linux tree kernel selftests run check bench lint export shell clean distclean

all: tree kernel selftests ## build the kernel tree, the guest kernel and the kselftests (default)

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  \1\t/' | expand -t 14

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

check: deps all ## boot, run the kselftests and the harness checks; last line "N passed, N failed"
	@scripts/check.sh

bench: deps tree ## boot a kernel without debug options and run the benchmarks
	@scripts/build-kernel.sh nodebug
	@$(MAKE) --no-print-directory selftests
	@VM_DEBUG=0 scripts/vm.sh --kernel $(NODEBUG)/arch/x86/boot/bzImage -- scripts/bench.sh

lint: ## checkpatch --strict on patches/, shellcheck on the scripts
	@scripts/deps.sh lint || true
	@scripts/lint.sh

export: ## write linux/ base..coarse-stat back into patches/ (keeps the cover letter text)
	@scripts/export.sh

shell: deps kernel ## boot the guest with an interactive shell on the console
	@scripts/vm.sh --shell

clean: ## remove build/ (kernel builds, kselftests, VM files); keeps linux/ and ccache
	rm -rf build .linux.*

distclean: clean ## also remove linux/ (refuses while it has commits not in patches/)
	@[ ! -e linux/.git ] || GET_BASE_STRICT=1 LINUX=$(CURDIR)/linux scripts/get-base.sh >/dev/null
	rm -rf linux
