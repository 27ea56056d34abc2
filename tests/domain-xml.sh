#!/bin/sh
# POST /v1/domain-xml on the simulated host (libvirt: test:///default inside
# the agent): OpenNebula deployment files rewritten, checked with
# virt-xml-validate, defined and started on test:///default and read back;
# a file with no SR-IOV NIC unchanged; a file asking too much claims nothing;
# bad XML is a 400 with line and column.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
one=${top_srcdir:-.}/tests/one
domain_xml_test_start

start_agent

release_everything() {
	api GET /v1/allocations
	for id in $(jget '.allocations[].id'); do api DELETE "/v1/allocations/$id"; done
}

# a VM with two IB NICs and an Ethernet NIC (its VLAN as the deploy hook passes it from vm.xml)
unbinds=0; [ -f "$tmp/sys/sim-unbinds" ] && unbinds=$(wc -l <"$tmp/sys/sim-unbinds")
post_xml "$one/two-ib-one-eth.xml" "?vlan=02:00:c0:a8:02:2a=120"
expect 200
grep -qi '^Content-Type: application/xml' "$tmp/headers" || fail "not application/xml"
printf '%s\n' "$body" >"$tmp/out.xml"
valid rewrite
ids=$(sed -n 's/^X-Allocation-Id: *//Ip' "$tmp/headers" | tr -d '\r')
# one allocation per NIC, of one VF, with the NIC's MAC (update_nic and detach_nic find it)
[ "$(printf "%s" "$ids" | tr "," "\n" | grep -c .)" = 3 ] || fail "X-Allocation-Id: $ids, wanted three ids"
api GET /v1/allocations
[ "$(jget '[.allocations[] | select(.vfs | length == 1) | .settings.mac] | sort | join(" ")')" = \
	"02:00:0a:01:00:05 02:00:0a:02:00:05 02:00:c0:a8:02:2a" ] || fail "one allocation per NIC: $body"
[ "$(x 'count(/domain/devices/hostdev[@type="pci"][@managed="yes"])')" = 2 ] || fail "two IB hostdevs wanted"
[ "$(x 'count(/domain/devices/interface[@type="hostdev"])')" = 1 ] || fail "one Ethernet VF wanted"
[ "$(x 'string(/domain/devices/interface[@type="hostdev"]/mac/@address)')" = 02:00:c0:a8:02:2a ] ||
	fail "the Ethernet VF keeps the NIC's MAC"
[ "$(x 'string(/domain/devices/interface[@type="hostdev"]/vlan/tag/@id)')" = 120 ] ||
	fail "the Ethernet VF keeps the NIC's VLAN"
[ "$(x 'count(//interface/source[@bridge="sriov_ib0" or @bridge="sriov_eth0"])')" = 0 ] ||
	fail "SR-IOV NICs left in place"
[ "$(x 'string(/domain/devices/interface[@type="bridge"]/source/@bridge)')" = br0 ] ||
	fail "the ordinary NIC must stay"
dummies=$(x '/domain/devices/interface[@type="ethernet"]/mac/@address' | sed 's/.*="\(.*\)"/\1/')
[ "$(printf '%s\n' "$dummies" | tr '\n' ' ')" = "02:1b:0a:01:00:05 02:1b:0a:02:00:05 " ] ||
	fail "dummy MACs in IB order wanted, got: $dummies"
[ "$(x 'count(/domain/devices/interface[@type="ethernet"]/link[@state="down"])')" = 2 ] ||
	fail "dummies must be link down"
uuid=$(x 'string(/domain/uuid)')
[ ${#uuid} = 36 ] || fail "a UUID must be added: '$uuid'"
for id in $(printf '%s' "$ids" | tr ',' ' '); do
	api GET "/v1/allocations/$id"
	expect 200
	[ "$(jget .state)" = attached ] || fail "allocation $id: $(jget .state)"
	[ "$(jget .owner.uuid)" = "$uuid" ] || fail "allocation $id is not tied to domain $uuid"
	[ "$(jget .owner.name)" = one-42 ] || fail "owner name"
done
# the IB VFs got GUIDs from the pool on their PF (the simulated mlx5/mlx4 files)
api GET "/v1/allocations/$(printf '%s' "$ids" | cut -d, -f1)"
[ "$(jget '.vfs[0].guid')" != null ] || fail "no GUID from the pool: $body"
# and were not rebound for them: a guest's driver reads its GUIDs when it probes (the simulated
# kernel logs each unbind)
bound=0
for pci in $(jget '.vfs[].pci'); do
	if tail -n +"$((unbinds + 1))" "$tmp/sys/sim-unbinds" 2>/dev/null | grep -qx "$pci"; then
		fail "IB VF $pci was rebound for a guest"
	fi
	api GET "/v1/vfs/$pci"; case $(jget .driver) in mlx*) bound=$((bound + 1)) ;; esac
done
[ "$bound" -gt 0 ] || fail "no IB VF on its host driver was claimed: the rebind check saw nothing"

# the result runs on libvirt's test driver and reads back with its VFs
read_back "the rewrite"
[ "$(xmllint --xpath 'count(/domain/devices/hostdev)' "$tmp/back.xml")" = 2 ] || fail "read back"
grep -q "02:1b:0a:02:00:05" "$tmp/back.xml" || fail "second dummy lost in read back"

# no SR-IOV NIC: byte for byte, no allocation
n=$(allocations)
post_xml "$one/no-sriov.xml" ""
expect 200
cmp -s "$tmp/body" "$one/no-sriov.xml" || fail "a domain with no SR-IOV NIC must come back unchanged"
grep -qi '^X-Allocation-Id' "$tmp/headers" && fail "no allocation wanted"
[ "$(allocations)" = "$n" ] || fail "allocations changed"

# more IB VFs than are free: 409, and nothing claimed
post_xml "$one/too-many.xml" ""
expect 409
jget .message | grep -q 'pool "ib" has .* free VFs.*9 requested of pool "ib"' || fail "$body"
[ "$(allocations)" = "$n" ] || fail "a refused rewrite claimed VFs"

# ?ip= overrides the MAC; ?owner= names the owner (the first post's VFs given back first: a
# NIC's MAC has one holder)
release_everything
post_xml "$one/two-ib-one-eth.xml" "?ip=10.9.0.1,10.9.0.2&owner=one-77"
expect 200
printf '%s\n' "$body" | grep -q '02:1b:0a:09:00:02' || fail "?ip= ignored"
api GET "/v1/allocations?owner=vm:one-77"
[ "$(jget '.allocations | length')" = 3 ] || fail "?owner= ignored: $body"

# an IB NIC with no OpenNebula MAC and no ?ip=: 400 naming the NIC, nothing kept (one-77's
# VFs given back: its NICs' MACs are the file's)
release_everything
n=$(allocations)
sed "s/02:00:0a:01:00:05/52:54:00:01:00:05/" "$one/two-ib-one-eth.xml" >"$tmp/nomac.xml"
post_xml "$tmp/nomac.xml" ""
expect 400
jget .message | grep -q 'devices/interface\[1\]: no IPv4 address' || fail "$body"
[ "$(allocations)" = "$n" ] || fail "a failed rewrite kept its claims"
api GET /v1/vfs?state=reserved
[ "$(jget '.vfs | length')" = 0 ] || fail "VFs left reserved: $body"

# garbage
printf '<domain><name>x</name><devices><interface type="bridge"></devices></domain>' >"$tmp/bad.xml"
post_xml "$tmp/bad.xml" ""
expect 400
jget .message | grep -q '^body: line 1, column [0-9]*: Opening and ending tag mismatch' || fail "$body"
printf '<network><name>x</name></network>' >"$tmp/net.xml"
post_xml "$tmp/net.xml" ""
expect 400
jget .message | grep -q 'root element is <network>' || fail "$body"
printf '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa">]><domain><name>&a;</name></domain>' >"$tmp/dtd.xml"
post_xml "$tmp/dtd.xml" ""
expect 400
jget .message | grep -q 'DTD is not accepted' || fail "$body"
sed 's/<mac address=.02:00:c0:a8:02:2a.\/>/<mac address="zz"\/>/' "$one/two-ib-one-eth.xml" >"$tmp/badmac.xml"
post_xml "$tmp/badmac.xml" ""
expect 400
jget .message | grep -q 'devices/interface\[2\]/mac: "zz" is not a unicast MAC address' || fail "$body"
# the MAC check of POST /v1/allocations: no broadcast, multicast or zero MAC
for mac in ff:ff:ff:ff:ff:ff 01:00:5e:00:00:01 00:00:00:00:00:00; do
	sed "s/<mac address=.02:00:c0:a8:02:2a.\/>/<mac address=\"$mac\"\/>/" "$one/two-ib-one-eth.xml" >"$tmp/badmac.xml"
	post_xml "$tmp/badmac.xml" ""
	expect 400
	jget .message | grep -q "devices/interface\[2\]/mac: \"$mac\" is not a unicast MAC" || fail "$mac: $body"
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"x\"},\"mac\":\"$mac\"}"
	expect 400
done

# a <hostdev> already in the file that names a VF of a pool: refused, naming it; one that
# names a device the agent does not manage is libvirt's business
n=$(allocations)
hostdev() { sed "s#</devices>#<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' bus='0x$1' slot='0x$2' function='0x$3'/></source></hostdev></devices>#" "$one/no-sriov.xml" >"$tmp/hostdev.xml"; }
hostdev af 01 2
post_xml "$tmp/hostdev.xml" ""
expect 409
jget .message | grep -q 'devices/hostdev 0000:af:01.2: a VF of pool eth, managed by vfagent' || fail "$body"
[ "$(allocations)" = "$n" ] || fail "a refused file claimed VFs"
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"someone-else"}}'; expect 201
held=$(jget '.vfs[0].pci'); other=$(jget .id)
hostdev "$(echo "$held" | cut -c6-7)" "$(echo "$held" | cut -c9-10)" "$(echo "$held" | cut -c12)"
post_xml "$tmp/hostdev.xml" ""
expect 409
jget .message | grep -q "devices/hostdev $held: held by allocation $other of another owner" || fail "$body"
# as libvirt reads it: an <interface type='hostdev'> without domain (and function, when 0)
# names the same VF; a <hostdev> in a second <devices> is passed through all the same
hb=$(echo "$held" | cut -c6-7) hs=$(echo "$held" | cut -c9-10) hf=$(echo "$held" | cut -c12)
fn=" function='0x$hf'"; [ "$hf" = 0 ] && fn=
sed "s#</devices>#<interface type='hostdev' managed='yes'><source><address type='pci' bus='0x$hb' slot='0x$hs'$fn/></source></interface></devices>#" \
	"$one/no-sriov.xml" >"$tmp/short.xml"
post_xml "$tmp/short.xml" ""
expect 409
jget .message | grep -q "devices/hostdev $held: held by allocation $other of another owner" || fail "short address: $body"
sed "s#</devices>#</devices><devices><hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' bus='0x$hb' slot='0x$hs' function='0x$hf'/></source></hostdev></devices>#" \
	"$one/no-sriov.xml" >"$tmp/second.xml"
post_xml "$tmp/second.xml" ""
expect 409
jget .message | grep -q "devices/hostdev $held: held by allocation $other of another owner" || fail "second <devices>: $body"
[ "$(allocations)" = "$((n + 1))" ] || fail "a refused file claimed VFs"
api DELETE "/v1/allocations/$other"; expect 204
# held for this file's UUID under another name: the file's <uuid> is its own word, and libvirt
# reports no such domain: another owner's (tests/domain-uuid.sh has libvirt vouch for one)
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"renamed","uuid":"8F6FD3C5-8A5E-4C19-9E0E-3C2D1F0A4B43"}}'
expect 201
held=$(jget '.vfs[0].pci'); mine=$(jget .id)
hostdev "$(echo "$held" | cut -c6-7)" "$(echo "$held" | cut -c9-10)" "$(echo "$held" | cut -c12)"
post_xml "$tmp/hostdev.xml" ""
expect 409
jget .message | grep -q "devices/hostdev $held: held by allocation $mine of another owner" || fail "$body"
api DELETE "/v1/allocations/$mine"; expect 204
hostdev 00 1f 0
post_xml "$tmp/hostdev.xml" ""
expect 200

# one VF by its address, as OpenNebula's scheduler chose it (HostSharePCI booked it): claimed
# alone with the NIC's settings, its pool found from the VF; taken already, it is a 409 naming
# the holder (a lost race: nothing is assigned twice)
vm43='"owner":{"kind":"vm","name":"one-43","uuid":"8f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b43"}'
api GET '/v1/vfs?pool=eth&state=free'
pick=$(jget '.vfs[-1].pci')
api POST /v1/allocations -d "{\"pci\":\"$pick\",$vm43,\"mac\":\"02:00:c0:a8:09:01\",\"vlan\":77,\"spoofchk\":false,\"trust\":true}"
expect 201
[ "$(jget '.vfs[0].pci')" = "$pick" ] && [ "$(jget .pool)" = eth ] || fail "claim by address: $body"
byaddr=$(jget .id)
api POST /v1/allocations -d "{\"pci\":\"$pick\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-44\"}}"
expect 409
jget .message | grep -q "pci: VF $pick is not free: reserved by allocation $byaddr" || fail "$body"
api POST /v1/allocations -d "{\"pci\":\"$pick\",\"count\":2,$vm43}"
expect 400
api POST /v1/allocations -d "{\"pci\":\"0000:00:1f.0\",$vm43}"
expect 404
api POST /v1/allocations -d "{\"pci\":\"$pick\",\"pool\":\"ib\",$vm43}"
expect 409
jget .message | grep -q "not in pool \"ib\"" || fail "$body"
# oned's <hostdev> of that VF: prepared before the guest starts. spoofchk and trust are set on
# the PF, which the simulated host cannot answer for: refused naming it, the claim left to the
# hook that made it, reserved as it was
hostdev "$(echo "$pick" | cut -c6-7)" "$(echo "$pick" | cut -c9-10)" "$(echo "$pick" | cut -c12)"
post_xml "$tmp/hostdev.xml" ""
expect 409
jget .message | grep -q "settings on PF" || fail "$body"
api GET "/v1/allocations/$byaddr"
[ "$(jget .state)" = reserved ] || fail "a refused adoption left $(jget .state)"
api DELETE "/v1/allocations/$byaddr"; expect 204
# MAC and VLAN (libvirt sets them from the device XML)
api POST /v1/allocations -d "{\"pci\":\"$pick\",$vm43,\"mac\":\"02:00:c0:a8:09:01\",\"vlan\":77}"
expect 201
byaddr=$(jget .id)
post_xml "$tmp/hostdev.xml" ""
expect 200
printf '%s\n' "$body" >"$tmp/out.xml"
[ "$(x 'count(/domain/devices/hostdev)')" = 0 ] || fail "oned's hostdev left as it was"
[ "$(x 'string(//interface[@type="hostdev"]/mac/@address)')" = 02:00:c0:a8:09:01 ] || fail "MAC"
[ "$(x 'string(//interface[@type="hostdev"]/vlan/tag/@id)')" = 77 ] || fail "VLAN"
[ "$(x 'string(//interface[@type="hostdev"]/source/address/@slot)')" = "0x$(echo "$pick" | cut -c9-10)" ] ||
	fail "another VF than oned's"
api GET "/v1/allocations/$byaddr"
[ "$(jget .state)" = attached ] || fail "adopted VF: $(jget .state)"
# posted again (a retried deploy): the same device
post_xml "$tmp/hostdev.xml" ""
expect 200
printf "%s\n" "$body" | cmp -s - "$tmp/out.xml" || fail "a second post changed the device"
api DELETE "/v1/allocations/$byaddr"; expect 204
# an InfiniBand VF gets its IPoIB dummy NIC from the address its claim carries
api GET '/v1/vfs?pool=ib&state=free'
pick=$(jget '.vfs[-1].pci')
api POST /v1/allocations -d "{\"pci\":\"$pick\",$vm43,\"ip\":\"10.1.0.9/24\"}"
expect 201
byaddr=$(jget .id)
hostdev "$(echo "$pick" | cut -c6-7)" "$(echo "$pick" | cut -c9-10)" "$(echo "$pick" | cut -c12)"
post_xml "$tmp/hostdev.xml" ""
expect 200
printf '%s\n' "$body" >"$tmp/out.xml"
[ "$(x 'count(/domain/devices/hostdev[@type="pci"])')" = 1 ] || fail "IB hostdev"
[ "$(x 'string(//interface[@type="ethernet"]/mac/@address)')" = 02:1b:0a:01:00:09 ] || fail "dummy NIC"
valid "adopted file"
api DELETE "/v1/allocations/$byaddr"; expect 204
sed 's/<uuid>.*</<uuid>nope</' "$one/no-sriov.xml" | sed 's/br0/sriov_eth0/' >"$tmp/baduuid.xml"
post_xml "$tmp/baduuid.xml" ""
expect 400
jget .message | grep -q '<uuid> is not a UUID' || fail "$body"

# OpenNebula's own file (tests/one/deployment.0: no <vlan>, a <boot order>):
# ?vlan= and ?ip= by NIC MAC, as the deploy hook passes them from vm.xml
release_everything
post_xml "$one/deployment.0" "?vlan=02:00:c0:a8:02:07=130&ip=02:00:0a:02:00:07=10.7.0.9"
expect 200
printf '%s\n' "$body" >"$tmp/out.xml"
[ "$(x 'string(//interface[@type="hostdev"]/vlan/tag/@id)')" = 130 ] || fail "?vlan= by MAC"
[ "$(x 'string(//interface[@type="hostdev"]/boot/@order)')" = 2 ] || fail "boot order lost"
grep -q '02:1b:0a:07:00:09' "$tmp/out.xml" || fail "?ip= by MAC ignored"
grep -q '02:1b:0a:01:00:07' "$tmp/out.xml" || fail "a NIC ?ip= does not name keeps its MAC's address"
ids=$(sed -n 's/^X-Allocation-Id: *//Ip' "$tmp/headers" | tr -d '\r')
# posted again (a retried deploy): the same devices, no new claim, no ids to give back
n=$(allocations)
post_xml "$one/deployment.0" "?vlan=02:00:c0:a8:02:07=130&ip=02:00:0a:02:00:07=10.7.0.9"
expect 200
printf '%s\n' "$body" | cmp -s - "$tmp/out.xml" || fail "a second post changed the devices"
[ "$(allocations)" = "$n" ] || fail "a second post claimed again"
grep -qi '^X-Allocation-Id' "$tmp/headers" && fail "a second post names allocations to give back"
# the same UUID asking for other pools: 409 naming what it holds
sed "s/sriov_ib0/sriov_eth0/" "$one/deployment.0" >"$tmp/other.xml"
post_xml "$tmp/other.xml" ""
expect 409
jget .message | grep -q "already holds allocation" || fail "$body"
# found by UUID as well as by name
api GET "/v1/allocations?owner=vm:5D1E0C62-8D1B-4A55-9F0E-7C2A4B3D9E01"
[ "$(jget '[.allocations[].id] | sort | join(", ")')" = "$(printf '%s' "$ids" | tr -d ' ' | tr ',' '\n' | sort | paste -sd, | sed 's/,/, /g')" ] ||
	fail "by UUID: $body (ids $ids)"
release_everything
post_xml "$one/deployment.0" "?vlan=02:00:c0:a8:02:07=4095"
expect 400
jget .message | grep -q 'vlan: "4095" for devices/interface\[2\] is not a VLAN' || fail "$body"
[ "$(allocations)" = 0 ] || fail "a refused VLAN kept claims"

# a NIC's <bandwidth> becomes its VF's max_tx_rate on the PF (libvirt takes none on a
# hostdev): the simulated host's PF is no netdev here, so the PF is asked and cannot
# answer: refused naming the NIC, nothing claimed (the lab sets it on a real igb PF)
sed "s#<target dev='one-7-2'/>#<target dev='one-7-2'/><bandwidth><outbound average='125000'/></bandwidth>#" \
	"$one/deployment.0" >"$tmp/bw.xml"
post_xml "$tmp/bw.xml" ""
expect 409
jget .message | grep -q "^devices/interface\[2\]: reading VF [0-9]*'s settings on PF" || fail "$body"
[ "$(allocations)" = 0 ] || fail "a refused rate kept claims"
sed "s#average='125000'#average='fast'#" "$tmp/bw.xml" >"$tmp/bw2.xml"
post_xml "$tmp/bw2.xml" ""
expect 400
jget .message | grep -q 'bandwidth/outbound: average "fast" is not a rate' || fail "$body"
# the network's SPOOFCHK and TRUST by NIC MAC (the deploy hook passes them from vm.xml): set on
# the PF, which is asked and cannot answer here (refused naming the NIC, nothing claimed); a
# value that is not yes or no is refused naming the field, and a NIC not named asks nothing
for q in spoofchk=02:00:c0:a8:02:07=NO trust=02:00:c0:a8:02:07=yes; do
	post_xml "$one/deployment.0" "?$q"
	expect 409
	jget .message | grep -q "^devices/interface\[2\]: reading VF [0-9]*'s settings on PF" || fail "?$q: $body"
	[ "$(allocations)" = 0 ] || fail "?$q: a refused PF kept claims"
done
post_xml "$one/deployment.0" "?spoofchk=02:00:c0:a8:02:07=maybe"
expect 400
jget .message | grep -q 'spoofchk: "maybe" for devices/interface\[2\] is not yes or no' || fail "$body"
post_xml "$one/deployment.0" "?trust=02:00:c0:a8:09:09=yes"
expect 200
release_everything

# OpenNebula's SECURITY_GROUPS by NIC MAC (ids joined with +, as the deploy hook passes them from
# vm.xml): kept in that NIC's allocation, sorted (vfctl doctor names them: no rule of theirs
# reaches a VF), none in the other NICs'; a NIC not in the file asks nothing. Anything but
# MAC=IDS is refused naming the field and the item, nothing claimed
post_xml "$one/two-ib-one-eth.xml" "?owner=one-66&security_groups=02:00:c0:a8:02:2a=101+0+101,02:00:c0:a8:01:2a=7"
expect 200
api GET "/v1/allocations?owner=vm:one-66"
[ "$(jget '[.allocations[] | "\(.settings.mac)=\(.settings.security_groups // [] | map(tostring) | join("+"))"] | sort | join(" ")')" = \
	"02:00:0a:01:00:05= 02:00:0a:02:00:05= 02:00:c0:a8:02:2a=0+101" ] || fail "security groups: $body"
release_everything
for q in 02:00:c0:a8:02:2a=0,101 02:00:c0:a8:02:2a=zero 02:00:c0:a8:02=0 02:00:c0:a8:02:2a=0++1 \
	02:00:c0:a8:02:2a=2147483648 '02:00:0a:01:00:05=1,'; do
	post_xml "$one/two-ib-one-eth.xml" "?owner=one-66&security_groups=$q"
	expect 400
	jget .message | grep -q '^security_groups: "' || fail "?security_groups=$q: $body"
	[ "$(allocations)" = 0 ] || fail "?security_groups=$q: claims kept"
done

# no free Ethernet VF: the claims made together fail, and made one by one the "eth" pool grows
# (its "grow" policy: an idle PF, here the 82599 taken to 0 VFs) and the deployment gets its
# three VFs all the same
api PUT /v1/pfs/0000:d8:00.0/numvfs -d '{"numvfs":0}'; expect 200
api GET /v1/pools; free=$(jget '.pools[] | select(.name == "eth") | .vfs.free')
api GET /v1/host; before=$(jget .vfs)
api POST /v1/allocations -d '{"pool":"eth","count":'"$free"',"owner":{"kind":"vm","name":"filler"}}'
expect 201; filler=$(jget .id)
post_xml "$one/two-ib-one-eth.xml" "?owner=one-99"
expect 200
api GET "/v1/allocations?owner=vm:one-99"
[ "$(jget '.allocations | length')" = 3 ] || fail "grown: $body"
api GET /v1/host; [ "$(jget .vfs)" -gt "$before" ] || fail "the eth pool did not grow: $body"
api GET "/v1/allocations?owner=vm:one-99"
for id in $(jget '.allocations[].id') "$filler"; do api DELETE "/v1/allocations/$id"; expect 204; done
[ "$(allocations)" = 0 ] || fail "claims left after the growth case"

# OpenNebula's MAC_PREFIX set otherwise in oned.conf: the config says so
stop_agent
printf '%s\n' '{"pools": [{"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}},
 {"name": "eth", "selector": {"vendors": ["8086"]}}],
 "networks": [{"bridge": "sriov_ib0", "pool": "ib"}, {"bridge": "sriov_eth0", "pool": "eth"}],
 "opennebula_mac_prefix": "52:54"}' >"$tmp/prefix.json"
start_agent --config "$tmp/prefix.json"
sed "s/02:00:0a:/52:54:0a:/" "$one/two-ib-one-eth.xml" >"$tmp/prefix.xml"
post_xml "$tmp/prefix.xml" "?owner=one-88"
expect 200
printf '%s\n' "$body" | grep -q '02:1b:0a:02:00:05' || fail "the address of a 52:54 MAC"
post_xml "$one/deployment.0" ""
expect 400
jget .message | grep -q "MAC_PREFIX 52:54 (opennebula_mac_prefix)" || fail "$body"
echo "domain-xml: all passed"
