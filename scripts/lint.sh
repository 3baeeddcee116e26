#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint: the static checks of the series.  Last line: "N passed, N failed".
#
#  - checkpatch.pl --strict on every patch of patches/ (not the cover letter)
#  - shellcheck on the project's shell scripts
#  - MAINTAINERS: the entry the series adds equals MAINTAINERS-snippet
#    (BASE=6.12: MAINTAINERS-snippet-6.12), and get_maintainer.pl names it
#    for every file the series adds
#  - kernel-doc -none -Wall on the .c/.h files the series adds
#  - make htmldocs SPHINXDIRS=<the directories of the .rst files it adds>:
#    no warning about our files (without Sphinx: rst2html, docutils alone)
#  - reader-loop: the thread page's reader loop of the UAPI header's top
#    comment is written out line for line in coarse_stat.rst and in
#    man/man7/coarse_stat.7 ('scripts/lint.sh reader-loop' runs only this
#    check; LINUX= and MAN_DIR= point it at other copies)
#  - sparse (C=1) and W=1 on the kernel objects of the .c files the series
#    adds (no finding allowed) and changes (no finding that the same object
#    does not have at base: warnings are compared without line numbers);
#    the arm64 objects it adds, with the generic ones, once more with the
#    cross compiler and the arm64 guest's config
#
# The tree checked is linux/ as it is: base..coarse-stat plus uncommitted
# and untracked files; BASE=6.12 (scripts/base.sh): linux-6.12/ and
# backports/6.12/, and every build/ below is build/6.12/ ($BUILD_ROOT), so
# the two bases have their own base trees and cached base findings.  The
# build checks configure their own output directories like 'make kernel'
# (scripts/build-kernel.sh), so they need neither build/linux nor its lock:
#   build/lint/out             the series (single objects, C=1 W=1)
#   build/lint/base/linux      base, unpacked with git archive (once)
#   build/lint/base/out        its objects; their findings are cached
#   build/lint/htmldocs        the Sphinx output
# Times on 2 busy cores: ~3 min; the first run ~10-14 min (base unpacked and
# built, Sphinx reads all of userspace-api).
# LINT_BUILD=0 skips sparse/W=1, LINT_HTMLDOCS=0 skips Sphinx.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
src=$(realpath -m "${LINUX:-$base_tree}")
patches=$(realpath -m "${PATCHES:-$base_patches}")
lint=$BUILD_ROOT/lint
# The MAINTAINERS entry the series adds: its paths differ between the bases.
snippet=$top/MAINTAINERS-snippet
[ "$BASE" = 7.3 ] || snippet=$top/MAINTAINERS-snippet-$BASE

# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"

note() { echo "lint: $*"; }

# Read-only git on the kernel tree (no index refresh written).
g() { git --no-optional-locks -C "$src" "$@"; }

# --- reader loop ----------------------------------------------------------
# The raw reader loop of the thread page (from "do {" to its "} while" line)
# is written out three times: in the top comment of the UAPI header, the
# reference, in the rst, and in coarse_stat.7.  They must be the same lines
# in the same order.
reader_loop_end='} while ((seq & 1) || seq != READ_ONCE(page->seq));'

# reader_loop FILE c|rst|man: the first block of FILE from a "do {" line to
# the loop's "} while" line, as plain text: without a comment's " *" prefix
# (c) or the man escapes (man), each leading tab as four spaces, less the
# indentation of the "do {" line.  Nothing if FILE has no such block.
reader_loop() {
	END=$reader_loop_end perl -ne '
		BEGIN { $kind = shift @ARGV; $end = $ENV{END} }
		chomp;
		s/^ \*(?=\t| |$)// if $kind eq "c";
		if ($kind eq "man") {
			s/\\\(aq/\x27/g; s/\\\(dq/"/g; s/\\\(ti/~/g; s/\\\(ha/^/g;
			s/\\\(rs/\\/g; s/\\-/-/g; s/\\&//g; s/\\e/\\/g;
		}
		1 while s/^( *)\t/$1    /;
		s/\s+$//;
		(my $t = $_) =~ s/^\s+//;
		if ($t eq "do {") { @b = (); ($ind) = /^( *)/; $in = 1 }
		next unless $in;
		s/^$ind//;
		push @b, $_;
		if ($t eq $end) { print "$_\n" for @b; exit }' "$2" "$1"
}

# reader_loop_check: one result, the copies compared with the header's.
reader_loop_check() {
	local h=include/uapi/linux/coarse_stat.h r=Documentation/userspace-api/coarse_stat.rst
	local m=${MAN_DIR:-$top/man}/man7/coarse_stat.7 ref out f rc=0

	# Both series are v4: the backport's header and rst carry the same loop
	# as the 7.3 series and the man pages.
	ref=$(reader_loop "$src/$h" c)
	if [ -z "$ref" ]; then
		echo "lint: no reader loop (\"do {\" ... \"$reader_loop_end\") in $src/$h"
		rc=1
	else
		for f in "$src/$r:rst" "$m:man"; do
			out=$(reader_loop "${f%:*}" "${f##*:}")
			[ -n "$out" ] || { echo "lint: no reader loop in ${f%:*}"; rc=1; continue; }
			diff -u --label "$h" --label "${f%:*}" <(echo "$ref") <(echo "$out") || rc=1
		done
	fi
	result "reader-loop: the reader loop of $h is the same in ${r##*/} and ${m##*/}" $rc
}

if [ "${1:-}" = reader-loop ]; then
	reader_loop_check
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
fi

[ -x "$src/scripts/checkpatch.pl" ] || { echo "lint: no $src/scripts/checkpatch.pl (make linux$base_make)" >&2; exit 1; }
g rev-parse -q --verify base >/dev/null || { echo "lint: $src has no 'base' tag" >&2; exit 1; }
mkdir -p "$lint"
exec 9>"$lint/.lock"
flock -n 9 || { note "waiting for another 'make lint'"; flock 9; }
start=$SECONDS

# The files the series adds and changes: committed, uncommitted, untracked.
added=$({ g diff --name-only --no-renames --diff-filter=A base; g ls-files --others --exclude-standard; } | sort -u)
changed=$(g diff --name-only --no-renames --diff-filter=M base | sort -u)
# added_match GLOB...: the added files matching one of the globs.
added_match() {
	local f p
	for f in $added; do
		for p in "$@"; do
			# shellcheck disable=SC2053
			[[ $f == $p ]] && { echo "$f"; break; }
		done
	done
}

# --- checkpatch -----------------------------------------------------------
# One checkpatch per CPU (the large patches take most of the time).
# scripts/checkpatch.sh judges FILE_PATH_CHANGES against the MAINTAINERS
# lines of the earlier patches.
mapfile -t plist < <(sed -e '/^#/d' -e '/^$/d' "$patches/series" 2>/dev/null)
cpd=$lint/checkpatch
rm -rf "$cpd"
mkdir -p "$cpd"
earlier=()
for p in "${plist[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
	{
		"$top/scripts/checkpatch.sh" "$src" "$patches/$p" "${earlier[@]}" >"$cpd/$p.out" 2>&1
		echo $? >"$cpd/$p.rc"
	} &
	earlier+=("$patches/$p")
done
wait
for p in "${plist[@]}"; do
	cat "$cpd/$p.out"
	result "checkpatch --strict $p" "$(cat "$cpd/$p.rc")"
done
[ ${#plist[@]} -gt 0 ] || note "patches/series is empty: no patches to check"

# --- a series a maintainer reads in one sitting ---------------------------
# No patch over 1,500 lines, and a cover letter whose text (from the line
# after its Subject to the shortlog) is at most 150 lines; both bases (the
# 6.12 backport is v5 too).
long=$(for p in "${plist[@]}"; do
	n=$(wc -l <"$patches/$p")
	[ "$n" -le 1500 ] || echo "  $p: $n lines"
done)
[ -z "$long" ] || echo "lint: patches over 1,500 lines:"$'\n'"$long"
[ -z "$long" ]
result "no patch of the ${#plist[@]} over 1,500 lines" $?
cover=$patches/0000-cover-letter.patch
if [ -f "$cover" ]; then
	# the lines between the blank line after the headers and the one
	# before the shortlog
	n=$(awk '/^Subject:/ { s = 1; next } s && /^coarse_stat developers \([0-9]+\):$/ { exit }
		 s { n++ } END { print n - 2 }' "$cover")
	[ "$n" -le 150 ]
	result "the cover letter's text is $n lines (at most 150)" $?
fi
# The selftests the series adds, net (all their files are new): at
# most 10,000 lines.
n=$(for p in "${plist[@]}"; do cat "$patches/$p"; done | awk '
	/^From [0-9a-f]+ / || /^-- $/ { t = 0; next }
	/^diff --git / { t = ($3 ~ /^a\/tools\/testing\/selftests\/coarse_stat\//); next }
	/^(\+\+\+|---) / { next }
	t && /^\+/ { n++ } t && /^-/ { n-- }
	END { print n + 0 }')
[ "$n" -le 10000 ]
result "the series' selftests are $n lines (at most 10,000)" $?

# --- shellcheck -----------------------------------------------------------
if command -v shellcheck >/dev/null; then
	for s in "$top"/scripts/*.sh "$top"/selftests/*.sh "$top"/.ci/run; do
		[ -f "$s" ] || continue
		shellcheck -x -S warning "$s"
		result "shellcheck ${s#"$top"/}" $?
	done
else
	note "shellcheck not installed: shell scripts not checked (apt-get install shellcheck)"
fi

# --- MAINTAINERS ----------------------------------------------------------
# The MAINTAINERS entry the series adds and MAINTAINERS-snippet are the same text.
sed -n '/^COARSE_STAT (/,/^$/p' "$src/MAINTAINERS" | sed '/^$/d' | diff -u - "$snippet"
result "${snippet##*/} matches the series" $?

# Its F: lines cover every file the series adds for coarse_stat.  The files
# the timekeeping patch adds belong to timekeeping and the vDSO: each must
# have a maintainer there (that patch adds its header to GENERIC VDSO
# LIBRARY), not in our entry.
entry=$(head -n 1 "$snippet")
tk=$(g log --format= --name-only --diff-filter=A --grep='^timekeeping: ' base..HEAD | sort -u)
ours=$(comm -23 <(echo "$added" | sed '/^$/d') <(echo "$tk" | sed '/^$/d'))
uncovered=$(for f in $ours; do echo "$f"; done |
	(cd "$src" && xargs -r -P "$(nproc)" -I{} sh -c \
		'scripts/get_maintainer.pl --no-git --no-git-fallback -f "$1" 2>/dev/null |
		 grep -qF "(maintainer:$2)" || echo "$1"' sh {} "$entry") | sort)
if [ -n "$uncovered" ]; then
	echo "lint: files not covered by the F: lines of '$entry':"
	echo "$uncovered" | sed 's/^/  /'
fi
[ -z "$uncovered" ]
rc=$?
result "MAINTAINERS $entry covers the $(echo "$ours" | grep -c .) files the series adds for coarse_stat" $rc
if [ -n "$tk" ]; then
	orphans=$(for f in $tk; do
		(cd "$src" && scripts/get_maintainer.pl --no-git --no-git-fallback -f "$f" 2>/dev/null) |
			grep -v -F "(maintainer:$entry)" | grep -q "(maintainer:" || echo "$f"
	done)
	[ -z "$orphans" ] || echo "lint: the timekeeping patch's files without a maintainer outside '$entry':"$'\n'"$orphans"
	[ -z "$orphans" ]
	result "the $(echo "$tk" | grep -c .) files of the timekeeping patch have their subsystems' maintainers" $?
fi

# --- kernel-doc -----------------------------------------------------------
docs=$(added_match '*.c' '*.h')
if [ -n "$docs" ]; then
	# shellcheck disable=SC2086
	out_kd=$(cd "$src" && scripts/kernel-doc -none -Wall $docs 2>&1)
	[ -z "$out_kd" ] || echo "$out_kd"
	[ -z "$out_kd" ]
	rc=$?
	result "kernel-doc -Wall on the $(echo "$docs" | wc -l) added .c/.h files" $rc
fi

# --- rst ------------------------------------------------------------------
rsts=$(added_match '*.rst')
sphinx=0
[ "${LINT_HTMLDOCS:-1}" != 0 ] && command -v sphinx-build >/dev/null && sphinx=1
if [ "$sphinx" = 1 ]; then
	: # make htmldocs below reads them with the kernel's roles and directives
elif command -v rst2html >/dev/null; then
	# Without Sphinx: docutils alone, less the kernel's directives
	# (kernel-doc, ...), which it does not know.  Sphinx roles (:ref:,
	# :c:func:, ...) fail here: install python3-sphinx.
	for r in $rsts; do
		perl -ne 'if (/^\s*\.\. (kernel-doc|kernel-include|kernel-feat|kernel-abi|maintainers-include)::/) {
				$skip = 1; print "\n"; next }
			if ($skip && /^\s+\S/) { print "\n"; next }
			$skip = 0; print' "$src/$r" >"$lint/rst.tmp"
		mkdir -p "$lint/rst/${r%/*}"
		mv "$lint/rst.tmp" "$lint/rst/$r"
		rst2html --halt=warning "$lint/rst/$r" >/dev/null
		result "rst2html $r" $?
	done
else
	note "rst2html not installed: rst not checked (apt-get install python3-docutils)"
fi

# --- htmldocs -------------------------------------------------------------
# Sphinx rebuilds only what changed and repeats no warning of an unchanged
# document: drop the doctrees of ours so that they are read again.
if [ "${LINT_HTMLDOCS:-1}" = 0 ] || [ -z "$rsts" ]; then
	:
elif ! command -v sphinx-build >/dev/null; then
	note "sphinx-build not installed: htmldocs not checked (apt-get install python3-sphinx)"
else
	dirs=$(echo "$rsts" | sed -n 's|^Documentation/\([^/]*\)/.*|\1|p' | sort -u | xargs)
	if [ -z "$dirs" ]; then
		note "no added .rst below Documentation/<dir>/: htmldocs not checked"
	else
		hd=$lint/htmldocs
		for r in $rsts; do
			d=${r#Documentation/}
			rm -f "$hd/Documentation/output/.doctrees/${d%.rst}.doctree" \
			      "$hd/Documentation/output/.doctrees/${d#*/}"
			find "$hd" -name "$(basename "${d%.rst}").doctree" -delete 2>/dev/null
		done
		t=$SECONDS
		nice -n 10 make -j"$(nproc)" -C "$src" O="$hd" SPHINXDIRS="$dirs" htmldocs >"$lint/htmldocs.log" 2>&1
		rc=$?
		# About our files: the added files' paths, the documents' names.
		{ echo coarse_stat; echo "$added"; echo "$rsts" | sed 's/\.rst$//'; } >"$lint/htmldocs.names"
		finds=$(grep -E 'WARNING|ERROR|SEVERE|CRITICAL|[Ww]arning:|[Ee]rror:' "$lint/htmldocs.log" |
			grep -F -f "$lint/htmldocs.names")
		[ -z "$finds" ] || echo "$finds"
		for r in $rsts; do
			h=${r#Documentation/}
			case "$h" in
			*/*) [ -f "$hd/Documentation/output/${h%.rst}.html" ] ||
				{ echo "lint: no $hd/Documentation/output/${h%.rst}.html"; rc=1; } ;;
			esac
		done
		[ "$rc" = 0 ] || tail -n 20 "$lint/htmldocs.log"
		[ "$rc" = 0 ] && [ -z "$finds" ]
		rc=$?
		result "make htmldocs SPHINXDIRS=\"$dirs\": no warning about our files ($((SECONDS - t)) s)" $rc
	fi
fi

# --- reader loop ----------------------------------------------------------
reader_loop_check

# --- sparse and W=1 -------------------------------------------------------
# The kernel objects of C files: those that a Makefile in their directory
# names (not the ones only #included, like lib/vdso/*.c).
objects() {
	local f d o
	for f in "$@"; do
		case "$f" in
		*.c) ;;
		*) continue ;;
		esac
		case "$f" in
		tools/*|samples/*|scripts/*|usr/*|Documentation/*) continue ;;
		arch/*) [[ "$f" == arch/"$lint_arch"/* ]] || continue ;;
		esac
		d=${f%/*}
		o=${f##*/}
		o=${o%.c}.o
		if grep -qsw -- "$o" "$src/$d/Makefile" "$src/$d/Kbuild"; then
			echo "$d/$o"
		else
			echo "lint: $f: no Makefile builds $o; checked where it is #included" >&2
		fi
	done
}

# build SRC OUT LOG ALLOW_MISSING_CONFIG OBJECT...: configure OUT like 'make
# kernel' and rebuild the objects with sparse and W=1.  ccache replays the
# compiler's warnings of an unchanged object.
build() {
	local s=$1 o=$2 log=$3 allow=$4 x
	shift 4
	for x in "$@"; do rm -f "$o/$x"; done
	local a=()

	[ -z "${build_arch:-}" ] || a=(ARCH="$build_arch")
	env "${a[@]}" LINUX="$s" KBUILD="$o" ALLOW_MISSING_CONFIG="$allow" KTARGETS="$*" \
		KMAKEFLAGS="C=1 W=1" nice -n 10 "$top/scripts/build-kernel.sh" debug >"$log" 2>&1
}

# no_findings WHAT OUT LOG OBJECT...: build the objects of linux/ in OUT (for
# $build_arch), with no finding allowed.
no_findings() {
	local what=$1 out=$2 log=$3 t=$SECONDS rc
	shift 3
	mkdir -p "$out"
	build "$src" "$out" "$log" "" "$@"
	rc=$?
	# Findings in the series' files only: building an object can build
	# others of base beside it (the arm64 vDSO directory, for one).
	# shellcheck disable=SC2086
	findings "$log" "$src" "$out" |
		awk -v files="$added $changed" 'BEGIN { n = split(files, f, /[ \n]+/); for (i = 1; i <= n; i++) ours[f[i]] = 1 }
			{ p = $0; sub(/:.*/, "", p) } p in ours' >"$log.findings"
	[ "$rc" = 0 ] || { tail -n 30 "$log"; echo "lint: build failed, see $log"; }
	cat "$log.findings"
	[ "$rc" = 0 ] && [ ! -s "$log.findings" ]
	result "$what: no finding in $* ($((SECONDS - t)) s)" $?
}

# findings LOG TREE OUT: the compiler's and sparse's warnings and errors,
# paths relative to TREE (or OUT for objects).  ccache makes gcc's paths
# relative to OUT, sparse's are absolute.
findings() {
	perl -MFile::Spec -MCwd=abs_path -ne '
		BEGIN { ($t, $o) = splice(@ARGV, 0, 2) }
		next unless /(warning|error): /;
		next if /^make(\[\d+\])?: /;
		if (/^([^:\s]+)(:.*)$/s) {
			my ($p, $r) = ($1, $2);
			$p = File::Spec->catfile($o, $p) unless File::Spec->file_name_is_absolute($p);
			my $a = abs_path($p);
			$p = $a if defined $a;
			$p =~ s/^\Q$t\E\/// or $p =~ s/^\Q$o\E\///;
			$_ = "$p$r";
		}
		print' "$2" "$3" "$1"
}

# new_findings BASE SERIES: the lines of SERIES that BASE does not have as
# often, comparing file and message without line and column.
new_findings() {
	perl -e '
		sub key { my $k = shift; $k =~ s/:\d+:\d+:/:/; $k =~ s/:\d+:/:/;
			$k =~ s/\+0x[0-9a-f]+(\/0x[0-9a-f]+)?//g; return $k; }
		open(B, "<", $ARGV[0]) or die; while (<B>) { $n{key($_)}++ } close(B);
		open(S, "<", $ARGV[1]) or die;
		while (<S>) { my $k = key($_); if ($n{$k}) { $n{$k}-- } else { print } }' "$1" "$2"
}

if [ "${LINT_BUILD:-1}" = 0 ]; then
	note "LINT_BUILD=0: sparse and W=1 skipped"
elif ! command -v sparse >/dev/null; then
	note "sparse not installed: sparse and W=1 not checked (apt-get install sparse)"
	result "sparse installed" 1
else
	lint_arch=x86
	# shellcheck disable=SC2086
	new_objs=$(objects $added)
	# shellcheck disable=SC2086
	old_objs=$(objects $changed)
	lout=$lint/out
	mkdir -p "$lout"

	# shellcheck disable=SC2086
	[ -z "$new_objs" ] || no_findings "sparse and W=1" "$lout" "$lint/new.log" $new_objs

	if [ -n "$old_objs" ]; then
		t=$SECONDS
		bsrc=$lint/base/linux
		bout=$lint/base/out
		bsha=$(g rev-parse base)
		if [ "$(cat "$bsrc/.lint-base" 2>/dev/null)" != "$bsha" ]; then
			note "unpacking base ($bsha) into $bsrc for the base findings (once)"
			rm -rf "$bsrc" "$bout" "$lint"/base/findings-*
			mkdir -p "$bsrc"
			g archive --format=tar base | tar -C "$bsrc" -xf - && echo "$bsha" >"$bsrc/.lint-base"
		fi
		# The base findings of these objects are kept while the objects,
		# the config fragments, the compiler and sparse stay the same.
		key=$({ echo findings-v2 $old_objs; cat "$top"/scripts/*.config; gcc --version; sparse --version; } |
			sha1sum | cut -c1-40)
		cache=$lint/base/findings-$key
		rc=0
		if [ ! -f "$cache" ]; then
			note "building $(echo $old_objs) at base for their findings (once)"
			mkdir -p "$bout"
			# shellcheck disable=SC2086
			if build "$bsrc" "$bout" "$lint/base.log" 1 $old_objs; then
				findings "$lint/base.log" "$bsrc" "$bout" >"$cache.tmp" && mv "$cache.tmp" "$cache"
			else
				rc=1
				tail -n 30 "$lint/base.log"
				echo "lint: the base build failed, see $lint/base.log"
			fi
		fi
		# shellcheck disable=SC2086
		build "$src" "$lout" "$lint/old.log" "" $old_objs || { rc=1; tail -n 30 "$lint/old.log"; }
		findings "$lint/old.log" "$src" "$lout" >"$lint/old.findings"
		cp "$cache" "$lint/base.all" 2>/dev/null || : >"$lint/base.all"
		new_findings "$lint/base.all" "$lint/old.findings" >"$lint/old.new"
		cat "$lint/old.new"
		[ "$rc" = 0 ] && [ ! -s "$lint/old.new" ]
		rc=$?
		result "sparse and W=1: no finding in $(echo $old_objs) that base does not have ($((SECONDS - t)) s)" $rc
	fi

	# arm64: the objects the series adds there and the generic ones, built
	# with the cross compiler and the arm64 guest's config.
	lint_arch=arm64
	# shellcheck disable=SC2086
	arm_objs=$(objects $added 2>/dev/null)
	if [[ "$arm_objs" != *arch/arm64/* ]]; then
		:
	elif ! command -v aarch64-linux-gnu-gcc >/dev/null; then
		note "no aarch64-linux-gnu-gcc: the arm64 objects are not built (ARCH=arm64 scripts/deps.sh)"
		result "arm64 cross compiler installed for sparse and W=1" 1
	else
		build_arch=arm64
		# shellcheck disable=SC2086
		no_findings "sparse and W=1 on arm64" "$lint/out-arm64" "$lint/arm64.log" $arm_objs
		build_arch=
	fi
fi

# --- man pages (scripts/man.sh) -------------------------------------------
# The checks of 'make man' on man/ (the edits of man/edits/ only when the
# man-pages base can be had: a note otherwise).
# shellcheck source=scripts/man.sh
. "$top/scripts/man.sh"
man_checks optional

echo "lint: $((SECONDS - start)) s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
