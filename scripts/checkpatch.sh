#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict on one patch of the series (lint.sh, b4-check.sh):
#
#   scripts/checkpatch.sh SRC PATCH [EARLIER_PATCH...]
#
# runs SRC/scripts/checkpatch.pl --strict --quiet --show-types (and
# --codespell when codespell is installed) on PATCH and exits 0 when it is
# clean.  One warning is judged here rather than by checkpatch:
# FILE_PATH_CHANGES ("added, moved or deleted file(s), does MAINTAINERS need
# updating?") fires for every patch that adds a file without touching
# MAINTAINERS, also when an earlier patch of the series already covers it.
# It is accepted when it is the only finding and every file PATCH adds
# matches an F: line (the file itself, or a directory ending in /) that one
# of the EARLIER_PATCHes added to MAINTAINERS; the output then says which.
# PREFER_DEFINED_ATTRIBUTE_MACRO ("Prefer noinline over
# __attribute__((noinline))") is accepted in tools/lib/coarse_stat/ only: that
# header is user space and stands alone (programs copy it), so the kernel's
# attribute macros do not exist there; the output says so.
# MACRO_ARG_UNUSED on VDSO_DELTA_MASK(vd) is accepted: the timekeeping
# patch moves that line verbatim out of lib/vdso/gettimeofday.c.
# CAMELCASE on "_Pragma" is accepted: C99's pragma operator, which the
# 6.12 backport uses to define unrolled_full (7.3's <linux/unroll.h> has
# it, 6.12's does not); the output says so.
set -uo pipefail

src=$1
patch=$2
shift 2

cs=()
command -v codespell >/dev/null && cs=(--codespell)
out=$(cd "$src" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --quiet --show-types \
	"${cs[@]}" "$patch" 2>&1)
rc=$?
[ "$rc" = 0 ] && exit 0

# drop REGEX: $out without the findings whose first line matches REGEX,
# each with its context lines (up to the blank line after it).
drop() {
	awk -v re="$1" '$0 ~ re { skip = 1 } skip && /^$/ { skip = 0; next } !skip' <<<"$out"
}

# The attribute findings of the user-space library: dropped, with their
# context lines, when every one of them is in that file.
attr=$(awk '/^(ERROR|WARNING|CHECK):PREFER_DEFINED_ATTRIBUTE_MACRO:/ { n++; getline; if ($0 !~ /FILE: tools\/lib\/coarse_stat\//) bad++ }
	END { if (n && !bad) print n }' <<<"$out")
if [ -n "$attr" ]; then
	echo "checkpatch: ${patch##*/}: $attr PREFER_DEFINED_ATTRIBUTE_MACRO in tools/lib/coarse_stat/ (user space, no kernel macros): accepted"
	out=$(drop '^(ERROR|WARNING|CHECK):PREFER_DEFINED_ATTRIBUTE_MACRO:')
fi

# C99's _Pragma operator is not a CamelCase name anyone chose (6.12's patch 7).
# codespell's dictionary has "iput->input"; iput() is the VFS's.
iput=$(grep -c "^WARNING:TYPO_SPELLING: 'iput' may be misspelled - perhaps 'input'?$" <<<"$out")
if [ "$iput" != 0 ]; then
	echo "checkpatch: ${patch##*/}: $iput TYPO_SPELLING on iput (the VFS function, not input): accepted"
	out=$(drop "^WARNING:TYPO_SPELLING: 'iput' may be misspelled")
fi

# VDSO_DELTA_MASK(vd) ULLONG_MAX: a line the timekeeping patch moves
# verbatim from lib/vdso/gettimeofday.c to include/vdso/calc_ns.h.
dmask=$(awk '/^WARNING:MACRO_ARG_UNUSED: Argument .vd. is not used/ { n++; getline; getline; if ($0 !~ /define VDSO_DELTA_MASK\(vd\)\tULLONG_MAX/) bad++ }
	END { if (n && !bad) print n }' <<<"$out")
if [ -n "$dmask" ]; then
	echo "checkpatch: ${patch##*/}: MACRO_ARG_UNUSED on VDSO_DELTA_MASK(vd), moved verbatim from lib/vdso/gettimeofday.c: accepted"
	out=$(drop '^WARNING:MACRO_ARG_UNUSED: Argument .vd. is not used')
fi

prag=$(grep -c '^CHECK:CAMELCASE: Avoid CamelCase: <_Pragma>$' <<<"$out")
if [ "$prag" != 0 ]; then
	echo "checkpatch: ${patch##*/}: $prag CAMELCASE on _Pragma (C99's pragma operator): accepted"
	out=$(drop '^CHECK:CAMELCASE: Avoid CamelCase: <_Pragma>$')
fi

types=$(sed -n -E 's/^(ERROR|WARNING|CHECK):([A-Z_]+):.*/\2/p' <<<"$out" | sort -u)
[ -n "$types" ] || exit 0
if [ "$types" = FILE_PATH_CHANGES ]; then
	covered=$(python3 - "$patch" "$@" <<'EOF'
import re, sys
patch, earlier = sys.argv[1], sys.argv[2:]
pats = []
for e in earlier:
    with open(e, errors='replace') as f:
        for line in f:
            m = re.match(r'^\+F:\s+(\S+)\s*$', line)
            if m:
                pats.append(m.group(1))
added, cur = [], None
with open(patch, errors='replace') as f:
    for line in f:
        m = re.match(r'^diff --git a/(\S+) b/(\S+)$', line)
        if m:
            cur = m.group(2)
        elif line.startswith('new file mode') and cur:
            added.append(cur)
def ok(path):
    return any(path == p or (p.endswith('/') and path.startswith(p)) for p in pats)
if added and all(ok(a) for a in added):
    print(' '.join(sorted({p for p in pats for a in added if a == p or (p.endswith('/') and a.startswith(p))})))
EOF
)
	if [ -n "$covered" ]; then
		echo "checkpatch: ${patch##*/}: FILE_PATH_CHANGES only, and MAINTAINERS already covers every new file ($covered)"
		exit 0
	fi
fi
echo "$out"
exit "$rc"
