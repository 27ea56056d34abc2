#!/bin/sh
# A live migration's source steers the guest's MAC onto its kept standby's path while its VF
# leaves (POST .../detach {"keep_standby": true}, the OpenNebula migrate action's first step
# at the source): the same real links and libvirtd as tests/swap-steer.sh (the standby's
# bridge has for uplink a veth named as the simulated E810 PF, ens5f0, which takes `bridge
# fdb add MAC dev DEV self` into its own unicast list as igb does). `bridge monitor fdb`
# sees the entry made before the VF leaves and taken out once it left; the request returns
# without it, the standby in the domain, the VF out. A detach that fails (libvirtd gone)
# takes the entry out and keeps the pair, so that a later detach takes both out. The agent
# SIGKILLed while libvirt holds the detach up (libvirtd stopped): the restart rolls the
# detach forward and takes the entry out. The operator's own entry is neither counted nor
# removed. What this cannot prove: that a real PF's embedded switch then sends the guest's
# frames up while the VF leaves (the QEMU lab's migration step).
# test-needs: mounts
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
. "${top_srcdir:-.}/tests/libvirtd-lib.sh"
libvirtd_test_start
libvirtd_steer_bridge
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}],
 "libvirt": {"uri": "$LV_URI", "managed": true}}
JSON
start_agent --config "$tmp/vfagent.json"
mac=02:00:c0:a8:02:0d
steered() { bridge fdb show dev ens5f0 self | grep -i "^$mac " || :; }
sb="//interface[teaming/@type='persistent']"
api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"vfagent-test\"},\"vlan\":120,\"mac\":\"$mac\",\"failover\":{\"bridge\":\"onebr.{vlan}\"}}"
expect 201
id=$(jget .id)
attach() {
	api POST "/v1/allocations/$id/attach" -d '{"domain":"vfagent-test","config":true}'
	expect 200
	[ "$(inactive "count($sb)")" = 1 ] || fail "no standby after the attach: $(cat "$tmp/dom.xml")"
}
attach
[ -z "$(steered)" ] || fail "the MAC on the PF before any detach: $(steered)"

# the keep_standby detach under bridge monitor: the entry in, then out, the request after both
bridge monitor fdb >"$tmp/fdb.events" 2>&1 &
mon=$!
sleep 0.3 # the monitor's socket bound before the detach
api POST "/v1/allocations/$id/detach" -d '{"keep_standby":true}'
expect 200
sleep 0.3
kill "$mon"
wait "$mon" 2>/dev/null || :
[ -z "$(steered)" ] || fail "the detach returned with the entry still in: $(steered)"
events=$(grep -i "$mac dev ens5f0 self" "$tmp/fdb.events" || :)
[ "$(printf '%s\n' "$events" | grep -vc '^Deleted')" = 1 ] && [ "$(printf '%s\n' "$events" | grep -c '^Deleted')" = 1 ] &&
	printf '%s\n' "$events" | head -n 1 | grep -vq '^Deleted' ||
	fail "not one entry made, then taken out: $(cat "$tmp/fdb.events")"
grep -q "the guest's MAC in the unicast filter of 1 PF(s) on its kept standby's bridge" "$tmp/agent.log" ||
	fail "no steering logged: $(tail -n 5 "$tmp/agent.log")"
grep -q "out of the guest: the guest's MAC out of the unicast filter of 1 PF(s)" "$tmp/agent.log" ||
	fail "the steering's end not logged: $(tail -n 5 "$tmp/agent.log")"
[ "$(inactive 'count(//interface[@type="hostdev"])')" = 0 ] || fail "keep_standby: the VF stayed"
[ "$(inactive "count($sb)")" = 1 ] || fail "keep_standby: the standby left: $(cat "$tmp/dom.xml")"
echo "migrate-steer: the guest's MAC on the PF while the VF left, out after, the standby kept"

# the VF back beside the standby (a migration that failed); then a detach refused (libvirtd
# gone): the entry out, the pair kept, so that the next detach takes both out
attach
libvirtd_kill
api POST "/v1/allocations/$id/detach" -d '{"keep_standby":true}'
[ "$code" -ge 500 ] || fail "a detach with libvirtd gone answered $code: $body"
[ -z "$(steered)" ] || fail "the failed detach left the entry: $(steered)"
grep -q "still in the guest: the guest's MAC out of the unicast filter of 1 PF(s)" "$tmp/agent.log" ||
	fail "the failed detach's unsteering not logged: $(tail -n 5 "$tmp/agent.log")"
libvirtd_restart || fail "libvirtd did not start again"
api POST "/v1/allocations/$id/detach"
expect 200
[ "$(inactive 'count(//interface[teaming])')" = 0 ] ||
	fail "the pair was not kept after the failed detach: $(cat "$tmp/dom.xml")"
echo "migrate-steer: a failed detach took the entry out and kept the pair"

# SIGKILL while libvirt holds the detach up, the entry in: the restart rolls it forward
attach
lvd=$(libvirtd_own_pid libvirtd) || fail "no libvirtd pid"
kill -STOP "$lvd"
curl -s -o /dev/null --max-time 60 --unix-socket "$sock" -X POST -d '{"keep_standby":true}' \
	"http://x/v1/allocations/$id/detach" &
req=$!
for _ in $(seq 100); do
	[ -n "$(steered)" ] && break
	sleep 0.05
done
[ -n "$(steered)" ] || { kill -CONT "$lvd"; fail "no entry while libvirt held the detach up"; }
kill -9 "$agent_pid"
wait "$agent_pid" 2>/dev/null || :
wait "$req" 2>/dev/null || :
kill -CONT "$lvd"
[ -n "$(steered)" ] || fail "the entry went with the agent's death already"
start_agent --config "$tmp/vfagent.json" # its health answered: the start's reconcile is over
[ -z "$(steered)" ] || fail "the restart left the entry: $(steered)"
[ "$(inactive 'count(//interface[@type="hostdev"])')" = 0 ] || fail "the restart left the VF in"
[ "$(inactive "count($sb)")" = 1 ] || fail "the restart took the kept standby out"
api GET "/v1/allocations/$id"
expect 200
[ "$(jget .state)" = reserved ] || fail "after the restart: $(jget .state)"
echo "migrate-steer: killed mid-detach, the restart took the entry out"

# the operator's own entry, there before: neither counted nor taken out
attach # beside the kept standby
bridge fdb add "$mac" dev ens5f0 self permanent
n=$(grep -c "kept standby's bridge" "$tmp/agent.log" || :)
api POST "/v1/allocations/$id/detach" -d '{"keep_standby":true}'
expect 200
[ -n "$(steered)" ] || fail "the detach took the operator's entry out"
[ "$(grep -c "kept standby's bridge" "$tmp/agent.log" || :)" = "$n" ] ||
	fail "the operator's entry was counted: $(tail -n 3 "$tmp/agent.log")"
bridge fdb del "$mac" dev ens5f0 self
api DELETE "/v1/allocations/$id"
expect 204
grep -q "kept standby's PF" "$tmp/agent.log" &&
	fail "a steering request failed: $(grep "kept standby" "$tmp/agent.log")"
echo "migrate-steer: all passed"
