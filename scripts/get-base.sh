#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make the kernel tree of a base (scripts/base.sh): Debian's kernel source
# committed as tag 'base', branch 'coarse-stat' with the series applied in
# order.
#
#   BASE=7.3 (default): linux/ from Debian's linux-source-7.3 (suite
#     trixie-backports), patches/.  The package is downloaded with apt-get
#     and a configuration of its own in build/apt/ (its own sources list,
#     lists and cache; the system's apt sources are not touched), from the
#     Debian mirror the system's apt sources name, and unpacked with
#     dpkg-deb: usr/src/linux-source-7.3.tar.xz.  A download in build/apt/dl/
#     is reused (rm -rf build/apt/dl for the suite's current version).
#     Where the package is installed (/usr/src/linux-source-7.3.tar.xz),
#     that tarball is used.
#   BASE=6.12: linux-6.12/ from Debian 12's linux-source-6.12
#     (/usr/src/linux-source-6.12.tar.xz; apt-get install as root when
#     missing), backports/6.12/.
#
# Environment: LINUX (the tree; a directory that does not exist yet is
# made), PATCHES (the series), LINUX_TARBALL (your own tarball instead;
# its version for the base commit from dpkg-query, else "unknown"),
# GET_BASE_MIRROR (a Debian mirror URI instead of the system's),
# GET_BASE_SUITE (the suite of linux-source-7.3, trixie-backports),
# GET_BASE_STRICT=1 (a tree with work not in the series is an error, not
# a note).  The base commit depends only on the tarball and the package
# version: its id is the same on every machine (patches/BASE).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
tree=$(realpath -m "${LINUX:-$base_tree}")
patches=$(realpath -m "${PATCHES:-$base_patches}")
pkg=linux-source-$BASE
tarball=${LINUX_TARBALL:-}
apt_dir=$top/build/apt
suite=${GET_BASE_SUITE:-trixie-backports}
# shellcheck source=scripts/apt.sh
. "$top/scripts/apt.sh"
keyring=$apt_keyring
# patches/ or backports/6.12/ in the messages
rel=${patches#"$top"/}/

die() { echo "get-base: $*" >&2; exit 1; }

# The tree holds work that is not in the series: never touch it.  For the
# build and test targets that depend on 'make linux' this is the normal
# state while working: use the tree as it is.  GET_BASE_STRICT=1 (make
# distclean) makes it an error.  keep WHAT WHAT_TO_DO
keep() {
	[ -z "${GET_BASE_STRICT:-}" ] || die "$1.
  $2"
	echo "get-base: note: $1; using it as it is"
	exit 0
}

gitl() { git -C "$tree" -c user.name="coarse_stat base" -c user.email=base@localhost \
	-c commit.gpgsign=false "$@"; }

apply_series() {
	local p
	gitl checkout -q -B coarse-stat base
	[ -f "$patches/series" ] || { echo "get-base: no ${rel}series: nothing to apply"; return 0; }
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		# Fixed committer and committer date = author date: the commit ids
		# are the same on every machine.
		if ! gitl am -q --keep-cr --committer-date-is-author-date \
			"$patches/$p" >/dev/null 2>&1; then
			gitl am --abort >/dev/null 2>&1 || true
			die "patch does not apply: $rel$p (on $(gitl describe --tags --always base))"
		fi
		keep_notes "$patches/$p"
		echo "  applied $p"
	done < "$patches/series"
}

# keep_notes PATCH: git am drops what a patch has between the "---" after
# its changelog and the diffstat (the "vN:" notes of each revision).  Put
# it back at the end of the commit message, after its own "---", so that
# 'make export' writes the patch as it was.
keep_notes() {
	local notes date

	notes=$(python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1], encoding='utf-8', errors='surrogateescape').read()
t = t.split('\ndiff --git ', 1)[0]
head, sep, rest = t.partition('\n---\n')
notes, sep2, _ = rest.partition('\n---\n')
if sep and sep2 and not re.match(r' \S.*\|', notes):
    sys.stdout.write(notes)
PY
)
	[ -n "$notes" ] || return 0
	date=$(gitl log -1 --format=%aI)
	{ gitl log -1 --format=%B | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; printf -- '---\n%s\n' "$notes"; } |
		GIT_COMMITTER_DATE=$date gitl commit -q --amend --cleanup=verbatim -F -
}

if [ -e "$tree/.git" ]; then
	# An existing tree: never destroy commits that are not exported yet.
	gitl rev-parse -q --verify base >/dev/null || die "$tree has no 'base' tag; not ours"
	if [ -n "$(gitl status --porcelain --untracked-files=no)" ]; then
		keep "$tree has uncommitted changes" "Commit them on coarse-stat and run 'make export$base_make', or
  move $tree away, then run 'make linux$base_make' again."
	fi
	if gitl rev-parse -q --verify coarse-stat >/dev/null &&
	   [ "$(gitl rev-list --count base..coarse-stat)" != 0 ]; then
		have=$(gitl format-patch --stdout base..coarse-stat | git patch-id --stable | cut -d' ' -f1 | sort)
		want=$(sed -e '/^#/d' -e '/^$/d' -e "s|^|$patches/|" "$patches/series" 2>/dev/null |
		       xargs -r cat | git patch-id --stable | cut -d' ' -f1 | sort)
		if [ "$have" = "$want" ]; then
			echo "get-base: $tree is up to date with $rel"
			exit 0
		fi
		keep "$tree (base..coarse-stat) differs from $rel" \
			"To keep the work in $tree: run 'make export$base_make' and commit $rel.
  To throw it away and re-apply $rel: rm -rf $tree && make linux$base_make"
	fi
	apply_series
	exit 0
fi

# A directory that is not ours (no .git): your own tree, left alone.  A
# path that does not exist yet (or an empty directory) gets the base.
if [ -e "$tree" ] && [ -n "$(ls -A "$tree" 2>/dev/null)" ]; then
	die "LINUX=$tree is not a git tree with a 'base' tag.
  Apply the series to your own tree with:
    git -C $tree am \$(sed 's|^|$patches/|' $patches/series)"
fi

installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }

# The newest $pkg .deb in build/apt/dl, if any.
downloaded() {
	local f v best='' bestv=''

	for f in "$apt_dir/dl/${pkg}_"*.deb; do
		[ -f "$f" ] || continue
		[ "$(dpkg-deb -f "$f" Package 2>/dev/null)" = "$pkg" ] ||
			{ echo "get-base: warning: $f is no $pkg package; ignored" >&2; continue; }
		v=$(dpkg-deb -f "$f" Version)
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$bestv"; then
			best=$f bestv=$v
		fi
	done
	[ -n "$best" ] && echo "$best"
}

# download: apt-get update and apt-get download $pkg with the configuration
# of build/apt; prints the .deb.
download() {
	local mirror from log=$apt_dir/apt.log

	[ -f "$keyring" ] || die "no $keyring: install debian-archive-keyring (scripts/deps.sh)"
	if [ -n "${GET_BASE_MIRROR:-}" ]; then
		mirror=$GET_BASE_MIRROR from="GET_BASE_MIRROR"
	else
		IFS=$'\t' read -r mirror from < <(debian_mirror) ||
			die "no Debian mirror in the system's apt sources (a 'deb' entry for the release's
  suite in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list): set GET_BASE_MIRROR=URI"
	fi
	apt_private "$apt_dir" || die "cannot make $apt_dir"
	printf 'deb [signed-by=%s] %s %s main\n' "$keyring" "$mirror" "$suite" >"$apt_dir/etc/sources.list"
	echo "get-base: downloading $pkg from $suite (the Debian mirror of $from; apt configuration in $apt_dir)" >&2
	: >"$log"
	apt-get "${apt_opts[@]}" -q update >>"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "apt-get update of $suite failed (log: $log)"; }
	rm -rf "$apt_dir/dl.tmp"
	mkdir -p "$apt_dir/dl.tmp"
	(cd "$apt_dir/dl.tmp" && apt-get "${apt_opts[@]}" -q download "$pkg") >>"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "apt-get download $pkg failed (log: $log)"; }
	# Into place only when complete.
	mv "$apt_dir/dl.tmp/${pkg}_"*.deb "$apt_dir/dl/" || die "apt-get download wrote no ${pkg}_*.deb"
	rmdir "$apt_dir/dl.tmp"
	downloaded || die "no ${pkg}_*.deb in $apt_dir/dl after the download"
}

tmp=$(mktemp -d "$top/.linux.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# what: the tarball for the messages
if [ -n "$tarball" ]; then
	[ -f "$tarball" ] || die "LINUX_TARBALL=$tarball: no such file"
	ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
	[ -n "$ver" ] || ver=unknown
	what="$tarball (LINUX_TARBALL; the version is the installed $pkg's)"
elif [ "$BASE" = 6.12 ] || installed "$pkg"; then
	# Debian 12's own package (6.12), or an installed linux-source-7.3.
	tarball=/usr/src/$pkg.tar.xz
	if [ ! -f "$tarball" ]; then
		if [ "$(id -u)" = 0 ]; then
			echo "get-base: installing $pkg"
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null ||
				{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null; }
		fi
		[ -f "$tarball" ] || die "$tarball missing: run 'sudo apt-get install $pkg' (Debian 12 bookworm)"
	fi
	ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo unknown)
	what=$tarball
else
	deb=$(downloaded) || deb=$(download) || exit 1
	ver=$(dpkg-deb -f "$deb" Version)
	dpkg-deb -x "$deb" "$tmp/deb" || die "dpkg-deb -x $deb failed"
	tarball=$tmp/deb/usr/src/$pkg.tar.xz
	[ -f "$tarball" ] || die "$deb has no usr/src/$pkg.tar.xz"
	what="usr/src/$pkg.tar.xz of ${deb#"$top"/}"
fi

want=$(sed -n 's/^debian-version: //p' "$patches/BASE" 2>/dev/null || true)
if [ -n "$want" ] && [ "$want" != "$ver" ]; then
	echo "get-base: warning: ${rel}BASE was made on $pkg $want, this is $ver;
  the base commit id will differ and the series may not apply cleanly." >&2
fi
echo "get-base: unpacking $what ($pkg $ver) into $tree"
mkdir -p "$tmp/src"
tar -C "$tmp/src" -xf "$tarball"
rm -rf "$tmp/deb"
# The top directory: linux-source-X.Y (Debian's), else the only one there is.
topdir=$tmp/src/$pkg
if [ ! -d "$topdir" ]; then
	mapfile -t dirs < <(find "$tmp/src" -mindepth 1 -maxdepth 1)
	if [ ${#dirs[@]} != 1 ] || [ ! -d "${dirs[0]}" ]; then
		die "$tarball has no single top directory ($pkg)"
	fi
	topdir=${dirs[0]}
fi
[ ! -d "$tree" ] || rmdir "$tree"
mkdir -p "$(dirname "$tree")"
mv "$topdir" "$tree"
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
want=$(sed -n 's/^base-commit: //p' "$patches/BASE" 2>/dev/null || true)
[ -z "$want" ] || [ "$want" = "$(gitl rev-parse base)" ] ||
	echo "get-base: warning: ${rel}BASE names base-commit $want" >&2
apply_series
