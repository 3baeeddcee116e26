#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench ARCH=arm64: the snapshot-cost table of cs_bench on the arm64
# guest (qemu-system-aarch64, TCG), ratios only: under emulation the ns mean
# little, the ratios to the floor (CNTVCT_EL0 read plus a seqcount copy of
# the thread page in C) and to the bare counter read ("rdtscp" in cs_bench's
# row names: isb; mrs cntvct_el0 on arm64) are what compares.  Unlike
# scripts/bench.sh (x86): one kernel (patched, without the debug options:
# build/linux-arm64-bench), no context-switch comparison, no icount runs,
# nothing written to Documentation/bench.
# Environment: LINUX (the tree), BENCH_BUILD=0 (use the kernel as built),
# BENCH_ARGS (cs_bench arguments; default -q), VM_DIR (build/vm-bench-arm64).
# BASE=6.12 (scripts/base.sh): linux-6.12/, build/6.12/ for build/.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
export ARCH=arm64
kbuild=$BUILD_ROOT/linux-arm64-bench
out=${VM_DIR:-$BUILD_ROOT/vm-bench-arm64}
mkdir -p "$out"

if [ "${BENCH_BUILD:-1}" != 0 ]; then
	KBUILD=$kbuild nice -n "${BENCH_NICE:-19}" "$top/scripts/build-kernel.sh" bench || exit 1
	nice -n "${BENCH_NICE:-19}" "$top/scripts/build-selftests.sh" || exit 1
fi
bin=$BUILD_ROOT/kselftest-arm64/install/coarse_stat/cs_bench
[ -x "$bin" ] || { echo "bench-arm64: no $bin (make selftests ARCH=arm64)" >&2; exit 1; }

read -r -a args <<<"${BENCH_ARGS:--q}"
VM_DEBUG=0 VM_DIR=$out "$top/scripts/vm.sh" --kernel "$kbuild/arch/arm64/boot/Image" -- \
	"$bin" -t "${args[@]}" >"$out/cs_bench.tsv"
rc=$?
[ "$rc" = 0 ] || { echo "bench-arm64: the guest run failed ($rc; see $out/console.log)" >&2; exit 1; }

echo "cs_bench on arm64 (qemu-system-aarch64 -M virt, TCG), snapshot cost, ratios of medians:"
echo "(x cntvct: to a bare isb; mrs cntvct_el0, cs_bench's \"rdtscp\" row)"
echo
awk -F'\t' '
	$1 == "snap" && $4 == "-" { printf "  %7s  %8s  %-11s  %s\n", "-", "-", "-", $10; next }
	$1 == "snap" { printf "  %7.2f  %8.2f  %-11s  %s\n", $7, $8, $9, $10 }
	BEGIN { printf "  %7s  %8s  %-11s  %s\n", "x floor", "x cntvct", "syscalls", "what" }
' "$out/cs_bench.tsv"
echo
echo "bench-arm64: the whole output in $out/cs_bench.tsv"
