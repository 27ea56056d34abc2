#!/bin/sh
# A container attach (down, move + rename, MAC, address, up) through the agent's
# netlink code against ip -batch doing the same operations, on veth stand-ins,
# same run: N links per round, median of the rounds. Needs root.
set -eu
b=${top_builddir:-.}
n=${BENCH_NETNS_LINKS:-100}
rounds=${BENCH_NETNS_ROUNDS:-7}
[ "$(id -u)" = 0 ] || { echo "bench/netns: needs root"; exit 0; }
tmp=$(mktemp -d /tmp/vfagent-bench-netns-XXXXXX)
ns=vfa-bench-$$
cleanup() {
	ip netns del "$ns" 2>/dev/null || true
	for i in $(seq 0 $((n - 1))); do ip link del "bv$i" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# veths in a namespace die with it, but asynchronously: delete them first, which is not
make_links() {
	if [ -e "/run/netns/$ns" ]; then
		seq 0 $((n - 1)) | sed 's/^/link del c/' >"$tmp/del"
		ip -n "$ns" -batch "$tmp/del" 2>/dev/null || true
		ip netns del "$ns"
	fi
	ip netns add "$ns"
	: >"$tmp/mk"
	for i in $(seq 0 $((n - 1))); do echo "link add bv$i type veth peer name bp$i" >>"$tmp/mk"; done
	ip -batch "$tmp/mk"
}

now_ms() { date +%s%N | awk '{printf "%.3f", $1 / 1e6}'; }

# ip: the host side in one batch, the namespace side in another (ip has no per-line netns)
: >"$tmp/host"; : >"$tmp/inside"
for i in $(seq 0 $((n - 1))); do
	printf 'link set dev bv%d down\nlink set dev bv%d netns %s name c%d\n' "$i" "$i" "$ns" "$i" >>"$tmp/host"
	printf 'link set dev c%d address 02:be:00:00:%02x:%02x\naddr add 10.77.%d.%d/16 dev c%d\nlink set dev c%d up\n' \
		"$i" $(((i + 2) >> 8)) $(((i + 2) & 255)) $(((i + 2) >> 8)) $(((i + 2) & 255)) "$i" "$i" >>"$tmp/inside"
done
links=$(seq 0 $((n - 1)) | sed 's/^/bv/' | tr '\n' ' ')

: >"$tmp/agent.ms"; : >"$tmp/ip.ms"
for _ in $(seq "$rounds"); do
	make_links
	# shellcheck disable=SC2086
	"$b/bench/netns-attach" "$ns" $links >>"$tmp/agent.ms"
	ip -n "$ns" -br link show c$((n - 1)) | grep -q UP || { echo "bench/netns: agent attach incomplete"; exit 1; }
	make_links
	t0=$(now_ms)
	ip -batch "$tmp/host" && ip -n "$ns" -batch "$tmp/inside"
	t1=$(now_ms)
	echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}' >>"$tmp/ip.ms"
	ip -n "$ns" -br link show c$((n - 1)) | grep -q UP || { echo "bench/netns: ip attach incomplete"; exit 1; }
done
median() { sort -n "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
agent=$(median "$tmp/agent.ms"); ipb=$(median "$tmp/ip.ms")
echo "bench/netns: $n links per round, median of $rounds rounds"
echo "$agent $ipb $n" | awk '{printf "  agent (agent/container/netns.c): %8.2f ms  (%.3f ms per attach)\n  ip -batch (2 batches): %8.2f ms  (%.3f ms per attach)\n  ratio agent/ip: %.2f\n", $1, $1 / $3, $2, $2 / $3, $1 / $2}'
