# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the scripts that print TAP-like "ok - NAME" lines and count them
# in $pass and $fail (lint.sh, b4-check.sh, test-harness.sh).
pass=0
fail=0

# result NAME STATUS [DETAIL]: "ok - NAME" if STATUS is 0, else "not ok - NAME[: DETAIL]".
result() {
	if [ "$2" = 0 ]; then
		pass=$((pass + 1))
		echo "ok - $1"
	else
		fail=$((fail + 1))
		echo "not ok - $1${3:+: $3}"
	fi
}
