#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Write linux/'s base..coarse-stat back into patches/ (make export).
#
# The output depends only on the commits' content, authors and author dates,
# so 'rm -rf linux && make linux && make export' leaves patches/ unchanged:
# --zero-commit (the "From <sha>" line does not depend on who committed when),
# no signature (no git version), a fixed base-commit.  The cover letter's
# headers, subject and blurb are kept from patches/0000-cover-letter.patch;
# only "[PATCH 0/N]", the shortlog, the diffstat and base-commit are
# regenerated.  patches/series lists the patches in order; patches/BASE
# records the base.  BASE=6.12 (scripts/base.sh): linux-6.12/ into backports/6.12/.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
tree=$(realpath -m "${LINUX:-$base_tree}")
out=$(realpath -m "${PATCHES:-$base_patches}")

die() { echo "export: $*" >&2; exit 1; }

g() { git -C "$tree" -c core.abbrev=12 -c diff.noprefix=false -c diff.mnemonicPrefix=false \
	-c diff.renames=true -c diff.algorithm=myers -c format.signOff=false \
	-c format.coverFromDescription=auto "$@"; }

[ -e "$tree/.git" ] || die "no git tree at $tree (run 'make linux$base_make')"
g rev-parse -q --verify base >/dev/null || die "$tree has no 'base' tag"
g rev-parse -q --verify coarse-stat >/dev/null || die "$tree has no 'coarse-stat' branch"
[ -z "$(g status --porcelain --untracked-files=no)" ] ||
	die "$tree has uncommitted changes: commit them on coarse-stat first"
[ "$(g rev-parse --abbrev-ref HEAD)" = coarse-stat ] ||
	echo "export: note: HEAD is not coarse-stat; exporting base..coarse-stat" >&2

n=$(g rev-list --count base..coarse-stat)
[ "$n" -gt 0 ] || die "base..coarse-stat is empty: nothing to export"
g log --format=%P base..coarse-stat | grep -q ' ' && die "base..coarse-stat has merges"

base=$(g rev-parse base)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The subject prefix ("RFC PATCH v2") is the cover letter's: the revision
# b4-check sends is kept there.
prefix=PATCH
[ ! -f "$out/0000-cover-letter.patch" ] ||
	prefix=$(sed -n -E 's/^Subject: \[(.*[^ ]) +[0-9]+\/[0-9]+\].*/\1/p' "$out/0000-cover-letter.patch" | head -n 1)
[ -n "$prefix" ] || die "cannot read the subject prefix of $out/0000-cover-letter.patch"

g format-patch -q --numbered --cover-letter --zero-commit --no-signature \
	--subject-prefix="$prefix" --base="$base" -o "$tmp" base..coarse-stat ${EXPORT_FLAGS:-}

fresh=$tmp/0000-cover-letter.patch
old=$out/0000-cover-letter.patch
[ -f "$fresh" ] || die "format-patch wrote no cover letter"

# The cover letter's generated tail starts at the first shortlog heading
# ("Author Name (N):") that is followed only by shortlog, diffstat and
# base-commit lines.
tail_start() {
	perl -ne '
		push @l, $_;
		END {
			my $i = $#l;
			# base-commit and anything after it (prerequisites)
			$i-- while $i >= 0 && $l[$i] !~ /^base-commit: /;
			my $start = -1;
			for ($i--; $i >= 0; $i--) {
				my $s = $l[$i];
				if ($s =~ /^\S.* \(\d+\):$/ && $l[$i + 1] =~ /^  \S/) {
					$start = $i;
					next;
				}
				next if $s =~ /^$/ || $s =~ /^ / ;
				last;
			}
			print $start < 0 ? "" : $start + 1, "\n";
		}' "$1"
}

new_tail=$(tail_start "$fresh")
[ -n "$new_tail" ] || die "cannot find the shortlog in the generated cover letter"
if [ -f "$old" ]; then
	old_tail=$(tail_start "$old")
	[ -n "$old_tail" ] || die "cannot find the shortlog in $old: restore its
  'Name (N):' shortlog and 'base-commit:' lines, or move it away to start a new one"
	{
		head -n $((old_tail - 1)) "$old" |
			sed -E "s|^(Subject: \[[^]]*[^ ]) +0+/[0-9]+\]|\1 $(printf '%0*d' ${#n} 0)/$n]|"
		tail -n +"$new_tail" "$fresh"
	} >"$tmp/cover"
else
	# First export: date the cover letter like the last patch, so the
	# file does not depend on when it was made; edit subject and blurb
	# in patches/0000-cover-letter.patch, later exports keep them.
	date=$(g log -1 --format='%aD' coarse-stat)
	sed "s|^Date: .*|Date: $date|" "$fresh" >"$tmp/cover"
	echo "export: wrote a new cover letter: fill in its subject and blurb" >&2
fi
mv "$tmp/cover" "$fresh"

mkdir -p "$out"
# Replace the exported files; stale patches from a longer series go away.
rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
cp "$tmp"/*.patch "$out"/
for p in "$tmp"/[0-9][0-9][0-9][0-9]-*.patch; do
	p=${p##*/}
	[ "$p" = 0000-cover-letter.patch ] || echo "$p"
done >"$out/series"

{
	echo "# The base the series applies to (written by scripts/export.sh)."
	echo "package: $(g log -1 --format=%s base | sed -n "s/^Debian \(linux-source-[0-9.]*\) .*/\1/p")"
	echo "debian-version: $(g log -1 --format=%s base | sed -n 's/^Debian linux-source-[0-9.]* //p')"
	echo "kernelversion: $(make -s -C "$tree" kernelversion 2>/dev/null)"
	echo "base-commit: $base"
} >"$out/BASE"

echo "export: $n patches in $out (base $base)"
