#!/bin/sh
# Every test: -Werror build, unit and CLI tests, distcheck, the tests again under
# ASan+UBSan and under valgrind, and cppcheck with a zero-findings baseline.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/deps.sh" --tests
step() { printf '\n== %s\n' "$*"; }

step "build (-Werror) and make check"
"$top/contrib/build.sh" --enable-werror
make -C "$top/build" -s check || { cat "$top"/build/tests/*.log; exit 1; }

step "make distcheck"
make -C "$top/build" -s distcheck >/dev/null 2>"$top/build/distcheck.err" ||
	{ tail -50 "$top/build/distcheck.err"; exit 1; }

step "make check under AddressSanitizer + UBSan"
BUILD_DIR="$top/build-asan" "$top/contrib/build.sh" --enable-werror --enable-asan
make -C "$top/build-asan" -s check || { cat "$top"/build-asan/tests/*.log; exit 1; }

step "unit tests under valgrind"
# The crash suite is left out: its children, slowed down 20x, are killed before they work.
# It runs under ASan above.
(cd "$top/build" && CK_FORK=no VFAGENT_SKIP_SUITES=crash ./libtool --mode=execute valgrind --quiet --error-exitcode=1 \
	--leak-check=full --errors-for-leak-kinds=definite,indirect tests/check-all >/dev/null)

step "cppcheck"
make -C "$top/build" -s cppcheck

step "fuzzing: every harness for ${FUZZ_SECONDS:-60} s (make fuzz)"
FUZZ_SECONDS=${FUZZ_SECONDS:-60} sh "$top/tests/fuzz/run.sh"

step "the QEMU SR-IOV lab (make check-lab)"
rc=0
sh "$top/tests/lab/run.sh" || rc=$? # not through make: its exit code 77 (skipped) must survive
[ $rc = 0 ] || [ $rc = 77 ] || exit 1
if [ $rc = 77 ]; then echo "(skipped: its downloads are unreachable)"; fi

step "all tests passed"
