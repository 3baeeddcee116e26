#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command beside a busy loop per host core: the load under which the
# timing checks must still hold (make check LOAD=1).
#
#   scripts/load.sh [-n N] -- COMMAND [ARG...]
#
# N busy loops (default: nproc), at normal priority, are killed when COMMAND
# ends or the script is interrupted; the exit status is COMMAND's.  Under
# single-threaded QEMU TCG a loaded host makes the guest's vCPUs stand
# still longer while their clocks run on (selftests/extra/cs_stall.c
# measures it in the guest).
set -uo pipefail

n=$(nproc)
pids=()

usage() {
	sed -n '7p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

stop() {
	[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null
	pids=()
}

while [ $# -gt 0 ]; do
	case "$1" in
	-n)	n=$2; shift 2 ;;
	--)	shift; break ;;
	*)	usage ;;
	esac
done
[ $# -gt 0 ] || usage
[[ "$n" =~ ^[0-9]+$ ]] || usage

trap stop EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < n; i++)); do
	bash -c 'while :; do :; done' &
	pids+=("$!")
	disown "$!"
done
echo "load.sh: $n busy loops beside the command (pids ${pids[*]})" >&2
"$@"
