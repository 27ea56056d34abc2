#!/bin/sh
# Failover pairs on the simulated host (libvirt: test:///default inside the agent): a NIC on a
# network with "failover" becomes libvirt's teaming pair (a virtio standby with <teaming
# type='persistent'/> and a ua- alias, the VF's <interface type='hostdev'> with <teaming
# type='transient' persistent=…/>, one MAC, the standby on the VF's VLAN), checked with
# virt-xml-validate and defined, started and read back on test:///default; a NIC without it
# as before; an InfiniBand VF refused; a standby that would miss the VLAN refused; the claim
# key of POST /v1/allocations, its errors, and the pools' networks.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
one=${top_srcdir:-.}/tests/one
domain_xml_test_start

cat >"$tmp/config.json" <<'EOF'
{"pools": [
  {"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}},
  {"name": "eth", "selector": {"vendors": ["8086"]}}],
 "networks": [{"bridge": "sriov_ib0", "pool": "ib"},
              {"bridge": "sriov_eth0", "pool": "eth", "failover": {"bridge": "onebr.{vlan}"}},
              {"bridge": "sriov_plain", "pool": "eth"},
              {"bridge": "sriov_ibfo", "pool": "ib", "failover": {"bridge": "br-fo"}},
              {"bridge": "sriov_br", "pool": "eth", "failover": {"bridge": "br-fo"}},
              {"network": "ovs-net", "pool": "eth", "failover": {"bridge": "ovs0", "openvswitch": true}},
              {"bridge": "sriov_mv", "pool": "eth", "failover": {"macvtap": "ens1f0.{vlan}"}}],
 "guids": {"first": "02:c9:03:00:00:00:00:01", "count": 4096}}
EOF
# the standbys' devices, which the agent looks for (tests/standby-host.sh has the refusals):
# the bridges, and veths standing in for the Open vSwitch bridge and the macvtap's lower device
{ ip link add onebr.120 type bridge && ip link add br-fo type bridge &&
	ip link add ovs0 type veth peer name ovs0-peer &&
	ip link add ens1f0.4094 type veth peer name ens1f0-peer; } 2>/dev/null ||
	{ echo "SKIP: cannot make links in this namespace"; exit 77; }
start_agent --config "$tmp/config.json"


# the Ethernet NIC on a failover network (VLAN 120 as the deploy hook passes it from vm.xml):
# the pair, the standby on onebr.120; the IB NICs as before
post_xml "$one/two-ib-one-eth.xml" "?vlan=02:00:c0:a8:02:2a=120"
expect 200
printf '%s\n' "$body" >"$tmp/out.xml"
valid "the pair"
sb='/domain/devices/interface[teaming/@type="persistent"]'
vf='/domain/devices/interface[@type="hostdev"]'
[ "$(x "count($sb)")" = 1 ] || fail "one standby wanted: $body"
[ "$(x "string($sb/@type)")" = bridge ] || fail "a bridge standby wanted"
[ "$(x "string($sb/source/@bridge)")" = onebr.120 ] || fail "the standby is not on VLAN 120's bridge"
[ "$(x "string($sb/model/@type)")" = virtio ] || fail "the standby must be virtio"
[ "$(x "count($sb/link)")" = 0 ] || fail "the standby's link must stay up"
[ "$(x "string($sb/target/@dev)")" = one-42-2 ] || fail "the standby's tap lost OpenNebula's name one-42-2"
alias=$(x "string($sb/alias/@name)")
[ "$alias" = ua-failover-0200c0a8022a ] || fail "alias: '$alias'"
[ "$(x "string($sb/mac/@address)")" = 02:00:c0:a8:02:2a ] || fail "the standby has the NIC's MAC"
[ "$(x "string($vf/mac/@address)")" = 02:00:c0:a8:02:2a ] || fail "the VF has the NIC's MAC"
[ "$(x "string($vf/teaming/@type)")" = transient ] || fail "the VF is not the transient one"
[ "$(x "string($vf/teaming/@persistent)")" = "$alias" ] || fail "the VF's teaming does not name the standby"
[ "$(x "string($vf/vlan/tag/@id)")" = 120 ] || fail "the VF keeps its VLAN"
# its own alias: libvirt finds an interface to detach by MAC, which the two share
[ "$(x "string($vf/alias/@name)")" = "$alias-vf" ] || fail "the VF's alias: $(x "string($vf/alias/@name)")"
# the standby comes right before its VF, where the NIC was
[ "$(x "name(${sb}/following-sibling::*[1])")" = interface ] &&
	[ "$(x "string(${sb}/following-sibling::*[1]/@type)")" = hostdev ] || fail "the standby is not before its VF"
[ "$(x 'count(/domain/devices/hostdev[@type="pci"])')" = 2 ] || fail "the IB VFs are hostdevs as before"
[ "$(x 'count(/domain/devices/hostdev/teaming)')" = 0 ] || fail "an IB VF got a teaming"
ids=$(sed -n 's/^X-Allocation-Id: *//Ip' "$tmp/headers" | tr -d '\r')
# the eth NIC's allocation keeps its standby in its settings (a swap, a migration read it)
api GET "/v1/allocations?owner=vm:one-42"
[ "$(jget '.allocations[] | select(.pool == "eth") | .settings.failover.bridge')" = 'onebr.{vlan}' ] ||
	fail "the standby is not in the allocation's settings: $body"
# each IB NIC an allocation of its own, neither with a standby
[ "$(jget '[.allocations[] | select(.pool == "ib")] | length')" = 2 ] || fail "two IB allocations: $body"
[ "$(jget '[.allocations[] | select(.pool == "ib") | .settings.failover // empty] | length')" = 0 ] ||
	fail "ib: $body"
# libvirt takes it: defined, started and read back on its test driver with the pair
read_back "the pair"
[ "$(xmllint --xpath "string(//interface[teaming/@type='transient']/teaming/@persistent)" "$tmp/back.xml")" = "$alias" ] ||
	fail "the pair did not read back: $(cat "$tmp/back.xml")"
[ "$(xmllint --xpath "string(//interface[alias/@name='$alias']/teaming/@type)" "$tmp/back.xml")" = persistent ] ||
	fail "the standby did not read back"
for id in $(printf '%s' "$ids" | tr ',' ' '); do api DELETE "/v1/allocations/$id"; done
# a file with its UUID posted again (a retried deploy): the VFs its domain holds, the same pair
sed 's#<name>one-42</name>#<name>one-43</name><uuid>6f1c4c52-0a3e-4d0b-9d6c-0a1e2b3c4d5e</uuid>#' \
	"$one/two-ib-one-eth.xml" >"$tmp/uuid.xml"
post_xml "$tmp/uuid.xml" "?vlan=02:00:c0:a8:02:2a=120"
expect 200
first=$body
post_xml "$tmp/uuid.xml" "?vlan=02:00:c0:a8:02:2a=120"
expect 200
[ "$body" = "$first" ] || fail "the retried deploy differs: $body"
[ "$(printf '%s\n' "$body" | xmllint --xpath "count($sb)" -)" = 1 ] || fail "the retried deploy lost the standby: $body"
grep -qi '^X-Allocation-Id' "$tmp/headers" && fail "the retried deploy claimed anew"
api GET "/v1/allocations?owner=vm:one-43"
for id in $(jget '.allocations[].id'); do api DELETE "/v1/allocations/$id"; done

# a NIC on a network without failover: as before, no standby, no teaming
sed 's/sriov_eth0/sriov_plain/' "$one/two-ib-one-eth.xml" >"$tmp/plain.xml"
post_xml "$tmp/plain.xml" "?vlan=02:00:c0:a8:02:2a=120"
expect 200
printf '%s\n' "$body" >"$tmp/out.xml"
valid "a NIC without failover"
[ "$(x 'count(//teaming)')" = 0 ] || fail "teaming on a NIC without failover"
[ "$(x 'count(/domain/devices/interface[@type="bridge"])')" = 1 ] || fail "a standby on a NIC without failover"
for id in $(sed -n 's/^X-Allocation-Id: *//Ip' "$tmp/headers" | tr -d '\r' | tr ',' ' '); do
	api DELETE "/v1/allocations/$id"
done

# Open vSwitch: libvirt tags the standby with the VF's VLAN; macvtap: the VLAN's own device
sed 's#<source bridge=.sriov_eth0./>#<source network="ovs-net"/>#' "$one/two-ib-one-eth.xml" >"$tmp/ovs.xml"
post_xml "$tmp/ovs.xml" "?vlan=02:00:c0:a8:02:2a=7"
expect 200
printf '%s\n' "$body" >"$tmp/out.xml"
valid "an Open vSwitch standby"
[ "$(x "string($sb/virtualport/@type)")" = openvswitch ] || fail "no virtualport: $body"
[ "$(x "string($sb/vlan/tag/@id)")" = 7 ] || fail "the OVS standby is not tagged 7"
[ "$(x "string($sb/source/@bridge)")" = ovs0 ] || fail "ovs0"
for id in $(sed -n 's/^X-Allocation-Id: *//Ip' "$tmp/headers" | tr -d '\r' | tr ',' ' '); do
	api DELETE "/v1/allocations/$id"
done
sed 's/sriov_eth0/sriov_mv/' "$one/two-ib-one-eth.xml" >"$tmp/mv.xml"
post_xml "$tmp/mv.xml" "?vlan=02:00:c0:a8:02:2a=4094"
expect 200
printf '%s\n' "$body" >"$tmp/out.xml"
valid "a macvtap standby"
[ "$(x "string($sb/@type)")" = direct ] || fail "a macvtap standby is type direct"
[ "$(x "string($sb/source/@dev)")" = ens1f0.4094 ] || fail "the macvtap's device"
[ "$(x "string($sb/source/@mode)")" = bridge ] || fail "the macvtap's mode"
for id in $(sed -n 's/^X-Allocation-Id: *//Ip' "$tmp/headers" | tr -d '\r' | tr ',' ' '); do
	api DELETE "/v1/allocations/$id"
done

# refused, each naming the NIC, nothing kept: an IB VF on a failover network; a Linux
# bridge standby with no {vlan} for a NIC with a VLAN
n=$(allocations)
sed 's/sriov_ib0/sriov_ibfo/' "$one/two-ib-one-eth.xml" >"$tmp/ibfo.xml"
post_xml "$tmp/ibfo.xml" "?vlan=02:00:c0:a8:02:2a=120"
expect 400
jget .message | grep -q 'devices/interface\[1\]: failover: VF .* is not an Ethernet VF.*IPoIB' || fail "$body"
sed 's/sriov_eth0/sriov_br/' "$one/two-ib-one-eth.xml" >"$tmp/br.xml"
post_xml "$tmp/br.xml" "?vlan=02:00:c0:a8:02:2a=120"
expect 400
jget .message | grep -q 'devices/interface\[2\]: the standby bridge "br-fo" would not be on VLAN 120' || fail "$body"
[ "$(allocations)" = "$n" ] || fail "a refused rewrite kept its claims"
api GET /v1/vfs?state=reserved
[ "$(jget '.vfs | length')" = 0 ] || fail "VFs left reserved: $body"
# without a VLAN the plain bridge standby is fine
post_xml "$tmp/br.xml" ""
expect 200
printf '%s\n' "$body" | grep -q 'source bridge="br-fo"' || fail "br-fo standby: $body"

# the claim key: kept in the allocation's settings, its errors name the field
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"vm-1"},"failover":{"bridge":"ovs0","openvswitch":true}}'
expect 201
[ "$(printf '%s' "$body" | jq -c .settings.failover)" = '{"bridge":"ovs0","openvswitch":true}' ] || fail "settings: $body"
api GET "/v1/allocations/$(jget .id)"
[ "$(jget .settings.failover.bridge)" = ovs0 ] || fail "the ledger lost the standby: $body"
for bad in '"br0"|failover: must be an object' \
	'{"macvtap":"eth0","openvswitch":true}|failover.openvswitch: only a "bridge"' \
	'{"bridge":"a/b"}|failover.bridge: must be a network device name' \
	'{"bridge":"br0","vlan":3}|failover: unknown key "vlan"' \
	'{"bridge":"br0"},"vlan":3|failover: the standby bridge "br0" would not be on VLAN 3'; do
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"vm-1\"},\"failover\":${bad%%|*}}"
	expect 400
	jget .message | grep -qF "${bad#*|}" || fail "${bad%%|*}: $body"
done
# the pools show each network's standby
api GET /v1/pools
[ "$(jget '.pools[] | select(.name == "eth") | .networks[] | select(.bridge == "sriov_eth0") | .failover.bridge')" = 'onebr.{vlan}' ] ||
	fail "GET /v1/pools: $body"
# and a config with a bad standby does not start, naming it
config_refused '{"pools":[{"name":"eth","selector":{"vendors":["8086"]}}],"networks":[{"bridge":"b","pool":"eth","failover":{"bridge":""}}]}' \
	'networks[0].failover.bridge: must be a network device name'
echo "failover pairs: ok"
