#!/bin/sh
# PATCH /v1/allocations/{id}: a network update (OpenNebula's update_nic) for a
# live allocation. A reservation takes the new settings in the ledger (the
# next attach applies them); an attached VF takes them on its PF, and one
# whose PF refuses leaves the ledger and the VF as they were. What a guest
# already has (MAC, GUID, IP) and what the claim decided cannot change; bad
# input is refused naming the field. The PF side on a real PF is the lab's
# (tests/lab/vm-attach.sh, one-hooks.sh): this simulated host's PF has no
# netdev. In the network namespace tests/in-netns.sh gives it.
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || exit 77
. "${top_srcdir:-.}/tests/api-lib.sh"
ns=vfa-upd-$$
tenant_and_stand_in "$ns"
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "libvirt": false}
JSON
start_agent --config "$tmp/vfagent.json"
patch() { api PATCH "/v1/allocations/$1" -H 'Content-Type: application/json' -d "$2"; }

api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"},\"mac\":\"02:00:0a:01:00:05\",\"vlan\":120,\"qos\":3,\"spoofchk\":true}"
expect 201; id=$(jget .id)

# a reservation: the ledger takes the knobs given, keeps the rest
patch "$id" '{"vlan":130,"trust":true,"max_tx_rate":100}'
expect 200
[ "$(printf '%s' "$body" | jq -cS '.settings')" = \
	'{"mac":"02:00:0a:01:00:05","max_tx_rate":100,"qos":3,"spoofchk":true,"trust":true,"vlan":130}' ] ||
	fail "settings after PATCH: $body"
grep -q "allocation $id: settings updated" "$tmp/agent.log" || fail "not logged"
patch "$id" '{"vlan":0}'
expect 200
[ "$(printf '%s' "$body" | jq -c '.settings | [.vlan, .qos]')" = '[0,null]' ] ||
	fail "vlan 0 must clear the VLAN and its QoS: $body"
api GET "/v1/allocations/$id"; [ "$(jget .settings.max_tx_rate)" = 100 ] || fail "not kept: $body"

# bad input: refused naming the field, nothing changed
before=$(printf '%s' "$body" | jq -cS .settings)
for bad in '{"mac":"02:00:0a:01:00:06"}:mac' '{"ip":"10.0.0.1/32"}:ip' '{"guid":"00:11:22:33:44:55:66:77"}:guid' \
	'{"pool":"eth"}:pool' '{"vlan":5000}:vlan' '{"vlan":"5"}:vlan' '{"spoofchk":"no"}:spoofchk' \
	'{"max_tx_rate":-1}:max_tx_rate' '{"qos":2}:qos' '{"vlna":5}:vlna' '{}:nothing' '[1]:body' 'x:body'; do
	patch "$id" "${bad%:*}"
	expect 400
	jget .message | grep -q "${bad##*:}" || fail "${bad%:*}: the message does not name ${bad##*:}: $body"
done
api GET "/v1/allocations/$id"
[ "$(printf '%s' "$body" | jq -cS .settings)" = "$before" ] || fail "bad input changed the settings: $body"
patch 00000000-0000-4000-8000-000000000000 '{"vlan":5}'; expect 404

# vfctl set: the same request from the command line; usage errors before any request
vfctl -o json set "$id" --vlan 125 --spoofchk off >"$tmp/set.json" || fail "vfctl set: $(cat "$tmp/set.json")"
[ "$(jq -c '.settings | [.vlan, .spoofchk, .max_tx_rate]' "$tmp/set.json")" = '[125,false,100]' ] ||
	fail "vfctl set: $(cat "$tmp/set.json")"
rc=0; vfctl set "$id" 2>"$tmp/set.err" || rc=$?
[ $rc = 2 ] && grep -q 'give --vlan' "$tmp/set.err" || fail "vfctl set with nothing: $rc $(cat "$tmp/set.err")"
rc=0; vfctl set "$id" --mac 02:00:0a:01:00:09 2>"$tmp/set.err" || rc=$?
[ $rc = 2 ] && grep -q 'cannot change' "$tmp/set.err" || fail "vfctl set --mac: $rc $(cat "$tmp/set.err")"
rc=0; vfctl set "$id" --vlan 5000 2>"$tmp/set.err" || rc=$?
[ $rc != 0 ] && grep -q -- '--vlan' "$tmp/set.err" || fail "vfctl set --vlan 5000: $rc $(cat "$tmp/set.err")"
api GET "/v1/allocations/$id"; [ "$(jget .settings.vlan)" = 125 ] || fail "a refused vfctl set changed it: $body"

# attached: the PF must take it. This host's PF has no netdev: refused with the kernel's
# reason, the ledger as it was, the VF still in the namespace and released cleanly after
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"
expect 409 # the claim's spoofchk needs the PF too
api DELETE "/v1/allocations/$id"; expect 204
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
expect 201; id2=$(jget .id)
api POST "/v1/allocations/$id2/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net2\"}"; expect 200
patch "$id2" '{"spoofchk":false}'
expect 409
jget .message | grep -q 'ens5f0.*No such device' || fail "the PF's refusal is not named: $body"
api GET "/v1/allocations/$id2"
[ "$(jget .state)" = attached ] && [ "$(printf '%s' "$body" | jq -c .settings)" = '{}' ] ||
	fail "a refused update changed the allocation: $body"
ip -n "$ns" link show net2 >/dev/null || fail "the VF left the namespace"
api DELETE "/v1/allocations/$id2"; expect 204
ip link show ens5f0v0 >/dev/null || fail "not back in the host after the refused update"

# ended: refused, saying so
patch "$id2" '{"vlan":5}'
expect 409
jget .message | grep -q 'released' || fail "a released allocation's refusal: $body"
echo "allocation-update: all checks passed"
