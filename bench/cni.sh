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
# "none" (what host-device does: nothing). Then ADDs at once, as Multus
# starts a node's pods: 1, 8 and 32 plugin processes started together, each
# into a namespace of its own, each ADD timed to its exit; p50 and p99 of
# each plugin at each concurrency (BENCH_CONC_SAMPLES ADDs per point, 64 by
# default), with "reset": "none". Needs root and containernetworking-plugins.
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
C=32 # the most ADDs at once: namespaces, stand-ins and host-device's devices for each
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	ip netns del "$ns" 2>/dev/null || true
	for i in $(seq 0 $((C - 1))); do
		ip netns del "$ns-$i" 2>/dev/null || true
		ip link del "ens5f0v$i" 2>/dev/null || true
		ip link del "cnidev$i" 2>/dev/null || true
	done
	rm -rf "$tmp" "$sim"
}
trap cleanup EXIT
ip netns add "$ns"
ip link add ens5f0v0 type veth peer name peer-ens5f0v0
ip link add cnidev0 type veth peer name peer-cnidev0
now() { date +%s%N; }
ms() { echo "$1 $2" | awk '{printf "%.3f\n", ($2 - $1) / 1e6}'; }
median() { sort -n "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

one_vf='{"pci_addresses":["0000:af:01.0"]}'
start_agent() { # RESET (flr|none) [SELECTOR]
	printf '{"numvfs":[{"pf":"0000:af:00.0","numvfs":%d}],"pools":[{"name":"c","selector":%s,"reset":"%s"}]}' \
		"$C" "${2:-$one_vf}" "$1" >"$tmp/config.json"
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

# ADDs at once: K plugin processes started together, container i into namespace i
for i in $(seq 0 $((C - 1))); do
	ip netns add "$ns-$i"
	[ "$i" = 0 ] || ip link add "ens5f0v$i" type veth peer name "peer-ens5f0v$i"
	[ "$i" = 0 ] || ip link add "cnidev$i" type veth peer name "peer-cnidev$i"
done
burst() { # COMMAND PLUGIN K OUT (ours|theirs): K at once, each one's ms appended to OUT
	pids=
	for i in $(seq 0 $(($3 - 1))); do
		if [ "$4" = ours ]; then conf=$ours; else conf=$(echo "$theirs" | sed "s/cnidev0/cnidev$i/"); fi
		(
			t0=$(now)
			echo "$conf" | CNI_COMMAND=$1 CNI_CONTAINERID="pod$i" CNI_NETNS="/run/netns/$ns-$i" \
				CNI_IFNAME=net1 CNI_PATH="$cni" "$2" >"$tmp/burst.$i" 2>&1 ||
				{ echo "bench/cni: $1 pod$i: $(cat "$tmp/burst.$i")" >&2; exit 1; }
			[ "$1" = DEL ] || ms "$t0" "$(now)" >>"$tmp/conc-$4-$3.$i"
		) &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086 # one PID each
	wait $pids || { echo "bench/cni: a $1 of $3 at once failed"; exit 1; }
}
pct() { # FILE P: the P-th percentile (nearest rank)
	sort -n "$1" | awk -v p="$2" '{v[NR] = $1} END {i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1; print v[i]}'
}
start_agent none '{"pf_names":["ens5f0"]}'
for k in 1 8 32; do
	rounds=$(((${BENCH_CONC_SAMPLES:-64} + k - 1) / k))
	for _ in $(seq "$rounds"); do
		burst ADD "$b/hooks/cni/vfagent" "$k" ours
		burst DEL "$b/hooks/cni/vfagent" "$k" ours
		burst ADD "$cni/host-device" "$k" theirs
		burst DEL "$cni/host-device" "$k" theirs
	done
	for who in ours theirs; do cat "$tmp/conc-$who-$k".* >"$tmp/conc-$who-$k"; done
done
stop_agent

echo "bench/cni: $N rounds each, medians (ms), each a whole plugin process with static IPAM"
for reset in flr none; do
	for cmd in add del; do
		a=$(median "$tmp/ours-$cmd-$reset") c=$(median "$tmp/theirs-$cmd-$reset")
		awk -v r="$reset" -v cmd="$cmd" -v a="$a" -v c="$c" \
			'BEGIN {printf "reset %-4s  %s  vfagent %7.2f  host-device %7.2f  ratio %.2f\n", r, toupper(cmd), a, c, a / c}'
	done
done
echo "bench/cni: ADDs at once (reset none, static IPAM), ms per ADD to its exit"
for k in 1 8 32; do
	awk -v k="$k" -v n="$(wc -l <"$tmp/conc-ours-$k")" -v a50="$(pct "$tmp/conc-ours-$k" 50)" \
		-v a99="$(pct "$tmp/conc-ours-$k" 99)" -v c50="$(pct "$tmp/conc-theirs-$k" 50)" \
		-v c99="$(pct "$tmp/conc-theirs-$k" 99)" \
		'BEGIN {printf "%2d at once  %3d ADDs  vfagent p50 %7.2f p99 %7.2f  host-device p50 %7.2f p99 %7.2f  ratio p50 %.2f p99 %.2f\n", k, n, a50, a99, c50, c99, a50 / c50, a99 / c99}'
done
