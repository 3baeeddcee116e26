#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make consumers: build the programs of consumers/ (not kernel code) against
# the series' UAPI headers (make headers_install of linux/ into build/hdr)
# and its library (linux/tools/lib/coarse_stat): cstime and its test
# programs, and the PostgreSQL extension pg_coarse_stat, which is installed
# into the system's PostgreSQL 15 when run as root (the guest sees the
# host's /, so its server finds it there).  BASE=7.3 on x86 only: make check
# runs them there (scripts/check.sh).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
if [ "$BASE" != 7.3 ] || [ "${ARCH:-x86}" != x86 ]; then
	echo "consumers: built for BASE=7.3 on x86 only"
	exit 0
fi
tree=${LINUX:-$base_tree}
hdr=$top/build/hdr
make -s -C "$tree" O="$hdr" headers_install
make -s -C "$top/consumers/cstime"
make -s -C "$top/consumers/pg_coarse_stat" CSF_LIB="$tree/tools/lib/coarse_stat" \
	CSF_UAPI="$hdr/usr/include"
if [ "$(id -u)" = 0 ]; then
	make -s -C "$top/consumers/pg_coarse_stat" CSF_LIB="$tree/tools/lib/coarse_stat" \
		CSF_UAPI="$hdr/usr/include" install
else
	echo "consumers: not root, pg_coarse_stat not installed (make -C consumers/pg_coarse_stat install as root)"
fi
echo "consumers: built (cstime, pg_coarse_stat)"
