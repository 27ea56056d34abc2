#!/bin/sh
# bench/cni: a container's network through a CNI plugin, as a runtime runs
# one (a fresh process per command, CNI_* in the environment, the config on
# stdin): the project's plugin "vfagent" (ADD: the agent claims a VF and
# moves its netdev into the namespace with its address; DEL: the agent
# restores and releases it) against the CNI reference plugin host-device
# (moves a netdev in and out, keeps no state), both with the static IPAM
# plugin, on veth stand-ins, same run, round by round. ADD is timed to the
# plugin's exit, when the netdev is configured in the namespace. The agent
# runs twice: with the reset between tenants (the default) and with "reset":
# "none" (what host-device does: nothing). Needs root and
# containernetworking-plugins.
set -eu
b=${top_builddir:-$(dirname "$0")/..}
N=${BENCH_ROUNDS:-30}
cni=${CNI_PATH:-/usr/lib/cni}
[ "$(id -u)" = 0 ] || { echo "bench/cni: needs root"; exit 77; }
[ -x "$cni/host-device" ] && [ -x "$cni/static" ] ||
	{ echo "bench/cni: no $cni/host-device or static (apt-get install containernetworking-plugins)"; exit 77; }
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
		--listen "unix:$tmp/vfagent.sock" >"$tmp/agent.log" 2>&1 &
	agent=$!
	for _ in $(seq 100); do [ -S "$tmp/vfagent-cni.sock" ] && curl -sf --unix-socket "$tmp/vfagent.sock" http://x/v1/health >/dev/null && return; sleep 0.1; done
	echo "bench/cni: the agent did not start"; exit 1
}
stop_agent() { kill "$agent"; wait "$agent" || true; agent=; }
ipam='"ipam":{"type":"static","addresses":[{"address":"10.9.0.3/24"}]}'
ours="{\"cniVersion\":\"1.0.0\",\"name\":\"bench\",\"type\":\"vfagent\",\"pool\":\"c\",\"socket\":\"$tmp/vfagent-cni.sock\",$ipam}"
theirs="{\"cniVersion\":\"1.0.0\",\"name\":\"bench\",\"type\":\"host-device\",\"device\":\"cnidev0\",$ipam}"
# run COMMAND PLUGIN CONFIG IFNAME: one plugin process, as libcni runs it; prints its ms
run() {
	t0=$(now)
	echo "$3" | CNI_COMMAND=$1 CNI_CONTAINERID=bench CNI_NETNS="/run/netns/$ns" CNI_IFNAME=$4 \
		CNI_PATH="$cni" "$2" >/dev/null
	ms "$t0" "$(now)"
}
"$b/agent/vfagentd" --simulate "$sim/sys" --once >/dev/null 2>&1
for reset in flr none; do
	start_agent "$reset"
	for _ in $(seq "$N"); do
		run ADD "$b/hooks/cni/vfagent" "$ours" net1 >>"$tmp/ours-add-$reset"
		ip -n "$ns" -br addr show net1 | grep -q 10.9.0.3/24 || { echo "bench/cni: vfagent's ADD left no address"; exit 1; }
		run DEL "$b/hooks/cni/vfagent" "$ours" net1 >>"$tmp/ours-del-$reset"
		run ADD "$cni/host-device" "$theirs" net2 >>"$tmp/theirs-add-$reset"
		ip -n "$ns" -br addr show net2 | grep -q 10.9.0.3/24 || { echo "bench/cni: host-device's ADD left no address"; exit 1; }
		run DEL "$cni/host-device" "$theirs" net2 >>"$tmp/theirs-del-$reset"
	done
	ip link show ens5f0v0 >/dev/null && ip link show cnidev0 >/dev/null || { echo "bench/cni: a link did not come back"; exit 1; }
	stop_agent
done
echo "bench/cni: $N rounds each, medians (ms), each a whole plugin process with static IPAM"
for reset in flr none; do
	for cmd in add del; do
		a=$(median "$tmp/ours-$cmd-$reset") c=$(median "$tmp/theirs-$cmd-$reset")
		awk -v r="$reset" -v cmd="$cmd" -v a="$a" -v c="$c" \
			'BEGIN {printf "reset %-4s  %s  vfagent %7.2f  host-device %7.2f  ratio %.2f\n", r, toupper(cmd), a, c, a / c}'
	done
done
