#!/bin/sh
# A release brings back only the VF. The tenant stacks devices on its VF
# (macvlan in passthru and bridge mode, macvtap; a bridge of its own the VF is
# a port of) and sets properties on it (alternative names, one of them another
# VF's host name and one the next tenant asks for; an alias). The release must
# delete or detach each before the VF leaves, so nothing of the old tenant
# stays on it (a macvlan left behind receives what the next tenant's VF
# receives), quarantine nothing by mistake, and leave no name in the way of the
# next attach. The VF's own alternative names in the host stay in the host.
# This kernel has macvlan, macvtap and bridge; no ipvlan, 802.1Q VLAN, bond or
# dummy driver (the same code deletes any link whose lower link is the VF).
# In a network and mount namespace of its own.
set -eu
if [ -z "${VFA_PRIVATE_HOST:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
	command -v ip >/dev/null && command -v jq >/dev/null || exit 77
	VFA_PRIVATE_HOST=1 exec unshare --net --mount -- "$0" "$@"
fi
. "${top_srcdir:-.}/tests/api-lib.sh"
mount -t tmpfs -o mode=755 tmpfs /run/netns # its namespaces' names stay in here
ip link set lo up
ns1=vfa-up1-$$ ns2=vfa-up2-$$
ip netns add "$ns1" && ip netns add "$ns2" || { echo "cannot make network namespaces"; exit 77; }
for l in ens5f0v0 ens5f0v1; do ip link add "$l" type veth peer name "peer-$l"; done
ip link add link peer-ens5f0v1 name vfa-up-probe type macvlan ||
	{ echo "SKIP: no macvlan in this kernel"; exit 77; }
ip link del vfa-up-probe
ip link property add dev ens5f0v0 altname enp175s1 # the host's own name for it
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"pf_names": ["ens5f0"]}, "reset": "none"}], "libvirt": false}
JSON
start_agent --config "$tmp/vfagent.json"
claim() {
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"placement\":\"pack\",\"owner\":{\"kind\":\"container\",\"netns\":\"$1\"}}"
	expect 201; id=$(jget .id); vf=$(jget '.vfs[0].pci')
	[ "$vf" = 0000:af:01.0 ] || fail "expected the first E810 VF, got $vf"
	api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$1\",\"ifname\":\"${2:-net1}\"}"; expect 200
}
release() {
	api DELETE "/v1/allocations/$id"; expect 204
	api GET "/v1/vfs/$vf"; [ "$(jget .state)" = free ] || fail "$1: VF $vf is $(jget .state): $body"
	ip -j link show ens5f0v0 | jq -e '.[0].link == "peer-ens5f0v0"' >/dev/null ||
		fail "$1: the VF is not back as ens5f0v0"
}
host_info() { ip -j -d link show ens5f0v0 | jq -c '.[0] | {altnames, ifalias, master}'; }

# 1. passthru macvlan, altnames (another VF's host name, and the next tenant's name), alias
claim "$ns1"
ip -n "$ns1" -j -d link show net1 | jq -e '.[0].altnames == null' >/dev/null ||
	fail "the host's altname went into the container: $(ip -n "$ns1" -d link show net1)"
ip -n "$ns1" link add link net1 name mv0 type macvlan mode passthru
ip -n "$ns1" link property add dev net1 altname ens5f0v1
ip -n "$ns1" link property add dev net1 altname net7
ip -n "$ns1" link set net1 alias tenant-was-here
release "passthru macvlan"
ip -n "$ns1" link show mv0 >/dev/null 2>&1 && fail "the tenant's macvlan stayed on the released VF"
[ "$(host_info)" = '{"altnames":["enp175s1"],"ifalias":null,"master":null}' ] ||
	fail "the VF came back with the tenant's properties, or without its own: $(host_info)"
api GET /v1/vfs/0000:af:01.1; [ "$(jget .state)" = free ] || fail "another VF's name quarantined it: $body"
ip -j link show ens5f0v1 | jq -e '.[0].link == "peer-ens5f0v1"' >/dev/null || fail "ens5f0v1 changed"

# 2. the next tenant gets the bare VF, and may call it net7
claim "$ns2" net7
ip -n "$ns2" link show net7 >/dev/null || fail "net7 is not in the next tenant's namespace"
ip -n "$ns2" -j -d link show net7 | jq -e '.[0] | .altnames == null and .ifalias == null' >/dev/null ||
	fail "the next tenant got the old one's properties: $(ip -n "$ns2" -d link show net7)"
release "net7"

# 3. bridge-mode macvlan and a macvtap at once
claim "$ns1"
ip -n "$ns1" link add link net1 name mv1 type macvlan mode bridge
ip -n "$ns1" link add link net1 name mvt0 type macvtap mode bridge
release "macvlan and macvtap"
for l in mv1 mvt0; do ip -n "$ns1" link show "$l" >/dev/null 2>&1 && fail "$l stayed on the released VF"; done

# 4. a port of the tenant's bridge: out of it, the bridge itself stays the tenant's
claim "$ns1"
ip -n "$ns1" link add br0 type bridge
ip -n "$ns1" link set net1 master br0
release "bridge port"
ip -n "$ns1" link show br0 >/dev/null || fail "the tenant's own bridge was deleted"
[ "$(host_info | jq -r .master)" = null ] || fail "the VF came back in a bridge: $(host_info)"
stop_agent
echo "tenant-uppers: all checks passed"
