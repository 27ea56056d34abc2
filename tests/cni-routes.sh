#!/bin/sh
# Routes and addresses as the reference plugins set them (ipam.ConfigureIface):
# IPAM's extra routes, IPv4 and IPv6 default routes together, an IPv4
# address with its broadcast; a second network's default route that clashes
# is named, and the ADD undone. CHECK compares what the ADD set: addresses,
# routes (in whatever table: sbr moves them), MAC, MTU, the interface. A repeated ADD answers as the first did
# (host-local, which refuses a second allocation, is not run again); one with
# other settings says the attachment exists with them.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || { echo "SKIP: needs ip and jq"; exit 77; }
cnipath=${CNI_PATH:-/usr/lib/cni}
[ -x "$cnipath/host-local" ] && [ -x "$cnipath/static" ] ||
	{ echo "SKIP: no $cnipath/host-local or static (containernetworking-plugins)"; exit 77; }
plugin=$b/hooks/cni/vfagent
ns1=vfa-cr1-$$
links="ens5f0v0 ens5f0v1 ens5f0v2"
teardown() {
	ip netns del "$ns1" 2>/dev/null || true
	for l in $links; do ip link del "$l" 2>/dev/null || true; done
	cleanup
}
trap teardown EXIT
ip netns add "$ns1" || { echo "SKIP: cannot make network namespaces"; exit 77; }
for l in $links; do ip link add "$l" type veth peer name "p-$l"; done
cat >"$tmp/config.json" <<'JSON'
{"pools": [{"name": "c", "selector": {"pci_addresses": ["0000:af:01.0", "0000:af:01.1"]}},
           {"name": "d", "selector": {"pci_addresses": ["0000:af:01.2"]}}]}
JSON
start_agent --config "$tmp/config.json"
csock=$tmp/vfagent-cni.sock

cni() { # COMMAND CONTAINERID IFNAME CONFIG: sets $rc and $out
	set +e
	out=$(printf '%s' "$4" | env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CNI_COMMAND="$1" \
		CNI_CONTAINERID="$2" CNI_NETNS="/run/netns/$ns1" CNI_IFNAME="$3" CNI_PATH="$cnipath" \
		"$plugin" 2>"$tmp/cni.err")
	rc=$?
	set -e
}
ok() { [ "$rc" = 0 ] || fail "$1: exit $rc: $out $(cat "$tmp/cni.err")"; }
code() { # WANTED WHAT TEXT
	[ "$rc" != 0 ] || fail "$2: succeeded: $out"
	[ "$(printf '%s' "$out" | jq -r .code)" = "$1" ] || fail "$2: wanted code $1: $out"
	printf '%s' "$out" | jq -r .details | grep -qF -- "$3" || fail "$2: no \"$3\": $out"
}
live() { api GET /v1/allocations; jget '.allocations | length'; }
reservations() { find "$tmp/ipam" -name '10.*' -o -name 'fd00*' | wc -l; }

# dual-stack host-local with a route of its own: both defaults, the extra route, broadcast
conf=$(printf '{"cniVersion":"1.0.0","name":"dual","type":"vfagent","socket":"%s","pool":"c","cacheDir":"%s/cache",
"ipam":{"type":"host-local","dataDir":"%s/ipam",
 "ranges":[[{"subnet":"10.9.0.0/24","gateway":"10.9.0.1"}],[{"subnet":"fd00:9::/64","gateway":"fd00:9::1"}]],
 "routes":[{"dst":"0.0.0.0/0"},{"dst":"::/0"},{"dst":"192.168.50.0/24","gw":"10.9.0.254"}]}}' "$csock" "$tmp" "$tmp")
cni ADD ctr-a net1 "$conf"; ok "dual-stack ADD"
printf '%s' "$out" >"$tmp/add.json"
v4=$(jq -r '.ips[] | select(.address | test("^10\\.")) | .address' "$tmp/add.json")
ip -n "$ns1" -4 -o addr show net1 | grep -q "inet $v4 brd 10.9.0.255 " || fail "no $v4 with its broadcast: $(ip -n "$ns1" addr)"
ip -n "$ns1" -6 -o addr show net1 | grep -q 'inet6 fd00:9::' || fail "no IPv6 address: $(ip -n "$ns1" addr)"
ip -n "$ns1" -4 route show default | grep -q 'via 10.9.0.1 dev net1' || fail "no IPv4 default: $(ip -n "$ns1" route)"
ip -n "$ns1" -6 route show default | grep -q 'via fd00:9::1 dev net1' || fail "no IPv6 default: $(ip -n "$ns1" -6 route)"
ip -n "$ns1" -4 route show 192.168.50.0/24 | grep -q 'via 10.9.0.254 dev net1' || fail "no extra route: $(ip -n "$ns1" route)"
[ "$(reservations)" = 2 ] || fail "host-local reservations: $(find "$tmp/ipam")"

# a repeated ADD, same config: the first's answer, host-local not run again, nothing claimed
cni ADD ctr-a net1 "$conf"; ok "ADD again (host-local)"
[ "$(printf '%s' "$out" | jq -S .)" = "$(jq -S . "$tmp/add.json")" ] || fail "ADD again answered otherwise: $out"
[ "$(reservations)" = 2 ] && [ "$(live)" = 1 ] || fail "ADD again reserved or claimed: $(find "$tmp/ipam") $body"
# ... with another config: the attachment exists with other settings; still there as it was
cni ADD ctr-a net1 "$(printf '%s' "$conf" | jq -c '.mtu = 1400')"; code 104 "ADD again, other config" "another config"
[ "$(live)" = 1 ] || fail "a refused repeated ADD released: $body"
# ... with another pool, the cache gone: the agent compares, and names what differs
mv "$tmp/cache" "$tmp/cache.kept"
cni ADD ctr-a net1 "$(printf '%s' "$conf" | jq -c '.pool = "d"')"; code 104 "ADD again, other pool" "pool differs"
mv "$tmp/cache.kept" "$tmp/cache"
[ "$(live)" = 1 ] && [ "$(vf_state 0000:af:01.2)" = free ] || fail "a refused repeated ADD claimed: $body"

# CHECK: as added; then each thing the ADD set, changed, is named
check_conf=$(printf '%s' "$conf" | jq -c --slurpfile p "$tmp/add.json" '.prevResult = $p[0]')
cni CHECK ctr-a net1 "$check_conf"; ok CHECK
ip -n "$ns1" route del 192.168.50.0/24
cni CHECK ctr-a net1 "$check_conf"; code 102 "CHECK without the extra route" "route 192.168.50.0/24 via 10.9.0.254"
ip -n "$ns1" route add 192.168.50.0/24 via 10.9.0.254 dev net1
ip -n "$ns1" -6 route del default
cni CHECK ctr-a net1 "$check_conf"; code 102 "CHECK without the IPv6 default" "route ::/0 via fd00:9::1"
ip -n "$ns1" -6 route add default via fd00:9::1 dev net1
cni CHECK ctr-a net1 "$check_conf"; ok "CHECK once restored"
mac=$(ip -n "$ns1" -j link show net1 | jq -r '.[0].address')
ip -n "$ns1" link set net1 address 02:11:22:33:44:55
cni CHECK ctr-a net1 "$check_conf"; code 102 "CHECK with another MAC" "MAC 02:11:22:33:44:55, not $mac"
ip -n "$ns1" link set net1 address "$mac"
cni CHECK ctr-a net1 "$(printf '%s' "$check_conf" | jq -c '.prevResult.interfaces[0].mtu = 1500')"; ok "CHECK of the MTU"
ip -n "$ns1" link set net1 mtu 1400
cni CHECK ctr-a net1 "$(printf '%s' "$check_conf" | jq -c '.prevResult.interfaces[0].mtu = 1500')"
code 102 "CHECK with another MTU" "MTU 1400, not 1500"
ip -n "$ns1" link set net1 mtu 1500

# a second network in the same namespace with its own IPv4 default route: the clash is named,
# the ADD undone (VF home and free, static's address not configured), the first untouched
conf2=$(printf '{"cniVersion":"1.0.0","name":"second","type":"vfagent","socket":"%s","pool":"c","cacheDir":"%s/cache",
"ipam":{"type":"static","addresses":[{"address":"10.10.0.3/24","gateway":"10.10.0.1"}],"routes":[{"dst":"0.0.0.0/0"}]}}' "$csock" "$tmp")
cni ADD ctr-a net2 "$conf2"; code 103 "a second default route" "route 0.0.0.0/0 via 10.10.0.1 dev net2: File exists"
[ "$(live)" = 1 ] && [ "$(vf_state 0000:af:01.1)" = free ] || fail "the clashing ADD was not undone: $body"
ip link show ens5f0v1 >/dev/null 2>&1 || fail "the clashing ADD left the netdev in the container"
ip -n "$ns1" -4 route show default | grep -q 'via 10.9.0.1 dev net1' || fail "the first default route went"
# ... without a default route of its own, it joins: its subnet only
cni ADD ctr-a net2 "$(printf '%s' "$conf2" | jq -c '.ipam.routes = []')"; ok "a second network without a default"
cni DEL ctr-a net2 "$(printf '%s' "$conf2" | jq -c '.ipam.routes = []')"; ok "DEL of the second"

# chained with sbr (the reference plugin that moves an interface's routes to a table of their
# own): CHECK finds the route where sbr put it
conf3=$(printf '{"cniVersion":"1.0.0","name":"chained","type":"vfagent","socket":"%s","pool":"c","cacheDir":"%s/cache",
"ipam":{"type":"static","addresses":[{"address":"10.11.0.3/24"}],"routes":[{"dst":"192.168.60.0/24","gw":"10.11.0.254"}]}}' "$csock" "$tmp")
cni ADD ctr-c net3 "$conf3"; ok "ADD before sbr"
sbr_conf=$(printf '{"cniVersion":"1.0.0","name":"chained","type":"sbr"}' | jq -c --argjson p "$out" '.prevResult = $p')
set +e
out=$(printf '%s' "$sbr_conf" | env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CNI_COMMAND=ADD CNI_CONTAINERID=ctr-c \
	CNI_NETNS="/run/netns/$ns1" CNI_IFNAME=net3 CNI_PATH="$cnipath" "$cnipath/sbr" 2>"$tmp/cni.err")
rc=$?
set -e
ok "sbr ADD"
ip -n "$ns1" route show table main | grep -q 192.168.60.0 && fail "sbr left the route in main: $(ip -n "$ns1" route)"
cni CHECK ctr-c net3 "$(printf '%s' "$conf3" | jq -c --argjson p "$out" '.prevResult = $p')"; ok "CHECK after sbr"
cni DEL ctr-c net3 "$conf3"; ok "DEL after sbr"

# DEL: host-local's reservations gone, the cache entry too; an ADD after it is a new one
cni DEL ctr-a net1 "$conf"; ok DEL
[ "$(reservations)" = 0 ] || fail "DEL left reservations: $(find "$tmp/ipam")"
[ -z "$(ls "$tmp/cache")" ] || fail "DEL left the cache entry: $(ls "$tmp/cache")"
cni ADD ctr-a net1 "$conf"; ok "ADD after DEL"
[ "$(reservations)" = 2 ] || fail "ADD after DEL: $(find "$tmp/ipam")"
cni DEL ctr-a net1 "$conf"; ok "DEL again"
echo "cni-routes: dual-stack defaults, extra routes, broadcast, a clash named; CHECK of routes, MAC, MTU; repeated ADD"
