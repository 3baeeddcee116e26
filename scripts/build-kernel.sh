#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Configure and build the guest kernel out of tree: tinyconfig + scripts/*.config.
#   scripts/build-kernel.sh [debug|FLAVOUR]
# debug (the default) adds scripts/debug.config; kasan adds it and scripts/kasan.config
# (make check-kasan); any other flavour (nodebug, bench, ...) leaves it out.  Flavours
# other than debug build in build/linux-FLAVOUR.
# Environment: BASE (scripts/base.sh: 7.3 or 6.12; every build/ here is build/6.12/ for
# 6.12, $BUILD_ROOT), LINUX (source tree, default linux/ or linux-6.12/), KBUILD (output,
# default build/linux),
# CCACHE_DIR (default ~/.cache/ccache, outside the clone), KCONFIG_EXTRA (more fragments,
# applied last: they override, e.g. CONFIG_COARSE_STAT=n), ALLOW_MISSING_CONFIG=1 (build
# even if some fragment option does not exist in the tree, such as an unpatched base).
# ARCH=arm64: cross-build the arm64 guest (aarch64-linux-gnu-gcc, scripts/arm64.config
# instead of scripts/x86.config, Image instead of bzImage; default output build/linux-arm64).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
src=${LINUX:-$base_tree}
flavour=${1:-debug}
out=${KBUILD:-$BUILD_ROOT/linux}
[ "$flavour" = debug ] || out=${KBUILD:-$BUILD_ROOT/linux-$flavour}
arch=x86
if [ "${ARCH:-}" = arm64 ]; then
	arch=arm64
	out=${KBUILD:-$BUILD_ROOT/linux-arm64}
	[ "$flavour" = debug ] || out=${KBUILD:-$BUILD_ROOT/linux-arm64-$flavour}
fi
jobs=${JOBS:-$(nproc)}

[ -f "$src/Makefile" ] || { echo "build-kernel: no kernel tree at $src (run 'make linux$base_make')" >&2; exit 1; }
mkdir -p "$out"

# Two makes in one output directory corrupt it: one build at a time.
exec 8>"$out/.build-kernel.lock"
flock -n 8 || { echo "build-kernel: waiting for another build in $out" >&2; flock 8; }

cc=gcc
[ "$arch" = arm64 ] && cc=aarch64-linux-gnu-gcc
if command -v ccache >/dev/null 2>&1; then
	export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
	export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
	cc="ccache $cc"
fi
# make arguments of every kernel make: none on x86 (as before), the cross build on arm64.
xmake=()
image=arch/x86/boot/bzImage
if [ "$arch" = arm64 ]; then
	xmake=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	image=arch/arm64/boot/Image
fi
export KBUILD_BUILD_TIMESTAMP="Thu Jan  1 00:00:00 UTC 2026" KBUILD_BUILD_USER=coarse KBUILD_BUILD_HOST=stat

# guest.config is what both architectures' guests need, x86.config or
# arm64.config the rest.
frags=("$top/scripts/guest.config" "$top/scripts/$arch.config" "$top/scripts/coarse_stat.config")
# Options whose names differ between the bases: scripts/base-VERSION.PATCHLEVEL.config.
kver=$(sed -n -e 's/^VERSION = //p' -e 's/^PATCHLEVEL = //p' "$src/Makefile" | paste -sd.)
[ -f "$top/scripts/base-$kver.config" ] && frags+=("$top/scripts/base-$kver.config")
[ "$flavour" = debug ] && frags+=("$top/scripts/debug.config")
[ "$flavour" = kasan ] && frags+=("$top/scripts/debug.config" "$top/scripts/kasan.config")
# What the kselftests say they need (their 'config' file) must be in too.
ksft_config=$src/tools/testing/selftests/coarse_stat/config
[ -f "$ksft_config" ] && frags+=("$ksft_config")
for f in ${KCONFIG_EXTRA:-}; do
	[ -f "$f" ] || { echo "build-kernel: no fragment $f (KCONFIG_EXTRA)" >&2; exit 1; }
	frags+=("$f")
done

# Regenerate .config only when a fragment changed: keeps incremental builds incremental.
stamp=$out/.coarse_stat-config.sum
sum=$(cat "${frags[@]}" "$src/Makefile" | sha1sum)
if [ ! -f "$out/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
	make -s -C "$src" O="$out" "${xmake[@]}" CC="$cc" tinyconfig >/dev/null
	KCONFIG_CONFIG="$out/.config" "$src/scripts/kconfig/merge_config.sh" -m -O "$out" \
		"$out/.config" "${frags[@]}" >/dev/null
	make -s -C "$src" O="$out" "${xmake[@]}" CC="$cc" olddefconfig >/dev/null
	# Every option the fragments ask for (the last fragment setting it wins)
	# must survive olddefconfig.
	missing=0
	declare -A want=()
	for f in "${frags[@]}"; do
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=*) want[${line%%=*}]=$line ;;
			esac
		done < "$f"
	done
	for opt in "${!want[@]}"; do
		line=${want[$opt]}
		case "$line" in
		*=n)	grep -q "^$opt=" "$out/.config" && { echo "build-kernel: $opt is set" >&2; missing=1; } ;;
		*)	grep -qx "$line" "$out/.config" || { echo "build-kernel: '$line' did not stick" >&2; missing=1; } ;;
		esac
	done
	if [ "$missing" = 1 ] && [ -z "${ALLOW_MISSING_CONFIG:-}" ]; then
		echo "build-kernel: config fragments did not apply (see above)" >&2
		exit 1
	fi
	echo "$sum" > "$stamp"
fi

# KTARGETS: other make targets than bzImage (scripts/lint.sh builds single objects).
if [ -n "${KTARGETS:-}" ]; then
	# shellcheck disable=SC2086
	make -C "$src" O="$out" "${xmake[@]}" CC="$cc" -j"$jobs" ${KMAKEFLAGS:-} $KTARGETS
	exit
fi
# The image, and a link next to the build directories (build/bzImage, build/Image-arm64, ...).
link=bzImage
[ "$arch" = arm64 ] && link=Image-arm64
# shellcheck disable=SC2086
make -C "$src" O="$out" "${xmake[@]}" CC="$cc" -j"$jobs" ${KMAKEFLAGS:-} "${image##*/}"
ln -sf "$out/$image" "$out/../$link${flavour/#debug/}" 2>/dev/null || true
echo "build-kernel: $out/$image"
