#!/bin/sh
# bench/partitions: from an attach's answer (a VF claimed with a P_Key and moved into a
# container) to the key in the VF port's P_Key table, with `vfctl partitions write --follow`
# between the agent and OpenSM, against OpenSM's own floor: the line edited into
# partitions.conf by hand, SIGHUP, and the same wait for the table (smpquery). OpenSM on an
# ibsim fabric whose ports carry the agent's GUIDs, as tests/partitions-opensm.sh has it.
# Rounds alternate; prints both medians and the ratio.
# test-needs: mounts
set -eu
b=${top_builddir:-$(dirname "$0")/..}
N=${BENCH_ROUNDS:-9}
for t in ibsim opensm smpquery sminfo jq curl ip; do
	command -v $t >/dev/null || { echo "bench/partitions: $t missing; skipped"; exit 0; }
done
umad=$(find /usr/lib -path '*/umad2sim/libumad2sim.so' 2>/dev/null | head -1)
[ -n "$umad" ] && [ "$(id -u)" = 0 ] || { echo "bench/partitions: needs root and libumad2sim; skipped"; exit 0; }
tmp=$(mktemp -d /tmp/vfagent-bench-pkeys-XXXXXX)
b=$(cd "$b" && pwd)
cd "$tmp" # libumad2sim makes a sys-PID directory where each program it is preloaded into runs
pids=''
ns=vfa-bp-$$ hns=vfa-bh-$$ # the tenant's namespace; the host's, with its VFs' netdevs
# OpenSM waits on ibsim for ever once ibsim is gone: SIGKILL, after the others' SIGTERM
stop() {
	for p in $pids; do kill "$p" 2>/dev/null || :; done
	sleep 0.5
	for p in $pids; do kill -9 "$p" 2>/dev/null || :; done
	ip netns del "$ns" 2>/dev/null || :
	ip netns del "$hns" 2>/dev/null || :
	rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 1' INT TERM # the EXIT trap runs then too
export IBSIM_SOCKNAME="vfa-bench-$$" OSM_CACHE_DIR="$tmp/osm" OSM_TMP_DIR="$tmp"
first=0x0002c9030000b101
{
	printf 'Switch 8 "sw"\n'
	for k in 0 1 2 3; do printf '[%d] "h%d"[1]\n' $((k + 1)) $k; done
	for k in 0 1 2 3; do printf '\ncaguid=0x%016x\nHca 1 "h%d"\n[1] "sw"[%d]\n' $((first + k - 1)) $k $((k + 1)); done
} >"$tmp/net"
mkfifo "$tmp/console"
sleep 100000 >"$tmp/console" & pids="$pids $!"
ibsim -s "$tmp/net" <"$tmp/console" >/dev/null 2>&1 & pids="$pids $!"
conf=$tmp/partitions.conf
printf 'Default=0x7fff, ipoib : ALL=limited, SELF=full ;\n' >"$conf"
sleep 0.5
LD_PRELOAD=$umad opensm -F /dev/null -P "$conf" -f "$tmp/osm.log" >/dev/null 2>&1 &
osm=$!; pids="$pids $osm"; echo $osm >"$tmp/opensm.pid"
for _ in $(seq 120); do LD_PRELOAD=$umad sminfo 2>/dev/null | grep -q MASTER && break; sleep 0.25; done

cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}}],
 "guids": {"first": "$(printf '%016x' $first | sed 's/../&:/g; s/:$//')", "count": 1,
            "quarantine_seconds": 0}, "libvirt": false}
JSON
ip netns add "$ns"
ip netns add "$hns"
for n in ib0v0 ib0v1 ib0v2 ib0v3 ib1v0 ib1v1 ib1v2 ib1v3; do
	ip -n "$hns" link add "$n" type veth peer name "p-$n"
done
sock=$tmp/vfagent.sock
ip netns exec "$hns" env VFAGENT_SIM_NETNS=inherit "$b/agent/vfagentd" --simulate "$tmp/sys" \
	--config "$tmp/vfagent.json" --listen "unix:$sock" >"$tmp/agent.log" 2>&1 & pids="$pids $!"
for _ in $(seq 100); do curl -sf --unix-socket "$sock" http://x/v1/health >/dev/null && break; sleep 0.1; done
"$b/agent/vfctl/vfctl" partitions write --follow --file "$conf" --socket "$sock" \
	--opensm-pid "$tmp/opensm.pid" >"$tmp/follow.log" 2>&1 & pids="$pids $!"

now() { date +%s%N; }
has() { LD_PRELOAD=$umad smpquery -G pkeys "$1" 2>/dev/null | grep -q "$2"; }
wait_for() { # GUID KEY yes|no: until the table has (or lacks) KEY; prints ms since $t0
	for _ in $(seq 1000); do
		if has "$1" "$2"; then [ "$3" = yes ] && break; else [ "$3" = no ] && break; fi
	done
	echo $((($(now) - t0) / 1000000))
}
# the port the agent's VF gets each round (one GUID in its range, no quarantine: each round
# waits for the key to leave the port before it releases): the same wait
hand=$(printf '0x%016x' "$first")
: >"$tmp/a"; : >"$tmp/b"
for i in $(seq "$N"); do
	# a key new to OpenSM each time, for both: a partition's first appearance costs it its
	# IPoIB broadcast group, a key seen before would not
	key=$(printf '%04x' $((0x8100 + i)))
	# ours: the attach's answer, then the gatherer, OpenSM's sweep, the table
	body=$(curl -s --unix-socket "$sock" -X POST http://x/v1/allocations -d "{\"pool\":\"ib\",\"pkey\":\"0x$key\",\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"},\"attach\":{\"netns\":\"$ns\",\"ifname\":\"ib\"}}")
	t0=$(now)
	# the GUID without its colons, by the shell alone: no program started on the clock
	guid=${body#*\"guid\":\"}
	# shellcheck disable=SC2086 # split on the colons
	guid=0x$(IFS=:; set -- ${guid%%\"*}; printf %s%s%s%s%s%s%s%s "$@")
	wait_for "$guid" "0x$key" yes >>"$tmp/a"
	curl -s --unix-socket "$sock" -X DELETE "http://x/v1/allocations/$(printf '%s' "$body" | jq -r .id)"
	t0=$(now); wait_for "$guid" "0x$key" no >/dev/null
	# the floor: a line by hand, SIGHUP, the table
	cp "$conf" "$tmp/before"
	key=$(printf '%04x' $((0x8200 + i)))
	printf 'hand_%s=0x%s,ipoib : %s=full ;\n' "$key" "$key" "$hand" >>"$conf"
	t0=$(now); kill -HUP "$osm"
	wait_for "$hand" "0x$key" yes >>"$tmp/b"
	cp "$tmp/before" "$conf"; kill -HUP "$osm"
	t0=$(now); wait_for "$hand" "0x$key" no >/dev/null
done
median() { sort -n "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
a=$(median "$tmp/a") b=$(median "$tmp/b")
echo "bench/partitions: $N rounds; A = attach answered -> P_Key in the port's table (vfctl partitions write --follow, SIGHUP), B = hand edit + SIGHUP -> the same (OpenSM's floor)"
echo "A median ${a} ms (all: $(sort -n "$tmp/a" | tr '\n' ' ')), B median ${b} ms (all: $(sort -n "$tmp/b" | tr '\n' ' ')); A/B = $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b ? a / b : 0}')"
