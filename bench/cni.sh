#!/bin/sh
# bench/cni: a container gets a VF netdev with an address and gives it back,
# through the agent (POST /v1/allocations with "attach", then DELETE: two
# requests) and through the CNI reference plugin host-device with static
# IPAM (ADD, DEL), on veth stand-ins, same run, pair by pair; each side is
# whole processes (curl, the plugin). The agent runs twice: with the reset
# between tenants (the default) and with "reset": "none" (what host-device
# does: nothing). Needs root, curl and containernetworking-plugins.
set -eu
b=${top_builddir:-$(dirname "$0")/..}
N=${BENCH_ROUNDS:-30}
cni=${CNI_PATH:-/usr/lib/cni}
[ "$(id -u)" = 0 ] || { echo "bench/cni: needs root"; exit 77; }
[ -x "$cni/host-device" ] || { echo "bench/cni: no $cni/host-device (apt-get install containernetworking-plugins)"; exit 77; }
tmp=$(mktemp -d /tmp/vfagent-bench-cni-XXXXXX)
sim=$(sh "$(dirname "$0")/sim-dir.sh" cni) # the simulated sysfs: see sim-dir.sh
ns=vfa-cni-$$
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	ip netns del "$ns" 2>/dev/null || true
	ip link del ens5f0v0 2>/dev/null || true
	ip link del cnidev0 2>/dev/null || true
	rm -rf "$tmp" "$sim"
}
trap cleanup EXIT
ip netns add "$ns"
ip link add ens5f0v0 type veth peer name peer-ens5f0v0
ip link add cnidev0 type veth peer name peer-cnidev0
now() { date +%s%N; }
ms() { echo "$1 $2" | awk '{printf "%.3f\n", ($2 - $1) / 1e6}'; }
median() { sort -n "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

start_agent() { # RESET (flr|none)
	printf '{"pools":[{"name":"c","selector":{"pci_addresses":["0000:af:01.0"]},"reset":"%s"}]}' "$1" \
		>"$tmp/config.json"
	"$b/agent/vfagentd" --simulate "$sim/sys" --config "$tmp/config.json" --state-dir "$tmp/state-$1" \
		--listen "unix:$tmp/s" >"$tmp/agent.log" 2>&1 &
	agent=$!
	for _ in $(seq 100); do curl -sf --unix-socket "$tmp/s" http://x/v1/health >/dev/null && return; sleep 0.1; done
	echo "bench/cni: the agent did not start"; exit 1
}
stop_agent() { kill "$agent"; wait "$agent" || true; agent=; }
agent_round() {
	t0=$(now)
	body=$(curl -sf --unix-socket "$tmp/s" -X POST http://x/v1/allocations -d "{\"pool\":\"c\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"},\"attach\":{\"netns\":\"$ns\",\"ifname\":\"net1\",\"addresses\":[\"10.9.0.2/24\"]}}")
	# the id by the shell itself: a sed process would be timed as the agent's
	id=${body#*\"id\":\"}
	id=${id%%\"*}
	curl -sf --unix-socket "$tmp/s" -X DELETE -o /dev/null "http://x/v1/allocations/$id"
	ms "$t0" "$(now)"
}
conf='{"cniVersion":"1.0.0","name":"bench","type":"host-device","device":"cnidev0","ipam":{"type":"static","addresses":[{"address":"10.9.0.3/24"}]}}'
cni_round() {
	t0=$(now)
	for cmd in ADD DEL; do
		echo "$conf" | CNI_COMMAND=$cmd CNI_CONTAINERID=bench CNI_NETNS="/run/netns/$ns" \
			CNI_IFNAME=net2 CNI_PATH="$cni" "$cni/host-device" >/dev/null
	done
	ms "$t0" "$(now)"
}
"$b/agent/vfagentd" --simulate "$sim/sys" --once >/dev/null 2>&1
for reset in flr none; do
	start_agent "$reset"
	for _ in $(seq "$N"); do
		agent_round >>"$tmp/agent-$reset"
		cni_round >>"$tmp/cni-$reset"
	done
	ip link show ens5f0v0 >/dev/null && ip link show cnidev0 >/dev/null || { echo "bench/cni: a link did not come back"; exit 1; }
	stop_agent
done
echo "bench/cni: $N round trips each, medians (ms): agent (claim+attach, release) vs host-device (ADD, DEL)"
for reset in flr none; do
	a=$(median "$tmp/agent-$reset") c=$(median "$tmp/cni-$reset")
	awk -v r="$reset" -v a="$a" -v c="$c" 'BEGIN {printf "reset %-4s  agent %7.2f  host-device %7.2f  ratio %.2f\n", r, a, c, a / c}'
done
