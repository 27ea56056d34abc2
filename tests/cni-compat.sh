#!/bin/sh
# sriov-cni's and ib-sriov-cni's users: their documented configs run with only
# "type" changed (every key read, logLevel and logFile written), deviceID alone
# picks the VF and its pool; the runtime's wishes (CNI_ARGS, args.cni,
# runtimeConfig) in the conventions' order; DEL best-effort (IPAM released with
# the agent away), nothing of IPAM's used by a config the agent refuses, long
# network names; GC and STATUS with Debian's IPAM plugins (CNI 1.0.0), STATUS
# of a pool without VFs. The simulated host's stand-in PF has no VF settings
# (a veth, as a driver without SR-IOV), so an ADD with PF-side settings is
# refused there with the kernel's reason: the settings the agent was asked
# for are read back from its ledger (the released allocation keeps them).
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || { echo "SKIP: needs ip and jq"; exit 77; }
cnipath=${CNI_PATH:-/usr/lib/cni}
[ -x "$cnipath/host-local" ] || { echo "SKIP: no $cnipath/host-local (containernetworking-plugins)"; exit 77; }
plugin=$b/hooks/cni/vfagent
ns1=vfa-cc1-$$ ns2=vfa-cc2-$$
links="ens5f0v0 ens5f0v1 ens5f0v2 ens5f0 ib0v0"
teardown() {
	for n in $ns1 $ns2; do ip netns del "$n" 2>/dev/null || true; done
	for l in $links; do ip link del "$l" 2>/dev/null || true; done
	cleanup
}
trap teardown EXIT
for n in $ns1 $ns2; do ip netns add "$n" || { echo "SKIP: cannot make network namespaces"; exit 77; }; done
for l in $links; do ip link add "$l" type veth peer name "p-$l"; done
cat >"$tmp/config.json" <<'JSON'
{"pools": [{"name": "c", "selector": {"pci_addresses": ["0000:af:01.0", "0000:af:01.1", "0000:af:01.2"]}},
           {"name": "ib", "selector": {"pci_addresses": ["0000:3b:00.1"]}},
           {"name": "dpdk", "selector": {"pci_addresses": ["0000:3b:00.2"]}},
           {"name": "none", "selector": {"pci_addresses": ["0000:ee:01.0"]}}]}
JSON
start_agent --config "$tmp/config.json"
csock=$tmp/vfagent-cni.sock

# cni COMMAND CONTAINERID NETNS IFNAME CONFIG [CNI_ARGS]: sets $rc and $out, as libcni runs a plugin
cni() {
	set +e
	out=$(printf '%s' "$5" | env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CNI_COMMAND="$1" \
		CNI_CONTAINERID="$2" CNI_NETNS="$3" CNI_IFNAME="$4" CNI_PATH="$cnipath" \
		CNI_ARGS="${6:-}" "$plugin" 2>"$tmp/cni.err")
	rc=$?
	set -e
}
ok() { [ "$rc" = 0 ] || fail "$1: exit $rc: $out $(cat "$tmp/cni.err")"; }
code() { # WANTED WHAT [TEXT]: the plugin failed with CNI error code WANTED, its details with TEXT
	[ "$rc" != 0 ] || fail "$2: succeeded: $out"
	[ "$(printf '%s' "$out" | jq -r .code)" = "$1" ] || fail "$2: wanted code $1: $out"
	[ -z "${3:-}" ] || printf '%s' "$out" | jq -r .details | grep -qF -- "$3" || fail "$2: no \"$3\": $out"
}
# settings KEY: the settings of the last allocation under attachment key KEY, live or released
settings() {
	api GET '/v1/allocations?include_released=true'
	jget "[.allocations[] | select(.idempotency_key == \"$1\")] | last | .settings | tojson"
}
live() { api GET /v1/allocations; jget '.allocations | length'; }
# a conf in sriov-cni's form (its configuration reference: every key filled out), type changed
sriov_conf() { # NAME [MORE MEMBERS]
	printf '{"cniVersion":"0.3.1","name":"%s","type":"vfagent","socket":"%s","deviceID":"0000:af:01.0",
"mac":"CA:FE:C0:FF:EE:00","vlan":1000,"vlanQoS":4,"vlanProto":"802.1ad","min_tx_rate":100,"max_tx_rate":200,
"spoofchk":"off","trust":"on","link_state":"enable","logLevel":"debug","logFile":"%s/sriov.log"%s}' \
		"$1" "$csock" "$tmp" "${2:-}"
}

# 1. sriov-cni's config: deviceID alone names the VF (pool "c" derived), every key reaches the
# agent in its meaning; the stand-in PF refuses VF settings, with the kernel's reason, and
# nothing is left claimed
cni ADD ctr-s "/run/netns/$ns1" net1 "$(sriov_conf sriov-dpdk)"
code 100 "sriov-cni's config" "PF ens5f0 reports no VF 0"
[ "$(settings cni:sriov-dpdk/ctr-s/net1)" = '{"mac":"ca:fe:c0:ff:ee:00","vlan":1000,"qos":4,"vlan_proto":"802.1ad","spoofchk":false,"trust":true,"link_state":"enable","min_tx_rate":100,"max_tx_rate":200}' ] ||
	fail "sriov-cni's keys did not reach the agent as theirs: $(settings cni:sriov-dpdk/ctr-s/net1)"
api GET '/v1/allocations?include_released=true'
[ "$(jget '[.allocations[] | select(.idempotency_key == "cni:sriov-dpdk/ctr-s/net1")] | last | .pool')" = c ] ||
	fail "deviceID did not derive the pool: $body"
[ "$(live)" = 0 ] || fail "a refused ADD left a claim: $body"
# logLevel debug and logFile: the request and the error, one line each, in the file
grep -q '^vfagent\[[0-9]*\] debug ADD ctr-s net1: .*"vlanQoS":4' "$tmp/sriov.log" || fail "no debug line: $(cat "$tmp/sriov.log")"
grep -q '^vfagent\[[0-9]*\] error ADD ctr-s net1: the agent failed: EOPNOTSUPP' "$tmp/sriov.log" ||
	fail "no error line: $(cat "$tmp/sriov.log")"
# logLevel error: no debug or info lines
: >"$tmp/sriov.log"
cni ADD ctr-s2 "/run/netns/$ns1" net1 "$(sriov_conf sriov-dpdk | sed 's/"logLevel":"debug"/"logLevel":"error"/')"
grep -q ' debug \| info ' "$tmp/sriov.log" && fail "logLevel error wrote more: $(cat "$tmp/sriov.log")"
grep -q ' error ADD ctr-s2' "$tmp/sriov.log" || fail "logLevel error wrote no error: $(cat "$tmp/sriov.log")"

# the value forms sriov-cni accepts: "802.1q" in lower case, "on"/"off"; ours stay ours
cni ADD ctr-f "/run/netns/$ns1" net1 "$(printf '{"cniVersion":"1.0.0","name":"forms","type":"vfagent","socket":"%s","pool":"c","vlan":7,"vlanProto":"802.1q","spoofchk":"on","trust":"off"}' "$csock")"
code 100 "lower-case 802.1q" "PF ens5f0"
[ "$(settings cni:forms/ctr-f/net1)" = '{"vlan":7,"vlan_proto":"802.1Q","spoofchk":true,"trust":false}' ] ||
	fail "value forms: $(settings cni:forms/ctr-f/net1)"
# sriov-cni's refusals: a priority or 802.1ad on VLAN 0 (no VLAN), or without a VLAN; ours too
bad() { # FIELD MEMBERS
	cni ADD ctr-bad "/run/netns/$ns2" net1 "$(printf '{"cniVersion":"1.0.0","name":"bad","type":"vfagent","socket":"%s","pool":"c"%s}' "$csock" "$2")"
	code 7 "config $2" "$1"
	[ "$(live)" = 0 ] || fail "config $2 claimed: $body"
}
bad vlanQoS ',"vlan":0,"vlanQoS":3'
bad qos ',"vlan":0,"qos":3'
bad 802.1ad ',"vlan":0,"vlanProto":"802.1ad"'
bad qos ',"vlanQoS":3'
bad vlanProto ',"vlan":5,"vlanProto":"802.1x"'
bad spoofchk ',"spoofchk":"yes"'
bad 'vlanQoS, qos' ',"vlan":5,"vlanQoS":3,"qos":3'
bad logLevel ',"logLevel":"loud"'
bad logFile ',"logFile":"relative.log"'
bad vfioPciMode ',"vfioPciMode":"yes"'
bad ibKubernetesEnabled ',"ibKubernetesEnabled":true'
# vfioPciMode on a VF with a kernel driver: refused, naming it, nothing claimed
cni ADD ctr-bad "/run/netns/$ns2" net1 "$(printf '{"cniVersion":"1.0.0","name":"bad","type":"vfagent","socket":"%s","pool":"c","vfioPciMode":true}' "$csock")"
code 7 "vfioPciMode on iavf" "is bound to iavf, not vfio-pci"
[ "$(live)" = 0 ] || fail "vfioPciMode on iavf claimed: $body"

# userspace mode: sriov-cni's DPDK config (deviceID of a VF on vfio-pci): attached with no
# netdev moved, the device in the result (1.1.0's pciID); CHECK passes; DEL gives it back on
# vfio-pci
dconf=$(printf '{"cniVersion":"1.1.0","name":"sriov-dpdk","type":"vfagent","socket":"%s","deviceID":"0000:3b:00.2"}' "$csock")
api GET /v1/vfs/0000:3b:00.2; [ "$(jget .driver)" = vfio-pci ] || fail "the simulated VF is not on vfio-pci: $body"
cni ADD ctr-dpdk "/run/netns/$ns1" net9 "$dconf"; ok "userspace ADD"
printf '%s' "$out" | jq -e --arg ns "/run/netns/$ns1" '.interfaces == [{"name":"net9","sandbox":$ns,"pciID":"0000:3b:00.2"}]' \
	>/dev/null || fail "userspace result: $out"
api GET /v1/vfs/0000:3b:00.2; [ "$(jget .state)" = attached ] && [ "$(jget .driver)" = vfio-pci ] || fail "userspace VF: $body"
ip -n "$ns1" link show net9 >/dev/null 2>&1 && fail "a netdev went into the namespace"
cni CHECK ctr-dpdk "/run/netns/$ns1" net9 "$(printf '%s' "$dconf" | jq -c --argjson p "$out" '.prevResult = $p')"
ok "userspace CHECK"
cni DEL ctr-dpdk "/run/netns/$ns1" net9 "$dconf"; ok "userspace DEL"
api GET /v1/vfs/0000:3b:00.2; [ "$(jget .state)" = free ] && [ "$(jget .driver)" = vfio-pci ] || fail "after DEL: $body"
# with IPAM (1.0.0, host-local): the address is the application's, in the result only
dconf10=$(printf '{"cniVersion":"1.0.0","name":"sriov-dpdk","type":"vfagent","socket":"%s","deviceID":"0000:3b:00.2","vfioPciMode":true,"ipam":{"type":"host-local","subnet":"10.57.0.0/24","dataDir":"%s/ipam"}}' "$csock" "$tmp")
cni ADD ctr-dpdk "/run/netns/$ns2" net9 "$dconf10"; ok "userspace ADD with IPAM"
printf '%s' "$out" | jq -e '.ips[0].address == "10.57.0.2/24" and (.interfaces[0] | has("mac") | not)' >/dev/null ||
	fail "userspace result with IPAM: $out"
# the lease: the namespace goes without a DEL, and the agent's sweep gives the VF back
ip netns del "$ns2"
kill -HUP "$agent_pid"
for _ in $(seq 300); do api GET /v1/vfs/0000:3b:00.2; [ "$(jget .state)" = free ] && break; sleep 0.1; done
[ "$(jget .state)" = free ] || fail "the namespace of a userspace VF went and it was not released: $body"
cni DEL ctr-dpdk "/run/netns/$ns2" net9 "$dconf10"; ok "DEL after the lease ended"
ip netns add "$ns2"

# ib-sriov-cni's usage example (deviceID, link_state, rdmaIsolation, ibKubernetesEnabled,
# host-local IPAM): accepted, the link state asked of the PF
ib_conf=$(printf '{"cniVersion":"0.3.1","name":"mynet","type":"vfagent","socket":"%s","deviceID":"0000:af:01.1",
"link_state":"enable","rdmaIsolation":true,"ibKubernetesEnabled":false,"ipam":{"type":"host-local",
"subnet":"10.56.217.0/24","rangeStart":"10.56.217.171","rangeEnd":"10.56.217.181","routes":[{"dst":"0.0.0.0/0"}],
"gateway":"10.56.217.1","dataDir":"%s/ipam"}}' "$csock" "$tmp")
cni ADD ctr-ib "/run/netns/$ns1" net1 "$ib_conf" "IgnoreUnknown=1;K8S_POD_NAME=p;GUID=c2:11:22:33:44:55:66:77"
code 100 "ib-sriov-cni's config" "PF ens5f0"
[ "$(settings cni:mynet/ctr-ib/net1)" = '{"guid":"c2:11:22:33:44:55:66:77","link_state":"enable"}' ] ||
	fail "ib-sriov-cni's keys: $(settings cni:mynet/ctr-ib/net1)"
# a config the agent refuses is refused before IPAM runs: host-local never reserved
for bad in '"vlna":5' '"vlan":0,"vlanQoS":3' '"pool":"nope"'; do
	cni ADD ctr-early "/run/netns/$ns1" net1 "$(printf '{"cniVersion":"1.0.0","name":"early","type":"vfagent","socket":"%s","pool":"c","ipam":{"type":"host-local","subnet":"10.9.0.0/24","dataDir":"%s/ipam"}}' "$csock" "$tmp" | jq -c ". + {$bad}")"
	code 7 "$bad with IPAM"
	[ ! -e "$tmp/ipam/early" ] || fail "IPAM ran for $bad: $(ls "$tmp/ipam/early")"
done

# deviceID as an InfiniBand VF's GUID (its port GUID, the tail of its IPoIB address): that VF,
# its pool; a GUID no VF has is named
api GET /v1/vfs/0000:3b:00.1; ibguid=$(jget .mac | cut -d: -f13-)
cni ADD ctr-guid "/run/netns/$ns2" ib1 "$(printf '{"cniVersion":"1.0.0","name":"ibnet","type":"vfagent","socket":"%s","deviceID":"%s"}' "$csock" "$ibguid")"
ok "deviceID as a GUID"
api GET /v1/vfs/0000:3b:00.1; [ "$(jget .state)" = attached ] && [ "$(jget .pool)" = ib ] || fail "deviceID $ibguid: $body"
cni STATUS "" "" "" "$(printf '{"cniVersion":"1.1.0","name":"ibnet","type":"vfagent","socket":"%s","deviceID":"%s"}' "$csock" "$ibguid")"
code 50 "STATUS by a GUID whose VF is taken (its pool has no other)"
cni DEL ctr-guid "/run/netns/$ns2" ib1 "$(printf '{"cniVersion":"1.0.0","name":"ibnet","type":"vfagent","socket":"%s","deviceID":"%s"}' "$csock" "$ibguid")"
ok "DEL by GUID"
cni ADD ctr-guid "/run/netns/$ns2" ib1 "$(printf '{"cniVersion":"1.0.0","name":"ibnet","type":"vfagent","socket":"%s","deviceID":"00:11:22:33:44:55:66:77"}' "$csock")"
code 7 "deviceID of a GUID no VF has" "no InfiniBand VF of this host has GUID 00:11:22:33:44:55:66:77"

# 2. the runtime's wishes over the config: CNI_ARGS MAC (podman's --mac-address) over "mac",
# args.cni over CNI_ARGS, runtimeConfig over all; GUID and ib-sriov-cni's "guid" likewise
wish() { # CONTAINERID MEMBERS CNI_ARGS WANTED
	cni ADD "$1" "/run/netns/$ns2" net1 "$(printf '{"cniVersion":"1.0.0","name":"wish","type":"vfagent","socket":"%s","pool":"c"%s}' "$csock" "$2")" "$3"
	code 100 "wish $2 $3"
	[ "$(settings "cni:wish/$1/net1")" = "$4" ] || fail "wish $2 $3: $(settings "cni:wish/$1/net1")"
}
wish w1 ',"mac":"02:00:00:00:00:01"' 'IgnoreUnknown=1;MAC=02:00:00:00:00:02' '{"mac":"02:00:00:00:00:02"}'
wish w2 ',"args":{"cni":{"mac":"02:00:00:00:00:03"}}' 'MAC=02:00:00:00:00:02' '{"mac":"02:00:00:00:00:03"}'
wish w3 ',"args":{"cni":{"mac":"02:00:00:00:00:03"}},"runtimeConfig":{"mac":"02:00:00:00:00:04"}' 'MAC=02:00:00:00:00:02' '{"mac":"02:00:00:00:00:04"}'
wish w4 ',"guid":"00:00:00:00:00:00:00:01"' 'guid=00:00:00:00:00:00:00:02' '{"guid":"00:00:00:00:00:00:00:02"}'
wish w5 ',"args":{"cni":{"guid":"00:00:00:00:00:00:00:03"}},"runtimeConfig":{"infinibandGUID":"00:00:00:00:00:00:00:04"}' 'GUID=00:00:00:00:00:00:00:02' '{"guid":"00:00:00:00:00:00:00:04"}'
# ibKubernetesEnabled is satisfied by a GUID of the runtime's
wish w6 ',"ibKubernetesEnabled":true,"runtimeConfig":{"infinibandGUID":"00:00:00:00:00:00:00:05"}' '' '{"guid":"00:00:00:00:00:00:00:05"}'
# an empty CNI_ARGS MAC asks for nothing (no PF setting: the ADD succeeds)
cni ADD ctr-w7 "/run/netns/$ns2" net7 "$(printf '{"cniVersion":"1.0.0","name":"wish","type":"vfagent","socket":"%s","pool":"c"}' "$csock")" "MAC=;IgnoreUnknown=1"
ok "an empty CNI_ARGS MAC"
cni DEL ctr-w7 "/run/netns/$ns2" net7 "$(printf '{"cniVersion":"1.0.0","name":"wish","type":"vfagent","socket":"%s","pool":"c"}' "$csock")"
ok "DEL of ctr-w7"
# CNI_ARGS IP without IPAM: the address is configured (no PF setting: the ADD succeeds)
cni ADD ctr-ip "/run/netns/$ns2" net1 "$(printf '{"cniVersion":"1.0.0","name":"wish","type":"vfagent","socket":"%s","pool":"c"}' "$csock")" "IgnoreUnknown=1;IP=10.7.0.9/24"
ok "CNI_ARGS IP"
printf '%s' "$out" | jq -e '.ips == [{"address":"10.7.0.9/24","interface":0}]' >/dev/null || fail "CNI_ARGS IP result: $out"
ip -n "$ns2" -o addr show net1 | grep -q 'inet 10.7.0.9/24' || fail "CNI_ARGS IP not on net1: $(ip -n "$ns2" addr)"
cni ADD ctr-ip2 "/run/netns/$ns2" net2 "$(printf '{"cniVersion":"1.0.0","name":"wish","type":"vfagent","socket":"%s","pool":"c"}' "$csock")" "IP=10.7.0.10"
code 7 "CNI_ARGS IP without a prefix" "CNI_ARGS IP"
cni DEL ctr-ip "/run/netns/$ns2" net1 "$(printf '{"cniVersion":"1.0.0","name":"wish","type":"vfagent","socket":"%s","pool":"c"}' "$csock")"
ok "DEL of CNI_ARGS IP's"

# 3. a network name of 60 characters (Kubernetes allows 63): ADD and DEL, the key within the
# ledger's 128 characters, GC finds it by the same shortened name
long=sriov-network-attachment-for-the-storage-backend-of-tenant-a1
[ ${#long} -gt 54 ]
ctr=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
lconf=$(printf '{"cniVersion":"1.1.0","name":"%s","type":"vfagent","socket":"%s","pool":"c","ipam":{"type":"host-local","ranges":[[{"subnet":"10.8.0.0/24"}]],"dataDir":"%s/ipam"}}' "$long" "$csock" "$tmp")
# (Debian's host-local speaks up to 1.0.0: ADD and DEL in 1.0.0, GC and STATUS need 1.1.0)
lconf10=$(printf '%s' "$lconf" | jq -c '.cniVersion = "1.0.0"')
cni ADD "$ctr" "/run/netns/$ns1" eth1 "$lconf10"; ok "ADD of a long network name"
api GET /v1/allocations; key=$(jget '.allocations[0].idempotency_key')
[ ${#key} -le 128 ] && case $key in "cni:$(printf %.30s "$long")"*"~"*"/$ctr/eth1") ;; *) false ;; esac ||
	fail "long name's key: $key"
cni GC "" "" "" "$(printf '%s' "$lconf" | jq -c --arg c "$ctr" '. + {"cni.dev/valid-attachments":[{"containerID":$c,"ifname":"eth1"}]}')"
ok "GC with host-local (CNI 1.0.0)"
[ "$(live)" = 1 ] || fail "GC released the valid long-named attachment: $body"
cni STATUS "" "" "" "$lconf"; ok "STATUS with host-local (CNI 1.0.0)"
reserved() { for f in "$tmp/ipam/$long"/10.8.0.*; do [ -e "$f" ] && return 0; done; return 1; }
reserved || fail "no host-local reservation: $(ls "$tmp/ipam/$long")"
# 4. DEL with the agent away: IPAM releases the address, the agent's error says try again
stop_agent
cni DEL "$ctr" "/run/netns/$ns1" eth1 "$lconf10"; code 11 "DEL without the agent"
reserved && fail "DEL without the agent kept the address: $(ls "$tmp/ipam/$long")"
start_agent --config "$tmp/config.json"
cni DEL "$ctr" "/run/netns/$ns1" eth1 "$lconf10"; ok "DEL of a long network name"
[ "$(live)" = 0 ] || fail "DEL left the long-named attachment: $body"
# DEL with CNI_NETNS gone or empty and an attachment never made
cni DEL ctr-none "" eth1 "$lconf10"; ok "DEL without a namespace"

# 5. STATUS of a pool of the config whose selector matched no VF: 50, not a config error
cni STATUS "" "" "" "$(printf '{"cniVersion":"1.1.0","name":"n","type":"vfagent","socket":"%s","pool":"none"}' "$csock")"
code 50 "STATUS of a pool without VFs"
cni STATUS "" "" "" "$(printf '{"cniVersion":"1.1.0","name":"n","type":"vfagent","socket":"%s","pool":"nope"}' "$csock")"
code 7 "STATUS of a pool not in the config" nope
# STATUS of a config with deviceID alone: its VF's pool
cni STATUS "" "" "" "$(printf '{"cniVersion":"1.1.0","name":"n","type":"vfagent","socket":"%s","deviceID":"0000:af:01.2"}' "$csock")"
ok "STATUS by deviceID"

# 6. the CNI socket activated as vfagentd-cni.socket does it: the agent is not running, a
# plugin's connect starts it (systemd passes the SOCK_SEQPACKET socket), and it answers
stop_agent
command -v systemd-socket-activate >/dev/null || { echo "SKIP: no systemd-socket-activate"; exit 77; }
asock=$tmp/activated-cni.sock
systemd-socket-activate --seqpacket -l "$asock" "$b/agent/vfagentd" --simulate "$tmp/sys" \
	--listen "unix:$tmp/activated.sock" --config "$tmp/config.json" >>"$tmp/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 300); do [ -S "$asock" ] && break; sleep 0.1; done
[ -S "$asock" ] || fail "systemd-socket-activate made no socket $asock in 5 s"
n_ready=$(grep -c '^<6>ready' "$tmp/agent.log")
sleep 0.5 # what must not happen: the agent starting with no plugin connected, given 0.5 s
[ "$(grep -c '^<6>ready' "$tmp/agent.log")" = "$n_ready" ] || fail "the agent started before a plugin connected"
cni STATUS "" "" "" "$(printf '{"cniVersion":"1.1.0","name":"n","type":"vfagent","socket":"%s","pool":"c"}' "$asock")"
ok "STATUS through the activated socket"
grep -q 'CNI plugin socket from systemd' "$tmp/agent.log" || fail "the agent did not take systemd's socket: $(tail -5 "$tmp/agent.log")"
[ -S "$tmp/activated.sock" ] || fail "the REST socket of --listen is not there beside systemd's CNI socket"
echo "cni-compat: sriov-cni's and ib-sriov-cni's configs, the runtime's wishes, DEL best-effort, long names, GC/STATUS with CNI 1.0 IPAM, socket activation"
