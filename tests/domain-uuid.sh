#!/bin/sh
# A deployment file's <uuid> is its own word (issue 37, item 11): a file carrying another VM's
# <uuid> under a name of its own was taken for that VM: it got that VM's VFs back as a retried
# deploy gets them (its SR-IOV NICs), or adopted the VF oned booked for that VM (a <hostdev>).
# Now an allocation is the file's by its owner's name, or by its UUID only when libvirt reports
# the domain with that UUID under the file's name (a domain renamed since). In a network
# namespace of its own (tests/in-netns.sh).
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
one=${top_srcdir:-.}/tests/one
command -v jq >/dev/null && command -v xmllint >/dev/null || { echo "SKIP: needs jq and xmllint"; exit 77; }
start_agent
post_xml() { api POST "/v1/domain-xml" -D "$tmp/headers" --data-binary "@$1" -H 'Content-Type: application/xml'; }
live() { api GET /v1/allocations; jget '.allocations | length'; }

# VM one-42 deployed: its VFs are held for its UUID
post_xml "$one/two-ib-one-eth.xml"
expect 200
printf '%s\n' "$body" >"$tmp/one-42.xml"
uuid=$(xmllint --xpath 'string(/domain/uuid)' "$tmp/one-42.xml")
[ ${#uuid} = 36 ] || fail "no UUID in the rewrite"
vfs=$(xmllint --xpath '//hostdev/source/address' "$tmp/one-42.xml" | tr -d '\n')
n=$(live)

# another file, another name, one-42's UUID: refused, naming the UUID's VM; nothing of one-42's
# in the answer
sed -e 's#<name>one-42</name>#<name>evil-1</name><uuid>'"$uuid"'</uuid>#' \
	-e 's/02:00:0a:0/02:00:0a:8/' -e 's/02:00:c0:a8:02:2a/02:00:c0:a8:88:2a/' \
	"$one/two-ib-one-eth.xml" >"$tmp/evil-1.xml"
post_xml "$tmp/evil-1.xml"
expect 409
jget .message | grep -q "^uuid: $uuid is VM one-42's (allocation .*), and libvirt reports no domain $uuid named evil-1" ||
	fail "another VM's UUID: $body"
[ "$(live)" = "$n" ] || fail "a refused file claimed"
# one-42's own file again (a retried deploy, its UUID in it now) still gets its devices
sed "s#<name>one-42</name>#<name>one-42</name><uuid>$uuid</uuid>#" "$one/two-ib-one-eth.xml" >"$tmp/again.xml"
post_xml "$tmp/again.xml"
expect 200
[ "$(printf '%s\n' "$body" | xmllint --xpath '//hostdev/source/address' - | tr -d '\n')" = "$vfs" ] ||
	fail "one-42's retried deploy lost its VFs"

# a VF booked by oned for VM one-50 (claimed by its address, as the deploy hook does), adopted
# by a file of another name with one-50's UUID
u50=5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9e50
api GET '/v1/vfs?state=free'
pci=$(jget '[.vfs[] | select(.pool == "eth")][0].pci')
api POST /v1/allocations -d "{\"pool\":\"eth\",\"pci\":\"$pci\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-50\",\"uuid\":\"$u50\"}}"
expect 201; id50=$(jget .id)
bus=$(printf '%s' "$pci" | cut -d: -f2) slot=$(printf '%s' "$pci" | cut -d: -f3 | cut -d. -f1) fn=${pci##*.}
hostdev="<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' bus='0x$bus' slot='0x$slot' function='0x$fn'/></source></hostdev>"
vm_file() { # NAME: no-sriov.xml as VM NAME with one-50's UUID and the VF's <hostdev>
	sed -e "s#<name>one-43</name>#<name>$1</name>#" -e "s#<uuid>[^<]*</uuid>#<uuid>$u50</uuid>#" \
		-e "s#</devices>#$hostdev</devices>#" "$one/no-sriov.xml" >"$tmp/$1.xml"
	grep -q "<name>$1</name>" "$tmp/$1.xml" && grep -q "$u50" "$tmp/$1.xml" || fail "no-sriov.xml changed"
}
vm_file evil-2
post_xml "$tmp/evil-2.xml"
expect 409
jget .message | grep -q "devices/hostdev $pci: held by allocation $id50 of another owner" || fail "$body"
api GET "/v1/allocations/$id50"; [ "$(jget .state)" = reserved ] || fail "one-50's VF was prepared: $body"
# one-50's own file adopts it
vm_file one-50
post_xml "$tmp/one-50.xml"
expect 200
api GET "/v1/allocations/$id50"; [ "$(jget .state)" = attached ] || fail "one-50's own file: $body"

# a domain renamed since its claim: libvirt reports its UUID under the file's name, and vouches
# for it (libvirt's test driver, from a node file with that domain)
stop_agent
u60=5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9e60
cat >"$tmp/node.xml" <<XML
<node><domain type='test'><name>renamed-60</name><uuid>$u60</uuid><memory>1024</memory>
<os><type>hvm</type></os></domain></node>
XML
cat >"$tmp/vouch.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "libvirt": {"uri": "test://$tmp/node.xml"}}
JSON
start_agent --config "$tmp/vouch.json"
api GET '/v1/vfs?state=free'
pci=$(jget '[.vfs[] | select(.pool == "eth")][0].pci')
api POST /v1/allocations -d "{\"pool\":\"eth\",\"pci\":\"$pci\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-60\",\"uuid\":\"$u60\"}}"
expect 201; id60=$(jget .id)
bus=$(printf '%s' "$pci" | cut -d: -f2) slot=$(printf '%s' "$pci" | cut -d: -f3 | cut -d. -f1) fn=${pci##*.}
hostdev="<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' bus='0x$bus' slot='0x$slot' function='0x$fn'/></source></hostdev>"
u50=$u60
vm_file evil-3
post_xml "$tmp/evil-3.xml"
expect 409
jget .message | grep -q "devices/hostdev $pci: held by allocation $id60 of another owner" || fail "$body"
vm_file renamed-60
post_xml "$tmp/renamed-60.xml"
expect 200
api GET "/v1/allocations/$id60"; [ "$(jget .state)" = attached ] || fail "the renamed domain's file: $body"
echo "domain-uuid: another VM's <uuid> in a file gets none of its VFs; libvirt vouches for a renamed domain"
