#!/bin/sh
# A tenant with a shell in its container attacks the VF it was given: renames
# it, puts a link of its own under the VF's name, moves it on, asks for names
# the kernel expands, and for the host's own namespace. The agent must find the
# real VF by its device (veth stand-ins here: by their peer in the host), bring
# back only what it moved, and never call a VF free that is not back.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || exit 77
ns1=vfa-ten1-$$ ns2=vfa-ten2-$$ hide=vfa-hide-$$
links="ens5f0v0 ens5f0v1"
teardown() {
	for n in $ns1 $ns2 $hide vfa-gone-$$; do ip netns del "$n" 2>/dev/null || true; done
	for l in $links; do ip link del "$l" 2>/dev/null || true; done
	cleanup
}
trap teardown EXIT
ip netns add "$ns1" && ip netns add "$ns2" && ip netns add "$hide" ||
	{ echo "cannot make network namespaces"; exit 77; }
for l in $links; do ip link add "$l" mtu 1500 type veth peer name "peer-$l"; done
start_agent

# the host's VF netdevs: name, MAC, MTU, and which stand-in each is (its peer)
host_vfs() {
	for l in $links; do
		ip -j link show "$l" 2>/dev/null | jq -r '.[0] | "\(.ifname) \(.address) \(.mtu) \(.link)"' ||
			echo "$l missing"
	done
}
before=$(host_vfs)
# $1 is the real stand-in: its veth peer is the one made for it, in the host
is_real() { [ "$(ip -j link show "$1" | jq -r '.[0].link')" = "peer-$1" ]; }

claim() {
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$1\"}}"
	expect 201; id=$(jget .id); vf=$(jget '.vfs[0].pci')
	[ "$vf" = 0000:af:01.0 ] || fail "expected the first E810 VF, got $vf"
}
attach() {
	api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$1\",\"ifname\":\"net1\",\"addresses\":[\"10.9.0.2/24\"]}"
	expect 200
}

# 1. swap at release: the VF renamed inside, a veth of the tenant's under its name
claim "$ns1"; attach "$ns1"
ip -n "$ns1" link set net1 down
ip -n "$ns1" link set net1 name stolen
ip -n "$ns1" link set stolen address 02:66:66:66:66:66
ip -n "$ns1" link add net1 type veth peer name net1p
api DELETE "/v1/allocations/$id"; expect 204
is_real ens5f0v0 || fail "swap: the host got something else as ens5f0v0: $(ip -d link show ens5f0v0)"
ip -n "$ns1" link show stolen >/dev/null 2>&1 && fail "swap: the real VF stayed in the container"
ip -n "$ns1" link show net1 >/dev/null 2>&1 || fail "swap: the tenant's own veth was taken"
[ "$(host_vfs)" = "$before" ] || fail "swap: the host's VFs differ: $(host_vfs), were $before"
api GET "/v1/vfs/$vf"; [ "$(jget .state)" = free ] || fail "swap: VF not free: $body"
ip -j addr show ens5f0v0 | jq -e '.[0].addr_info | length == 0' >/dev/null ||
	fail "swap: an address came back with the VF: $(ip addr show ens5f0v0)"
ip -n "$ns1" link del net1

# the next tenant gets the real VF
claim "$ns2"; attach "$ns2"
[ "$(ip -n "$ns2" -j link show net1 | jq '.[0].link_index')" = \
	"$(ip -j link show peer-ens5f0v0 | jq '.[0].ifindex')" ] || fail "the next tenant did not get the real VF"
api DELETE "/v1/allocations/$id"; expect 204

# 2. renamed alone: found, brought back under its own name
claim "$ns1"; attach "$ns1"
api GET "/v1/allocations/$id"
[ "$(jget '.vfs[0].where | "\(.netns):\(.ifname)"')" = "$ns1:net1" ] || fail "where: $body"
vfctl list | grep -q "^  $vf .* eth attached netns:$ns1 $ns1:net1\$" || fail "vfctl list: $(vfctl list | grep "$vf")"
ip -n "$ns1" link set net1 down; ip -n "$ns1" link set net1 name mine
api POST "/v1/allocations/$id/detach"; expect 200
is_real ens5f0v0 || fail "rename: not back"
[ "$(host_vfs)" = "$before" ] || fail "rename: the host's VFs differ: $(host_vfs)"

# 3. names the kernel would expand, or not take, are refused before anything moves
for bad in 'eth%d' '%d' 'a b' 'a:1' '.' '..' 'abcdefghijklmnop' 'a/b'; do
	api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"$bad\"}"
	expect 400
	jget .message | grep -q '^ifname' || fail "ifname $bad: not named: $body"
done

# 4. a failed attach rolls back only what it moved: the container's own "lo" and its
# own link named like the VF's host netdev stay where they are, as they were
ip -n "$ns1" link add ens5f0v0 type veth peer name decoy
ip -n "$ns1" link set lo up
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"lo\"}"; expect 409
ip -n "$ns1" link show ens5f0v0 >/dev/null 2>&1 || fail "rollback took the tenant's ens5f0v0"
ip -n "$ns1" -j link show lo | jq -e '.[0].flags | index("UP") != null' >/dev/null ||
	fail "rollback set the container's lo down"
is_real ens5f0v0 || fail "rollback: the VF is not back"
[ "$(host_vfs)" = "$before" ] || fail "rollback: the host's VFs differ: $(host_vfs)"
ip -n "$ns1" link del ens5f0v0

# 5. the host's namespace (the agent's, init's, by pid or by path) is not a container
for target in "pid:$agent_pid" "pid:$$" "/run/netns/a/b/c" "/proc/1/ns/net"; do
	api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$target\",\"ifname\":\"net1\"}"
	expect 400
	jget .message | grep -q '^netns' || fail "$target: not named: $body"
done
ip -j addr show ens5f0v0 | jq -e '.[0].addr_info | length == 0' >/dev/null || fail "host attach left an address"

# 6. moved on: the tenant moves the VF into a namespace of its own. The release finds
# it neither in the container nor in the host: quarantined with the reason, never free,
# and nothing else comes back in its place
attach "$ns1"
ip -n "$ns1" link set net1 netns "$hide"
api DELETE "/v1/allocations/$id"; expect 204
api GET "/v1/vfs/$vf"; [ "$(jget .state)" = quarantined ] || fail "moved on: VF not quarantined: $body"
grep -q "VF $vf: the netdev of VF $vf is neither in namespace $ns1 nor in the host" "$tmp/agent.log" ||
	fail "moved on: the reason is not logged"
ip link show ens5f0v0 >/dev/null 2>&1 && fail "moved on: something came back as ens5f0v0"
api GET "/v1/allocations/$id"
jget .flag | grep -q "^restore failed: VF $vf: the netdev" || fail "moved on: the allocation is not flagged: $body"
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns2\"}}"
expect 201
[ "$(jget '.vfs[0].pci')" != "$vf" ] || fail "moved on: the quarantined VF was handed out again"

# 7. text a tenant chose reaches the log escaped: it cannot end a line or forge a priority
api POST "/v1/allocations/$id/attach" -d '{"domain":"x\n<3>forged\r\u001b[31m"}'; expect 404
grep -q '^<3>forged' "$tmp/agent.log" && fail "a forged log line got through"
grep -q 'x\\x0a<3>forged\\x0d\\x1b\[31m' "$tmp/agent.log" || fail "the escaped name is not logged"

# 8. owners: one form per namespace, a strict schema, only owners that exist, and an
# attach only into the owner's own namespace
api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"container\",\"netns\":\"/run/netns/$ns2\"}}"
expect 201; own=$(jget .id)
[ "$(jget .owner.netns)" = "$ns2" ] || fail "owner not in its one form: $body"
[ "$(jget .owner.netns_inode)" = "$(stat -L -c %i "/run/netns/$ns2")" ] || fail "no namespace inode: $body"
for key in "$ns2" "/run/netns/$ns2" "/var/run/netns/$ns2"; do
	api GET "/v1/allocations?owner=netns:$key"
	jget "[.allocations[].id] | index(\"$own\")" | grep -q '^[0-9]' || fail "owner netns:$key: $body"
done
api POST "/v1/allocations/$own/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"net1\"}"; expect 403
jget .message | grep -q "is not the namespace of the allocation's owner" || fail "another's namespace: $body"
api POST "/v1/allocations/$own/attach" -d '{"domain":"test"}'; expect 403
for bad in "\"netns\":\"$ns2\",\"color\":\"red\"" '"pid":"12"' '"netns":7' "\"netns\":\"$ns2\",\"name\":\"x\"" \
	"\"netns\":\"$ns2\",\"pid\":$$" '"netns":"a/b"' '"netns":"/run/netns/a/b"' "\"pid\":$$,\"uuid\":\"x\""; do
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"container\",$bad}}"
	expect 400
	jget .message | grep -q '^owner' || fail "owner with $bad: the field is not named: $body"
done
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"v","netns":"x"}}'; expect 400
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"container","netns":"no-such-ns-here"}}'; expect 404
jget .message | grep -q '^owner.netns: ' || fail "a missing owner: $body"
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"container","pid":4194303}}'; expect 404
stop_agent

# 9. a reservation whose owner is gone expires (here at once; the default is 300 s)
cat >"$tmp/orphans.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "reservations": {"orphan_seconds": 0}}
JSON
start_agent --config "$tmp/orphans.json"
ip netns add "vfa-gone-$$"
api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"container\",\"netns\":\"vfa-gone-$$\"}}"
expect 201; orphan=$(jget .id)
api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"container\",\"netns\":\"$ns2\"}}"
expect 201; kept=$(jget .id)
ip netns del "vfa-gone-$$"
kill -HUP "$agent_pid"
for _ in $(seq 300); do
	api GET "/v1/allocations/$orphan"; [ "$(jget .state)" = released ] && break
	sleep 0.1
done
[ "$(jget .state)" = released ] || fail "a reservation without its owner did not expire: $body"
grep -q "allocation $orphan: reserved, and its owner does not exist: releasing" "$tmp/agent.log" ||
	fail "the expiry is not logged"
api GET "/v1/allocations/$kept"; [ "$(jget .state)" = reserved ] || fail "a live owner's reservation went: $body"
stop_agent
echo "tenant: all checks passed"
