#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: boot the debug kernel, run the installed kselftests in it, then
# the harness's own host-side checks (scripts/test-harness.sh).  Every test
# case counts; a kernel problem during the kselftest boot (WARNING, lockdep,
# KFENCE, ... or no exit status) counts as one more failure.  The last line
# is "N passed, N failed"; the exit status is 1 when anything failed.
# Environment: KSFT_INSTALL (the kselftest tree), VM_KERNEL, CHECK_HARNESS=0
# (skip the harness self-checks, ~1.5 min), CHECK_KMEMLEAK=1 (the kernel has
# kmemleak: scan for leaks after the kselftests, in the same boot; one more
# test case; make check-kasan).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kbuild=${KBUILD:-$top/build/linux}
install=${KSFT_INSTALL:-$top/build/kselftest/install}
pass=0
fail=0
failed=()

mkdir -p "$top/build"

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

start=$SECONDS
echo "== kselftests ($(cat "$install/TARGETS" 2>/dev/null || echo '?')) in the guest"
out=$top/build/check-kselftests.out
guest=("$top/selftests/run-kselftests.sh" -d "$install")
[ "${CHECK_KMEMLEAK:-0}" = 0 ] || guest=("$top/selftests/with-kmemleak.sh" "${guest[@]}")
"$top/scripts/vm.sh" --kernel "${VM_KERNEL:-$kbuild/arch/x86/boot/bzImage}" -- \
	"${guest[@]}" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
add kselftests "$out"
if [ "${CHECK_KMEMLEAK:-0}" != 0 ]; then
	if grep -qx 'kmemleak: no leaks' "$out"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed+=("kmemleak: $(grep '^kmemleak: ' "$out" | tail -n 1 || echo 'no scan') (see $out)")
	fi
fi
case "$rc" in
124|125)
	fail=$((fail + 1))
	failed+=("kernel: the guest kernel reported a problem or hung (vm.sh status $rc; see ${VM_DIR:-build/vm}/console.log)") ;;
*)
	pass=$((pass + 1)) ;;
esac
echo "== kselftests: $((SECONDS - start)) s"

if [ "${CHECK_HARNESS:-1}" != 0 ]; then
	start=$SECONDS
	echo "== harness self-checks"
	out=$top/build/check-harness.out
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
