#!/bin/sh
# bench/vfctl: `vfctl list --local -o json` over 1,024 simulated VFs (8 PFs of 128), the
# binary as a whole process, against bench/syscall-replay, a C program that makes the same
# syscalls (the scan's opens, reads, readlinks and directory listings, listed by bench/scan
# --plan, then the same number of bytes written) and links libc alone. Pair by pair
# (bench/pairs), same run: prints both medians and the ratio.
set -eu
b=${top_builddir:-$(dirname "$0")/..}
N=${BENCH_ROUNDS:-60}
tmp=$(mktemp -d /tmp/vfagent-bench-vfctl-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# the binary itself, not libtool's wrapper script (a shell that would be timed with it)
vfctl=$b/agent/vfctl/.libs/vfctl
[ -x "$vfctl" ] || vfctl=$b/agent/vfctl/vfctl
export LD_LIBRARY_PATH="$b/libvfpool/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$b/bench/mkhost" "$tmp/sys" 8
"$b/bench/scan" --plan "$tmp/sys" >"$tmp/plan"
"$vfctl" -r "$tmp/sys" list --local -o json >"$tmp/list.json"
vfs=$(grep -o '"pci": "[^"]*"' "$tmp/list.json" | wc -l)
[ "$vfs" -ge 1024 ] || { echo "bench/vfctl: the list has $vfs devices, not 1,032"; exit 1; }
bytes=$(wc -c <"$tmp/list.json")
echo "bench/vfctl: $vfs devices listed, $bytes bytes of JSON, $(wc -l <"$tmp/plan") syscall steps"
libs=$(ldd "$vfctl" | grep -c '=>' || true)
echo "vfctl links $libs shared libraries; bench/syscall-replay links $(ldd "$b/bench/syscall-replay" | grep -c '=>' || true)"
printf 'A = vfctl list --local -o json, B = the same syscalls from a C loop: '
"$b/bench/pairs" "$N" "$vfctl" -r "$tmp/sys" list --local -o json -- \
	"$b/bench/syscall-replay" "$tmp/plan" "$bytes"
