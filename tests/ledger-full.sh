#!/bin/sh
# A full disk between an attach's intent and its confirmation. The ledger is
# on a small tmpfs, filled the moment the intent is written (the filler
# shares one CPU with the agent, which runs only when the filler waits:
# SCHED_IDLE). The attach must not answer 200 unless the
# ledger shows it attached; what it did is undone otherwise. Later calls get
# 507 (the disk), never 409 "attach in progress"; once there is room again,
# the same calls work without a restart. In the network namespace
# tests/in-netns.sh gives it, with a mount namespace of its own for the names
# under /run/netns.
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, tmpfs)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null && command -v chrt >/dev/null || exit 77
. "${top_srcdir:-.}/tests/api-lib.sh"
. "${top_srcdir:-.}/tests/full-disk-lib.sh"
ns=vfa-lf-$$
trap 'stop_filler; cleanup' EXIT
tenant_and_stand_in "$ns"
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"pf_names": ["ens5f0"]}, "reset": "none"}], "libvirt": false}
JSON
start_agent_on_small_disk "$tmp/vfagent.json"
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"placement\":\"pack\",\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
expect 201; id=$(jget .id); vf=$(jget '.vfs[0].pci')
attach() { api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"; }

# the disk fills the moment the ledger grows (the attach's intent is written), before its end
fill_on_next_write
attach
filled
[ -f "$state/filler" ] || fail "the disk did not fill during the attach"
first=$code
if [ "$code" = 200 ]; then # then the ledger must say so, and the VF be there
	api GET "/v1/allocations/$id"
	[ "$(jget .state)" = attached ] || fail "200 while the allocation is $(jget .state)"
	ip -n "$ns" link show net1 >/dev/null || fail "200, but net1 is not in the namespace"
else
	expect 507
	ip -n "$ns" link show net1 >/dev/null 2>&1 && fail "HTTP $first, but the VF stayed in the namespace"
	ip link show ens5f0v0 >/dev/null || fail "HTTP $first, and the VF is not back in the host"
	api GET "/v1/allocations/$id"
	[ "$(jget .state)" = reserved ] || fail "HTTP $first, and the allocation is $(jget .state)"
fi

# still full: a clear 507, not an operation "in progress" that ended
[ "$first" = 200 ] || { attach; expect 507; }
api DELETE "/v1/allocations/$id"; expect 507
jget .message | grep -q "in progress" && fail "still full: $body"

# room again: the same calls work, no restart
rm "$state/filler"
if [ "$first" != 200 ]; then
	attach; expect 200
	ip -n "$ns" link show net1 >/dev/null || fail "attached, but net1 is not in the namespace"
fi
api DELETE "/v1/allocations/$id"
[ "$code" = 204 ] || [ "$code" = 404 ] || fail "release after the disk emptied: HTTP $code: $body"
api GET "/v1/allocations/$id"; [ "$(jget .state)" = released ] || fail "not released: $body"
api GET "/v1/vfs/$vf"; [ "$(jget .state)" = free ] || fail "VF $vf: $body"
ip link show ens5f0v0 >/dev/null || fail "the VF is not back in the host"
stop_agent
umount "$state"
echo "ledger-full: first attach HTTP $first; all checks passed"
