#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint: checkpatch.pl --strict on every patch of the series (not the
# cover letter), shellcheck on the project's shell scripts when installed,
# and with LINT_SPARSE=1 a sparse (C=2) + W=1 rebuild of the C files the
# series touches.  Last line: "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src=${LINUX:-$top/linux}
out=${KBUILD:-$top/build/linux}
patches=$(realpath -m "${PATCHES:-$top/patches}")
pass=0
fail=0

result() {
	if [ "$2" = 0 ]; then
		pass=$((pass + 1))
		echo "ok - $1"
	else
		fail=$((fail + 1))
		echo "not ok - $1"
	fi
}

[ -x "$src/scripts/checkpatch.pl" ] || { echo "lint: no $src/scripts/checkpatch.pl (make linux)" >&2; exit 1; }
cs=()
command -v codespell >/dev/null && cs=(--codespell)
n=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	(cd "$src" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --quiet --show-types "${cs[@]}" "$patches/$p")
	result "checkpatch --strict $p" $?
done < <(cat "$patches/series" 2>/dev/null)
[ $n -gt 0 ] || echo "lint: patches/series is empty: no patches to check"

if command -v shellcheck >/dev/null; then
	for s in "$top"/scripts/*.sh "$top"/selftests/*.sh "$top"/.ci/run; do
		[ -f "$s" ] || continue
		shellcheck -x -S warning "$s"
		result "shellcheck ${s#"$top"/}" $?
	done
else
	echo "lint: shellcheck not installed: shell scripts not checked (apt-get install shellcheck)"
fi

# The MAINTAINERS entry the series adds and MAINTAINERS-snippet are the same text.
sed -n '/^COARSE_STAT (/,/^$/p' "$src/MAINTAINERS" | sed '/^$/d' | diff -u - "$top/MAINTAINERS-snippet"
result "MAINTAINERS-snippet matches the series" $?

# kernel-doc of the headers and sources the series adds.
docs=$(git -C "$src" diff --name-only --diff-filter=A base..coarse-stat -- '*.h' 'kernel/*.c')
if [ -n "$docs" ]; then
	# shellcheck disable=SC2086
	out_kd=$(cd "$src" && scripts/kernel-doc -none -Wall $docs 2>&1)
	[ -z "$out_kd" ] || echo "$out_kd"
	[ -z "$out_kd" ]
	result "kernel-doc -Wall on the added files" $?
fi

# The rst the series adds must build (docutils, warnings are errors).
if command -v rst2html >/dev/null; then
	for r in $(git -C "$src" diff --name-only --diff-filter=A base..coarse-stat -- '*.rst'); do
		rst2html --halt=warning "$src/$r" >/dev/null
		result "rst2html $r" $?
	done
else
	echo "lint: rst2html not installed: rst not checked (apt-get install python3-docutils)"
fi

if [ "${LINT_SPARSE:-0}" = 1 ]; then
	files=$(git -C "$src" diff --name-only base..coarse-stat -- '*.c' | sed 's/\.c$/.o/')
	for o in $files; do
		make -s -C "$src" O="$out" C=2 W=1 "$o" 2>&1 | tee "$out/lint-$$.log"
		! grep -qE 'warning:|error:' "$out/lint-$$.log"
		result "sparse/W=1 $o" $?
	done
	rm -f "$out/lint-$$.log"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
