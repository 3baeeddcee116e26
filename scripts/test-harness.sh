#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check that the harness catches what it must (host side, part of make check):
#   - the TAP counter counts cases, crashes, skips (no boot);
#   - a failing kselftest makes the run fail, with the right counts;
#   - a kernel "WARNING:" in the log fails the run, whatever the command says;
#   - a kernel crash (sysrq-c: the path panic_on_warn takes) fails the run;
#   - a guest that never finishes fails the run (timeout).
# Each boot takes 10-25 s under TCG.  The guests use VM_DIR=build/vm-harness,
# so build/vm/console.log stays the kselftest run's (BASE=6.12: build/6.12/...).
# Last line: "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
src=${LINUX:-$base_tree}
kernel=${VM_KERNEL:-${KBUILD:-$BUILD_ROOT/linux}/arch/x86/boot/bzImage}
work=$BUILD_ROOT/harness
vm_dir=$BUILD_ROOT/vm-harness
# ARCH=arm64: the arm64 guest (scripts/vm.sh), in directories of its own.
if [ "${ARCH:-x86}" = arm64 ]; then
	kernel=${VM_KERNEL:-${KBUILD:-$BUILD_ROOT/linux-arm64}/arch/arm64/boot/Image}
	work=$BUILD_ROOT/harness-arm64
	vm_dir=$BUILD_ROOT/vm-harness-arm64
fi

export VM_DIR=$vm_dir VM_SCRATCH_MB=0 VM_KERNEL=$kernel
rm -rf "$work"
mkdir -p "$work"

# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"

# vm EXPECTED_STATUS NAME [vm.sh args] -- command: boot, compare the status.
vm() {
	local want=$1 name=$2 rc

	shift 2
	"$top/scripts/vm.sh" "$@" >"$work/$name.out" 2>&1
	rc=$?
	[ "$rc" = "$want" ]
	result "$name (vm.sh status $rc, want $want)" $? "see $work/$name.out"
}

# 1. The TAP counter, on canned output.
cat >"$work/sample.tap" <<'EOF'
TAP version 13
1..5
# selftests: fake: cases
# TAP version 13
# 1..3
# ok 1 global.a
# ok 2 global.b # SKIP not here
# not ok 3 global.c
not ok 1 selftests: fake: cases # exit=1
ok 2 selftests: fake: plain
# selftests: fake: crash
# 1..2
# ok 1 first
not ok 3 selftests: fake: crash # exit=139
ok 4 selftests: fake: skipped # SKIP
EOF
out=$("$top/selftests/run-kselftests.sh" --parse "$work/sample.tap")
rc=$?
[ "$rc" = 1 ] && [ "$(tail -n 1 <<<"$out")" = "3 passed, 3 failed" ] &&
	grep -q 'SKIP fake: skipped' <<<"$out" && grep -q 'SKIP fake: cases: global.b' <<<"$out"
result "TAP counter: cases, crash, skip, unreported program" $? "$(tail -n 1 <<<"$out")"

# 2. A failing kselftest, through the real runner in the guest.
ksft=$work/ksft
mkdir -p "$ksft/kselftest" "$ksft/harness"
cp "$src/tools/testing/selftests/run_kselftest.sh" "$ksft/"
cp "$src"/tools/testing/selftests/kselftest/*.sh "$src"/tools/testing/selftests/kselftest/*.pl "$ksft/kselftest/"
printf 'harness:pass.sh\nharness:fail.sh\n' >"$ksft/kselftest-list.txt"
printf '#!/bin/sh\necho "TAP version 13"\necho "1..2"\necho "ok 1 one"\necho "ok 2 two"\n' >"$ksft/harness/pass.sh"
printf '#!/bin/sh\necho "TAP version 13"\necho "1..1"\necho "not ok 1 deliberately failing"\nexit 1\n' >"$ksft/harness/fail.sh"
chmod +x "$ksft"/*.sh "$ksft"/harness/*.sh
vm 1 failing-kselftest -- "$top/selftests/run-kselftests.sh" -d "$ksft"
[ "$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/failing-kselftest.out" | tail -n 1)" = "2 passed, 1 failed" ]
result "failing kselftest counted as 2 passed, 1 failed" $?

# 3. A kernel warning in the log fails a run whose command succeeded.
vm 125 kernel-warning -- sh -c 'echo "WARNING: injected by test-harness" >/dev/kmsg'

# 4. A kernel crash (what panic_on_warn=1 makes of a real WARN).
vm 125 kernel-crash -- sh -c 'echo c >/proc/sysrq-trigger; sleep 60'

# 5. A guest that never finishes.
vm 124 timeout --timeout 10 -- sleep 600

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
