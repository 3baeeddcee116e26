# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the scripts that print TAP-like "ok - NAME" lines and count them
# in $pass and $fail (lint.sh, b4-check.sh, test-harness.sh), and by the
# tests of consumers/, whose numbered TAP scripts/check.sh counts.
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

# tap_case NAME STATUS [DIAG]: as kselftest prints a case: the diagnostic
# "# DIAG" (one line, at most 3000 characters), then "ok N - NAME" if STATUS
# is 0, else "not ok N - NAME".
tap_n=0
tap_case() {
	local diag=${3:-}

	tap_n=$((tap_n + 1))
	diag=${diag//$'\n'/ }
	[ -z "$diag" ] || printf '# %s\n' "${diag:0:3000}"
	if [ "$2" = 0 ]; then
		pass=$((pass + 1))
		echo "ok $tap_n - $1"
	else
		fail=$((fail + 1))
		echo "not ok $tap_n - $1"
	fi
}

# tap_totals: the plan and kselftest's totals line; status 0 if none failed.
tap_totals() {
	echo "1..$tap_n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
	[ "$fail" = 0 ]
}
