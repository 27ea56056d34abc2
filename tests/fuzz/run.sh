#!/bin/sh
# make fuzz FUZZ_SECONDS=N: builds every harness with clang's libFuzzer and
# ASan+UBSan (build-fuzz/, configure --enable-fuzz), runs each for N seconds
# (default 60; as many at once as there are CPUs) from its seed corpus in
# tests/fuzz/NAME/, and prints the executions per harness. New corpus
# entries stay in build-fuzz/corpus/;
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
# one harness: its log in build-fuzz/fuzz-NAME.log, its exit status in fuzz-NAME.rc
fuzz_one() {
	mkdir -p "$b/corpus/$1"
	rc=0
	ASAN_OPTIONS=detect_leaks=1 "$b/tests/fuzz/fuzz-$1" -max_total_time="$seconds" \
		-print_final_stats=1 -artifact_prefix="$b/crashes/$1-" -max_len=65536 \
		"$b/corpus/$1" "$top/tests/fuzz/$1" >"$b/fuzz-$1.log" 2>&1 || rc=$?
	echo "$rc" >"$b/fuzz-$1.rc"
}
# as many harnesses at once as there are CPUs: each is single-threaded
jobs=$(nproc)
set -- pci-addr config netlink domain-xml domain-xml-libvirt mac sysfs api
all="$*"
while [ $# -gt 0 ]; do
	n=0
	while [ $# -gt 0 ] && [ $n -lt "$jobs" ]; do
		fuzz_one "$1" &
		shift
		n=$((n + 1))
	done
	wait
done
printf '%-12s %12s %10s\n' harness executions "exec/s"
for h in $all; do
	if [ "$(cat "$b/fuzz-$h.rc")" != 0 ]; then
		tail -40 "$b/fuzz-$h.log"
		echo "fuzz: $h found a crash; its input is in $b/crashes/ ($h-*)"
		exit 1
	fi
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$b/fuzz-$h.log")
	printf '%-12s %12s %10s\n' "$h" "$n" "$((n / seconds))"
done
