#!/bin/sh
# The host side of a failover NIC's standby, with real links in this test's own namespaces and
# a real libvirtd (qemu driver, the domain's config, as tests/vm.sh: this machine cannot run a
# domain with a VF). A standby whose bridge or macvtap lower device is missing, of another kind
# or on another VLAN is refused at the claim (nothing claimed) and at the attach (the VF left
# reserved, the domain untouched), naming the field. While the VF is out of the guest and the standby stays (a live migration's
# unplug), the guest's MAC has a static FDB entry on the standby's tap (libvirt's tap: the
# guest's MAC with 0xfe first) in place of the one the bridge learned on its uplink: a peer on
# the VF's VLAN reaches the guest through the bridge only then (the tap's port neither learns
# nor floods unknown unicast, so nothing else delivers to it); the VF plugged again takes the
# entry out. A swap leaves no entry behind.
# test-needs: mounts
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
. "${top_srcdir:-.}/tests/libvirtd-lib.sh"
libvirtd_test_start
command -v bridge >/dev/null && command -v ping >/dev/null ||
	{ echo "SKIP: bridge (iproute2) and ping are needed"; exit 77; }
ip netns add guest && ip netns add wire || { echo "SKIP: cannot make network namespaces"; exit 77; }
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}],
 "libvirt": {"uri": "$LV_URI", "managed": true}}
JSON
start_agent --config "$tmp/vfagent.json"
mac=02:00:c0:a8:02:0b tapmac=fe:00:c0:a8:02:0b
claim() { # FAILOVER-JSON → $id, $pci
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"vfagent-test\"},\"vlan\":120,\"mac\":\"$mac\",\"failover\":$1}"
	expect 201
	id=$(jget .id) pci=$(jget '.vfs[0].pci')
}
attach() { api POST "/v1/allocations/$id/attach" -d '{"domain":"vfagent-test","config":true}'; }
refused() { # MESSAGE: the attach refused with it, nothing in the domain, the VF reserved
	attach
	expect 400
	jget .message | grep -qF "$1" || fail "wanted '$1': $body"
	[ "$(inactive 'count(//interface)')" = 0 ] || fail "a refused attach left: $(cat "$tmp/dom.xml")"
	api GET "/v1/vfs/$pci"
	[ "$(jget .state)" = reserved ] || fail "VF $pci after a refused attach: $body"
}
fdb() { bridge fdb show br onebr.120 | grep -i "^$mac " || :; }

# refused at the claim, where a live migration's destination says no before anything moves:
# no bridge; a device that is no bridge; where the kernel has 802.1Q links, a bridge whose VLAN
# port is VLAN 130's and a macvtap lower device on VLAN 130 (else check-standby's). And at the
# attach: the bridge gone since the claim.
claim_refused() { # FAILOVER-JSON MESSAGE
	n=$(api GET /v1/allocations && jget '.allocations | length')
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"vfagent-test\"},\"vlan\":120,\"mac\":\"$mac\",\"failover\":$1}"
	expect 400
	jget .message | grep -qF "$2" || fail "wanted '$2': $body"
	[ "$(api GET /v1/allocations && jget '.allocations | length')" = "$n" ] || fail "claimed: $body"
}
claim_refused '{"bridge":"onebr.{vlan}"}' \
	"failover.bridge: no network device onebr.120 on this host for the standby"
ip link add up0 type veth peer name up0-wire
ip link add onebr.120 type bridge
if ip link add link up0 name up0.130 type vlan id 130 2>/dev/null; then
	ip link set up0.130 master onebr.120
	claim_refused '{"bridge":"onebr.{vlan}"}' \
		"failover.bridge: bridge onebr.120 is on VLAN 130 (its port up0.130), not on the NIC's VLAN 120"
	ip link del up0.130
	ip link add link up0 name mv.120 type vlan id 130
	claim_refused '{"macvtap":"mv.{vlan}"}' \
		"failover.macvtap: mv.120 is on VLAN 130, not on the NIC's VLAN 120"
	vlans=1
else
	echo "standby-host: this kernel has no 802.1Q links: VLAN refusals checked by check-standby only"
	vlans=
fi
ip link add fake.120 type veth peer name fake-peer
claim_refused '{"bridge":"fake.{vlan}"}' "failover.bridge: fake.120 is a veth device, not a Linux bridge"
ip link add gone.120 type bridge
claim '{"bridge":"gone.{vlan}"}'
ip link del gone.120
refused "failover.bridge: no network device gone.120 on this host for the standby"
api DELETE "/v1/allocations/$id"
expect 204
echo "standby-host: a standby that cannot reach the VF's VLAN refused at the claim and the attach"

# the bridge on VLAN 120: its uplink (up0.120 where the kernel has 802.1Q links, else up0
# itself, an access port) with the peer "wire" beyond it, and the standby's tap (a veth whose
# far end is the guest's standby, with the guest's MAC)
up=up0 wire=up0-wire
if [ -n "$vlans" ]; then
	ip link add link up0 name up0.120 type vlan id 120
	up=up0.120 wire=wire.120
fi
ip link set "$up" master onebr.120
ip link add vnet-fo address "$tapmac" type veth peer name sb0 address "$mac"
ip link set vnet-fo master onebr.120
bridge link set dev vnet-fo learning off flood off # before any frame: nothing learned there
ip link set sb0 netns guest
ip link set up0-wire netns wire
[ -z "$vlans" ] || ip -n wire link add link up0-wire name wire.120 type vlan id 120
ip -n guest addr add 10.77.0.2/24 dev sb0
ip -n wire addr add 10.77.0.1/24 dev "$wire"
for l in up0 "$up" onebr.120 vnet-fo; do ip link set "$l" up; done
ip -n guest link set sb0 up
ip -n wire link set up0-wire up
ip -n wire link set "$wire" up
reaches() { ip netns exec wire ping -c 1 -W 1 10.77.0.2 >/dev/null 2>&1; }

claim '{"bridge":"onebr.{vlan}"}'
attach
expect 200
[ "$(inactive 'string(//interface[teaming/@type="persistent"]/source/@bridge)')" = onebr.120 ] ||
	fail "no standby on onebr.120: $(cat "$tmp/dom.xml")"
[ -z "$(fdb)" ] || fail "an FDB entry for the guest's MAC while its VF is in: $(fdb)"
# what the bridge learns while the VF carries the guest's traffic: the MAC behind its uplink
bridge fdb replace "$mac" dev "$up" master dynamic
! reaches || fail "the guest reached through the standby's tap with no entry for it"
api POST "/v1/allocations/$id/detach" -d '{"keep_standby":true}'
expect 200
fdb | grep -q "dev vnet-fo .*master onebr.120 static" ||
	fail "no static entry on the standby's tap: $(bridge fdb show br onebr.120)"
! fdb | grep -q "dev $up " || fail "the MAC still behind the uplink: $(fdb)"
reaches || fail "the peer on VLAN 120 does not reach the guest's standby: $(fdb)"
attach
expect 200
[ -z "$(fdb)" ] || fail "the VF plugged again, the static entry stayed: $(fdb)"
echo "standby-host: the VF out, the guest's MAC on the standby's tap; back in, the entry gone"

# a swap (another PF): no entry left, the learned one replaced on the way
bridge fdb replace "$mac" dev "$up" master dynamic
api POST "/v1/allocations/$id/swap"
expect 200
[ -z "$(fdb)" ] || fail "a swap left an FDB entry for the guest's MAC: $(fdb)"
api POST "/v1/allocations/$id/detach"
expect 200
api DELETE "/v1/allocations/$id"
expect 204
grep -q "failover: the standby's" "$tmp/agent.log" && fail "an FDB request failed: $(grep failover "$tmp/agent.log")"
echo "standby-host: all passed"
