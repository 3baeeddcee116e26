#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the benchmark cs_bench for a kernel tree:
#
#   scripts/build-cs-bench.sh TREE UAPI OUT
#
# TREE a kernel tree with the series (its selftest helpers are used), UAPI
# its installed UAPI headers (the usr/include of make headers), OUT the
# binary to write.  Since v5 cs_bench is the project's (bench/cs_bench.c),
# not the series'; a tree whose selftests still have cs_bench.c (v4 and
# earlier, the 6.12 backport until it carries v5) builds its own, with
# its own UAPI.  CROSS_COMPILE (e.g. aarch64-linux-gnu-) picks the
# compiler.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[ $# = 3 ] || { echo "usage: $0 TREE UAPI OUT" >&2; exit 2; }
tree=$1 uapi=$2 out=$3
sd=$tree/tools/testing/selftests/coarse_stat

mkdir -p "$(dirname "$out")"
rm -f "$out"
if [ -f "$sd/cs_bench.c" ]; then
	make -s -C "$sd" OUTPUT="$(cd "$(dirname "$out")" && pwd)" \
		${CROSS_COMPILE:+CROSS_COMPILE=$CROSS_COMPILE} \
		KHDR_INCLUDES="-isystem $uapi" "$(cd "$(dirname "$out")" && pwd)/cs_bench" >/dev/null
	[ "$(basename "$out")" = cs_bench ] || mv "$(dirname "$out")/cs_bench" "$out"
else
	"${CROSS_COMPILE:-}gcc" -O2 -Wall -g -pthread -isystem "$uapi" -I"$sd" \
		-I"$tree/tools/lib/coarse_stat" -o "$out" "$top/bench/cs_bench.c" \
		"$tree/tools/testing/selftests/vDSO/parse_vdso.c" -lpthread
fi
