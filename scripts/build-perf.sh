#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build perf from the kernel tree (tools/perf), out of tree, with the fewest
# features that still have `perf bench sched pipe` and `perf bench sched
# messaging` (no libtraceevent, python, perl, jevents, libbpf, SDT, ...), so
# that it builds with the Debian 12 packages of scripts/deps.sh perf.  The
# binary is build/perf/perf; once it is there (and newer than the tree's
# tools/perf/builtin-bench.c) it is reused.  Nothing is written into the tree.
#
#   scripts/build-perf.sh		build (if needed); print the binary's path
#
# Environment:
#   LINUX		the kernel tree (default: scripts/base.sh's, linux/)
#   PERF_OUT		the output directory (build/perf, $BUILD_ROOT/perf)
#   PERF_NICE		niceness of the build (10)
#   JOBS		make -j (2)
#   PERF_REBUILD=1	build even if the binary is there
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
src=${LINUX:-$base_tree}
out=${PERF_OUT:-$BUILD_ROOT/perf}
bin=$out/perf

[ -f "$src/tools/perf/Makefile" ] || { echo "build-perf: no tools/perf in $src" >&2; exit 1; }
if [ "${PERF_REBUILD:-0}" != 1 ] && [ -x "$bin" ] &&
   [ "$bin" -nt "$src/tools/perf/builtin-bench.c" ]; then
	echo "$bin"
	exit 0
fi
"$top/scripts/deps.sh" perf >&2 || true
mkdir -p "$out"
# One build at a time in $out.
exec 8>"$out/.build-perf.lock"
flock 8
cc=gcc
command -v ccache >/dev/null 2>&1 && cc="ccache gcc"
opts=(NO_LIBTRACEEVENT=1 NO_LIBPYTHON=1 NO_LIBPERL=1 NO_JEVENTS=1 NO_LIBBPF=1
      NO_SDT=1 NO_SLANG=1 NO_GTK2=1 NO_LIBUNWIND=1 NO_LIBDW=1 NO_LIBNUMA=1
      NO_LIBCAP=1 NO_LIBCRYPTO=1 NO_BABELTRACE=1 NO_LIBZSTD=1 NO_LZMA=1
      NO_LIBDEBUGINFOD=1 NO_LIBLLVM=1 NO_CAPSTONE=1 NO_LIBPFM4=1 NO_AUXTRACE=1
      NO_DEMANGLE=1 NO_JVMTI=1 NO_SHELLCHECK=1)
echo "build-perf: building $bin from $src/tools/perf" >&2
# gcc-ar, not ar: binutils' ar also loads every plugin in /usr/lib/bfd-plugins,
# and LLVM 14's LLVMgold.so there aborts on the 18 MB perf-test-in.o
# ("LLVM ERROR: Invalid encoding"); gcc-ar passes GCC's plugin explicitly.
if ! nice -n "${PERF_NICE:-10}" make -s -C "$src/tools/perf" O="$out" CC="$cc" AR=gcc-ar \
	-j"${JOBS:-2}" "${opts[@]}" >"$out/build.log" 2>&1; then
	echo "build-perf: the build failed; the last lines of $out/build.log:" >&2
	tail -20 "$out/build.log" >&2
	exit 1
fi
"$bin" bench sched pipe -l 10 >/dev/null ||
	{ echo "build-perf: $bin bench sched pipe does not run" >&2; exit 1; }
echo "$bin"
