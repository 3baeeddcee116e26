#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: boot the debug kernel, run the installed kselftests in it, then
# the harness's own host-side checks (scripts/test-harness.sh).  Every test
# case counts; a kernel problem during the kselftest boot (WARNING, lockdep,
# KFENCE, ... or no exit status) counts as one more failure, and so does, on
# x86, every case of t_clocksource or t_compat that skips (the guest has the
# HPET and the ia32 emulation they need).  The last line is "N passed, N
# failed"; the exit status is 1 when anything failed.
# Environment: KSFT_INSTALL (the kselftest tree), VM_KERNEL, CHECK_HARNESS=0
# (skip the harness self-checks, ~1.5 min), CHECK_KMEMLEAK=1 (the kernel has
# kmemleak: scan for leaks after the kselftests, in the same boot; one more
# test case; make check-kasan), LOAD=1 (a busy loop per host core during the
# whole run, scripts/load.sh: the timing checks must hold under load),
# REPEAT=N (boot and run the kselftests N times, stop at the first run that
# fails and name it; the counts are summed over the runs), CHECK_RACE=0 (no
# boot under multi-threaded TCG for t_race, which otherwise runs there and
# not in the main boot), RACE_REPEAT=N (that boot N times), CHECK_SUSPEND=0
# (no boot that suspends to RAM for t_suspend).  The outputs go to
# build/check-*.out, or to $VM_DIR if set (runs beside each other).  BASE=6.12
# (scripts/base.sh): build/6.12/ instead of build/ for all of it.
# ARCH=arm64: the arm64 guest (build/linux-arm64, build/kselftest-arm64/install,
# outputs and VM_DIR in build/vm-arm64; see scripts/vm.sh).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
if [ "${LOAD:-0}" != 0 ] && [ -z "${CHECK_UNDER_LOAD:-}" ]; then
	CHECK_UNDER_LOAD=1 exec "$top/scripts/load.sh" -- "$0" "$@"
fi
repeat=${REPEAT:-1}
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "check: REPEAT=$repeat: not a positive number" >&2; exit 2; }
kbuild=${KBUILD:-$BUILD_ROOT/linux}
install=${KSFT_INSTALL:-$BUILD_ROOT/kselftest/install}
image=arch/x86/boot/bzImage
if [ "${ARCH:-x86}" = arm64 ]; then
	kbuild=${KBUILD:-$BUILD_ROOT/linux-arm64}
	install=${KSFT_INSTALL:-$BUILD_ROOT/kselftest-arm64/install}
	image=arch/arm64/boot/Image
	export VM_DIR=${VM_DIR:-$BUILD_ROOT/vm-arm64}
fi
pass=0
fail=0
failed=()

mkdir -p "$BUILD_ROOT"

# add NAME OUTPUT_FILE: add the "N passed, N failed" last line of a run.
add() {
	local line p f

	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$2" | tail -n 1)
	if [ -z "$line" ]; then
		fail=$((fail + 1))
		failed+=("$1: printed no 'N passed, N failed' line")
		return
	fi
	read -r p _ f _ <<<"$line"
	pass=$((pass + p))
	fail=$((fail + f))
	[ "$f" = 0 ] || failed+=("$1: $f failed")
}

# no_skips WHAT OUTPUT PROGRAM...: every skipped case of a coarse_stat
# PROGRAM in the kselftest OUTPUT, or the whole program skipped, is one more
# failure (run-kselftests.sh counts a skip neither way).
no_skips() {
	local what=$1 out=$2 prog line

	shift 2
	for prog in "$@"; do
		while IFS= read -r line; do
			fail=$((fail + 1))
			failed+=("$what: coarse_stat:$prog skipped, which it must not here: $line")
		done < <(awk -v prog="$prog" '
			$0 == "# selftests: coarse_stat: " prog { inside = 1; why = ""; next }
			inside && /^# 1\.\.0 # *SKIP/ { why = substr($0, 3); next }
			inside && /^(not )?ok [0-9]+ / {
				if (index($0, "selftests: coarse_stat: " prog) && /# *SKIP/)
					print $0 (why == "" ? "" : " (" why ")")
				inside = 0
				next
			}
			inside && /^# +(not )?ok [0-9]+ .*# *SKIP/ { print }' "$out")
	done
}

# kernel_status RC WHO CONSOLE: vm.sh's status 124/125 (the kernel reported a
# problem, or hung) is one more failure; any other, one more pass.
kernel_status() {
	case "$1" in
	124|125)
		fail=$((fail + 1))
		failed+=("kernel: $2 reported a problem or hung (vm.sh status $1; see $3)") ;;
	*)
		pass=$((pass + 1)) ;;
	esac
}

guest=("$top/selftests/run-kselftests.sh" -d "$install")
# t_race needs vCPUs that run at the same time: its own boot, below.  The
# main boot names every other program (-t; 6.12's run_kselftest.sh has no
# --skip).
race=()
if [ -x "$install/coarse_stat/t_race" ] && [ "${CHECK_RACE:-1}" != 0 ]; then
	race=("$top/selftests/hooks-on-one-cpu.sh" "${guest[@]}" -t coarse_stat:t_race)
	while read -r t; do
		[ "$t" = coarse_stat:t_race ] || guest+=(-t "$t")
	done <"$install/kselftest-list.txt"
fi
[ "${CHECK_KMEMLEAK:-0}" = 0 ] || guest=("$top/selftests/with-kmemleak.sh" "${guest[@]}")
outdir=${VM_DIR:-$BUILD_ROOT}
mkdir -p "$outdir"
out=$outdir/check-kselftests.out
for ((run = 1; run <= repeat; run++)); do
	start=$SECONDS
	fail0=$fail
	what=kselftests
	[ "$repeat" = 1 ] || what="kselftests (run $run of $repeat)"
	echo "== $what ($(cat "$install/TARGETS" 2>/dev/null || echo '?')) in the guest"
	"$top/scripts/vm.sh" --kernel "${VM_KERNEL:-$kbuild/$image}" -- \
		"${guest[@]}" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	add "$what" "$out"
	# The x86 guest has an HPET and an ACPI PM timer (QEMU's pc machine)
	# and runs ia32 programs (CONFIG_IA32_EMULATION, scripts/x86.config):
	# t_clocksource (root, which the guest is) and t_compat run every case.
	[ "${ARCH:-x86}" = arm64 ] || no_skips "$what" "$out" t_clocksource t_compat
	if [ "${CHECK_KMEMLEAK:-0}" != 0 ]; then
		if grep -qx 'kmemleak: no leaks' "$out"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			failed+=("kmemleak: $(grep '^kmemleak: ' "$out" | tail -n 1 || echo 'no scan') (see $out)")
		fi
	fi
	kernel_status "$rc" "the guest kernel" "${VM_DIR:-$BUILD_ROOT/vm}/console.log"
	echo "== $what: $((SECONDS - start)) s"
	if [ "$fail" != "$fail0" ]; then
		if [ "$repeat" != 1 ]; then
			echo "== kselftests: run $run of $repeat failed; no more runs (its output: $out)"
			failed+=("kselftests: run $run of $repeat failed, the runs after it were not made")
		fi
		break
	fi
done

# The KUnit suite of the series (CONFIG_COARSE_STAT_KUNIT_TEST, in
# debug.config) runs as the main boot's kernel starts: its cases count too,
# from the KTAP on the console.  No suite there is one failure, so that a
# config change cannot drop it unseen.
kunit_out=$outdir/check-kunit.out
sed -n 's/^\[[ 0-9.]*\] //; /# Subtest: coarse_stat$/,/^\(not \)\{0,1\}ok [0-9]* coarse_stat$/p' \
	"${VM_DIR:-$BUILD_ROOT/vm}/console.log" >"$kunit_out" 2>/dev/null
p=$(grep -cE '^    ok [0-9]+ ' "$kunit_out")
f=$(grep -cE '^    not ok [0-9]+ ' "$kunit_out")
echo "== KUnit (the coarse_stat suite, at the main boot): $p passed, $f failed"
grep -E '^ *(not )?ok [0-9]+ |^ *# .*(Expected|failed)' "$kunit_out"
pass=$((pass + p))
fail=$((fail + f))
[ "$f" = 0 ] || failed+=("KUnit: $f failed (see $kunit_out)")
if ! grep -qE '^(not )?ok [0-9]+ coarse_stat$' "$kunit_out"; then
	fail=$((fail + 1))
	failed+=("KUnit: no coarse_stat suite on the main boot's console (see $kunit_out)")
fi

# The cross-CPU race tests (t_race) under multi-threaded TCG, one host
# thread per vCPU, so that readers and the kernel's writers really run at
# once; 4 vCPUs on the 2 host cores.  The static key is patched in once, by
# the first write of kernel.coarse_stat_thread, and the QEMU 7.2
# text-patching problem of scripts/vm.sh can hit even that one patching
# (seen once: "Oops: int3" in __schedule() on 6.12): the guest boots with
# maxcpus=1, and selftests/hooks-on-one-cpu.sh writes the sysctl before it
# brings the other CPUs online.  The KUnit suite, which runs at every boot
# of the check kernel, also patches the key (a kthread registers in
# cs_test_real_sleep): the race guest boots with kunit.enable=0 (the main
# boot runs the suite).
# RACE_REPEAT=N: N boots in a row, stopping at the first that fails.
# The preemption models distributions boot (PREEMPT_DYNAMIC), and full
# dynticks on half of the race guest's CPUs: the main boot keeps the
# config's full preemption; 7.3 offers only full and lazy on x86, 6.12 no
# lazy.
case "$BASE" in
6.12)	boot_race="preempt=voluntary nohz_full=2-3 kunit.enable=0 maxcpus=1"; boot_suspend="preempt=none" ;;
*)	boot_race="preempt=lazy nohz_full=2-3 kunit.enable=0 maxcpus=1"; boot_suspend="preempt=lazy" ;;
esac
race_repeat=${RACE_REPEAT:-1}
[[ "$race_repeat" =~ ^[1-9][0-9]*$ ]] || { echo "check: RACE_REPEAT=$race_repeat: not a positive number" >&2; exit 2; }
for ((run = 1; run <= race_repeat && ${#race[@]}; run++)); do
	start=$SECONDS
	fail0=$fail
	what="race tests (multi-threaded TCG)"
	[ "$race_repeat" = 1 ] || what="race tests (multi-threaded TCG, run $run of $race_repeat)"
	echo "== $what in the guest"
	out=$outdir/check-race.out
	VM_TCG_THREAD=multi VM_SMP=${VM_RACE_SMP:-4} VM_DIR=$outdir/vm-race \
		"$top/scripts/vm.sh" --kernel "${VM_KERNEL:-$kbuild/$image}" --append "$boot_race" -- \
		"${race[@]}" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	add "$what" "$out"
	kernel_status "$rc" "the race guest" "$outdir/vm-race/console.log"
	echo "== $what: $((SECONDS - start)) s"
	[ "$fail" = "$fail0" ] || break
done

# add_own_tap WHAT PROGRAM OUT: count the TAP of a program a guest of its
# own ran directly (not through run_kselftest.sh): every result counts, and
# a skip or no totals line is a failure here.
add_own_tap() {
	local p f
	p=$(grep -cE '^ok [0-9]+ ' "$3")
	f=$(grep -cE '^not ok [0-9]+ ' "$3")
	pass=$((pass + p))
	fail=$((fail + f))
	[ "$f" = 0 ] || failed+=("$1: $f failed (see $3)")
	if ! grep -qE '^# Totals: pass:[0-9]+ fail:[0-9]+ xfail:0 xpass:0 skip:0 error:0' "$3"; then
		fail=$((fail + 1))
		failed+=("$1: $2 did not run to its end, or skipped (see $3)")
	fi
}

# Suspend to RAM (t_suspend) in a guest of its own: QEMU's pc machine with S3
# enabled, woken by the CMOS RTC alarm.  Its 9p file systems do not come
# back from the resume, and even a process exit then hangs (releasing a 9p
# file waits for the server), so the command does not wait for t_suspend to
# exit: bash builtins read its TAP, report the status and the taint on the
# console at its totals line (vm.sh reads them there) and reboot through
# sysrq.  No scratch disk: ext4's lazy inode-table init on it, started at
# the mount, had a read in flight across the suspend that never completed,
# and the resume then waited forever in filesystems_thaw() (1 boot in 5 on
# 7.3; a sysrq-t showed ext4lazyinit in D and t_suspend in super_lock()).
# x86 only (arm64's virt machine has no suspend to RAM); CHECK_SUSPEND=0
# leaves it out.
if [ "${ARCH:-x86}" = x86 ] && [ -x "$install/coarse_stat/t_suspend" ] &&
   [ "${CHECK_SUSPEND:-1}" != 0 ]; then
	start=$SECONDS
	fail0=$fail
	echo "== suspend to RAM (S3) in the guest"
	out=$outdir/check-suspend.out
	# shellcheck disable=SC2016 # expanded in the guest
	VM_S3=1 VM_SCRATCH_MB=0 VM_DIR=$outdir/vm-suspend \
		"$top/scripts/vm.sh" --kernel "${VM_KERNEL:-$kbuild/$image}" --append "$boot_suspend" -- \
		bash -c 'report() {
				echo "vm-status: $1 tainted $(</proc/sys/kernel/tainted)" >/dev/kmsg
				echo b >/proc/sysrq-trigger
			}
			"$1" | while IFS= read -r l; do
				printf "%s\n" "$l"
				case $l in
				"# Totals: pass:"*" fail:0 "*) report 0 ;;
				"# Totals:"*|"Bail out!"*) report 1 ;;
				esac
			done
			report 2' t_suspend "$install/coarse_stat/t_suspend" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	add_own_tap suspend t_suspend "$out"
	kernel_status "$rc" "the suspend guest" "$outdir/vm-suspend/console.log"
	echo "== suspend to RAM: $((SECONDS - start)) s"
fi

# No IPI to an isolated CPU from an unprivileged user by default (t_isolated)
# in a guest of its own: 4 vCPUs with nohz_full=2-3, single-threaded TCG (the
# text patching it counts is what QEMU 7.2's multi-threaded TCG mishandles,
# see scripts/vm.sh), and the default sysctls: no other program has allowed
# registrations.  x86 only: it counts the "CAL" row of /proc/interrupts.
# CHECK_ISOLATED=0 leaves it out.
if [ "${ARCH:-x86}" = x86 ] && [ -x "$install/coarse_stat/t_isolated" ] &&
   [ "${CHECK_ISOLATED:-1}" != 0 ]; then
	start=$SECONDS
	echo "== isolated CPUs (nohz_full=2-3) in the guest"
	out=$outdir/check-isolated.out
	VM_SMP=4 VM_DIR=$outdir/vm-isolated \
		"$top/scripts/vm.sh" --kernel "${VM_KERNEL:-$kbuild/$image}" --append "nohz_full=2-3" -- \
		"$install/coarse_stat/t_isolated" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	add_own_tap isolated t_isolated "$out"
	kernel_status "$rc" "the isolated-CPU guest" "$outdir/vm-isolated/console.log"
	echo "== isolated CPUs: $((SECONDS - start)) s"
fi

# The real programs that use the pages (consumers/, not kernel code; built
# by 'make consumers'), each in a guest of its own: pg_coarse_stat against a
# real PostgreSQL 15 server (its data directory on a 1 GiB scratch disk, so
# that a scan after dropping the caches reads the disk), and cstime.  Their
# TAP counts like t_suspend's.  x86 and BASE=7.3 only (the 6.12 backport has
# the same ABI; the programs are the project's, not the series' tests, and CI
# runs them once); CHECK_CONSUMERS=0 leaves them out.
# On a host kernel without the series (CI's, or this machine's), each also
# runs its host-test.sh there: the program still works and says why it has
# no times.
if [ "${ARCH:-x86}" = x86 ] && [ "$BASE" = 7.3 ] && [ "${CHECK_CONSUMERS:-1}" != 0 ]; then
	for c in pg_coarse_stat cstime; do
		if [ ! -e /proc/sys/kernel/coarse_stat_period_us ]; then
			echo "== consumers/$c on the host (no coarse_stat in its kernel)"
			out=$outdir/check-$c-host.out
			"$top/consumers/$c/host-test.sh" 2>&1 | tee "$out"
			add_own_tap "consumers/$c (host)" host-test.sh "$out"
		fi
		start=$SECONDS
		echo "== consumers/$c in the guest"
		out=$outdir/check-$c.out
		# cstime's reader: 4 KiB reads at 250 a second, so that its
		# time goes to the disk, not to a TCG guest's slow switches.
		scratch=256 iops=250
		[ "$c" = pg_coarse_stat ] && scratch=1024 iops=
		VM_SMP=2 VM_SCRATCH_MB=$scratch VM_SCRATCH_IOPS=$iops VM_DIR=$outdir/vm-$c \
			"$top/scripts/vm.sh" --kernel "${VM_KERNEL:-$kbuild/$image}" -- \
			"$top/consumers/$c/guest-test.sh" 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
		add_own_tap "consumers/$c" guest-test.sh "$out"
		kernel_status "$rc" "the $c guest" "$outdir/vm-$c/console.log"
		echo "== consumers/$c: $((SECONDS - start)) s"
	done
fi

if [ "${CHECK_HARNESS:-1}" != 0 ]; then
	start=$SECONDS
	echo "== harness self-checks"
	out=$outdir/check-harness.out
	"$top/scripts/test-harness.sh" 2>&1 | tee "$out"
	add harness "$out"
	echo "== harness self-checks: $((SECONDS - start)) s"
fi

echo
for f in "${failed[@]}"; do
	echo "FAILED: $f"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
