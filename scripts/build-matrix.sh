#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make build-matrix: build the series the way the kernel test robot (0-day)
# will: several architectures and configurations, CONFIG_COARSE_STAT on, off
# and unavailable, and the options around the scheduler it interacts with.
#
# The source is a detached git worktree of the series tip, build/matrix/src
# (moved to the current tip of branch coarse-stat at every run), so edits in
# linux/ during a run do not disturb it.  Each entry builds out of tree in
# build/matrix/NAME/: 'make ARCH=.. BASECONFIG', the entry's fragment
# (NAME/fragment.config) merged with merge_config.sh -m, olddefconfig; then
# every option the fragment asks for is checked in .config (an entry whose
# config did not come out as asked fails, with the reason), and so is the
# expected CONFIG_COARSE_STAT (y, n, or "absent": unavailable on the
# architecture although the fragment asks for it).  Then, with W=1, the
# objects the series touches: kernel/sched/ kernel/time/ kernel/exit.o
# kernel/fork.o kernel/sys.o fs/exec.o fs/proc/stat.o lib/vdso/ (7.3: a build
# directory there) and the architecture's vDSO directory, or the whole
# vmlinux for the entries marked so (x86_64-allno-cs: catches link errors).
# make -k: an entry's every error, not only the first.
# Warnings: a W=1 or objtool warning naming a file the series adds is a
# failure; one naming a file it changes is a failure unless the same warning
# (file and message, without line numbers) comes out of the base tree built
# with the same config and targets (build/matrix/base-src, a worktree of tag
# base, and NAME/base/, built only when such a warning appears).  Warnings in
# files the series does not touch are noise and only counted.
#
# Output: a table (entry, arch, config, CONFIG_COARSE_STAT, built, result,
# seconds) on stdout and in build/matrix/table.md, a "ok - / not ok -" line
# per entry (scripts/tap.sh), the log tail of a failed entry, and the last
# line "N passed, N failed".  Logs: build/matrix/NAME/build.log.
# About 26 min on 2 busy cores (14 min of it the allnoconfig vmlinux); not in CI.
#
# Environment:
#   BASE           7.3 (default) or 6.12 (scripts/base.sh): linux-6.12/, build/6.12/matrix/
#   LINUX          the git tree (default linux/ or linux-6.12/); branch coarse-stat, tag base
#   MATRIX_ONLY    "NAME ..." runs only these entries
#   MATRIX_FULL=1  a full vmlinux for every entry
#   MATRIX_EXTRA   "CONFIG_X=y ..." more options asked (and checked) in every entry run
#   MATRIX_W1=0    build without W=1
#   JOBS           make -j (default 2); builds run under nice -n 10
#   CCACHE_DIR     default ~/.cache/ccache (outside the clone)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"
tree=$(realpath -m "${LINUX:-$base_tree}")
mdir=$BUILD_ROOT/matrix
src=$mdir/src
jobs=${JOBS:-2}
w1=W=1
[ "${MATRIX_W1:-1}" = 0 ] && w1=
start=$SECONDS

die() { echo "build-matrix: $*" >&2; exit 1; }
note() { echo "build-matrix: $*"; }

[ -e "$tree/.git" ] || die "no git tree at $tree (run 'make linux$base_make')"
tip=$(git -C "$tree" rev-parse -q --verify "coarse-stat^{commit}") || die "no branch coarse-stat in $tree"
git -C "$tree" rev-parse -q --verify "base^{commit}" >/dev/null || die "no tag base in $tree"
mkdir -p "$mdir"
exec 8>"$mdir/.lock"
flock -n 8 || die "another build-matrix runs in $mdir"

# worktree SRC REV: a detached worktree of $tree at REV (made, or moved there).
worktree() {
	if [ -e "$1/.git" ]; then
		git -C "$1" checkout -q -f --detach "$2" && git -C "$1" clean -q -fdx
	else
		rm -rf "$1"
		git -C "$tree" worktree prune
		git -C "$tree" worktree add -q --detach "$1" "$2"
	fi
}
worktree "$src" "$tip" || die "cannot make the worktree $src"
note "source $src at $(git -C "$src" log -1 --format='%h %s')"

# The files the series adds and changes (warnings naming them count).
mapfile -t added < <(git -C "$src" diff --name-only --diff-filter=A base HEAD)
mapfile -t changed < <(git -C "$src" diff --name-only --diff-filter=M base HEAD)
declare -A kind=()
for f in "${added[@]}"; do kind[$f]=added; done
for f in "${changed[@]}"; do kind[$f]=changed; done

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
export KBUILD_BUILD_TIMESTAMP="Thu Jan  1 00:00:00 UTC 2026" KBUILD_BUILD_USER=coarse KBUILD_BUILD_HOST=stat
ccache=
command -v ccache >/dev/null && ccache="ccache "

# x86_64 allnoconfig already has what COARSE_STAT needs: MMU is always on,
# PROC_FS is only visible with EXPERT and defaults to y.
# NAME|ARCH|BASECONFIG|FRAGMENT|EXPECTED CONFIG_COARSE_STAT|FULL (vmlinux)
entries=(
	"x86_64-allno|x86_64|allnoconfig||n|0"
	"x86_64-allno-cs|x86_64|allnoconfig|CONFIG_COARSE_STAT=y|y|1"
	"x86_64-def-cs|x86_64|defconfig|CONFIG_COARSE_STAT=y|y|0"
	"x86_64-def-nocs|x86_64|defconfig|CONFIG_COARSE_STAT=n|n|0"
	"i386-def|i386|defconfig|CONFIG_COARSE_STAT=y|absent|0"
	"x86_64-rt-cs|x86_64|defconfig|CONFIG_EXPERT=y CONFIG_PREEMPT_RT=y CONFIG_COARSE_STAT=y|y|0"
	"x86_64-noschedinfo-cs|x86_64|defconfig|CONFIG_SCHEDSTATS=n CONFIG_TASK_DELAY_ACCT=n CONFIG_KVM=n CONFIG_SCHED_INFO=n CONFIG_COARSE_STAT=y|y|0"
	"x86_64-nohrt-cs|x86_64|defconfig|CONFIG_HIGH_RES_TIMERS=n CONFIG_COARSE_STAT=y|y|0"
	"x86_64-scx-cs|x86_64|defconfig|CONFIG_BPF_SYSCALL=y CONFIG_BPF_JIT=y CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y CONFIG_DEBUG_INFO_BTF=y CONFIG_SCHED_CLASS_EXT=y CONFIG_COARSE_STAT=y|y|0"
	"x86_64-proxy-cs|x86_64|defconfig|CONFIG_EXPERT=y CONFIG_SCHED_PROXY_EXEC=y CONFIG_COARSE_STAT=y|y|0"
	"x86_64-kunit-cs|x86_64|defconfig|CONFIG_COARSE_STAT=y CONFIG_KUNIT=y CONFIG_COARSE_STAT_KUNIT_TEST=y|y|0"
	"arm64-def-cs|arm64|defconfig|CONFIG_COARSE_STAT=y|y|0"
	"riscv64-def|riscv|defconfig|CONFIG_COARSE_STAT=y|absent|0"
	"ppc64le-def|powerpc|ppc64le_defconfig|CONFIG_COARSE_STAT=y|absent|0"
)

# An option the entry needs that this base does not have: the entry is n/a.
needs_option() {
	case "$1" in
	x86_64-proxy-cs) echo SCHED_PROXY_EXEC ;;
	esac
}

# The make targets of an entry: the objects of the series, the arch's vDSO.
targets() {
	local t=(kernel/sched/ kernel/time/ kernel/exit.o kernel/fork.o kernel/sys.o fs/exec.o fs/proc/stat.o)
	# lib/vdso/ is a build directory in 7.3 (datastore.o), not in 6.12.
	grep -q 'vdso/' "$src/lib/Makefile" && t+=(lib/vdso/)
	case "$1" in
	x86_64|i386) t+=(arch/x86/entry/vdso/) ;;
	arm64) t+=(arch/arm64/kernel/vdso/ arch/arm64/kernel/coarse_stat.o) ;;
	riscv) t+=(arch/riscv/kernel/vdso/) ;;
	powerpc) t+=(arch/powerpc/kernel/vdso/) ;;
	esac
	echo "${t[*]}"
}

cross() {
	case "$1" in
	arm64) echo aarch64-linux-gnu- ;;
	riscv) echo riscv64-linux-gnu- ;;
	powerpc) echo powerpc64le-linux-gnu- ;;
	esac
}

# kmake SRC OUT ARCH MAKEARGS...: make in OUT, niced, with ccache.
kmake() {
	local s=$1 o=$2 a=$3 x
	shift 3
	x=$(cross "$a")
	CCACHE_BASEDIR=$s nice -n 10 make -C "$s" O="$o" ARCH="$a" ${x:+CROSS_COMPILE=$x} \
		CC="${ccache}${x}gcc" "$@"
}

# configure SRC OUT ARCH BASECONFIG FRAGMENT: the .config of an entry.
configure() {
	kmake "$1" "$2" "$3" -s "$4" &&
		KCONFIG_CONFIG="$2/.config" "$1/scripts/kconfig/merge_config.sh" -m -O "$2" \
			"$2/.config" "$5" &&
		kmake "$1" "$2" "$3" -s olddefconfig
}

# check_config OUT FRAGMENT EXPECTED: every option as asked; prints the reasons.
check_config() {
	local cfg=$1/.config line opt bad=0
	while IFS= read -r line; do
		opt=${line%%=*}
		[ "$opt" = CONFIG_COARSE_STAT ] && [ "$3" = absent ] && continue
		case "$line" in
		*=n)	grep -Eq "^$opt=[ym]" "$cfg" &&
				{ echo "$opt is $(sed -n "s/^$opt=//p" "$cfg"), asked n"; bad=1; } ;;
		*)	grep -qx "$line" "$cfg" || {
				echo "$opt is $(sed -n "s/^$opt=//p" "$cfg" | grep . || echo 'not set'), asked ${line#*=}"
				bad=1; } ;;
		esac
	done < <(grep '^CONFIG_' "$2")
	case "$3" in
	absent)	grep -q 'CONFIG_COARSE_STAT\b' "$cfg" &&
			{ echo "CONFIG_COARSE_STAT is in .config: it should be unavailable here"; bad=1; } ;;
	y)	grep -qx CONFIG_COARSE_STAT=y "$cfg" || { echo "CONFIG_COARSE_STAT is not y"; bad=1; } ;;
	n)	grep -q '^CONFIG_COARSE_STAT=' "$cfg" && { echo "CONFIG_COARSE_STAT is set"; bad=1; } ;;
	esac
	return $bad
}

# warnings LOG OUT SRC: the compiler's and objtool's warnings of LOG, one a
# line as "FILE: message" (FILE relative to SRC, line numbers dropped).
warnings() {
	local line path msg rel
	grep -E '^[^ :]+(:[0-9]+)*: warning: ' "$1" | sort -u | while IFS= read -r line; do
		path=${line%%:*}
		msg=${line#*: warning: }
		case "$path" in
		# objtool names the object (in OUT): the warning is about its source.
		*.o) rel=$(realpath -m --relative-to="$2" "$2/$path")
		     if [ -f "$3/${rel%.o}.c" ]; then rel=${rel%.o}.c; else rel=${rel%.o}.S; fi ;;
		/*) rel=$(realpath -m --relative-to="$3" "$path") ;;
		*)  rel=$(realpath -m --relative-to="$3" "$2/$path") ;;
		esac
		echo "$rel: $msg"
	done | sort -u
}

# The worktree of tag base, for the warnings of changed files (made once per run).
base_src=$mdir/base-src
base_ready=0
base_tree_ready() {
	[ "$base_ready" = 1 ] && return 0
	worktree "$base_src" base || return 1
	base_ready=1
}

printf -v table '| %-22s | %-7s | %-60s | %-11s | %-7s | %-10s | %5s |\n' \
	entry arch config COARSE_STAT built result s
table+="|------------------------|---------|--------------------------------------------------------------|-------------|---------|------------|-------|"$'\n'
fails=()

for e in "${entries[@]}"; do
	IFS='|' read -r name arch basecfg frag expect full <<<"$e"
	if [ -n "${MATRIX_ONLY:-}" ] && ! [[ " $MATRIX_ONLY " =~ \ $name\  ]]; then
		continue
	fi
	t0=$SECONDS
	out=$mdir/$name
	log=$out/build.log
	mkdir -p "$out"
	frag="$frag ${MATRIX_EXTRA:-}"
	# "defconfig +A=y +B=n"
	cfgdesc=$(echo "$basecfg $frag" | sed 's/CONFIG_/+/g; s/  */ /g; s/ $//')
	tr ' ' '\n' <<<"$frag" | grep . >"$out/fragment.config"
	built=-
	value=-
	reason=
	need=$(needs_option "$name")
	if [ -n "$need" ] && ! grep -rqs "^config $need\$" "$src"/init/Kconfig "$src"/kernel/Kconfig.*; then
		res=n/a
		reason="no CONFIG_$need in $BASE"
		note "$name: n/a: $reason"
	else
		: >"$log"
		res=FAIL
		if ! configure "$src" "$out" "$arch" "$basecfg" "$out/fragment.config" >>"$log" 2>&1; then
			reason="configuration failed"
		else
			value=$(sed -n 's/^CONFIG_COARSE_STAT=//p' "$out/.config")
			[ -n "$value" ] || { grep -q '# CONFIG_COARSE_STAT is not set' "$out/.config" && value=n || value=absent; }
			if ! bad=$(check_config "$out" "$out/fragment.config" "$expect"); then
				reason="config not as asked: $(echo "$bad" | paste -sd';' | sed 's/;/; /g')"
				echo "$bad" >>"$log"
			else
				# shellcheck disable=SC2207
				tg=($(targets "$arch"))
				built=objects
				if [ "$full" = 1 ] || [ "${MATRIX_FULL:-0}" = 1 ]; then
					tg=(vmlinux "${tg[@]}")
					built=vmlinux
				fi
				echo "== make ${tg[*]}" >>"$log"
				# -k: every error of the entry, as the bot reports them.
				if ! kmake "$src" "$out" "$arch" -k -j"$jobs" $w1 "${tg[@]}" >>"$log" 2>&1; then
					reason="build failed: $(grep -m1 -E ': error: |undefined reference|ld: ' "$log" |
						sed "s|^\(\.\./\)*src/||")"
				else
					warnings "$log" "$out" "$src" >"$out/warnings"
					: >"$out/series-warnings"
					while IFS= read -r w; do
						f=${w%%: *}
						[ -n "${kind[$f]:-}" ] && echo "${kind[$f]} $w" >>"$out/series-warnings"
					done <"$out/warnings"
					new=$(grep '^added ' "$out/series-warnings" | cut -d' ' -f2-)
					if grep -q '^changed ' "$out/series-warnings"; then
						# Does base give the same warnings with this config?
						note "$name: warnings in changed files; building base to compare"
						bout=$out/base
						mkdir -p "$bout"
						cp "$out/.config" "$bout/.config"
						if base_tree_ready && kmake "$base_src" "$bout" "$arch" -s olddefconfig >"$bout/build.log" 2>&1 &&
							kmake "$base_src" "$bout" "$arch" -j"$jobs" $w1 "${tg[@]}" >>"$bout/build.log" 2>&1; then
							warnings "$bout/build.log" "$bout" "$base_src" >"$bout/warnings"
							new+=$'\n'$(grep '^changed ' "$out/series-warnings" | cut -d' ' -f2- |
								grep -vxFf "$bout/warnings")
						else
							new+=$'\n'"(base did not build: see $bout/build.log) "
							new+=$(grep '^changed ' "$out/series-warnings" | cut -d' ' -f2-)
						fi
					fi
					new=$(echo "$new" | grep .)
					if [ -n "$new" ]; then
						reason="new warnings in series files: $(echo "$new" | head -3 | paste -sd';')"
						echo "$new" >>"$log"
					else
						res=ok
						nw=$(wc -l <"$out/warnings")
						[ "$nw" = 0 ] || reason="$nw warnings in files the series does not touch"
					fi
				fi
			fi
		fi
	fi
	secs=$((SECONDS - t0))
	printf -v row '| %-22s | %-7s | %-60s | %-11s | %-7s | %-10s | %5s |' \
		"$name" "$arch" "$cfgdesc" "$value" "$built" "$res" "$secs"
	table+="$row"$'\n'
	case "$res" in
	n/a)	echo "ok - $name: n/a ($reason) # SKIP" ;;
	ok)	result "$name: $arch $cfgdesc, COARSE_STAT=$value, $built ($secs s)${reason:+; $reason}" 0 ;;
	*)	result "$name: $arch $cfgdesc, COARSE_STAT=$value" 1 "$reason"
		fails+=("$name: $reason")
		echo "--- errors in $log"
		grep -E -m 20 ': error: |undefined reference|ld: |\*\*\* ' "$log"
		echo "--- tail of $log"
		tail -n 10 "$log"
		echo "---" ;;
	esac
done

# The base worktree is only for the comparison: remove it again.
if [ "$base_ready" = 1 ]; then
	git -C "$tree" worktree remove --force "$base_src" || true
fi

{
	echo "build-matrix: $BASE, $(git -C "$src" log -1 --format='%h %s'), $(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - start)) s"
	echo
	printf '%s' "$table"
	if [ ${#fails[@]} -gt 0 ]; then
		echo
		printf 'FAIL %s\n' "${fails[@]}"
	fi
} >"$mdir/table.md"
echo
cat "$mdir/table.md"
echo
echo "build-matrix: $((SECONDS - start)) s; table in $mdir/table.md"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
