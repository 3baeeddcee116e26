#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make linux/: Debian's linux-source-6.12 committed as tag 'base', branch
# 'coarse-stat' with patches/ applied in order.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$(realpath -m "${LINUX:-$top/linux}")
patches=$(realpath -m "${PATCHES:-$top/patches}")
tarball=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
pkg=linux-source-6.12

die() { echo "get-base: $*" >&2; exit 1; }

# The tree holds work that is not in patches/: never touch it.  For the
# build and test targets that depend on 'make linux' this is the normal
# state while working: use the tree as it is.  GET_BASE_STRICT=1 (make
# distclean) makes it an error.
keep() {
	[ -z "${GET_BASE_STRICT:-}" ] || die "$*"
	echo "get-base: note: ${1%%.*}; using it as it is"
	exit 0
}

gitl() { git -C "$tree" -c user.name="coarse_stat base" -c user.email=base@localhost \
	-c commit.gpgsign=false "$@"; }

apply_series() {
	local p
	gitl checkout -q -B coarse-stat base
	[ -f "$patches/series" ] || { echo "get-base: no patches/series: nothing to apply"; return 0; }
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		# Fixed committer and committer date = author date: the commit ids
		# are the same on every machine.
		if ! gitl am -q --keep-cr --committer-date-is-author-date \
			"$patches/$p" >/dev/null 2>&1; then
			gitl am --abort >/dev/null 2>&1 || true
			die "patch does not apply: patches/$p (on $(gitl describe --tags --always base))"
		fi
		echo "  applied $p"
	done < "$patches/series"
}

if [ -e "$tree/.git" ]; then
	# An existing tree: never destroy commits that are not exported yet.
	gitl rev-parse -q --verify base >/dev/null || die "$tree has no 'base' tag; not ours"
	if [ -n "$(gitl status --porcelain --untracked-files=no)" ]; then
		keep "$tree has uncommitted changes. Commit them on coarse-stat and run 'make export', or
  move $tree away, then run 'make linux' again."
	fi
	if gitl rev-parse -q --verify coarse-stat >/dev/null &&
	   [ "$(gitl rev-list --count base..coarse-stat)" != 0 ]; then
		have=$(gitl format-patch --stdout base..coarse-stat | git patch-id --stable | cut -d' ' -f1 | sort)
		want=$(sed -e '/^#/d' -e '/^$/d' -e "s|^|$patches/|" "$patches/series" 2>/dev/null |
		       xargs -r cat | git patch-id --stable | cut -d' ' -f1 | sort)
		if [ "$have" = "$want" ]; then
			echo "get-base: $tree is up to date with patches/"
			exit 0
		fi
		keep "$tree (base..coarse-stat) differs from patches/.
  To keep the work in linux/: run 'make export' and commit patches/.
  To throw it away and re-apply patches/: rm -rf $tree && make linux"
	fi
	apply_series
	exit 0
fi

[ "$tree" = "$top/linux" ] || die "LINUX=$tree is not a git tree with a 'base' tag.
  Apply the series to your own tree with:
    git -C $tree am \$(sed 's|^|$patches/|' $patches/series)"

if [ ! -f "$tarball" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "get-base: installing $pkg"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null ||
			{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null; }
	fi
	[ -f "$tarball" ] || die "$tarball missing: run 'sudo apt-get install $pkg' (Debian 12 bookworm)"
fi

ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo unknown)
want=$(sed -n 's/^debian-version: //p' "$patches/BASE" 2>/dev/null || true)
if [ -n "$want" ] && [ "$want" != "$ver" ]; then
	echo "get-base: warning: patches/BASE was made on $pkg $want, this is $ver;
  the base commit id will differ and the series may not apply cleanly." >&2
fi
echo "get-base: unpacking $tarball ($pkg $ver) into $tree"
tmp=$(mktemp -d "$top/.linux.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xf "$tarball"
mv "$tmp"/linux-source-6.12 "$tree"
git -C "$tree" init -q -b master
# Debian's top-level .gitignore ignores everything at the top level ("/*"), which
# would hide every new file of the series: drop that section from the base.
gi=$(sed '/^# Debian packaging: ignore everything at the top level/,$d' "$tree/.gitignore" | sed '$d')
printf '%s\n' "$gi" > "$tree/.gitignore"
gitl add -A -f . >/dev/null
GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
	gitl commit -q -m "Debian $pkg $ver" -m "Linux $(make -s -C "$tree" kernelversion) with Debian patches."
gitl tag base
echo "get-base: base is Debian $pkg $ver ($(gitl rev-parse base))"
apply_series
