#!/bin/sh
# One live holder per MAC, whichever way a claim comes in (issue 37, item 5): two deployment
# files with one bridge NIC's MAC each got a VF with it, a REST claim for that MAC succeeded
# beside them, and the VM's allocations said "mac": null. Now each NIC of a deployment file is
# an allocation of its own with its MAC, held as a claim's "mac" is; a second file, a REST claim, a CNI ADD or attach_nic's claim asking for a held MAC is a 409
# naming mac and the holder, and claims nothing; two NICs of one file with one MAC likewise;
# the MAC is free again once its holder is released. In a network namespace of its own
# (tests/in-netns.sh).
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
one=${top_srcdir:-.}/tests/one
command -v jq >/dev/null || { echo "SKIP: needs jq"; exit 77; }
[ -f "$one/two-ib-one-eth.xml" ] || fail "no $one/two-ib-one-eth.xml"

start_agent

post_xml() { api POST "/v1/domain-xml" -D "$tmp/headers" --data-binary "@$1" -H 'Content-Type: application/xml'; }
live() { api GET /v1/allocations; jget '.allocations | length'; }
reserved() { api GET '/v1/vfs?state=reserved'; jget '.vfs | length'; }
refused_naming() { # HOLDER WHAT: a 409 naming the MAC and its holder
	expect 409
	jget .message | grep -q "^mac: .* is held by allocation $1" || fail "$2: $body"
}
eth=02:00:c0:a8:02:2a ib=02:00:0a:01:00:05

# the first VM: an allocation per NIC, its MAC in its settings
post_xml "$one/two-ib-one-eth.xml"
expect 200
ids=$(sed -n 's/^X-Allocation-Id: *//Ip' "$tmp/headers" | tr -d '\r ' | tr ',' ' ')
holder_eth='' holder_ib=''
for id in $ids; do
	api GET "/v1/allocations/$id"
	case $(jget .settings.mac) in
	"$eth") holder_eth=$id ;;
	"$ib") holder_ib=$id ;;
	02:00:0a:02:00:05) ;;
	*) fail "allocation $id: its NIC's MAC is not in its settings: $body" ;;
	esac
done
[ -n "$holder_eth" ] && [ -n "$holder_ib" ] || fail "allocations $ids: not one per NIC"
n=$(live) r=$(reserved)

# a second deployment file with the same MACs (another VM): 409, nothing claimed
sed -e 's/one-42/one-43/' "$one/two-ib-one-eth.xml" >"$tmp/twin.xml"
post_xml "$tmp/twin.xml"
refused_naming "$holder_ib\|$holder_eth" "a second file with the same MACs"
# the Ethernet NIC's MAC alone (its IB NICs' changed)
sed -e 's/one-42/one-44/' -e 's/02:00:0a:0\([12]\):00:05/02:00:0a:0\1:00:44/' \
	"$one/two-ib-one-eth.xml" >"$tmp/twin-eth.xml"
post_xml "$tmp/twin-eth.xml"
refused_naming "$holder_eth" "a second file with the Ethernet NIC's MAC"
[ "$(live)" = "$n" ] && [ "$(reserved)" = "$r" ] || fail "a refused file kept claims"

# a REST claim (as attach_nic makes) for the Ethernet NIC's MAC, or an IB NIC's
api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-45\"},\"mac\":\"$eth\"}"
refused_naming "$holder_eth" "a REST claim for a deployed NIC's MAC"
upper=$(printf '%s' "$ib" | tr a-f A-F)
api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-45\"},\"mac\":\"$upper\"}"
refused_naming "$holder_ib" "a REST claim for an IB NIC's MAC (upper case)"

# a CNI ADD asking for it, straight to the agent's CNI socket as the plugin sends it
if [ "$(id -u)" = 0 ] && command -v python3 >/dev/null && ip netns add "vfa-mac-$$" 2>/dev/null; then
	trap 'ip netns del "vfa-mac-$$" 2>/dev/null; cleanup' EXIT
	out=$(python3 - "$tmp/vfagent-cni.sock" "vfa-mac-$$" "$eth" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(json.dumps({"command": "ADD", "key": "cni:net/ctr/net1", "netns": "/run/netns/" + sys.argv[2],
                   "ifname": "net1", "config": {"pool": "eth", "mac": sys.argv[3]}}).encode())
print(s.recv(65536).decode())
PY
)
	body=$out code=409
	refused_naming "$holder_eth" "a CNI ADD for a deployed NIC's MAC"
else
	echo "mac-one-rule: CNI ADD not tried (needs root, python3 and network namespaces)"
fi
[ "$(live)" = "$n" ] && [ "$(reserved)" = "$r" ] || fail "a refused claim kept VFs"

# two NICs of one file with one MAC
sed -e 's/one-42/one-46/' -e "s/02:00:0a:0[12]:00:05/02:00:0a:07:00:46/" \
	-e "s/$eth/02:00:c0:a8:46:2a/" "$one/two-ib-one-eth.xml" >"$tmp/self.xml"
post_xml "$tmp/self.xml"
expect 409
jget .message | grep -q '^mac: 02:00:0a:07:00:46 is held by allocation' || fail "two NICs, one MAC: $body"
[ "$(live)" = "$n" ] && [ "$(reserved)" = "$r" ] || fail "a refused file kept claims"

# released, the MACs are free again
for id in $ids; do api DELETE "/v1/allocations/$id"; done
api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-45\"},\"mac\":\"$eth\"}"
expect 201
[ "$(jget .settings.mac)" = "$eth" ] || fail "claim's MAC: $body"
id=$(jget .id)
post_xml "$tmp/twin.xml"
refused_naming "$id" "the REST claim now holds the Ethernet MAC"
api DELETE "/v1/allocations/$id"
post_xml "$tmp/twin.xml"
expect 200
echo "mac-one-rule: a MAC has one live holder through domain-xml, REST and CNI"
