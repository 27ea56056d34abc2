#!/bin/sh
# VF hot-swap against a real libvirtd (qemu driver; the domain's config, as tests/vm.sh: this
# machine cannot run a domain with a VF): a failover NIC's VF moved to another PF and back,
# the standby untouched, the old VF reset and free; vfctl swap and drain; the refusals (no
# standby, not attached, no free VF, bad input) leave the guest on its VF; the agent SIGKILLed
# at random points of swaps, each restart resolving the swap it left (the ledger's VF is the
# one in the domain, one VF and one standby there, the swap's claim gone, no VF held twice).
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
. "${top_srcdir:-.}/tests/libvirtd-lib.sh"
libvirtd_test_start
# the failover standby's bridge, which the agent looks for (tests/standby-host.sh)
ip link add onebr.120 type bridge || fail "cannot make the standby's bridge"
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}},
           {"name": "eth", "selector": {"vendors": ["8086"]}}],
 "networks": [{"bridge": "sriov_eth0", "pool": "eth", "failover": {"bridge": "onebr.{vlan}"}}],
 "libvirt": {"uri": "$LV_URI", "managed": true}}
JSON
start_agent --config "$tmp/vfagent.json"
dom_vf() { # the VF in the domain's config: 0000:BB:SS.F
	inactive 'string(//interface[@type="hostdev"]/source/address/@bus)' >/dev/null
	b=$(xmllint --xpath 'string(//interface[@type="hostdev"]/source/address/@bus)' "$tmp/dom.xml")
	s=$(xmllint --xpath 'string(//interface[@type="hostdev"]/source/address/@slot)' "$tmp/dom.xml")
	f=$(xmllint --xpath 'string(//interface[@type="hostdev"]/source/address/@function)' "$tmp/dom.xml")
	[ -n "$b" ] && printf '0000:%02x:%02x.%x\n' "$b" "$s" "$f"
}
pf_of() { api GET "/v1/vfs/$1"; jget .pf; }

api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"vfagent-test"},"vlan":120,"mac":"02:00:c0:a8:02:09","failover":{"bridge":"onebr.{vlan}"}}'
expect 201
id=$(jget .id) old=$(jget '.vfs[0].pci') oldpf=$(jget '.vfs[0].pf')
api POST "/v1/allocations/$id/attach" -d '{"domain":"vfagent-test","config":true}'
expect 200
[ "$(dom_vf)" = "$old" ] || fail "attached: the domain has $(dom_vf), not $old"

# the swap: another PF, the same MAC, VLAN and teaming; the standby stays; the old VF free
api POST "/v1/allocations/$id/swap"
expect 200
new=$(jget '.vfs[0].pci') newpf=$(jget '.vfs[0].pf')
[ "$new" != "$old" ] && [ "$newpf" != "$oldpf" ] || fail "not moved to another PF: $body"
[ "$(jget .state)" = attached ] || fail "swapped allocation: $body"
[ "$(dom_vf)" = "$new" ] || fail "the domain has $(dom_vf), the ledger $new"
[ "$(inactive 'count(//interface[@type="hostdev"])')" = 1 ] || fail "two VFs in the domain"
[ "$(inactive 'string(//interface[@type="hostdev"]/mac/@address)')" = 02:00:c0:a8:02:09 ] || fail MAC
[ "$(inactive 'string(//interface[@type="hostdev"]/vlan/tag/@id)')" = 120 ] || fail VLAN
[ "$(inactive 'string(//interface[@type="hostdev"]/teaming/@persistent)')" = ua-failover-0200c0a80209 ] ||
	fail "teaming: $(cat "$tmp/dom.xml")"
[ "$(inactive 'count(//interface[teaming/@type="persistent"])')" = 1 ] || fail "the standby left"
[ "$(vf_state "$old")" = free ] || fail "old VF $old: $(vf_state "$old")"
[ "$(vf_state "$new")" = attached ] || fail "new VF $new: $(vf_state "$new")"
api GET "/v1/allocations?owner=vm:vfagent-test"
[ "$(jget '.allocations | length')" = 1 ] || fail "the swap's claim stayed: $body"
# back onto the old PF, by vfctl
vfctl swap "$id" --pf "$oldpf" >"$tmp/vfctl.out" || fail "vfctl swap: $(cat "$tmp/vfctl.out")"
back=$(dom_vf)
[ "$(pf_of "$back")" = "$oldpf" ] || fail "vfctl swap --pf $oldpf: the domain has $back"
[ "$(vf_state "$new")" = free ] || fail "VF $new after the swap back: $(vf_state "$new")"
grep -q "$back" "$tmp/vfctl.out" || fail "vfctl swap does not show the new VF: $(cat "$tmp/vfctl.out")"
echo "swap: a failover NIC to another PF and back"

# refused, the guest left on its VF: bad input, no such VF, a PF with no free VF, a VF without
# standby, an allocation not attached
api POST "/v1/allocations/$id/swap" -d '{"pf":"nope"}'
expect 400
jget .message | grep -q '^pf: "nope" is not a PCI address' || fail "$body"
api POST "/v1/allocations/$id/swap" -d '{"vf":"0000:00:01.0"}'
expect 400
jget .message | grep -q "vf: 0000:00:01.0 is not a VF of allocation $id" || fail "$body"
api POST "/v1/allocations/$id/swap" -d '{"when":1}'
expect 400
api POST "/v1/allocations/$id/swap" -d '{"pf":"0000:3b:00.0"}'
expect 409
jget .message | grep -q 'pf: no free VF of pool eth on 0000:3b:00.0' || fail "$body"
[ "$(dom_vf)" = "$back" ] || fail "a refused swap moved the VF"
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"vfagent-test"}}'
plain=$(jget .id) plainvf=$(jget '.vfs[0].pci')
api POST "/v1/allocations/$plain/swap"
expect 409
jget .message | grep -q "VF $plainvf is not a failover NIC's in a domain" || fail "$body"
api POST "/v1/allocations/$plain/attach" -d '{"domain":"vfagent-test","config":true}'
expect 200
api POST "/v1/allocations/$plain/swap"
expect 409
jget .message | grep -q "no standby" || fail "$body"
[ "$(inactive 'count(//interface[@type="hostdev"])')" = 2 ] || fail "a refused swap changed the domain"

# vfctl drain: the failover NIC moves off the PF, the plain one cannot, saying why (exit 1)
pf=$(pf_of "$(dom_vf)")
[ "$(pf_of "$plainvf")" = "$pf" ] || vfctl swap "$id" --pf "$(pf_of "$plainvf")" >/dev/null ||
	fail "could not put both on one PF"
pf=$(pf_of "$plainvf")
set +e; vfctl drain "$pf" >"$tmp/drain.out" 2>"$tmp/drain.err"; rc=$?; set -e
[ "$rc" = 1 ] || fail "drain with one that cannot move: exit $rc: $(cat "$tmp/drain.out")"
grep -q "^$id .* -> " "$tmp/drain.out" || fail "drain did not move $id: $(cat "$tmp/drain.out")"
grep -q "^$plain $plainvf cannot move: .*no standby" "$tmp/drain.out" ||
	fail "drain did not say why $plain stays: $(cat "$tmp/drain.out")"
api GET "/v1/allocations/$id"
[ "$(jget '.vfs[0].pf')" != "$pf" ] || fail "drained PF still holds $id's VF"
api DELETE "/v1/allocations/$plain"
expect 204
set +e; vfctl drain "$pf" >"$tmp/drain.out"; rc=$?; set -e
[ "$rc" = 0 ] || fail "drain of an empty PF: exit $rc"
echo "swap: refusals leave the guest on its VF; vfctl drain moves and says what cannot"

# the agent SIGKILLed at random points of swaps back and forth: each restart resolves the
# swap it left, forward or back, and the ledger agrees with the domain
rounds=0 resolved=0
while [ $rounds -lt 10 ] || { [ "$resolved" = 0 ] && [ $rounds -lt 40 ]; }; do
	rounds=$((rounds + 1))
	kill_agent_amid curl -s --unix-socket "$sock" -X POST "http://x/v1/allocations/$id/swap"
	start_agent --config "$tmp/vfagent.json"
	n=$(grep -c "swap of allocation $id (.*): rolled" "$tmp/agent.log" || :)
	resolved=$n
	api GET "/v1/allocations/$id"
	[ "$(jget .state)" = attached ] || fail "round $rounds: allocation $(jget .state)"
	held=$(jget '.vfs[0].pci')
	[ "$(dom_vf)" = "$held" ] || fail "round $rounds: the ledger gives $held, the domain has $(dom_vf)"
	[ "$(inactive 'count(//interface[@type="hostdev"])')" = 1 ] || fail "round $rounds: VFs: $(cat "$tmp/dom.xml")"
	[ "$(inactive 'count(//interface[teaming/@type="persistent"])')" = 1 ] || fail "round $rounds: standby"
	api GET "/v1/allocations?owner=vm:vfagent-test"
	[ "$(jget '.allocations | length')" = 1 ] || fail "round $rounds: a swap's claim stayed: $body"
	api GET "/v1/vfs?state=reserved"
	[ "$(jget '.vfs | length')" = 0 ] || fail "round $rounds: VFs left reserved: $body"
	api GET "/v1/vfs?state=attached"
	[ "$(jget '.vfs | length')" = 1 ] || fail "round $rounds: attached VFs: $body"
done
[ "$resolved" -gt 0 ] || fail "$rounds kills, none inside a swap"
echo "swap: $rounds kills, $resolved half-done swaps resolved at restart"
api POST "/v1/allocations/$id/swap"
expect 200
echo "swap: all passed"
