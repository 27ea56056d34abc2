#!/bin/sh
# A swap steers the failover NIC's MAC onto its standby's path: with real links in this test's
# own namespace and a real libvirtd (qemu driver, the domain's config, as tests/swap.sh), the
# standby's bridge has for uplink a link named as the simulated host's E810 PF (ens5f0, a
# veth: the closest real link to a PF that takes `bridge fdb add MAC dev DEV self` into its
# own unicast address list, through the kernel's ndo_dflt_fdb_add(), as igb does). While a swap
# runs, the guest's MAC is in that list (bridge fdb show dev ens5f0 self); the request returns
# with it still there, and it goes libvirt.steer_hold seconds later; a bridge whose uplink is
# no PF gets nothing. The agent SIGKILLed while the entry is in, during the swap or during the
# hold after it: the restart resolves the swap and takes the entry out. An entry the operator
# made before the swap stays; a detach during the hold ends it (the swap's row would make the
# detach busy); while the guest still sends over its standby after the hold, the steering stays.
# What this cannot prove: that a real PF's embedded switch then sends the
# guest's frames up (the QEMU lab's failover tier).
# test-needs: mounts
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
. "${top_srcdir:-.}/tests/libvirtd-lib.sh"
libvirtd_test_start
libvirtd_steer_bridge
ip link add plain0 type veth peer name plain0-wire
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}],
 "libvirt": {"uri": "$LV_URI", "managed": true, "steer_hold": 8}}
JSON
start_agent --config "$tmp/vfagent.json"
mac=02:00:c0:a8:02:0c
steered() { bridge fdb show dev ens5f0 self | grep -i "^$mac " || :; }
api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"vfagent-test\"},\"vlan\":120,\"mac\":\"$mac\",\"failover\":{\"bridge\":\"onebr.{vlan}\"}}"
expect 201
id=$(jget .id)
api POST "/v1/allocations/$id/attach" -d '{"domain":"vfagent-test","config":true}'
expect 200
[ -z "$(steered)" ] || fail "the MAC on the PF before any swap: $(steered)"

# swap_seen: a swap started in the background, the entry waited for while it runs
swap_seen() {
	curl -s -o "$tmp/swap.out" -w '%{http_code}' --unix-socket "$sock" -X POST "http://x/v1/allocations/$id/swap" \
		>"$tmp/swap.code" &
	swap_pid=$!
	seen=
	for _ in $(seq 100); do
		[ -n "$(steered)" ] && { seen=1; break; }
		kill -0 "$swap_pid" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$seen" ] || fail "no entry for $mac on ens5f0 during the swap: $(cat "$tmp/swap.out")"
}
# swap_done: swap_seen's swap waited for, its answer checked, the entry still there
swap_done() {
	wait "$swap_pid" || fail "the swap's request failed"
	[ "$(cat "$tmp/swap.code")" = 200 ] || fail "the swap: $(cat "$tmp/swap.out")"
	[ -n "$(steered)" ] || fail "the swap returned, the entry went with it (no hold)"
}
unheld() { grep -c "steering over" "$tmp/agent.log" || :; }
swap_seen
swap_done
grep -q "unicast filter of 1 PF" "$tmp/agent.log" || fail "no steering logged"
for _ in $(seq 600); do # the hold (8 s) over, from the agent's own thread
	[ -z "$(steered)" ] && break
	sleep 0.1
done
[ -z "$(steered)" ] || fail "the hold never ended: $(steered)"
[ "$(unheld)" = 1 ] || fail "the hold's end not logged: $(grep swap "$tmp/agent.log")"
echo "swap-steer: the guest's MAC on the PF during the swap and the hold after it, gone then"

# SIGKILL during the hold: the restart takes the entry out (the swap's row says it is there)
swap_seen
swap_done
kill -9 "$agent_pid"
wait "$agent_pid" 2>/dev/null || :
[ -n "$(steered)" ] || fail "the entry went with the agent's death already"
start_agent --config "$tmp/vfagent.json" # its health answered: the start's reconcile is over
grep -q "swap of allocation $id .*steering resolved" "$tmp/agent.log" ||
	fail "the hold a crash left was not resolved: $(grep swap "$tmp/agent.log" | tail -n 3)"
[ -z "$(steered)" ] || fail "the restart left the entry: $(steered)"
echo "swap-steer: killed during the hold, the restart took the entry out"

# SIGKILL while the entry is in: the restart resolves the swap and removes it
swap_seen
kill -9 "$agent_pid"
wait "$agent_pid" 2>/dev/null || :
wait "$swap_pid" 2>/dev/null || :
[ -n "$(steered)" ] || fail "the entry went with the agent's death already"
start_agent --config "$tmp/vfagent.json" # its health answered: the start's reconcile is over
resolved="swap of allocation $id .*\(rolled\|steering resolved\)" # (a second: the hold's above)
[ "$(grep -c "$resolved" "$tmp/agent.log")" -gt 1 ] ||
	fail "the swap was not resolved before the restart answered"
rolled=$(grep -n "$resolved" "$tmp/agent.log" | tail -1 | cut -d: -f1)
served=$(grep -n "http: at most" "$tmp/agent.log" | tail -1 | cut -d: -f1)
[ "$rolled" -lt "$served" ] || fail "the restart served (line $served) before it resolved the swap (line $rolled)"
[ -z "$(steered)" ] || fail "the restart left the entry: $(steered)"
api GET "/v1/allocations/$id"
expect 200
echo "swap-steer: killed mid-swap, the restart took the entry out"

# the operator's own entry, there before the swap: the swap neither counts nor removes it
bridge fdb add "$mac" dev ens5f0 self permanent
n=$(unheld)
api POST "/v1/allocations/$id/swap"
expect 200
[ -n "$(steered)" ] || fail "the swap took the operator's entry out"
[ "$(unheld)" = "$n" ] || fail "the swap ended a steering of its own on the operator's entry"
grep -q "rolled\|swapped for" "$tmp/agent.log" || fail "no swap logged"
bridge fdb del "$mac" dev ens5f0 self
echo "swap-steer: the operator's entry stayed"

# a detach during the hold: the hold ends first (the entry out), the detach is not busy
swap_seen
swap_done
api POST "/v1/allocations/$id/detach"
expect 200
[ -z "$(steered)" ] || fail "the detach left the swap's entry: $(steered)"
api POST "/v1/allocations/$id/attach" -d '{"domain":"vfagent-test","config":true}'
expect 200
echo "swap-steer: a detach during the hold ended it"

# the guest still sending over its standby after the hold (its new VF not up yet): the steering
# stays while it sends, and goes once it stops. A veth in the bridge stands for the standby's tap
# (libvirt names it vnetN and gives it the guest's MAC with fe first); frames sent from its peer
# are what the guest sends over its standby (the tap's received packets).
ip link add vnet-sb address "fe:${mac#*:}" type veth peer name vnet-sb-g
ip link set vnet-sb master onebr.120
ip link set vnet-sb up
ip link set vnet-sb-g up
ip addr add 192.0.2.2/24 dev vnet-sb-g
ip neigh add 192.0.2.1 lladdr 02:00:00:00:00:01 dev vnet-sb-g
ping -q -i 0.1 192.0.2.1 >/dev/null 2>&1 &
sender=$!
n=$(unheld)
swap_seen
swap_done
for _ in $(seq 600); do # the hold's first look (8 s after the plug) finds the guest sending
	grep -q "still sends over its standby: the steering stays" "$tmp/agent.log" && break
	sleep 0.1
done
grep -q "still sends over its standby: the steering stays" "$tmp/agent.log" ||
	fail "the hold never looked at the standby: $(grep swap "$tmp/agent.log" | tail -n 3)"
[ -n "$(steered)" ] || fail "the steering went while the guest still sent over its standby"
[ "$(unheld)" = "$n" ] || fail "the hold ended while the guest still sent over its standby"
kill "$sender"
wait "$sender" 2>/dev/null || :
for _ in $(seq 600); do # quiet for a look (1 s): the hold ends
	[ -z "$(steered)" ] && break
	sleep 0.1
done
[ -z "$(steered)" ] || fail "the steering stayed after the guest stopped sending over its standby"
[ "$(unheld)" = $((n + 1)) ] || fail "the hold's end not logged once: $(grep swap "$tmp/agent.log" | tail -n 3)"
ip link del vnet-sb
echo "swap-steer: the steering stayed while the guest sent over its standby, went after"

# a bridge whose only uplink is no PF: nothing steered
ip link set ens5f0 nomaster
ip link set plain0 master onebr.120
api POST "/v1/allocations/$id/swap"
expect 200
[ "$(grep -c "unicast filter" "$tmp/agent.log")" = 5 ] || fail "steered with no PF on the bridge"
[ -z "$(bridge fdb show dev plain0 self | grep -i "^$mac " || :)" ] || fail "an entry on plain0"
api POST "/v1/allocations/$id/detach"
expect 200
api DELETE "/v1/allocations/$id"
expect 204
grep -q "MAC onto its standby's PF\|out of its standby's PFs" "$tmp/agent.log" &&
	fail "a steering request failed: $(grep swap: "$tmp/agent.log")"
echo "swap-steer: all passed"
