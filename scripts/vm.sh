#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the guest kernel in QEMU and run one command in it.
#
#   scripts/vm.sh [--kernel BZIMAGE] [--timeout S] [--append ARGS] -- COMMAND [ARG...]
#   scripts/vm.sh [--kernel BZIMAGE] --shell
#
# The guest's root is the host's / over 9p, read-only, with a tmpfs overlay
# on top (writes are discarded at power-off), so host binaries run unchanged;
# build everything on the host, gcc does not work in the guest.  The
# command runs as root in the current directory.  $VM_DIR (default build/vm)
# is shared read-write at the same path: it carries the command in and the
# exit status out, and holds console.log, the whole serial console.
#
# Exit status: the command's, or
#   124 the guest never reported a status (timeout, hang, crash),
#   125 the kernel reported a problem (WARNING, BUG, Oops, lockdep, KFENCE, ...),
#       whatever the command returned.
#
# Environment:
#   VM_KERNEL	bzImage (default build/linux/arch/x86/boot/bzImage)
#   VM_TIMEOUT	seconds before QEMU is killed (900)
#   VM_DIR	shared directory (build/vm)
#   VM_ACCEL	kvm or tcg (default: probe once, cached in build/vm/accel)
#   VM_APPEND	extra kernel arguments
#   VM_QEMU_ARGS	extra QEMU arguments, split at white space (no quoting),
#		e.g. "-plugin build/qemu-plugins/libcache.so -d plugin -D FILE"
#   VM_SMP, VM_MEM	vCPUs and memory (2, 2G)
#   VM_TCG_THREAD	single (default) or multi: QEMU TCG threading (see below)
#   VM_TSC_KHZ	the host's TSC frequency for the TCG guest (default: from
#		the host kernel log)
#   VM_ICOUNT=1	count instructions: QEMU -icount shift=0,sleep=off (single-
#		threaded TCG only), so the guest's clock advances 1 ns per guest
#		instruction, and tsc_early_khz=1000000: one TSC tick each too
#   VM_S3=1	x86: let the guest suspend to RAM (QEMU's pc machine keeps
#		S3 off by default); its CMOS RTC alarm wakes it
#   VM_DEBUG=0	no slub_debug/init_on_free/KFENCE arguments (benchmarks)
#   VM_VERBOSE=1	echo the whole console, not only the command's output and
#		kernel problems
#   VM_SCRATCH_MB	size of a scratch virtio disk, $COARSE_STAT_SCRATCH_DEV in
#		the guest; with ext4 in the kernel also mounted on
#		/tmp/scratch = $COARSE_STAT_SCRATCH (256; 0: none)
#   VM_SCRATCH_IOPS	throttle the scratch disk to this many requests a
#		second (QEMU's throttling.iops-total; unset: as fast as the
#		host), so that a guest's reads wait for the disk however fast
#		the host emulates its CPU
#   BASE=6.12	(scripts/base.sh) the defaults in build/6.12/ ($BUILD_ROOT)
#		instead of build/: build/6.12/linux/..., build/6.12/vm; the
#		command sees the same BASE and BUILD_ROOT (and KBUILD,
#		KSFT_INSTALL when set).  The KVM probe and TSC frequency are
#		cached in build/vm for both bases.
#   ARCH=arm64	boot the arm64 guest in qemu-system-aarch64 -M virt -cpu max
#		(TCG only): kernel build/linux-arm64/arch/arm64/boot/Image,
#		VM_DIR build/vm-arm64, root a small initramfs
#		(scripts/initramfs.sh) that mounts the project directory over
#		9p at its host path and runs selftests/guest-init.sh stage2;
#		the command must live under the project directory.  No TSC
#		arguments; the clocksource should be arch_sys_counter.
# QEMU option values contain commas:
# shellcheck disable=SC2054
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
arch=x86
[ "${ARCH:-}" = arm64 ] && arch=arm64
kernel=${VM_KERNEL:-$BUILD_ROOT/linux/arch/x86/boot/bzImage}
timeout=${VM_TIMEOUT:-900}
vmdir=${VM_DIR:-$BUILD_ROOT/vm}
if [ "$arch" = arm64 ]; then
	kernel=${VM_KERNEL:-$BUILD_ROOT/linux-arm64/arch/arm64/boot/Image}
	vmdir=${VM_DIR:-$BUILD_ROOT/vm-arm64}
fi
append_extra=${VM_APPEND:-}
shell=0

usage() {
	sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

die() {
	echo "vm.sh: $*" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel)	kernel=$2; shift 2 ;;
	--kernel=*)	kernel=${1#*=}; shift ;;
	--timeout)	timeout=$2; shift 2 ;;
	--timeout=*)	timeout=${1#*=}; shift ;;
	--append)	append_extra="$append_extra $2"; shift 2 ;;
	--shell)	shell=1; shift ;;
	--)		shift; break ;;
	-h|--help)	usage ;;
	-*)		die "unknown option $1" ;;
	*)		break ;;
	esac
done
[ $shell = 1 ] || [ $# -gt 0 ] || usage

case "$arch" in
x86)
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run scripts/deps.sh"
command -v busybox >/dev/null || die "busybox missing (the guest reboots with it): run scripts/deps.sh"
	;;
arm64)
	command -v qemu-system-aarch64 >/dev/null ||
		die "qemu-system-aarch64 missing: run ARCH=arm64 scripts/deps.sh" ;;
esac
[ -f "$kernel" ] || die "no kernel at $kernel (run 'make kernel')"
case "$timeout" in ''|*[!0-9]*) die "--timeout wants seconds, got '$timeout'" ;; esac

mkdir -p "$vmdir" "$top/build/vm"
vmdir=$(cd "$vmdir" && pwd)
case "$vmdir$top" in
*[[:space:]]*) die "the project path must not contain white space ($top)" ;;
esac

# One guest per VM_DIR at a time.
exec 9>"$vmdir/lock"
flock -n 9 || { echo "vm.sh: waiting for another guest using $vmdir" >&2; flock 9; }

log=$vmdir/console.log
status=$vmdir/status
rm -f "$status" "$vmdir/tainted" "$log"

# --- accelerator ---------------------------------------------------------
#
# /dev/kvm can exist and still not boot a kernel (a paravirtual KVM hangs at
# "Decompressing Linux", and -cpu host aborts).  Boot the kernel once with
# KVM and no root: reaching the "VFS: Unable to mount root" panic means KVM
# works.  The answer is cached in build/vm/accel.
probe_kvm() {
	local out

	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	out=$(timeout -k 2 30 qemu-system-x86_64 -nodefaults -no-reboot -display none \
		-accel kvm -cpu host -m 256M -smp 1 -serial stdio -kernel "$kernel" \
		-append "console=ttyS0 panic=-1 root=/dev/coarse_stat_probe" \
		</dev/null 2>&1)
	grep -q -e 'Kernel panic' -e 'VFS:' <<<"$out"
}

accel_cache=$top/build/vm/accel
accel=${VM_ACCEL:-}
# arm64: TCG only (this host's KVM runs x86 guests).
[ "$arch" = arm64 ] && accel=${VM_ACCEL:-tcg}
if [ -z "$accel" ]; then
	accel=$(cat "$accel_cache" 2>/dev/null)
	if [ "$accel" != kvm ] && [ "$accel" != tcg ]; then
		echo "vm.sh: probing whether KVM boots a kernel (once; cached in $accel_cache)" >&2
		if probe_kvm; then accel=kvm; else accel=tcg; fi
		echo "$accel" >"$accel_cache"
		echo "vm.sh: using $accel" >&2
	fi
fi
case "$arch:$accel" in
arm64:tcg)
	# -cpu max with pauth-impdef=on: QEMU's architected pointer
	# authentication (QARMA) costs much TCG time, the IMPDEF one little.
	cpu=max
	qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -display none -S \
		-nodefaults -no-user-config -monitor none </dev/null >/dev/null 2>&1 &
	probe=$!
	sleep 1
	if kill -0 "$probe" 2>/dev/null; then
		cpu=max,pauth-impdef=on
		kill "$probe" 2>/dev/null
	fi
	wait "$probe" 2>/dev/null
	accel_args=(-M virt -accel "tcg,thread=${VM_TCG_THREAD:-single}" -cpu "$cpu") ;;
arm64:*)
	die "ARCH=arm64 needs VM_ACCEL=tcg, not '$accel'" ;;
*:kvm)	accel_args=(-accel kvm -cpu host) ;;
# Single-threaded TCG by default: with thread=multi, QEMU 7.2 (Debian 12) lets a
# vCPU run stale code after the kernel patches a static key (text_poke_bp), and
# the guest dies with "Oops: int3" at the key's site.  A stock key shows it too:
#   scripts/vm.sh -- sh -c 'while :; do echo 1 >/proc/sys/kernel/sched_schedstats;
#	echo 0 >/proc/sys/kernel/sched_schedstats; done'
# oopses in dequeue_entities() within seconds under thread=multi, never under
# thread=single.  VM_TCG_THREAD=multi to try it.
*:tcg)	accel_args=(-accel "tcg,thread=${VM_TCG_THREAD:-single}" -cpu max) ;;
*)	die "VM_ACCEL must be kvm or tcg, not '$accel'" ;;
esac

# -icount: QEMU's virtual clock advances 2^shift ns per guest instruction
# executed (shift=0: 1 ns), and the guest TSC and timers run on that clock;
# sleep=off jumps the clock to the next timer when every vCPU idles instead
# of waiting for real time.  CLOCK_MONOTONIC and the TSC (at 1 GHz) then
# count instructions, the same in every run whatever the host's load.  It
# needs the one TCG thread that runs every vCPU in turn.
icount=${VM_ICOUNT:-0}
case "$icount" in
0)	;;
1)	[ "$accel" = tcg ] || die "VM_ICOUNT=1 needs TCG (VM_ACCEL=tcg), not $accel"
	[ "${VM_TCG_THREAD:-single}" = single ] ||
		die "VM_ICOUNT=1 needs single-threaded TCG, not VM_TCG_THREAD=$VM_TCG_THREAD"
	accel_args+=(-icount shift=0,sleep=off) ;;
*)	die "VM_ICOUNT must be 0 or 1, not '$icount'" ;;
esac

# The guest's timekeeping must run on the TSC: the vDSO trusts the TSC only
# when the kernel's clocksource is "tsc".  Under TCG the guest TSC is the
# host's, but a small guest without ACPI has no HPET/PM timer to calibrate
# it against, PIT calibration fails when the host is busy, and the
# clocksource watchdog then drops the TSC for jiffies.  So: tsc=reliable (no
# watchdog) and, under TCG, the host's TSC frequency (tsc_early_khz, from
# the host kernel log, cached in build/vm/tsc_khz; VM_TSC_KHZ overrides).
tsc_args="tsc=reliable"
if [ "$arch" = arm64 ]; then
	# The architected counter needs no calibration (its rate is in CNTFRQ_EL0).
	tsc_args=
elif [ "$icount" = 1 ]; then
	# A TSC tick per instruction: call it 1 GHz.
	tsc_args+=" tsc_early_khz=1000000"
elif [ "$accel" = tcg ]; then
	tsc_khz=${VM_TSC_KHZ:-$(cat "$top/build/vm/tsc_khz" 2>/dev/null)}
	if [ -z "$tsc_khz" ]; then
		tsc_khz=$( (dmesg 2>/dev/null || journalctl -k -b -q 2>/dev/null) |
			sed -n -e 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' \
			       -e 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' |
			tail -n 1 | awk '$1 > 0 { printf "%d\n", $1 * 1000 }')
		[ -z "$tsc_khz" ] || echo "$tsc_khz" >"$top/build/vm/tsc_khz"
	fi
	[ -z "$tsc_khz" ] || tsc_args+=" tsc_early_khz=$tsc_khz"
fi

# --- the command -----------------------------------------------------------

# The command's view of the base (scripts/demo.sh finds the kernel build
# and the kselftests with it).
guest_env() {
	local v

	printf 'export BASE=%q BUILD_ROOT=%q\n' "$BASE" "$BUILD_ROOT"
	for v in KBUILD KSFT_INSTALL; do
		[ -z "${!v:-}" ] || printf 'export %s=%q\n' "$v" "${!v}"
	done
}

if [ $shell = 1 ]; then
	{
		guest_env
		printf 'cd %q\n' "$PWD"
	} >"$vmdir/cmd"
	echo "shell" >"$vmdir/mode"
else
	{
		guest_env
		if [ "$arch" = arm64 ] && [[ "$PWD/" != "$top/"* ]]; then
			# The arm64 guest sees only the project directory.
			printf 'cd %q || exit 125\n' "$top"
		else
			printf 'cd %q || exit 125\n' "$PWD"
		fi
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$vmdir/cmd"
	echo "command" >"$vmdir/mode"
fi

append="console=ttyS0 printk.time=1 panic_on_warn=1 oops=panic panic=-1 softlockup_panic=1 $tsc_args"
# PCI interrupts from the BIOS tables, not ACPI: the guest has no PCI_MSI, so
# virtio needs INTx routing, and ACPI's comes from interpreting the DSDT's
# _PRT loop.  In a slow guest (KASAN, or a loaded host) that loop ran into
# ACPICA's 30 s loop timeout ("AE_AML_LOOP_TIMEOUT ... PCI INT A: no GSI"),
# the virtio devices got no IRQ and the boot hung after virtio_blk.
append+=" pci=noacpi"
# Memory debugging on every test boot; VM_DEBUG=0 (benchmarks) leaves it out.
[ "${VM_DEBUG:-1}" = 0 ] || append+=" slub_debug=FZPU init_on_free=1 kfence.sample_interval=10"
append+=" root=/dev/root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,cache=loose,msize=512000 ro"
append+=" init=$top/selftests/guest-init.sh VMDIR=$vmdir $append_extra"

args=(-nodefaults -no-reboot -display none -nic none
	"${accel_args[@]}" -m "${VM_MEM:-2G}" -smp "${VM_SMP:-2}"
	-kernel "$kernel" -append "$append"
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=root,mount_tag=/dev/root
	-fsdev "local,id=vm,path=$vmdir,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=vm,mount_tag=vmdir)
[ "${VM_S3:-0}" = 1 ] && [ "$arch" = x86 ] && args+=(-global PIIX4_PM.disable_s3=0)
if [ "$arch" = arm64 ]; then
	# The same kernel arguments but the console and the root: the
	# initramfs, which mounts $top (tag "top") and runs guest-init.sh.
	initrd=$BUILD_ROOT/initramfs-arm64.cpio.gz
	KBUILD=$(dirname "$(dirname "$(dirname "$(dirname "$kernel")")")") \
		"$top/scripts/initramfs.sh" "$initrd" >/dev/null || die "no initramfs (scripts/initramfs.sh)"
	append="console=ttyAMA0 printk.time=1 panic_on_warn=1 oops=panic panic=-1 softlockup_panic=1"
	[ "${VM_DEBUG:-1}" = 0 ] || append+=" slub_debug=FZPU init_on_free=1 kfence.sample_interval=10"
	append+=" rdinit=/init VMTOP=$top VMDIR=$vmdir $append_extra"
	args=(-nodefaults -no-reboot -display none -nic none
		"${accel_args[@]}" -m "${VM_MEM:-2G}" -smp "${VM_SMP:-2}"
		-kernel "$kernel" -initrd "$initrd" -append "$append"
		-fsdev "local,id=top,path=$top,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-device,fsdev=top,mount_tag=top
		-fsdev "local,id=vm,path=$vmdir,security_model=none,multidevs=remap"
		-device virtio-9p-device,fsdev=vm,mount_tag=vmdir)
fi
read -r -a qemu_extra <<<"${VM_QEMU_ARGS:-}"
args+=("${qemu_extra[@]}")
if [ "${VM_SCRATCH_MB:-256}" != 0 ]; then
	rm -f "$vmdir/scratch.img"
	truncate -s "${VM_SCRATCH_MB:-256}M" "$vmdir/scratch.img"
	mkfs.ext4 -q -F "$vmdir/scratch.img" || die "mkfs.ext4 failed (e2fsprogs: scripts/deps.sh)"
	throttle=${VM_SCRATCH_IOPS:+,throttling.iops-total=$VM_SCRATCH_IOPS}
	if [ "$arch" = arm64 ]; then
		args+=(-drive "file=$vmdir/scratch.img,if=none,id=scratch,format=raw,cache=unsafe$throttle"
		       -device virtio-blk-device,drive=scratch)
	else
	args+=(-drive "file=$vmdir/scratch.img,if=virtio,format=raw,cache=unsafe$throttle")
	fi
fi

# Kernel lines carry a "[    1.234567]" stamp (printk.time=1); only those are
# scanned, so a test printing "WARNING:" does not fail the run.
bad='WARNING:|BUG:|BUG [^ ]+ \(|KFENCE:|KASAN:|UBSAN:|kmemleak: [0-9]+ new suspected|Oops|Kernel panic|general protection fault|Call Trace:|possible circular locking|possible recursive locking|inconsistent lock state|INFO: |^={20,}$|soft lockup|hard LOCKUP|rcu_.*stall|list_(?:add|del) corruption|Unable to handle kernel|kernel BUG at|unreferenced object'
export VM_BAD_RE=$bad

qemu="qemu-system-x86_64"
[ "$arch" = arm64 ] && qemu="qemu-system-aarch64"
start=$SECONDS
if [ $shell = 1 ]; then
	echo "vm.sh: interactive guest ($accel); 'exit' or Ctrl-D powers off, Ctrl-A x kills QEMU" >&2
	timeout -k 5 --foreground "$timeout" "$qemu" "${args[@]}" \
		-chardev "stdio,id=con,mux=on,signal=off,logfile=$log" \
		-serial chardev:con -mon chardev=con,mode=readline
	qrc=$?
else
	# Console to console.log (without the CRs); to stdout only what is not
	# a kernel message, plus kernel problems; all of it with VM_VERBOSE=1.
	timeout -k 5 "$timeout" "$qemu" "${args[@]}" -serial stdio </dev/null 2>&1 |
		VM_LOG=$log VM_VERBOSE=${VM_VERBOSE:-0} perl -ne '
			BEGIN {
				$| = 1;
				open(LOG, ">", $ENV{VM_LOG}) or die "$ENV{VM_LOG}: $!";
				LOG->autoflush(1);
				$bad = $ENV{VM_BAD_RE};
			}
			s/\r//g;
			print LOG;
			if ($ENV{VM_VERBOSE} || !/\[ *\d+\.\d+\]/) {
				print;
			} elsif (/\[ *\d+\.\d+\] (.*)/) {
				my $msg = $1;
				print "[kernel] $msg\n" if $msg =~ /$bad/;
			}'
	qrc=${PIPESTATUS[0]}
fi
secs=$((SECONDS - start))

# --- verdict ---------------------------------------------------------------

tainted=$(cat "$vmdir/tainted" 2>/dev/null || echo "?")
problems=$(tr -d '\r' <"$log" | perl -ne 'print if /\[ *\d+\.\d+\] (.*)/ && $1 =~ /$ENV{VM_BAD_RE}/' | head -20)
# Taint bits that mean the kernel itself complained: B(5) D(7) W(9) L(14) (see
# Documentation/admin-guide/tainted-kernels.rst).
if [ "$tainted" != "?" ] && [ $((tainted & (1 << 5 | 1 << 7 | 1 << 9 | 1 << 14))) != 0 ]; then
	problems+=$'\n'"kernel tainted: $tainted"
fi

rc=$(cat "$status" 2>/dev/null)
case "$rc" in ''|*[!0-9]*) rc= ;; esac
# A command whose guest cannot write to $VMDIR any more (QEMU's 9p devices
# do not come back from a suspend to RAM) reports its status and the taint
# on the console instead: "vm-status: RC tainted T" (scripts/check.sh).
if [ -z "$rc" ] && line=$(grep -a -o 'vm-status: [0-9]* tainted [0-9]*' "$log" | tail -n 1) && [ -n "$line" ]; then
	read -r _ rc _ tainted <<<"$line"
	if [ $((tainted & (1 << 5 | 1 << 7 | 1 << 9 | 1 << 14))) != 0 ]; then
		problems+=$'\n'"kernel tainted: $tainted"
	fi
fi

if [ -n "$problems" ]; then
	echo "vm.sh: FAIL: the kernel reported problems (guest status ${rc:-none}):" >&2
	echo "$problems" | sed 's/^/  /' >&2
	echo "vm.sh: last 60 lines of $log:" >&2
	tail -n 60 "$log" | sed 's/^/  | /' >&2
	exit 125
fi
if [ -z "$rc" ]; then
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		why="timed out after ${timeout}s"
	else
		why="QEMU exited with $qrc"
	fi
	echo "vm.sh: FAIL: the guest reported no exit status ($why)" >&2
	echo "vm.sh: last 60 lines of $log:" >&2
	tail -n 60 "$log" | sed 's/^/  | /' >&2
	exit 124
fi
boot=$(sed -n 's/^\[ *\([0-9.]*\)\] guest-init: running.*/\1/p' "$log" | head -1)
cs=$(sed -n 's/.*guest-init: clocksource \(.*\)/\1/p' "$log" | head -1)
if [ "$arch" = arm64 ]; then
	cs=${cs%$'\r'}	# --shell: the console log keeps its CRs
	[ "$cs" = arch_sys_counter ] || [ -z "$cs" ] ||
		echo "vm.sh: warning: the guest's clocksource was $cs, not arch_sys_counter" >&2
else
[ "$cs" = tsc ] || [ -z "$cs" ] ||
	echo "vm.sh: warning: the guest's clocksource was $cs, not tsc (set VM_TSC_KHZ?)" >&2
fi
if [ "$icount" = 1 ] && [ "$arch" = x86 ]; then
	# What the guest made of the TSC: tsc_early_khz, then a refinement
	# against the HPET, which runs on the same virtual clock; and the
	# clocksource it ended with (tsc-early until that refinement, which
	# can come after user space started: the kernel's last word counts).
	mhz=$(sed -n -e 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' \
		     -e 's/.*tsc: Detected \([0-9.]*\) MHz TSC.*/\1/p' \
		     -e 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' "$log" | tail -n 1)
	last=$(sed -n 's/.*clocksource: Switched to clocksource \([^ ]*\).*/\1/p' "$log" | tail -n 1)
	echo "vm.sh: icount: guest TSC ${mhz:-?} MHz (1000 = one tick per instruction), clocksource ${last:-?}" >&2
	if [ "$last" != tsc ] || ! awk -v m="${mhz:-0}" 'BEGIN { exit !(m > 999 && m < 1001) }'; then
		echo "vm.sh: warning: under -icount the guest should end on the TSC at 1000 MHz" >&2
	fi
fi
echo "vm.sh: guest exited with status $rc after ${secs}s ($accel; user space at ${boot:-?}s uptime)" >&2
exit "$rc"
