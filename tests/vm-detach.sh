#!/bin/sh
# A detach a guest never acknowledges, against a real libvirtd (qemu driver,
# TCG, private sockets and dirs): the agent must not take a VF back while the
# domain still has it. The guest that ignores the unplug is the one simulated
# part: <sim root>/sim-unplug-ignored names the VF whose detach the agent does
# not ask of libvirt, as libvirt's own detach returns after its wait with the
# device still in the domain; everything after that is libvirt's real answer
# (the domain's XML). The detach answers 504 and the allocation stays
# attached; a release answers 202 and leaves the VF quarantined in its domain,
# on vfio-pci, never handed out; the agent answers other requests meanwhile;
# a repair while the domain has it is refused; once the domain lets go of it
# (the "guest" acknowledged: the device gone from the domain; here a define
# is the event) or the domain ends, the libvirt event makes the agent
# finish: restored, reset, free. Meanwhile GET /v1/host lists the VF in
# "pending" ("repair", with its reason), and no longer once it is free.
# vfctl gives up on an agent that does not answer (--timeout).
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
. "${top_srcdir:-.}/tests/libvirtd-lib.sh"
libvirtd_test_start
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}],
 "libvirt": {"uri": "$LV_URI", "managed": false}}
JSON
wait_state() { # PCI STATE: within 10 s
	for _ in $(seq 100); do [ "$(vf_state "$1")" = "$2" ] && return 0; sleep 0.1; done
	fail "VF $1 is $(vf_state "$1"), wanted $2: $body"
}
driver() { basename "$(readlink "$tmp/sys/bus/pci/devices/$1/driver" 2>/dev/null)" 2>/dev/null || :; }
pending() { # PCI → the JSON of GET /v1/host's pending entries for that VF, compact
	api GET /v1/host
	expect 200
	jget "[.pending[] | select(.pci == \"$1\")]" | jq -c .
}
in_config() { lv dumpxml --inactive vfagent-test 2>/dev/null | grep -c "<interface type='hostdev'" || :; }
claim_attached() { # MAC → $id $pci, in vfagent-test's config, bound to vfio-pci by the agent
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"vm\",\"name\":\"vfagent-test\"},\"mac\":\"$1\",\"vlan\":42}"
	expect 201
	id=$(jget .id) pci=$(jget '.vfs[0].pci')
	own=$(driver "$pci")
	api POST "/v1/allocations/$id/attach" -d '{"domain":"vfagent-test","config":true}'
	expect 200
	[ "$(driver "$pci")" = vfio-pci ] || fail "VF $pci on $(driver "$pci"), not vfio-pci"
}
start_agent --config "$tmp/vfagent.json" --log-level debug

# the guest ignores the unplug: the detach answers 504 and changes nothing
claim_attached 02:00:0a:00:00:07
printf '%s\n' "$pci" >"$tmp/sys/sim-unplug-ignored"
api POST "/v1/allocations/$id/detach" >/dev/null &
detach=$!
# the detach is waiting for the device to leave (3 s), as its debug line says: the agent answers
# meanwhile
waiting="VF $pci: still in domain vfagent-test after the detach: waiting up to 3 s"
for _ in $(seq 300); do
	grep -q "$waiting" "$tmp/agent.log" && break
	kill -0 "$detach" 2>/dev/null || break
	sleep 0.1
done
grep -q "$waiting" "$tmp/agent.log" ||
	fail "no \"$waiting\" logged while the detach ran (30 s at most): $(cat "$tmp/body")"
t0=$(date +%s%N)
curl -sf --max-time 2 --unix-socket "$sock" http://x/v1/pools >/dev/null ||
	fail "the agent did not answer GET /v1/pools while a detach waited"
curl -sf --max-time 2 --unix-socket "$sock" "http://x/v1/vfs/$pci" >/dev/null ||
	fail "the agent did not answer GET /v1/vfs/$pci while its detach waited"
ms=$((($(date +%s%N) - t0) / 1000000))
wait "$detach"
[ "$(jq -r .error "$tmp/body")" = ETIMEDOUT ] || fail "detach of a VF the guest holds: $(cat "$tmp/body")"
jq -r .message "$tmp/body" | grep -q "unplug not acknowledged in 3 s" || fail "$(cat "$tmp/body")"
api GET "/v1/allocations/$id"
[ "$(jget .state)" = attached ] || fail "allocation after a held-up detach: $body"
[ "$(in_config)" = 1 ] && [ "$(driver "$pci")" = vfio-pci ] ||
	fail "after a held-up detach: $(in_config) devices in the domain, driver $(driver "$pci")"
echo "held-up detach: 504, allocation attached, VF on vfio-pci; GETs answered in $ms ms meanwhile"

# a release: 202, the allocation released, the VF quarantined in its domain, never handed out
api DELETE "/v1/allocations/$id"
expect 202
jget .message | grep -q "VF $pci: still in domain vfagent-test" || fail "$body"
[ "$(jget .state)" = released ] || fail "$body"
api GET "/v1/vfs/$pci"
[ "$(jget .state)" = quarantined ] || fail "VF $pci after a held-up release: $body"
jget .reason | grep -q "unplug not acknowledged in 3 s" || fail "quarantine reason: $body"
[ "$(in_config)" = 1 ] && [ "$(driver "$pci")" = vfio-pci ] || fail "the VF was touched"
since=$(jget .since)
p=$(pending "$pci")
[ "$(printf '%s' "$p" | jq -c '[.[] | {what, allocation, owner}]')" = \
	'[{"what":"repair","allocation":null,"owner":"vm:vfagent-test"}]' ] ||
	fail "GET /v1/host's pending for VF $pci quarantined in its domain: $p"
[ "$(printf '%s' "$p" | jq -r '.[0].since')" = "$since" ] || fail "pending since: $p, VF since $since"
printf '%s' "$p" | jq -r '.[0].reason' | grep -q "still in domain vfagent-test.*unplug not acknowledged" ||
	fail "pending reason: $p"
api GET "/v1/vfs?pool=eth&state=free"
n=$(jget '.vfs | length')
for _ in $(seq "$n"); do
	api POST /v1/allocations -d '{"pool":"eth","count":1,"owner":{"kind":"vm","name":"other"}}'
	expect 201
	[ "$(jget '.vfs[0].pci')" != "$pci" ] || fail "VF $pci handed out while its domain holds it"
done
api POST /v1/allocations -d '{"pool":"eth","count":1,"owner":{"kind":"vm","name":"other"}}'
[ "$code" != 201 ] || fail "a claim got a VF beyond the free ones: $body"
for a in $(curl -s --unix-socket "$sock" "http://x/v1/allocations?owner=vm:other" | jq -r '.allocations[] | select(.state != "released") | .id'); do
	api DELETE "/v1/allocations/$a"
	expect 204
done

# a repair while the domain still has it is refused, and changes nothing
if vfctl repair "$pci" >"$tmp/out" 2>&1; then fail "repair of a VF still in its domain: $(cat "$tmp/out")"; fi
grep -q "still in domain" "$tmp/out" || fail "repair: $(cat "$tmp/out")"
[ "$(vf_state "$pci")" = quarantined ] && [ "$(driver "$pci")" = vfio-pci ] || fail "repair touched it"

# the guest lets go (the device leaves the domain), and libvirt says something happened to the
# domain: the agent looks and finishes the job. Here the domain is shut off: its config loses
# the device, and a define of it is the event (a running domain's is DEVICE_REMOVED, the lab's)
rm "$tmp/sys/sim-unplug-ignored"
lv detach-interface vfagent-test hostdev --mac 02:00:0a:00:00:07 --config >/dev/null
lv dumpxml --inactive vfagent-test >"$tmp/redefine.xml"
lv define "$tmp/redefine.xml" >/dev/null
wait_state "$pci" free
[ "$(driver "$pci")" = "$own" ] || fail "VF $pci on $(driver "$pci") after its detach finished, not $own"
grep -q "VF $pci: its domain let it go: finishing its detach" "$tmp/agent.log" || fail "no finish logged"
[ "$(pending "$pci")" = "[]" ] || fail "VF $pci free, still pending: $body"
echo "held-up release: 202, quarantined in the domain, not claimable; freed once the domain let go"

# the domain's end finishes it too
claim_attached 02:00:0a:00:00:08
printf '%s\n' "$pci" >"$tmp/sys/sim-unplug-ignored"
api DELETE "/v1/allocations/$id"
expect 202
[ "$(vf_state "$pci")" = quarantined ] || fail "VF $pci after a held-up release: $body"
[ "$(pending "$pci" | jq -r '.[].what')" = repair ] || fail "VF $pci quarantined, not pending: $body"
lv undefine vfagent-test >/dev/null
rm "$tmp/sys/sim-unplug-ignored"
wait_state "$pci" free
[ "$(driver "$pci")" = "$own" ] || fail "VF $pci on $(driver "$pci") after its domain ended"
[ "$(pending "$pci")" = "[]" ] || fail "VF $pci free after its domain ended, still pending: $body"
echo "held-up release: freed when the domain ended"

# vfctl gives up on an agent that does not answer
kill -STOP "$agent_pid"
t0=$(date +%s)
if vfctl --timeout 1 pools >"$tmp/out" 2>&1; then kill -CONT "$agent_pid"; fail "vfctl answered by a frozen agent"; fi
t1=$(date +%s)
kill -CONT "$agent_pid"
grep -q "no answer from the agent within 1 s" "$tmp/out" || fail "vfctl --timeout: $(cat "$tmp/out")"
[ $((t1 - t0)) -le 5 ] || fail "vfctl --timeout 1 took $((t1 - t0)) s"
echo "vfctl --timeout 1 against a frozen agent: gave up in $((t1 - t0)) s"
echo "PASS: vm-detach"
