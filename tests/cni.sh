#!/bin/sh
# The CNI plugin "vfagent" run as a runtime runs it: a fresh process per
# command, CNI_* in the environment, the config on stdin, against vfagentd
# on the simulated host with veth stand-ins for its VF netdevs, IPAM by the
# reference "static" plugin. ADD, a repeated ADD, CHECK (and a CHECK that
# finds an address gone), DEL (twice, and after the namespace is gone), GC,
# STATUS, VERSION, bad configs that claim nothing, Multus' deviceID; and a VM
# through POST /v1/domain-xml from the same pool: neither gets the other's VF.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || { echo "SKIP: needs ip and jq"; exit 77; }
cnipath=${CNI_PATH:-/usr/lib/cni}
[ -x "$cnipath/static" ] || { echo "SKIP: no $cnipath/static (containernetworking-plugins)"; exit 77; }
plugin=$b/hooks/cni/vfagent
ns1=vfa-cni1-$$ ns2=vfa-cni2-$$ ns3=vfa-cni3-$$
links="ens5f0v0 ens5f0v1 ens5f0v2"
teardown() {
	for n in $ns1 $ns2 $ns3; do ip netns del "$n" 2>/dev/null || true; done
	for l in $links; do ip link del "$l" 2>/dev/null || true; done
	cleanup
}
trap teardown EXIT
for n in $ns1 $ns2 $ns3; do ip netns add "$n" || { echo "SKIP: cannot make network namespaces"; exit 77; }; done
for l in $links; do ip link add "$l" type veth peer name "p-$l"; done
cat >"$tmp/config.json" <<'JSON'
{"pools": [{"name": "c", "selector": {"pci_addresses": ["0000:af:01.0", "0000:af:01.1", "0000:af:01.2"]}}],
 "networks": [{"bridge": "sriov_eth0", "pool": "c"}]}
JSON
start_agent --config "$tmp/config.json"
csock=$tmp/vfagent-cni.sock
[ -S "$csock" ] || fail "no CNI socket beside the agent's socket"

# cni COMMAND CONTAINERID NETNS IFNAME CONFIG: sets $rc and $out (stdout), as libcni runs a plugin
cni() {
	set +e
	out=$(printf '%s' "$5" | env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CNI_COMMAND="$1" \
		CNI_CONTAINERID="$2" CNI_NETNS="$3" CNI_IFNAME="$4" CNI_PATH="$cnipath" "$plugin" 2>"$tmp/cni.err")
	rc=$?
	set -e
}
conf() { # VERSION [EXTRA JSON MEMBERS]
	printf '{"cniVersion":"%s","name":"sriovnet","type":"vfagent","pool":"c","socket":"%s","cacheDir":"%s/cache"%s}' \
		"$1" "$csock" "$tmp" "${2:-}"
}
ipam=',"ipam":{"type":"static","addresses":[{"address":"10.9.0.3/24","gateway":"10.9.0.1"}],"routes":[{"dst":"0.0.0.0/0"}]}'
ok() { [ "$rc" = 0 ] || fail "$1: exit $rc: $out $(cat "$tmp/cni.err")"; }
code() { # WANTED WHAT: the plugin failed with CNI error code WANTED
	[ "$rc" != 0 ] || fail "$2: succeeded: $out"
	[ "$(printf '%s' "$out" | jq -r .code)" = "$1" ] || fail "$2: wanted code $1: $out"
}
live() { api GET /v1/allocations; jget '.allocations | length'; }

# VERSION: what we speak, the input's version echoed
cni VERSION "" "" "" '{"cniVersion":"1.0.0"}'; ok VERSION
printf '%s' "$out" | jq -e '.cniVersion == "1.0.0" and (.supportedVersions | index("1.1.0") and index("0.3.1") and index("0.4.0"))' \
	>/dev/null || fail "VERSION: $out"

# ADD: claimed and attached by the agent, the address IPAM gave, the result in the spec's shape
cni ADD ctr-a "/run/netns/$ns1" net1 "$(conf 1.0.0 "$ipam")"; ok ADD
printf '%s' "$out" >"$tmp/add.json"
mac=$(ip -n "$ns1" -j link show net1 | jq -r '.[0].address')
jq -e --arg ns "/run/netns/$ns1" --arg mac "$mac" '.cniVersion == "1.0.0" and
	.interfaces == [{"name":"net1","mac":$mac,"sandbox":$ns}] and
	.ips == [{"address":"10.9.0.3/24","gateway":"10.9.0.1","interface":0}] and
	.routes == [{"dst":"0.0.0.0/0"}]' "$tmp/add.json" >/dev/null || fail "ADD result: $out"
ip -n "$ns1" -j addr show net1 | jq -e '[.[0].addr_info[] | "\(.local)/\(.prefixlen)"] | index("10.9.0.3/24")' >/dev/null ||
	fail "no 10.9.0.3/24 on net1: $(ip -n "$ns1" addr)"
ip -n "$ns1" route show default | grep -q 'via 10.9.0.1 dev net1' || fail "no default route: $(ip -n "$ns1" route)"
ip link show ens5f0v0 >/dev/null 2>&1 && fail "ens5f0v0 is still in the host"
api GET /v1/allocations
[ "$(jget '.allocations[0].idempotency_key')" = "cni:sriovnet/ctr-a/net1" ] || fail "attachment key: $body"
[ "$(jget '.allocations[0].state')" = attached ] || fail "not attached: $body"
[ "$(jget '.allocations[0].owner.netns')" = "$ns1" ] || fail "the lease is not the namespace: $body"
id_a=$(jget '.allocations[0].id')

# a repeated ADD finds the attachment: no second claim
cni ADD ctr-a "/run/netns/$ns1" net1 "$(conf 1.0.0 "$ipam")"; ok "ADD again"
[ "$(live)" = 1 ] || fail "a repeated ADD claimed again: $body"
[ "$(printf '%s' "$out" | jq -S .)" = "$(jq -S . "$tmp/add.json")" ] || fail "ADD again answered otherwise: $out"

# CHECK with the ADD's result as prevResult; then with the address gone from the namespace
check_conf=$(conf 1.0.0 "$ipam,\"prevResult\":$(cat "$tmp/add.json")")
cni CHECK ctr-a "/run/netns/$ns1" net1 "$check_conf"; ok CHECK
ip -n "$ns1" addr del 10.9.0.3/24 dev net1
cni CHECK ctr-a "/run/netns/$ns1" net1 "$check_conf"; code 102 "CHECK without the address"
printf '%s' "$out" | jq -r .details | grep -q 10.9.0.3 || fail "CHECK names no address: $out"
ip -n "$ns1" addr add 10.9.0.3/24 dev net1
cni CHECK ctr-b "/run/netns/$ns1" net1 "$check_conf"; code 102 "CHECK of an attachment never added"
cni CHECK ctr-a "/run/netns/$ns1" net1 "$(conf 0.3.1 "$ipam")"; code 1 "CHECK in 0.3.1"

# bad configs: a CNI error naming the field, and nothing claimed
bad() { # CODE FIELD CONFIG [IFNAME]
	cni ADD ctr-bad "/run/netns/$ns2" "${4:-net1}" "$3"; code "$1" "config $3"
	printf '%s' "$out" | jq -r .details | grep -qF "$2" || fail "the error does not name $2: $out"
	[ "$(live)" = 1 ] || fail "config $3 claimed: $body"
	[ "$(vf_state 0000:af:01.1)" = free ] || fail "config $3 left the VF $(vf_state 0000:af:01.1)"
}
bad 7 vlna "$(conf 1.0.0 ',"vlna":5')"
bad 7 mac "$(conf 1.0.0 ',"mac":"zz:00"')"
bad 7 vlan "$(conf 1.0.0 ',"vlan":5000')"
bad 7 qos "$(conf 1.0.0 ',"qos":3')"
bad 7 mtu "$(conf 1.0.0 ',"mtu":20')"
bad 7 'pkey: the default partition' "$(conf 1.0.0 ',"pkey":"0x7fff"')" # ib-sriov-cni's key reaches the agent
bad 7 pool "$(printf '{"cniVersion":"1.0.0","name":"sriovnet","type":"vfagent","pool":"nope","socket":"%s"}' "$csock")"
bad 7 network "$(printf '{"cniVersion":"1.0.0","name":"sriovnet","type":"vfagent","network":"nope","socket":"%s"}' "$csock")"
bad 7 runtimeConfig.mac "$(conf 1.0.0 ',"runtimeConfig":{"mac":5}')"
bad 7 'mac: "02:zz' "$(conf 1.0.0 ',"runtimeConfig":{"mac":"02:zz"}')" # the runtime's MAC reaches the agent
bad 7 ipam.type "$(conf 1.0.0 ',"ipam":{"type":"no-such-ipam"}')"
bad 1 cniVersion "$(conf 0.2.0)"
bad 6 stdin 'not json'
bad 4 CNI_IFNAME "$(conf 1.0.0)" 'a/b'
bad 101 0000:af:01.0 "$(conf 1.0.0 ',"runtimeConfig":{"deviceID":"0000:af:01.0"}')"
bad 7 deviceID "$(conf 1.0.0 ',"runtimeConfig":{"deviceID":"nonsense"}')"
# near the simulated host's GPU: the pool's E810 VFs are across the sockets (SYS)
bad 7 max_distance "$(conf 1.0.0 ',"near":"0000:39:00.0","max_distance":"NV1"')"
bad 101 'the closest free VFs are SYS' "$(conf 1.0.0 ',"near":"0000:39:00.0","max_distance":"PHB"')"
# a failed ADD gives IPAM's reservation back, and the agent's error names its reason
cni ADD ctr-bad "/run/netns/$ns2" net1 "$(conf 1.0.0 ',"mac":"zz:00","ipam":{"type":"static","addresses":[{"address":"10.9.0.9/24"}]}')"
code 7 "bad mac with IPAM"

# 0.3.1: each IP has its "version"; deviceID (Multus) picks the VF; runtimeConfig.ips without IPAM
# (a MAC needs a PF that answers VF settings, which a veth does not: the QEMU lab's igb does)
cni ADD ctr-b "/run/netns/$ns2" eth1 "$(conf 0.3.1 ',"runtimeConfig":{"deviceID":"0000:af:01.2","ips":["10.9.1.2/24"]}')"
ok "ADD 0.3.1"
printf '%s' "$out" | jq -e '.cniVersion == "0.3.1" and .ips == [{"address":"10.9.1.2/24","interface":0,"version":"4"}] and
	(.interfaces[0] | has("pciID") | not)' >/dev/null || fail "ADD 0.3.1: $out"
[ "$(vf_state 0000:af:01.2)" = attached ] || fail "deviceID 0000:af:01.2 was not the VF claimed"

# STATUS: ready while the pool has a free VF; 50 once it has none
cni STATUS "" "" "" "$(conf 1.1.0)"; ok STATUS
cni STATUS "" "" "" "$(conf 1.0.0)"; code 1 "STATUS in 1.0.0"
cni ADD ctr-c "/run/netns/$ns3" net1 "$(conf 1.0.0)"; ok "ADD of the last VF"
cni STATUS "" "" "" "$(conf 1.1.0)"; code 50 "STATUS of an empty pool"
cni ADD ctr-d "/run/netns/$ns3" net2 "$(conf 1.0.0)"; code 101 "ADD from an empty pool"

# GC: the network's attachments not in cni.dev/valid-attachments are released
cni GC "" "" "" "$(conf 1.1.0 ',"cni.dev/valid-attachments":[{"containerID":"ctr-a","ifname":"net1"},{"containerID":"ctr-b","ifname":"eth1"}]')"
ok GC
[ "$(live)" = 2 ] || fail "GC: $body"
# the plugin's cache of ADD results: the released attachment's entry gone, the kept ones there
grep -l '"key":"cni:sriovnet/ctr-c/net1"' "$tmp"/cache/*.json 2>/dev/null && fail "GC kept ctr-c's cached result"
grep -q '"key":"cni:sriovnet/ctr-a/net1"' "$tmp"/cache/*.json || fail "GC dropped ctr-a's cached result"
[ "$(vf_state 0000:af:01.1)" = free ] || fail "GC did not release ctr-c's VF"
ip link show ens5f0v1 >/dev/null || fail "GC did not bring ens5f0v1 home"
cni GC "" "" "" "$(conf 1.0.0 ',"cni.dev/valid-attachments":[]')"; code 1 "GC in 1.0.0"
[ "$(live)" = 2 ] || fail "a refused GC released: $body"

# DEL: restored and released; again; of an attachment never added
cni DEL ctr-a "/run/netns/$ns1" net1 "$(conf 1.0.0 "$ipam")"; ok DEL
ip link show ens5f0v0 >/dev/null || fail "DEL did not bring ens5f0v0 home"
ip -n "$ns1" link show net1 >/dev/null 2>&1 && fail "net1 is still in the container"
[ "$(vf_state 0000:af:01.0)" = free ] || fail "DEL left the VF $(vf_state 0000:af:01.0)"
api GET "/v1/allocations/$id_a"; [ "$(jget .state)" = released ] || fail "not released: $body"
cni DEL ctr-a "/run/netns/$ns1" net1 "$(conf 1.0.0 "$ipam")"; ok "DEL again"
cni DEL ctr-z "" net1 "$(conf 1.1.0)"; ok "DEL of an attachment never added"
# the same container added again after its DEL (a restart): a new allocation under the same key
cni ADD ctr-a "/run/netns/$ns1" net1 "$(conf 1.0.0 "$ipam")"; ok "ADD after DEL"
api GET /v1/allocations
[ "$(jget '[.allocations[] | select(.idempotency_key == "cni:sriovnet/ctr-a/net1")] | length')" = 1 ] &&
	[ "$(jget '.allocations[] | select(.idempotency_key == "cni:sriovnet/ctr-a/net1") | .id')" != "$id_a" ] ||
	fail "ADD after DEL: $body"
cni DEL ctr-a "/run/netns/$ns1" net1 "$(conf 1.0.0 "$ipam")"; ok "DEL after the second ADD"

# a VM through POST /v1/domain-xml and containers from the same pool: never each other's VF
cat >"$tmp/vm.xml" <<'XML'
<domain type='kvm'><name>one-77</name><memory>131072</memory><vcpu>1</vcpu>
<os><type arch='x86_64'>hvm</type></os><devices>
<interface type='bridge'><source bridge='sriov_eth0'/><mac address='02:00:c0:a8:02:4d'/></interface>
</devices></domain>
XML
api POST /v1/domain-xml -D "$tmp/headers" --data-binary "@$tmp/vm.xml" -H 'Content-Type: application/xml'
expect 200
vm_id=$(sed -n 's/^X-Allocation-Id: *//Ip' "$tmp/headers" | tr -d '\r')
api GET "/v1/allocations/$vm_id"; vm_vf=$(jget '.vfs[0].pci')
cni ADD ctr-e "/run/netns/$ns1" net1 "$(conf 1.1.0)"; ok "ADD beside a VM"
printf '%s' "$out" | jq -e '.interfaces[0].mtu == 1500 and (.interfaces[0].pciID | test("^0000:af:01"))' >/dev/null ||
	fail "1.1.0 result without mtu and pciID: $out"
ct_vf=$(printf '%s' "$out" | jq -r '.interfaces[0].pciID')
[ "$ct_vf" != "$vm_vf" ] || fail "the container got the VM's VF $vm_vf"
cni ADD ctr-f "/run/netns/$ns3" net1 "$(conf 1.1.0 ",\"runtimeConfig\":{\"deviceID\":\"$vm_vf\"}")"
code 101 "deviceID of the VM's VF"
cni ADD ctr-f "/run/netns/$ns3" net1 "$(conf 1.1.0)"; code 101 "ADD with every VF taken"
sed 's/one-77/one-78/; s/02:4d/02:4e/' "$tmp/vm.xml" >"$tmp/vm2.xml"
api POST /v1/domain-xml --data-binary "@$tmp/vm2.xml" -H 'Content-Type: application/xml'
[ "$code" != 200 ] || fail "a second VM got a VF the containers hold: $body"
api GET "/v1/vfs/$ct_vf"; [ "$(jget .allocation)" != "$vm_id" ] || fail "the VM holds $ct_vf"
api DELETE "/v1/allocations/$vm_id"; expect 204
cni ADD ctr-f "/run/netns/$ns3" net1 "$(conf 1.1.0)"; ok "ADD once the VM let go"
[ "$(printf '%s' "$out" | jq -r '.interfaces[0].pciID')" = "$vm_vf" ] || fail "ADD after the VM: $out"
api GET /v1/allocations
[ "$(jget '[.allocations[].vfs[].pci] | length')" = "$(jget '[.allocations[].vfs[].pci] | unique | length')" ] ||
	fail "a VF in two live allocations: $body"

# DEL once the namespace is gone (the veth stand-in dies with it; a real VF comes home)
ip netns del "$ns2"
cni DEL ctr-b "/run/netns/$ns2" eth1 "$(conf 0.3.1)"; ok "DEL after the namespace went"
api GET /v1/allocations
[ "$(jget '[.allocations[] | select(.idempotency_key == "cni:sriovnet/ctr-b/eth1")] | length')" = 0 ] ||
	fail "ctr-b's allocation outlived its DEL: $body"

# a pool dedicated to VMs ("owners": ["vm"], as for OpenNebula's): every container claim refused,
# the CNI plugin's included, nothing claimed; a VM's claim served
jq '.pools[0].owners = ["vm"]' "$tmp/config.json" >"$tmp/config.new" && mv "$tmp/config.new" "$tmp/config.json"
hup_done # the reload over (api-lib.sh)
before=$(live)
cni ADD ctr-h "/run/netns/$ns1" net3 "$(conf 1.1.0)"; code 100 "ADD on a pool dedicated to VMs"
printf '%s' "$out" | jq -r .details | grep -q 'EPERM: pool: "c" is dedicated to VMs' || fail "dedicated pool: $out"
[ "$(live)" = "$before" ] || fail "a refused ADD claimed: $body"
api POST /v1/allocations -d '{"pool":"c","count":1,"owner":{"kind":"vm","name":"one-7"}}'
[ "$code" = 201 ] || { [ "$code" = 409 ] && jget .message | grep -q 'free VFs'; } ||
	fail "a VM's claim on a pool dedicated to VMs: HTTP $code $body" # (its VFs are all taken here)
api GET /v1/pools
[ "$(jget '.pools[0].owners | join(",")')" = vm ] || fail "GET /v1/pools: $body"

# the agent away: ADD says try again later, STATUS not available
stop_agent
cni ADD ctr-g "/run/netns/$ns1" net2 "$(conf 1.1.0)"; code 11 "ADD without the agent"
cni STATUS "" "" "" "$(conf 1.1.0)"; code 50 "STATUS without the agent"
echo "cni: ADD, CHECK, DEL, GC, STATUS, VERSION and bad configs as a runtime runs the plugin; a VM and containers share a pool"
