#!/bin/sh
# A reservation held while a file exists (POST .../detach {"hold_while": PATH}),
# as OpenNebula's suspend needs: the VM has no domain (its guest is saved to
# a checkpoint), yet it resumes here with its VFs. The owner gone, the full
# sweep (SIGHUP, as every quiet minute) keeps the reservation while the file
# exists and releases it once the file is gone; a plain detach clears the
# hold; bad input is refused naming the field, with nothing detached. In the
# network namespace tests/in-netns.sh gives it, with a mount namespace of its
# own for the names under /run/netns.
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || exit 77
. "${top_srcdir:-.}/tests/api-lib.sh"
ns=vfa-hold-$$
tenant_and_stand_in "$ns"
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "reservations": {"orphan_seconds": 0},
 "libvirt": false}
JSON
start_agent --config "$tmp/vfagent.json"
state() { api GET "/v1/allocations/$1"; expect 200; jget .state; }
# the full sweep, as every quiet minute, waited for: SIGHUP reloads, rescans, then sweeps, one
# signal after another; so a second reload logged means the first sweep has finished
reloads() { grep -c '^<6>reload: ' "$tmp/agent.log" || :; }
hup() { # waits for its reload line (two pending SIGHUPs are one)
	n=$(reloads)
	kill -HUP "$agent_pid"
	for _ in $(seq 100); do [ "$(reloads)" -gt "$n" ] && return 0; sleep 0.1; done
	fail "SIGHUP not handled"
}
sweep() { hup; hup; }
claim_attached() {
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
	expect 201; id=$(jget .id)
	api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"; expect 200
}
claim_attached
ckpt=$tmp/checkpoint

# bad input: refused naming the field, the VF still in the namespace
for bad in '{"hold_while":"relative/checkpoint"}' '{"hold_while":7}' '{"hold":"/x"}' '[]' '{'; do
	api POST "/v1/allocations/$id/detach" -d "$bad"
	expect 400
	case $bad in *hold_while*) echo "$body" | jq -e '.message | test("hold_while")' >/dev/null ||
		fail "detach $bad: the message does not name hold_while: $body" ;; esac
	[ "$(state "$id")" = attached ] || fail "detach $bad changed the allocation: $body"
done
ip -n "$ns" link show net1 >/dev/null 2>&1 || fail "a refused detach moved the VF"

# held while the checkpoint exists (it is written after the detach, as a save does)
api POST "/v1/allocations/$id/detach" -d "{\"hold_while\":\"$ckpt\"}"
expect 200
[ "$(jget .state)" = reserved ] && [ "$(jget .hold_while)" = "$ckpt" ] || fail "held detach: $body"
sweep
[ "$(state "$id")" = reserved ] || fail "released while its owner lives (no checkpoint yet): $body"
: >"$ckpt"
ip netns del "$ns" # the owner is gone: only the checkpoint keeps the VFs
sweep
[ "$(state "$id")" = reserved ] || fail "released while its checkpoint exists: $body"
rm "$ckpt"
sweep
[ "$(state "$id")" = released ] || fail "kept after its checkpoint went: $body"
grep -q "allocation $id: reserved, held while a file existed, and both it and its owner are gone: releasing" "$tmp/agent.log" ||
	fail "the release is not logged"

# a plain detach clears a hold: the reservation lasts while its owner does
ip netns add "$ns"
claim_attached
: >"$ckpt"
api POST "/v1/allocations/$id/detach" -d "{\"hold_while\":\"$ckpt\"}"; expect 200
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"; expect 200
api POST "/v1/allocations/$id/detach"; expect 200
[ "$(jget .hold_while)" = null ] || fail "a plain detach kept the hold: $body"
ip netns del "$ns" # (an orphan lease of 0 s is over at once: agent/release.c's >=)
sweep
[ "$(state "$id")" = released ] || fail "a cleared hold still kept the VFs (its file exists): $body"
echo "hold: all checks passed"
