#!/bin/sh
# Faults, and nothing lost: each case asserts the API's answer and the ledger
# afterwards. The state dir fills up (a small tmpfs); a sysfs write fails
# (EBUSY from sriov_numvfs, EIO from drivers_probe, injected into the
# simulated kernel); the target namespace vanishes in the middle of attaches;
# a VF vanishes (numvfs lowered behind the agent's back) while allocated.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (tmpfs, namespaces)"; exit 77; }
state=$tmp/state
ns=vfa-f-$$
teardown() {
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	agent_pid=
	ip netns del "$ns" 2>/dev/null || true
	ip link del ens5f0v1 2>/dev/null || true
	umount "$state" 2>/dev/null || true
	cleanup
}
trap teardown EXIT
mkdir -p "$state"
mount -t tmpfs -o size=2m tmpfs "$state"
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}],
 "libvirt": {"uri": "test:///default", "managed": false}}
JSON
start_agent --config "$tmp/vfagent.json" --state-dir "$state"
owner="\"owner\":{\"kind\":\"container\",\"pid\":$$}"
free_vfs() { api GET "/v1/vfs?state=free"; jget '.vfs | length'; }
n_alloc() { api GET /v1/allocations; jget '.allocations | length'; }

# -- the state dir fills up: a clear 507, no half-written state, back when space returns
free0=$(free_vfs) alloc0=$(n_alloc)
dd if=/dev/zero of="$state/filler" bs=4k 2>/dev/null || true
api POST /v1/allocations -d "{\"pool\":\"eth\",$owner}"
expect 507
jget .message | grep -qi "full\|space" || fail "no reason: $body"
[ "$(free_vfs)" = "$free0" ] && [ "$(n_alloc)" = "$alloc0" ] || fail "a failed claim changed the ledger"
rm "$state/filler"
api POST /v1/allocations -d "{\"pool\":\"eth\",$owner}"
expect 201
id=$(jget .id)
api DELETE "/v1/allocations/$id"
expect 204
[ "$(free_vfs)" = "$free0" ] || fail "free VFs after recovery"

# -- sriov_numvfs answers EBUSY: the error says so, numvfs and the ledger stay
pf=0000:d8:00.0
before=$(cat "$tmp/sys/bus/pci/devices/$pf/sriov_numvfs")
echo "sriov_numvfs EBUSY" >"$tmp/sys/sim-faults"
api PUT "/v1/pfs/$pf/numvfs" -d '{"numvfs":4}'
[ "$code" = 409 ] || [ "$code" = 500 ] || fail "numvfs under EBUSY: HTTP $code $body"
jget .message | grep -q "busy" || fail "numvfs: the kernel's words are missing: $body"
[ "$(cat "$tmp/sys/bus/pci/devices/$pf/sriov_numvfs")" = "$before" ] || fail "numvfs changed"
api GET "/v1/pfs/$pf"
[ "$(jget '.vfs | length')" = "$before" ] || fail "the inventory changed: $body"
[ "$(free_vfs)" = "$free0" ] || fail "VF states changed under a failed resize"

# -- drivers_probe answers EIO once, binding vfio-pci (unmanaged hostdev): clear error, driver back
echo "drivers_probe EIO 1" >"$tmp/sys/sim-faults"
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"test"}}'
expect 201
id=$(jget .id) pci=$(jget '.vfs[0].pci')
api GET "/v1/vfs/$pci"
drv=$(jget .driver)
api POST "/v1/allocations/$id/attach" -d '{"domain":"test","config":true}'
[ "$code" -ge 400 ] || fail "attach with drivers_probe failing: $code"
jget .message | grep -q "binding $pci to vfio-pci: Input/output error" || fail "no reason: $body"
rm "$tmp/sys/sim-faults"
api GET "/v1/vfs/$pci"
[ "$(jget .driver)" = "$drv" ] && [ "$(jget .state)" = reserved ] || fail "VF after a failed bind: $body"
api DELETE "/v1/allocations/$id"
expect 204

# -- the namespace vanishes in the middle of attaches: never attached to a dead namespace
for round in 1 2 3 4 5 6 7 8; do
	ip link show ens5f0v1 >/dev/null 2>&1 || ip link add ens5f0v1 type veth peer name peer-f
	ip netns add "$ns"
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"placement\":\"pack\",\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
	expect 201
	id=$(jget .id)
	(sleep "0.0$(od -An -N1 -tu1 /dev/urandom | tr -d ' ')"; ip netns del "$ns") &
	killer=$!
	api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"eth9\"}"
	wait "$killer" || true
	for _ in $(seq 300); do
		api GET "/v1/allocations/$id"
		[ "$(jget .state)" != attached ] && break
		sleep 0.1
	done
	state_now=$(jget .state)
	[ "$state_now" = reserved ] || [ "$state_now" = released ] ||
		fail "round $round: allocation $state_now after its namespace vanished"
	[ "$state_now" = released ] || { api DELETE "/v1/allocations/$id"; expect 204; }
	ip link del peer-f 2>/dev/null || true
done

# -- a VF vanishes while allocated (numvfs lowered behind the agent's back)
pool_total() { api GET /v1/pools; jget '.pools[] | select(.name == "eth") | .vfs | add'; }
before=$(pool_total)
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"gone"},"placement":"pack"}'
expect 201
id=$(jget .id) pci=$(jget '.vfs[0].pci')
pfdir=$(readlink -f "$tmp/sys/bus/pci/devices/$pci/physfn")
for l in "$pfdir"/virtfn*; do [ "$(readlink -f "$l")" = "$(readlink -f "$tmp/sys/bus/pci/devices/$pci")" ] && rm "$l"; done
rm -rf "$(readlink -f "$tmp/sys/bus/pci/devices/$pci")" "$tmp/sys/bus/pci/devices/$pci"
kill -HUP "$agent_pid"
for _ in $(seq 300); do
	api GET "/v1/vfs/$pci"
	[ "$code" = 404 ] && break
	sleep 0.1
done
expect 404 # gone from the inventory
api GET "/v1/allocations/$id"
expect 200
[ "$(jget .flag)" = "VF $pci vanished" ] || fail "the allocation of a vanished VF is not flagged: $body"
[ "$(jget '.vfs[0].state')" = unavailable ] || fail "the vanished VF is $(jget '.vfs[0].state') in its allocation"
api GET '/v1/vfs?pool=eth'; listed=$(jget '.vfs | length')
[ "$(pool_total)" = "$listed" ] && [ "$listed" -lt "$before" ] ||
	fail "the pool counts $(pool_total) VFs, /v1/vfs lists $listed (were $before)"
api DELETE "/v1/allocations/$id"
expect 204
api GET /v1/health
expect 200
echo "faults: all checks passed"
