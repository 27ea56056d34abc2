#!/bin/sh
# make fuzz FUZZ_SECONDS=N: builds every harness with clang's libFuzzer and
# ASan+UBSan (build-fuzz/, configure --enable-fuzz), runs each for N seconds
# (default 60) from its seed corpus in tests/fuzz/NAME/, and prints the
# executions per harness. New corpus entries stay in build-fuzz/corpus/;
# a crash stops the run and leaves its input in build-fuzz/crashes/: fix
# the bug, then add the input to tests/fuzz/NAME/ so make check replays it.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${FUZZ_SECONDS:-60}
b=$top/build-fuzz
command -v clang >/dev/null || { echo "fuzz: clang is needed (apt-get install clang libclang-rt-14-dev)"; exit 1; }
BUILD_DIR=$b CC=clang "$top/contrib/build.sh" --enable-fuzz
make -C "$b" -s fuzzers >/dev/null
mkdir -p "$b/crashes"
printf '%-12s %12s %10s\n' harness executions "exec/s"
for h in pci-addr config netlink domain-xml domain-xml-libvirt mac sysfs api; do
	mkdir -p "$b/corpus/$h"
	if ! ASAN_OPTIONS=detect_leaks=1 "$b/tests/fuzz/fuzz-$h" -max_total_time="$seconds" \
		-print_final_stats=1 -artifact_prefix="$b/crashes/$h-" -max_len=65536 \
		"$b/corpus/$h" "$top/tests/fuzz/$h" >"$b/fuzz-$h.log" 2>&1; then
		tail -40 "$b/fuzz-$h.log"
		echo "fuzz: $h found a crash; its input is in $b/crashes/ ($h-*)"
		exit 1
	fi
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$b/fuzz-$h.log")
	printf '%-12s %12s %10s\n' "$h" "$n" "$((n / seconds))"
done
