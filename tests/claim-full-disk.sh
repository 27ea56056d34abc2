#!/bin/sh
# A claim whose attach fails on a full disk leaves nothing reserved (issue 37, item 8). POST
# /v1/allocations with "attach" claimed, then the disk under the ledger filled before the
# attach's intent: 507, no id returned, and giving the claim back failed too, so the VF stayed
# reserved for good (its owner, the namespace, lives; a REST client has no id to release).
# Now a give-back the ledger cannot take is kept and done before the next claim (and in the
# quiet minute), once there is room. The ledger is on a small tmpfs filled the moment the claim
# is written (the filler shares one CPU with the agent, which runs only when the filler waits:
# SCHED_IDLE, as tests/ledger-full.sh does); rounds until the disk fills between the claim and
# the attach. In network and mount namespaces of its own (tests/in-netns.sh).
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, tmpfs)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null && command -v chrt >/dev/null || exit 77
. "${top_srcdir:-.}/tests/api-lib.sh"
. "${top_srcdir:-.}/tests/full-disk-lib.sh"
ns=vfa-cfd-$$
# the agent goes before its disk: a mounted state directory fails cleanup's rm
trap 'stop_filler; ip netns del "$ns" 2>/dev/null || :; cleanup_agent; umount "$state" 2>/dev/null || :
	cleanup' EXIT
tenant_and_stand_in "$ns"
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"pf_names": ["ens5f0"]}, "reset": "none"}], "libvirt": false}
JSON
start_agent_on_small_disk "$tmp/vfagent.json"
live() { api GET /v1/allocations; jget '[.allocations[].id] | join(" ")'; }
claim_attach='{"pool":"eth","count":1,"placement":"pack","owner":{"kind":"container","netns":"'$ns'"},
	"attach":{"netns":"'$ns'","ifname":"net1"}}'

leaked=
for round in $(seq 20); do
	fill_on_next_write
	api POST /v1/allocations -d "$claim_attach"
	filled
	first=$code
	leaked=$(live)
	rm -f "$state/filler"
	if [ "$first" != 201 ] && [ -n "$leaked" ]; then
		echo "round $round: HTTP $first, allocation $leaked claimed"
		break
	fi
	# the disk filled elsewhere (before the claim, or after the attach): room again, next round
	for id in $leaked; do api DELETE "/v1/allocations/$id"; done
	leaked=
done
[ -n "$leaked" ] || { echo "SKIP: the disk never filled between the claim and the attach"; exit 77; }
ip -n "$ns" link show net1 >/dev/null 2>&1 && fail "HTTP $first, but the VF is in the namespace"

# room again: the next claim first gives the failed one back
api POST /v1/allocations -d '{"pool":"eth","count":1,"owner":{"kind":"vm","name":"next"}}'
expect 201; next=$(jget .id)
for id in $leaked; do
	api GET "/v1/allocations/$id"
	[ "$(jget .state)" = released ] || fail "the claim of a failed attach is still $(jget .state): $body"
done
[ "$(live)" = "$next" ] || fail "live allocations: $(live), wanted only $next"
grep -q "the claim is given back now" "$tmp/agent.log" || fail "no give-back logged"
api DELETE "/v1/allocations/$next"; expect 204
api GET '/v1/vfs?state=reserved'; [ "$(jget '.vfs | length')" = 0 ] || fail "VFs left reserved: $body"
stop_agent
echo "claim-full-disk: a claim whose attach failed on a full disk is given back once there is room"
