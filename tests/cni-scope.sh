#!/bin/sh
# A CNI GC or DEL reaches its own network's attachments only, whatever the names hold (issue 37,
# item 6). The agent took a GC's prefix as it came: a GC whose config "name" is
# sriovnet/victimctr (prefix "cni:sriovnet/victimctr/"), or "" (prefix "cni:"), or a network
# whose name begins another's, released attachments of network sriovnet. Now a key is read
# whole, cni:NETWORK/CONTAINERID/IFNAME with the CNI spec's names (no '/', never empty), and a
# GC matches the network exactly; any other shape is refused naming the field, releasing
# nothing. Spoken to the agent's CNI socket as the plugin speaks (one JSON datagram each), in
# network namespaces of the test's own (tests/in-netns.sh).
# test-needs: mounts
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null && command -v python3 >/dev/null ||
	{ echo "SKIP: needs ip, jq and python3"; exit 77; }
victim=vfa-victim-$$
tenant_and_stand_in "$victim"
ip link add ens5f0v1 type veth peer name peer-ens5f0v1
trap 'ip netns del "$victim" 2>/dev/null; cleanup' EXIT
start_agent
csock=$tmp/vfagent-cni.sock
[ -S "$csock" ] || fail "no CNI socket beside the agent's socket"

cni() { # JSON: one request, its answer in $out
	out=$(python3 - "$csock" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(sys.argv[2].encode())
print(s.recv(65536).decode())
PY
)
}
ok() { printf '%s' "$out" | jq -e .ok >/dev/null || fail "$1: $out"; }
refused() { # FIELD WHAT
	printf '%s' "$out" | jq -e '.error == "EINVAL"' >/dev/null &&
		printf '%s' "$out" | jq -r .message | grep -q "^$1: " || fail "$2: $out"
}
gc() { cni "{\"command\":\"GC\",\"prefix\":\"$1\",\"keep\":${2:-[]}}"; }
victim_attached() {
	api GET /v1/allocations
	[ "$(jget '[.allocations[] | select(.idempotency_key == "cni:sriovnet/victimctr/net1")] | .[0].state')" = attached ] ||
		fail "$1: the victim's attachment is gone: $body"
	ip -n "$victim" link show net1 >/dev/null || fail "$1: net1 left the victim's namespace"
}

# the victim: network sriovnet, container victimctr, net1
cni "{\"command\":\"ADD\",\"key\":\"cni:sriovnet/victimctr/net1\",\"netns\":\"/run/netns/$victim\",\"ifname\":\"net1\",\"config\":{\"pool\":\"eth\"}}"
ok "the victim's ADD"
victim_attached "ADD"

# the attacks: a network named sriovnet/victimctr, an empty name, a name that begins sriovnet
gc "cni:sriovnet/victimctr/"; refused prefix "GC of network sriovnet/victimctr"
victim_attached "GC of network sriovnet/victimctr"
gc "cni:"; refused prefix "GC of the empty network"
victim_attached "GC of the empty network"
gc "cni:sriov"; refused prefix "GC of a prefix of sriovnet"
victim_attached "GC of a prefix of sriovnet"
gc "cni:sriovnet/victimctr/net1/"; refused prefix "GC of the victim's own key"
victim_attached "GC of the victim's key"
# the plugin's abbreviation of a long name (HEAD~TAG) is a name of its own; a tag alone is not
gc "cni:sriov-network-attachment-for-the-stor~8cee74a8f934a72e/"; ok "GC of an abbreviated name"
gc "cni:~8cee74a8f934a72e/"; refused prefix "GC of a tag without its head"
gc "cni:sriovnet~8cee/"; refused prefix "GC of a short tag"
victim_attached "GC of abbreviated names"
# a network whose name is a prefix of sriovnet's, well formed: its GC is its own
gc "cni:sriov/"; ok "GC of network sriov"
[ "$(printf '%s' "$out" | jq .released)" = 0 ] || fail "GC of network sriov released: $out"
victim_attached "GC of network sriov"

# DEL and CHECK of keys of another shape: refused, nothing released
for key in "cni:sriovnet/victimctr" "cni:/victimctr/net1" "cni:sriovnet//net1" "sriovnet/victimctr/net1" \
	"cni:sriovnet/victimctr/net1/x" "cni:sriovnet/../net1" "cni:sriov%net/victimctr/net1"; do
	cni "{\"command\":\"DEL\",\"key\":\"$key\"}"; refused key "DEL $key"
	cni "{\"command\":\"CHECK\",\"key\":\"$key\",\"netns\":\"/run/netns/$victim\",\"ifname\":\"net1\"}"
	refused key "CHECK $key"
done
victim_attached "DEL of keys of another shape"
# nor can an ADD make an attachment whose key another network's GC would read as its own
cni "{\"command\":\"ADD\",\"key\":\"cni:sriovnet/victimctr/x/net2\",\"netns\":\"/run/netns/$victim\",\"ifname\":\"net2\",\"config\":{\"pool\":\"eth\"}}"
refused key "ADD of network sriovnet/victimctr"
api GET /v1/allocations
[ "$(jget '.allocations | length')" = 1 ] || fail "a refused ADD claimed: $body"

# a REST claim cannot take a CNI key, which a GC of that network would then release
api POST /v1/allocations -H 'Idempotency-Key: cni:sriovnet/rest/net1' \
	-d '{"pool":"eth","owner":{"kind":"vm","name":"rest"}}'
expect 400
jget .message | grep -q '^Idempotency-Key: keys beginning "cni:"' || fail "a REST claim with a CNI key: $body"

# the network's own GC: kept while valid, released once not
gc "cni:sriovnet/" '["cni:sriovnet/victimctr/net1"]'; ok "GC keeping the victim"
victim_attached "GC keeping the victim"
gc "cni:sriovnet/"; ok "GC of sriovnet"
[ "$(printf '%s' "$out" | jq .released)" = 1 ] || fail "GC of sriovnet: $out"
api GET /v1/allocations
[ "$(jget '.allocations | length')" = 0 ] || fail "GC of sriovnet left: $body"
echo "cni-scope: GC and DEL reach their own network's attachments only"
