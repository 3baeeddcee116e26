#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The man pages of the series, in the Linux man-pages project's format
# (man/, the source of truth):
#   man/man2const/PR_COARSE_STAT.2const   prctl(PR_COARSE_STAT, ...)
#   man/man7/coarse_stat.7                the pages and the vDSO functions
#   man/edits/prctl.2.sed                 PR_COARSE_STAT in prctl(2)'s list
#   man/edits/vdso.7.sed                  the vDSO functions in vdso(7)
#
#   scripts/man.sh [check]   make man: render and lint every page
#   scripts/man.sh series    make man-series: the series for the man-pages list
#   . scripts/man.sh         (scripts/lint.sh) defines man_checks, which adds
#                            the checks of 'make man' to the caller's results
#
# check: every page of man/ (with "(date)" in .TH replaced by the page's
# date, as man-pages' build does) is rendered with 'man -l' into
# build/man/txt/ (fails on a page that does not render or warns) and linted
# with 'mandoc -Tlint -Wwarning' and 'groff -man -t -ww -z', no finding
# allowed; man-pages' conventions checked as well: no trailing white space, no
# blank line, one sentence per line (semantic newlines), the .TH form of an
# unreleased page, the order of the sections (man-pages(7)).  The edits of
# man/edits/ are applied to the prctl.2 and vdso.7 of the man-pages base
# (below): each must change its page, and the result must have no lint
# finding that the unedited page does not have.
#
# series: build/man/man-pages/ is a git repository with the newest man-pages
# release that Debian's registry gives (the pages of the manpages and
# manpages-dev .debs, laid out as man-pages' git tree: man/man2const/ for the
# *.2const pages, Debian's symlinks as .so links), committed as tag 'base',
# then one commit per change; git format-patch --cover-letter writes the
# mails to build/man/series/; they must apply with 'git am' to base.
#
# The .debs are downloaded once into build/man/apt/dl/ with an apt
# configuration of its own in build/man/apt/ (as scripts/get-base.sh does;
# the system's apt sources are not touched), from the Debian mirror of the
# system's sources that scripts/get-base.sh uses (scripts/apt.sh) or
# GET_BASE_MIRROR, suites $MAN_SUITES; apt picks the newest version.  rm -rf build/man/apt/dl for a newer release.
#
# Environment: MAN_DIR (the pages, default man/: a broken copy shows that
# the checks fail), MAN_SUITES (default "unstable testing trixie-backports
# trixie"), GET_BASE_MIRROR (a Debian mirror URI), MAN_SENDER (the From: of
# the series, default the project identity).  Last line "N passed, N failed".
set -uo pipefail

man_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
man_src=$(realpath -m "${MAN_DIR:-$man_top/man}")
man_out=$man_top/build/man
man_apt=$man_out/apt
man_sender=${MAN_SENDER:-coarse_stat developers <coarse-stat@example.org>}
man_to="Alejandro Colomar <alx@kernel.org>"
man_cc=(linux-man@vger.kernel.org linux-api@vger.kernel.org)

# shellcheck source=scripts/tap.sh
[ "$(type -t result)" = function ] || . "$man_top/scripts/tap.sh"
# shellcheck source=scripts/apt.sh
. "$man_top/scripts/apt.sh"

man_note() { echo "man: $*"; }

# The pages of man/ (not the edits), relative to man/.
man_pages() { (cd "$man_src" && find man* -type f | sort); }

# man_date FILE: the page's date for .TH: its last commit in the project,
# else its modification time.
man_date() {
	local d

	d=$(git --no-optional-locks -C "$man_top" log -1 --format=%cs -- "$1" 2>/dev/null)
	[ -n "$d" ] || d=$(date -u -r "$1" +%F)
	echo "$d"
}

# man_pre SRC DST: the page as man-pages' build makes it: (date) replaced.
man_pre() {
	mkdir -p "$(dirname "$2")"
	sed "/^\.TH /s/(date)/$(man_date "$1")/" "$1" >"$2"
}

# man_lint FILE: mandoc's and groff's findings (empty: none).
man_lint() {
	local out rc

	# (the file's path as its name: base and edited pages compare)
	out=$(mandoc -Tlint -Wwarning "$1" 2>&1)
	rc=$?
	[ -z "$out" ] || echo "${out//"$1"/${1##*/}}"
	[ "$rc" = 0 ] || [ -n "$out" ] || echo "mandoc: ${1##*/}: exit status $rc"
	groff -man -t -ww -z -Tutf8 "$1" 2>&1 | sed "s|$1|${1##*/}|g; s|^|groff: |"
}

# man_unplace: lint findings without line, column and page position, sorted.
man_unplace() {
	sed -E 's/:[0-9]+:[0-9]+:/:/; s/:[0-9]+:/:/; s/ \[p [0-9]+, [0-9.]+i\]//' | sort
}

# man_render FILE TXT [any]: 'man -l' to text; a warning of groff fails
# unless "any" (the edited pages: their warnings are compared below).
man_render() {
	local err rc

	err=$(MANWIDTH=80 MAN_KEEP_FORMATTING="" MANPAGER=cat PAGER=cat LC_ALL=C.UTF-8 \
		man --warnings=w -l "$1" 2>&1 >"$2")
	rc=$?
	[ -z "$err" ] || [ "${3:-}" = any ] || echo "$err"
	[ "$rc" = 0 ] && { [ -z "$err" ] || [ "${3:-}" = any ]; } && [ -s "$2" ]
}

# man_conventions FILE NAME: man-pages' conventions that are cheap to check.
man_conventions() {
	perl -e '
		my ($f, $name) = @ARGV;
		open(my $fh, "<", $f) or die "$f: $!\n";
		my @l = <$fh>;
		my ($bad, $nofill) = (0, 0);
		sub bad { print "$name:$_[0]: $_[1]\n"; $bad = 1; }
		my ($title, $sec) = $name =~ /^(.*)\.([^.]+)$/;
		my @order = ("NAME", "LIBRARY", "SYNOPSIS", "CONFIGURATION", "DESCRIPTION",
			"OPTIONS", "EXIT STATUS", "RETURN VALUE", "ERRORS", "ENVIRONMENT",
			"FILES", "ATTRIBUTES", "VERSIONS", "STANDARDS", "HISTORY", "NOTES",
			"CAVEATS", "BUGS", "EXAMPLES", "AUTHORS", "REPORTING BUGS",
			"COPYRIGHT", "SEE ALSO");
		my %rank = map { $order[$_] => $_ } 0 .. $#order;
		my (@secs, $th);
		for my $i (0 .. $#l) {
			my $s = $l[$i];
			my $n = $i + 1;
			chomp $s;
			bad($n, "trailing white space") if $s =~ /[ \t]$/;
			bad($n, "blank line") if $s eq "";
			$nofill = 1 if $s =~ /^\.(nf|EX)\b/;
			$nofill = 0 if $s =~ /^\.(fi|EE)\b/;
			$th = $s if !defined $th && $s =~ /^\.TH /;
			push @secs, [$1, $n] if $s =~ /^\.SH "?([^"]*?)"?$/;
			next if $nofill || $s =~ /^[.\x27]/;
			# Semantic newlines: a sentence ends its line.
			bad($n, "a new sentence starts in mid line (semantic newlines)")
				if $s =~ /[a-z0-9)][.!?]\)?  ?[A-Z]/;
		}
		my $want = ".TH $title $sec (date) \"Linux man-pages (unreleased)\"";
		bad(1, "want \"$want\", not \"" . ($th // "") . "\"")
			unless defined $th && $th eq $want;
		my $last = -1;
		for my $s (@secs) {
			my ($t, $n) = @$s;
			if (!exists $rank{$t}) { bad($n, "section \"$t\" is not one of man-pages(7)"); next; }
			bad($n, "section \"$t\" out of the order of man-pages(7)") if $rank{$t} <= $last;
			$last = $rank{$t};
		}
		my %have = map { $_->[0] => 1 } @secs;
		my @need = ("NAME", "DESCRIPTION", "STANDARDS", "HISTORY", "SEE ALSO");
		push @need, "LIBRARY", "SYNOPSIS", "RETURN VALUE", "ERRORS" if $sec =~ /^2/;
		for (@need) { bad(0, "no section \"$_\"") unless $have{$_}; }
		exit $bad;' "$1" "$2"
}

# --- the man-pages base ---------------------------------------------------
# man_debs: the manpages and manpages-dev .debs of build/man/apt/dl,
# downloaded when missing.  Prints their paths.
man_debs() {
	local p f mirror log=$man_apt/apt.log keyring=$apt_keyring s
	local -a apt_opts

	for p in manpages manpages-dev; do
		f=$(find "$man_apt/dl" -maxdepth 1 -name "${p}_*_all.deb" 2>/dev/null | sort -V | tail -n 1)
		[ -n "$f" ] || break
	done
	if [ -z "$f" ]; then
		mirror=${GET_BASE_MIRROR:-}
		[ -n "$mirror" ] || IFS=$'\t' read -r mirror _ < <(debian_mirror) ||
			{ echo "man: no Debian mirror in the system's apt sources: set GET_BASE_MIRROR=URI" >&2; return 1; }
		[ -f "$keyring" ] || { echo "man: no $keyring (apt-get install debian-archive-keyring)" >&2; return 1; }
		apt_private "$man_apt" || return 1
		for s in ${MAN_SUITES:-unstable testing trixie-backports trixie}; do
			printf 'deb [signed-by=%s] %s %s main\n' "$keyring" "$mirror" "$s"
		done >"$man_apt/etc/sources.list"
		echo "man: downloading manpages and manpages-dev (suites ${MAN_SUITES:-unstable testing trixie-backports trixie}; apt configuration in ${man_apt#"$man_top"/})" >&2
		: >"$log"
		apt-get "${apt_opts[@]}" -q update >>"$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; echo "man: apt-get update failed (log: $log)" >&2; return 1; }
		rm -rf "$man_apt/dl.tmp"
		mkdir -p "$man_apt/dl.tmp"
		(cd "$man_apt/dl.tmp" && apt-get "${apt_opts[@]}" -q download manpages manpages-dev) >>"$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; echo "man: apt-get download failed (log: $log)" >&2; return 1; }
		mv "$man_apt"/dl.tmp/*.deb "$man_apt/dl/" && rmdir "$man_apt/dl.tmp" || return 1
	fi
	for p in manpages manpages-dev; do
		find "$man_apt/dl" -maxdepth 1 -name "${p}_*_all.deb" | sort -V | tail -n 1
	done
}

# man_base: build/man/base/ holds the release's pages in man-pages' git
# layout (man/manN/, man/man2const/, ...), made once from the .debs; prints
# the version ("6.20-2").
man_base() {
	local debs base=$man_out/base ver tmp f rel name suf t

	mapfile -t debs < <(man_debs) || return 1
	[ ${#debs[@]} = 2 ] && [ -f "${debs[0]}" ] && [ -f "${debs[1]}" ] || return 1
	ver=$(dpkg-deb -f "${debs[0]}" Version)
	if [ "$(cat "$base/.version" 2>/dev/null)" != "$ver" ]; then
		rm -rf "$base" "$base.tmp"
		tmp=$base.tmp
		mkdir -p "$tmp/deb" "$tmp/tree/man"
		for f in "${debs[@]}"; do dpkg-deb -x "$f" "$tmp/deb" || return 1; done
		# manN/NAME.SUFFIX.gz -> man/manSUFFIX/NAME.SUFFIX; a symlink
		# becomes a .so link, as in man-pages' tree.
		while read -r f; do
			rel=${f#"$tmp"/deb/usr/share/man/}
			name=${rel##*/}
			name=${name%.gz}
			suf=${name##*.}
			mkdir -p "$tmp/tree/man/man$suf"
			if [ -L "$f" ]; then
				t=$(readlink "$f")
				t=${t##*/}
				t=${t%.gz}
				echo ".so man${t##*.}/$t" >"$tmp/tree/man/man$suf/$name"
			else
				zcat "$f" >"$tmp/tree/man/man$suf/$name" || return 1
			fi
		done < <(find "$tmp/deb/usr/share/man" -name '*.gz' \( -type f -o -type l \))
		mv "$tmp/tree" "$base" && rm -rf "$tmp" && echo "$ver" >"$base/.version" || return 1
	fi
	echo "$ver"
}

# man_edit PAGE: the base page with the edit of man/edits/ applied, in
# build/man/edited/; fails when the edit changes nothing.
man_edit() {
	local p=$1 in=$man_out/base/$1 ed=$man_out/edited/$1

	mkdir -p "$(dirname "$ed")"
	sed -f "$man_src/edits/${p##*/}.sed" "$in" >"$ed" || return 1
	! cmp -s "$in" "$ed"
}

# --- the checks -----------------------------------------------------------
# man_checks required|optional: the checks of 'make man'.  With "optional"
# (lint.sh), the edit checks are skipped with a note when the man-pages base
# cannot be had; with "required" that is a failure.
man_checks() {
	local c p pre txt out rc ver e lints

	for c in man mandoc groff; do
		command -v "$c" >/dev/null && continue
		# (scripts/lint.sh: the lint group lacks them; 'make man' did this)
		"$man_top/scripts/deps.sh" man >&2 && command -v "$c" >/dev/null && continue
		man_note "$c not installed (scripts/deps.sh man)"
		result "$c installed" 1
		return
	done
	rm -rf "$man_out/txt" "$man_out/pre"
	mkdir -p "$man_out/txt" "$man_out/pre"
	for p in $(man_pages); do
		pre=$man_out/pre/$p
		txt=$man_out/txt/${p##*/}.txt
		man_pre "$man_src/$p" "$pre"
		man_render "$pre" "$txt"
		rc=$?
		result "man -l renders $p ($(wc -l <"$txt") lines)" $rc
		out=$(man_lint "$pre")
		[ -z "$out" ] || echo "$out"
		[ -z "$out" ]
		result "mandoc -Tlint and groff -ww: no warning in $p" $?
		man_conventions "$man_src/$p" "${p##*/}"
		result "man-pages conventions in $p (white space, semantic newlines, .TH, sections)" $?
	done

	if ! ver=$(man_base); then
		if [ "$1" = optional ]; then
			man_note "no man-pages base (.debs not downloaded): the edits of man/edits/ not checked"
			return
		fi
		result "man-pages base downloaded (build/man/base)" 1
		return
	fi
	for e in "$man_src"/edits/*.sed; do
		e=${e##*/}
		e=${e%.sed}
		p=man/man${e##*.}/$e
		man_edit "$p"
		result "man/edits/$e.sed changes $e of man-pages $ver" $?
		txt=$man_out/txt/$e.txt
		man_render "$man_out/edited/$p" "$txt" any
		rc=$?
		result "man -l renders the edited $e ($(wc -l <"$txt") lines)" $rc
		# New findings only: the release's page may have some (vdso.7
		# has a "cannot adjust line"); compared without line numbers
		# and positions.
		lints=$(diff <(man_lint "$man_out/base/$p" | man_unplace) \
			<(man_lint "$man_out/edited/$p" | man_unplace) | sed -n 's/^> //p')
		[ -z "$lints" ] || echo "$lints"
		[ -z "$lints" ]
		result "mandoc -Tlint and groff -ww: no new warning in the edited $e" $?
	done
}

# --- the series -----------------------------------------------------------
man_series() {
	local ver repo=$man_out/man-pages series=$man_out/series chk=$man_out/am-check
	local date name email cover n

	ver=$(man_base) || { result "man-pages base downloaded (build/man/base)" 1; return; }
	name=${man_sender% <*}
	email=${man_sender##*<}
	email=${email%>}
	# Fixed identity and dates: the same commits and mails at every run.
	date="$(man_date "$man_src") 00:00:00 +0000"
	mg() {
		GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email GIT_COMMITTER_NAME=$name \
		GIT_COMMITTER_EMAIL=$email GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
			git -C "$repo" -c commit.gpgsign=false -c core.autocrlf=false "$@"
	}
	if [ "$(git -C "$repo" tag -l --format='%(contents:subject)' base 2>/dev/null)" != "Linux man-pages $ver (Debian)" ]; then
		man_note "making $repo: man-pages $ver as tag base"
		rm -rf "$repo"
		mkdir -p "$repo"
		git -C "$repo" init -q -b main || return 1
		cp -a "$man_out/base/man" "$repo/man"
		mg add -A man && mg commit -q -m "Linux man-pages $ver (Debian)

The pages of Debian's manpages and manpages-dev $ver, in man-pages'
git layout (man/man2const/ for the *.2const pages; Debian's symlinks as .so
links).  Debian's release, not man-pages' git HEAD." || return 1
		mg tag -a -m "Linux man-pages $ver (Debian)" base || return 1
	fi
	mg checkout -q -f -B coarse-stat base && mg clean -q -fdx || return 1

	# 1. PR_COARSE_STAT.2const and prctl(2)'s list
	mkdir -p "$repo/man/man2const"
	cp "$man_src/man2const/PR_COARSE_STAT.2const" "$repo/man/man2const/"
	sed -i -f "$man_src/edits/prctl.2.sed" "$repo/man/man2/prctl.2"
	mg add -A man && mg commit -q -F - <<EOF || return 1
man/man2const/PR_COARSE_STAT.2const: Add page

PR_COARSE_STAT (82) is a new prctl(2) operation, proposed by the
coarse_stat kernel series (an RFC, not yet merged; proposed for Linux
7.4).  PR_COARSE_STAT_THREAD returns a close-on-exec file descriptor
for a read-only page, kept current by the scheduler, saying where the
calling thread's wall time went since the call (on CPU, runnable,
sleeping, in uninterruptible sleep, in I/O wait).  The series' CPU page,
the CPU lines of /proc/stat in nanoseconds, is the file
/proc/coarse_stat_cpu, which coarse_stat(7) documents.

Document the operation, the page layout by reference to
<linux/coarse_stat.h>, the lifecycle, and the errors of prctl(2), mmap(2)
and mprotect(2), as the kernel series returns them and its selftests
assert them.  Add the operation to prctl(2)'s list.

Signed-off-by: $man_sender
EOF

	# 2. coarse_stat.7 and vdso(7)'s tables
	mkdir -p "$repo/man/man7"
	cp "$man_src/man7/coarse_stat.7" "$repo/man/man7/"
	sed -i -f "$man_src/edits/vdso.7.sed" "$repo/man/man7/vdso.7"
	mg add -A man && mg commit -q -F - <<EOF || return 1
man/man7/coarse_stat.7: Add page

The coarse_stat kernel series adds four vDSO functions that copy a
coarse_stat page consistently (sequence count), charge a pending wakeup
and extrapolate the current bucket to CLOCK_MONOTONIC, read as
clock_gettime() reads it, without a system call where clock_gettime()
makes none: __vdso_coarse_stat_snap() and __vdso_coarse_stat_cpu_snap() on
x86 (64-bit, x32 and i386; version LINUX_2.6), __kernel_coarse_stat_snap()
and __kernel_coarse_stat_cpu_snap() on arm64 (version LINUX_2.6.39).  They are not libc functions: glibc has no
wrappers, and man-pages documents vDSO-only symbols in vdso(7).  Add an
overview page in section 7 (like vdso(7)) with the pages, the read
protocol, the CPU page's file /proc/coarse_stat_cpu and the functions'
prototypes and return values, and list the functions in vdso(7)'s
aarch64, i386 and x86-64/x32 tables.

Signed-off-by: $man_sender
EOF

	rm -rf "$series"
	mg format-patch -q --cover-letter --subject-prefix="PATCH RFC" --to="$man_to" \
		"${man_cc[@]/#/--cc=}" --from="$man_sender" -o "$series" base..coarse-stat >/dev/null || return 1
	cover=$(find "$series" -name '0000-*.patch')
	n=$(find "$series" -name '*.patch' | wc -l)
	UVER=${ver%-*} VER=$ver perl -0pi -e '
		s/\*\*\* SUBJECT HERE \*\*\*/Document PR_COARSE_STAT and the coarse_stat vDSO functions/;
		s/\*\*\* BLURB HERE \*\*\*/Hi Alex,

These two patches document the user-space interface of coarse_stat, a
Linux kernel patch series that is an RFC and not merged yet ([RFC PATCH v4],
proposed for Linux 7.4; to be sent to LKML and linux-api).  I send the
pages now so that the interface gets a review from the manual side as
well; they are not meant to be applied before the kernel side is merged,
and the HISTORY sections say "Not yet merged (proposed for Linux 7.4)"
with a FIXME comment until then.

- PR_COARSE_STAT(2const): prctl(PR_COARSE_STAT, PR_COARSE_STAT_THREAD,
  0, 0, 0) returns a file descriptor for a read-only page: where the
  calling thread\x27s time went (on CPU, runnable, sleeping,
  uninterruptible, I\/O wait), kept current by the scheduler.  Added to
  prctl(2)\x27s list.
- coarse_stat(7): the pages (the CPU page, the CPU lines of \/proc\/stat
  in nanoseconds, is the file \/proc\/coarse_stat_cpu), the read
  protocol, and the vDSO functions
  __vdso_coarse_stat_snap()\/__vdso_coarse_stat_cpu_snap() (x86) and
  __kernel_coarse_stat_snap()\/__kernel_coarse_stat_cpu_snap() (arm64), which are not libc
  functions; listed in vdso(7)\x27s tables.

The base is not man-pages\x27 git HEAD but the release Debian packages,
man-pages $ENV{UVER} (Debian\x27s $ENV{VER}: the pages of the manpages and manpages-dev .debs in
the layout of the git tree); the patches may need a rebase onto HEAD.  The
new pages have the .TH form of unreleased pages ("(date)").

The kernel side: Documentation\/userspace-api\/coarse_stat.rst and
include\/uapi\/linux\/coarse_stat.h of the series./;' "$cover"
	result "git format-patch wrote $n mails (cover letter + 2 patches) to ${series#"$man_top"/}" \
		"$([ "$n" = 3 ] && echo 0 || echo 1)"
	! grep -q '\*\*\*' "$cover"
	result "the cover letter has a subject and blurb" $?
	grep -qx "To: $man_to" "$cover" && grep -q "^Cc: ${man_cc[0]}" "$cover" &&
		grep -qE "^ *${man_cc[1]}\$|^Cc: .*${man_cc[1]}" "$cover" &&
		[ "$(grep -l '^Subject: \[PATCH RFC [0-2]/2\]' "$series"/*.patch | wc -l)" = 3 ]
	result "To: $man_to, Cc: ${man_cc[*]}, [PATCH RFC n/2]" $?

	# The mails apply with git am to base, and give the same tree.
	rm -rf "$chk"
	git clone -q --no-checkout "$repo" "$chk" && git -C "$chk" checkout -q -b am-check base &&
		git -C "$chk" -c user.name=am -c user.email=am@localhost am -q "$series"/000[1-9]-*.patch &&
		[ "$(git -C "$chk" rev-parse 'HEAD^{tree}')" = "$(git -C "$repo" rev-parse 'coarse-stat^{tree}')" ]
	result "git am of the 2 patches applies to base (man-pages $ver) and gives the series' tree" $?
	# The pages in the series are those of man/.
	cmp -s "$man_src/man2const/PR_COARSE_STAT.2const" "$chk/man/man2const/PR_COARSE_STAT.2const" &&
		cmp -s "$man_src/man7/coarse_stat.7" "$chk/man/man7/coarse_stat.7"
	result "the pages of the series are those of man/" $?
	rm -rf "$chk"
	echo "man: the series:"
	grep -h '^Subject:' "$series"/*.patch | sed 's/^/  /'
	echo "  in ${series#"$man_top"/}/ (base: tag base of ${repo#"$man_top"/}, man-pages $ver)"
}

# Sourced by scripts/lint.sh: only the functions.
[[ "${BASH_SOURCE[0]}" != "$0" ]] && return 0

case "${1:-check}" in
check)	man_checks required ;;
series)	man_series ;;
*)	echo "usage: scripts/man.sh [check|series]" >&2; exit 2 ;;
esac
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
