#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# (In the guest, by scripts/vm.sh.)  bench/rseq/guest.sh OUT BIN ROUNDS REPS:
# BIN check > OUT.check, BIN bench -i ROUNDS -r REPS > OUT.tsv.
out=$1 bin=$2 rounds=${3:-20000} reps=${4:-3} rc=0
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
# The kernel replaces tsc-early by tsc a few seconds into the boot.
for _ in $(seq 100); do
	[ "$(cat "$cs")" = tsc-early ] || break
	sleep 0.1
done
echo "cs_rseq: $(uname -r), clocksource $(cat "$cs"), $(nproc) CPUs"
"$bin" check >"$out.check" 2>&1 || rc=1
cat "$out.check"
"$bin" bench -i "$rounds" -r "$reps" >"$out.tsv.tmp" 2>"$out.err" || rc=1
cat "$out.tsv.tmp" "$out.err"
mv "$out.tsv.tmp" "$out.tsv"
exit $rc
