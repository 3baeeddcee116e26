#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build QEMU's TCG plugins (contrib/plugins/) for the installed
# qemu-system-x86_64, from Debian's own source package of exactly that
# version, into build/qemu-plugins/ (once; a second run only checks).
#
#   scripts/qemu-plugins.sh		build (or check) and print the directory
#
# Debian's QEMU accepts -plugin but ships no plugin.  A plugin must be built
# against include/qemu/qemu-plugin.h of the same QEMU version (the API
# version is checked at load time), so the source of the installed
# package's source version ("qemu", dpkg's ${source:Version}, e.g.
# 1:7.2+dfsg-7+deb12u18) is fetched with apt-get source --download-only
# under a private apt configuration in a temporary directory (deb-src
# entries derived from the system's own "deb" entries, the archive keyring;
# nothing of the system's apt state is changed, the temporary directory and
# its index files are removed afterwards) and unpacked with dpkg-source -x,
# Debian's patches applied.  Only the .dsc, the orig tarball and the debian
# tarball are kept (build/qemu-plugins/src/).
#
# Built, each as build/qemu-plugins/libNAME.so:
#   cache	contrib/plugins/cache.c as it is (L1 I/D and L2 model)
#   cs_cache	cache.c with bench/qemu-cache-window.patch: per-instruction
#		L1D/L2 accesses and misses and execution counts, counted
#		only between two marker instructions that the guest executes
#		(scripts/bench-cache.sh, bench/cs_pingpong.c)
#   hotblocks hotpages howvec	as they are (QEMU 7.2 has no contrib mem plugin)
#
# Environment:
#   QEMU_PLUGINS_DIR	output directory (build/qemu-plugins)
#   QEMU_SRC_VERSION	source version to fetch (default: the installed
#			qemu-system-x86's source version)
#   QEMU_PLUGINS_FORCE=1	fetch and build again
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${QEMU_PLUGINS_DIR:-$top/build/qemu-plugins}
# shellcheck source=scripts/apt.sh
. "$top/scripts/apt.sh"
keyring=$apt_keyring
plugins="cache hotblocks hotpages howvec"
patch=$top/bench/qemu-cache-window.patch

die() { echo "qemu-plugins: $*" >&2; exit 1; }
note() { echo "qemu-plugins: $*" >&2; }

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/deps.sh)"
ver=${QEMU_SRC_VERSION:-$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null)}
[ -n "$ver" ] || die "qemu-system-x86 is not installed as a Debian package: no source version"
qemu-system-x86_64 -help | grep -q '^-plugin' || die "this qemu-system-x86_64 has no -plugin option"
for t in gcc pkg-config dpkg-source apt-get; do
	command -v "$t" >/dev/null || die "$t missing: scripts/deps.sh qemu-plugins"
done
pkg-config --exists glib-2.0 || die "glib-2.0 development files missing: scripts/deps.sh qemu-plugins"

mkdir -p "$out"
exec 9>"$out/.lock"
flock -n 9 || { note "waiting for another build in $out"; flock 9; }

# Up to date: the stamp names the version and the patch's checksum.
want="$ver $(sha256sum "$patch" 2>/dev/null | cut -d' ' -f1)"
if [ "${QEMU_PLUGINS_FORCE:-0}" != 1 ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$want" ]; then
	ok=1
	for p in $plugins cs_cache; do [ -f "$out/lib$p.so" ] || ok=0; done
	if [ $ok = 1 ]; then
		echo "$out"
		exit 0
	fi
fi
rm -f "$out/stamp"

# --- the source --------------------------------------------------------------

# deb-src lines for every Debian entry of the system's sources (signed by
# the archive keyring, or at a .../debian or .../debian-security URI), signed
# by the archive keyring: "deb-src [signed-by=K] URI SUITE COMPONENTS".
debsrc_lines() {
	apt_entries | awk -F '\t' -v k="$keyring" '
		($1 == "deb" || $1 == "deb-src") && $2 !~ /^cdrom:/ &&
		($5 ~ /debian-archive-keyring/ || $2 ~ /\/debian(-security)?\/?$/) {
			l = "deb-src [signed-by=" k "] " $2 " " $3 " " ($4 == "" ? "main" : $4)
			if (!seen[l]++) print l
		}'
}

src=$out/src
have_src() {
	local d
	for d in "$src"/qemu-*/; do break; done
	[ -d "$d" ] && [ -f "$d/include/qemu/qemu-plugin.h" ] && [ -f "$d/contrib/plugins/cache.c" ] &&
		[ "$(cat "$src/version" 2>/dev/null)" = "$ver" ] && echo "${d%/}"
}

if ! tree=$(have_src); then
	[ -f "$keyring" ] || die "no $keyring: scripts/deps.sh qemu-plugins"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	apt_private "$tmp" || die "cannot make $tmp"
	debsrc_lines >"$tmp/etc/sources.list"
	[ -s "$tmp/etc/sources.list" ] || die "no Debian entry in the system's apt sources"
	note "fetching the source of qemu $ver (apt-get source, private configuration)"
	apt-get "${apt_opts[@]}" -q update >"$tmp/apt.log" 2>&1 ||
		{ tail -n 20 "$tmp/apt.log" >&2; die "apt-get update (deb-src) failed"; }
	(cd "$tmp/dl" && apt-get "${apt_opts[@]}" -q source --download-only "qemu=$ver") \
		>>"$tmp/apt.log" 2>&1 ||
		{ tail -n 20 "$tmp/apt.log" >&2; die "apt-get source qemu=$ver failed"; }
	for dsc in "$tmp"/dl/qemu_*.dsc; do break; done
	[ -f "$dsc" ] || die "apt-get source wrote no qemu_*.dsc"
	rm -rf "$src"
	mkdir -p "$src"
	note "unpacking $(basename "$dsc") (dpkg-source -x, Debian's patches applied)"
	dpkg-source -q -x "$dsc" "$tmp/x" >>"$tmp/apt.log" 2>&1 ||
		{ tail -n 20 "$tmp/apt.log" >&2; die "dpkg-source -x failed"; }
	mv "$tmp"/dl/qemu_* "$src/"
	# Only what the plugins need is kept of the unpacked tree.
	d=$src/qemu-${ver#*:}
	mkdir -p "$d/include" "$d/contrib"
	cp -a "$tmp/x/include/qemu" "$d/include/"
	cp -a "$tmp/x/contrib/plugins" "$d/contrib/"
	cp -a "$tmp/x/VERSION" "$tmp/x/COPYING" "$d/" 2>/dev/null
	echo "$ver" >"$src/version"
	rm -rf "$tmp"
	trap - EXIT
	tree=$(have_src) || die "the unpacked source lacks include/qemu/qemu-plugin.h or contrib/plugins/cache.c"
fi
note "source: $tree (QEMU $(cat "$tree/VERSION" 2>/dev/null), Debian $ver)"

# --- the plugins -------------------------------------------------------------

read -r -a glib_cflags < <(pkg-config --cflags glib-2.0)
read -r -a glib_libs < <(pkg-config --libs glib-2.0)
build() {
	local name=$1 c=$2

	gcc -O2 -g -Wall -fPIC -shared "${glib_cflags[@]}" -I"$tree/include/qemu" \
		-o "$out/lib$name.so.tmp" "$c" "${glib_libs[@]}" >"$out/lib$name.log" 2>&1 ||
		{ cat "$out/lib$name.log" >&2; die "lib$name.so did not build"; }
	mv "$out/lib$name.so.tmp" "$out/lib$name.so"
}
for p in $plugins; do
	[ -f "$tree/contrib/plugins/$p.c" ] || die "no contrib/plugins/$p.c in $tree"
	build "$p" "$tree/contrib/plugins/$p.c"
done
[ -f "$patch" ] || die "no $patch"
cp "$tree/contrib/plugins/cache.c" "$out/cs_cache.c"
patch -s -d "$out" -p1 --no-backup-if-mismatch <"$patch" ||
	die "bench/qemu-cache-window.patch does not apply to cache.c of $ver"
build cs_cache "$out/cs_cache.c"

# Loads in this QEMU (the API version matches)?  A plugin that loads leaves
# QEMU running (no machine): the timeout ends it, status 124.
for p in cache cs_cache; do
	o=$(timeout 5 qemu-system-x86_64 -nodefaults -display none -M none -accel tcg \
		-plugin "$out/lib$p.so" -monitor none </dev/null 2>&1)
	rc=$?
	[ $rc = 124 ] || { echo "$o" >&2; die "lib$p.so does not load into qemu-system-x86_64 (status $rc)"; }
done
echo "$want" >"$out/stamp"
note "built in $out: $(cd "$out" && echo lib*.so)"
echo "$out"
