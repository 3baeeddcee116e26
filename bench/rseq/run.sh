#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/rseq/run.sh [BOOTS]: boot the rseq prototype's -O2 kernel BOOTS times
# (default 5) under QEMU -icount, run guest.sh (cs_rseq check, then
# cs_rseq bench -i 20000 -r 3), keep each boot's files in build/rseq/runs/,
# and print per row the least over the boots and the spread (max - min of
# the boots' least).  RSEQ_KERNEL: the image (build/linux-rseq-o2);
# RSEQ_APPEND: more kernel arguments (cs_rseq_nopublish); RSEQ_TAG: the
# files' prefix (icount).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
boots=${1:-5}
kernel=${RSEQ_KERNEL:-$top/build/linux-rseq-o2/arch/x86/boot/bzImage}
tag=${RSEQ_TAG:-icount}
runs=$top/build/rseq/runs
vmdir=$top/build/vm-rseq
rc=0

make -C "$top/bench/rseq" --no-print-directory || exit 1
mkdir -p "$runs" "$vmdir"
for n in $(seq "$boots"); do
	echo "run.sh: $tag boot $n of $boots ($(date -u '+%H:%M UTC'))" >&2
	rm -f "$vmdir/out.tsv" "$vmdir/out.check"
	VM_ICOUNT=1 VM_DEBUG=0 VM_SCRATCH_MB=64 VM_DIR=$vmdir VM_KERNEL=$kernel VM_APPEND=${RSEQ_APPEND:-} \
		"$top/scripts/vm.sh" -- "$top/bench/rseq/guest.sh" "$vmdir/out" \
		"$top/build/rseq/cs_rseq" 20000 3 >"$runs/$tag-b$n.log" 2>&1 || rc=1
	cp "$vmdir/out.tsv" "$runs/$tag-b$n.tsv" 2>/dev/null || rc=1
	cp "$vmdir/out.check" "$runs/$tag-b$n.check" 2>/dev/null || rc=1
	cp "$vmdir/console.log" "$runs/$tag-b$n.console.log" 2>/dev/null
	tail -n 1 "$runs/$tag-b$n.check" 2>/dev/null >&2
done
# Least over the boots of each row's min, and the spread of the boots' min.
awk -F'\t' '$1 == "pingpong" || $1 == "read" {
	k = $2; v = $4 + 0
	if (!(k in lo)) { order[++n] = k; lo[k] = hi[k] = v }
	if (v < lo[k]) lo[k] = v
	if (v > hi[k]) hi[k] = v
	c[k]++
} END {
	printf "| row | least | spread | boots |\n| --- | ---: | ---: | ---: |\n"
	for (i = 1; i <= n; i++)
		printf "| %s | %.1f | %.1f | %d |\n", order[i], lo[order[i]], hi[order[i]] - lo[order[i]], c[order[i]]
}' "$runs/$tag"-b*.tsv
exit $rc
