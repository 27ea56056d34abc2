#!/bin/sh
# Containers on a real kernel (veth: this kernel has no dummy or macvlan
# drivers): veth stand-ins carry the names of two of the
# simulated host's VF netdevs; the agent moves them into namespaces this test
# makes (and always removes), configures them, and restores them.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || exit 77
ns1=vfa-t1-$$ ns2=vfa-t2-$$ ns3=vfa-t3-$$
links="ens5f0v0 ens5f0v1"
teardown() {
	for n in $ns1 $ns2 $ns3; do ip netns del "$n" 2>/dev/null || true; done
	for l in $links vfrens5f0v0 peer-ens5f0v0 peer-ens5f0v1 taken-peer ens5f0 ens5f0-peer; do ip link del "$l" 2>/dev/null || true; done
	cleanup
}
trap teardown EXIT
ip netns add "$ns1" && ip netns add "$ns2" || { echo "cannot make network namespaces"; exit 77; }
for l in $links; do ip link add "$l" mtu 1500 type veth peer name "peer-$l"; done
start_agent

inhost() { ip link show "$1" >/dev/null 2>&1; }
alloc() { # [NETNS]: the owner, the namespace the VF will go into ($ns1)
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"${1:-$ns1}\"}}"
	expect 201; id=$(jget .id); vf=$(jget '.vfs[0].pci')
	[ "$vf" = 0000:af:01.0 ] || fail "expected the first E810 VF, got $vf"
}

# attach: moved, renamed, MTU, address, up
alloc
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"net1\",\"addresses\":[\"10.9.0.2/24\",\"fd00:9::2/64\"],\"mtu\":1400}"
expect 200
[ "$(jget .state)" = attached ] || fail "state after attach: $body"
inhost ens5f0v0 && fail "ens5f0v0 is still in the host"
ip -n "$ns1" -j addr show net1 >"$tmp/a.json"
jq -e '.[0].mtu == 1400 and (.[0].flags | index("UP")) != null' "$tmp/a.json" >/dev/null || fail "net1: $(cat "$tmp/a.json")"
jq -e '[.[0].addr_info[] | "\(.local)/\(.prefixlen)"] | index("10.9.0.2/24") != null' "$tmp/a.json" >/dev/null ||
	fail "no 10.9.0.2/24 on net1: $(cat "$tmp/a.json")"
jq -e '[.[0].addr_info[] | .local] | index("fd00:9::2") != null' "$tmp/a.json" >/dev/null || fail "no IPv6 address"
api GET "/v1/vfs/$vf"; [ "$(jget .state)" = attached ] || fail "VF state: $body"

# detach: back under its name, MTU and state restored
api POST "/v1/allocations/$id/detach"; expect 200
inhost ens5f0v0 || fail "ens5f0v0 did not come back"
ip -j link show ens5f0v0 | jq -e '.[0].mtu == 1500 and (.[0].flags | index("UP")) == null' >/dev/null ||
	fail "not restored: $(ip -j link show ens5f0v0)"
ip -n "$ns1" link show net1 >/dev/null 2>&1 && fail "net1 still in the namespace"

# a failure after the claim rolls back: the name is taken inside the namespace
ip -n "$ns1" link add net1 type veth peer name net1p
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"net1\"}"
expect 409
jget .message | grep -q 'File exists' || fail "kernel's reason missing: $body"
inhost ens5f0v0 || fail "not rolled back"
api GET "/v1/allocations/$id"; [ "$(jget .state)" = reserved ] || fail "state after rollback: $body"
ip -n "$ns1" link del net1

# bad targets
api POST "/v1/allocations/$id/attach" -d '{"netns":"../../etc/passwd"}'; expect 400
api POST "/v1/allocations/$id/attach" -d '{"netns":"no-such-netns-x"}'; expect 404
api POST "/v1/allocations/$id/attach" -d '{"netns":"/etc/hostname"}'; expect 400
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"a/b\"}"; expect 400
api POST "/v1/allocations/$id/attach" -d '{"domain":"one-42"}'; expect 404 # test:///default has none

# release of an attached allocation restores first
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"/run/netns/$ns1\",\"ifname\":\"eth9\"}"; expect 200
api DELETE "/v1/allocations/$id"; expect 204
inhost ens5f0v0 || fail "release did not bring ens5f0v0 back"
api GET "/v1/vfs/$vf"; [ "$(jget .state)" = free ] || fail "VF not free: $body"

# the original name is taken in the host on return: it comes back under another
alloc
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"net1\"}"; expect 200
ip link add ens5f0v0 type veth peer name taken-peer
api POST "/v1/allocations/$id/detach"; expect 200
inhost vfrens5f0v0 || fail "no fallback name"
grep -q 'ens5f0v0 is taken in the host: returned as vfrens5f0v0' "$tmp/agent.log" || fail "not logged"
ip link del ens5f0v0; ip link set vfrens5f0v0 name ens5f0v0
api DELETE "/v1/allocations/$id"; expect 204

# the same through vfctl
alloc
vfctl attach "$id" --netns "$ns1" --ifname cli0 --address 10.9.1.2/24 --mtu 1450 >"$tmp/cli.out" ||
	fail "vfctl attach: $(cat "$tmp/cli.out")"
ip -n "$ns1" -j addr show cli0 | jq -e '.[0].mtu == 1450' >/dev/null || fail "vfctl attach: cli0 not there"
vfctl attach "$id" >/dev/null 2>"$tmp/cli.err" && fail "attach without --netns worked"
grep -q -- '--netns' "$tmp/cli.err" || fail "vfctl: --netns not asked for: $(cat "$tmp/cli.err")"
vfctl -o json detach "$id" | jq -e '.state == "reserved"' >/dev/null || fail "vfctl detach"
inhost ens5f0v0 || fail "vfctl detach: not back"
rc=0; vfctl detach not-an-id 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "vfctl detach: a bad id is bad usage (exit $rc)"
vfctl release "$id" >/dev/null

# a default route inside, via the gateway asked for
alloc
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"net1\",\"addresses\":[\"10.9.0.2/24\"],\"gateway\":\"10.9.0.1\"}"
expect 200
ip -n "$ns1" route show default | grep -q 'default via 10.9.0.1 dev net1' || fail "no default route: $(ip -n "$ns1" route)"
api POST "/v1/allocations/$id/detach"; expect 200
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"gateway\":\"10.9.0.256\"}"; expect 400
jget .message | grep -q '^gateway:' || fail "bad gateway not named: $body"
api DELETE "/v1/allocations/$id"; expect 204
# a stale release (the allocation is gone, the VF may be someone else's now) changes nothing
api DELETE "/v1/allocations/$id"; expect 404
inhost ens5f0v0 || fail "a stale release moved ens5f0v0"

# claim and attach in one request; a failed attach claims nothing
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns1\"},\"attach\":{\"netns\":\"$ns1\",\"ifname\":\"one0\",\"addresses\":[\"10.9.3.2/24\"]}}"
expect 201
id=$(jget .id)
[ "$(jget .state)" = attached ] && [ "$(jget '.vfs[0].where.ifname')" = one0 ] || fail "claim+attach: $body"
ip -n "$ns1" -j addr show one0 | jq -e '.[0].addr_info[] | select(.local == "10.9.3.2")' >/dev/null ||
	fail "claim+attach: one0 has not its address"
api DELETE "/v1/allocations/$id"; expect 204
inhost ens5f0v0 || fail "claim+attach: ens5f0v0 not back"
api GET /v1/pools; free=$(jget '.pools[] | select(.name == "eth") | .vfs.free')
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns1\"},\"attach\":{\"netns\":\"$ns2\"}}"
expect 403
api GET /v1/pools
[ "$(jget '.pools[] | select(.name == "eth") | .vfs.free')" = "$free" ] || fail "a refused claim+attach kept a VF"
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns1\"},\"attach\":{\"netns\":\"$ns1\",\"domain\":\"d\"}}"
expect 400
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns1\"},\"attach\":{\"netns\":\"$ns1\",\"ifname\":\"a/b\"}}"
expect 400
jget .message | grep -q '^ifname:' || fail "claim+attach, bad ifname: $body"
vfctl -o json alloc eth --owner "netns:$ns1" --netns "$ns1" --ifname cli1 >"$tmp/alloc.json" ||
	fail "vfctl alloc --netns: $(cat "$tmp/alloc.json")"
[ "$(jq -r .state "$tmp/alloc.json")" = attached ] && ip -n "$ns1" link show cli1 >/dev/null ||
	fail "vfctl alloc --netns: $(cat "$tmp/alloc.json")"
vfctl release "$(jq -r .id "$tmp/alloc.json")" >/dev/null

# VF settings are checked when claimed, each error naming its field
for bad in '"trust":"yes"' '"qos":9,"vlan":5' '"qos":1' '"link_state":"up"' '"vlan_proto":"802.1x","vlan":5' '"max_tx_rate":-1'; do
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"container\",\"netns\":\"x\"},$bad}"
	expect 400
	key=$(printf '%s' "$bad" | sed 's/^"\([a-z_]*\)".*/\1/')
	jget .message | grep -q "$key" || fail "$bad: the message does not name $key: $body"
done

# PF-side settings need the PF: without its netdev, and with a stand-in that has no VFs
# (veth refuses IFLA_VFINFO_LIST as a driver without SR-IOV does), the attach fails
# with the kernel's reason and nothing is left half done
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns1\"},\"mac\":\"02:aa:bb:cc:dd:01\",\"vlan\":12,\"spoofchk\":false}"
expect 201; id=$(jget .id)
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"net1\"}"; expect 409
jget .message | grep -q 'ens5f0.*No such device' || fail "missing PF not named: $body"
ip link add ens5f0 type veth peer name ens5f0-peer
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns1\",\"ifname\":\"net1\"}"; expect 409
[ "$(jget .error)" = EOPNOTSUPP ] || fail "expected the kernel's EOPNOTSUPP: $body"
jget .message | grep -q 'PF ens5f0 reports no VF 0' || fail "the reason is not given: $body"
inhost ens5f0v0 || fail "not rolled back"
api GET "/v1/allocations/$id"; [ "$(jget .state)" = reserved ] || fail "state after a refused PF: $body"
api DELETE "/v1/allocations/$id"; expect 204

# this kernel has no RDMA: the host says so, and a VF's port facts are null
api GET /v1/host; jget .rdma.status | grep -q 'no RDMA' || fail "no RDMA not reported: $body"
api GET /v1/vfs/0000:3b:00.1; [ "$(jget .rdma_port)" = null ] || fail "rdma_port: $body"

# the namespace is deleted while attached. A real VF comes back to the host; a veth
# stand-in dies with it, so nothing comes back here: the agent sees the link go, finds
# the namespace gone, releases on its own, and quarantines the VF rather than call a
# netdev it cannot find free. A late DELETE is stale
alloc "$ns2"
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns2\",\"ifname\":\"net1\"}"; expect 200
ip netns del "$ns2"
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	api GET "/v1/allocations/$id"; [ "$(jget .state)" = released ] && break
	sleep 0.1
done
[ "$(jget .state)" = released ] || fail "not released after its netns died: $body"
grep -q "allocation $id: its network namespace is gone: releasing" "$tmp/agent.log" || fail "not logged"
api GET "/v1/vfs/$vf"; [ "$(jget .state)" = quarantined ] || fail "VF with no netdev not quarantined: $body"
grep -q "VF $vf: the netdev of VF $vf is not back in the host, and namespace $ns2 is gone" "$tmp/agent.log" ||
	fail "the reason is not logged"
api DELETE "/v1/allocations/$id"; expect 404

# the agent is killed while a VF is attached and the namespace dies while it is down:
# the next start finds the namespace gone and releases, and the VF is quarantined too
ip netns add "$ns3"
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns3\"}}"
expect 201; id=$(jget .id); vf=$(jget '.vfs[0].pci')
[ "$vf" = 0000:af:01.1 ] || fail "expected the second E810 VF, got $vf"
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns3\",\"ifname\":\"net1\"}"; expect 200
kill -9 "$agent_pid"; wait "$agent_pid" 2>/dev/null || true; agent_pid=
ip netns del "$ns3"
start_agent
api GET "/v1/allocations/$id"; [ "$(jget .state)" = released ] || fail "not released at start: $body"
api GET "/v1/vfs/$vf"; [ "$(jget .state)" = quarantined ] || fail "VF not quarantined after restart: $body"
stop_agent
echo "netns: all checks passed"
