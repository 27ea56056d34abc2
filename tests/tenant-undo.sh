#!/bin/sh
# Every undo's failure is handled. A tenant program (tests/tenant-mover.c)
# moves any new "net1" into another of its namespaces the instant it appears:
# the attach fails, and so does its rollback, since the VF is no longer where
# the agent put it. The VF must be quarantined with the reason,
# never free (claim and attach in one call gives the claim back) nor silently
# reserved (an attach alone), and no later claim may get it. Then a crash in
# the middle of an attach (the ledger as the agent leaves it: the attach's
# intent open, the VF in the namespace) with the namespace deleted while the
# agent is down: the reconcile must quarantine the VF, not confirm it as
# reserved. In a network and mount namespace of its own.
set -eu
if [ -z "${VFA_PRIVATE_HOST:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
	command -v ip >/dev/null && command -v jq >/dev/null && command -v sqlite3 >/dev/null || exit 77
	[ -x "${top_builddir:-.}/tests/tenant-mover" ] || { echo "SKIP: tests/tenant-mover is not built"; exit 77; }
	VFA_PRIVATE_HOST=1 exec unshare --net --mount -- "$0" "$@"
fi
. "${top_srcdir:-.}/tests/api-lib.sh"
mount -t tmpfs -o mode=755 tmpfs /run/netns # its namespaces' names stay in here
ip link set lo up
ns=vfa-un-$$ hide=vfa-unh-$$ mover='' cpus=''
# every thread of the agent on CPUs $1, scheduled as chrt $2 says (threads come and go)
agent_sched() {
	for task in "/proc/$agent_pid/task/"*; do
		taskset -c -p "$1" "${task##*/}" >/dev/null 2>&1 && chrt "$2" -p 0 "${task##*/}" 2>/dev/null || true
	done
}
trap 'stop_mover; cleanup' EXIT
ip netns add "$ns" && ip netns add "$hide" || { echo "cannot make network namespaces"; exit 77; }
for l in ens5f0v0 ens5f0v1 ens5f0v2; do ip link add "$l" type veth peer name "peer-$l"; done
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"pf_names": ["ens5f0"]}, "reset": "none"}], "libvirt": false}
JSON
start_agent --config "$tmp/vfagent.json"
owner="\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}"
# 64 addresses: net1 is configured in 66 requests after it appeared
addrs=$(seq 2 65 | sed 's/.*/"10.7.0.&\/24"/' | paste -sd, -)
attach_body="{\"netns\":\"$ns\",\"ifname\":\"net1\",\"addresses\":[$addrs]}"
# The tenant's program, in its namespace, "the instant" a new net1 appears: on one
# CPU with the agent, which runs only when the program waits (SCHED_IDLE), as a
# tenant's program may be faster than an agent on a busy host.
start_mover() {
	want=$(stat -L -c %i "/run/netns/$ns")
	ip netns exec "$ns" taskset -c 0 "$b/tests/tenant-mover" "/run/netns/$hide" net1 \
		>>"$tmp/mover.log" &
	mover=$!
	for _ in $(seq 100); do
		[ "$(stat -L -c %i "/proc/$mover/ns/net" 2>/dev/null)" = "$want" ] && break
		sleep 0.02
	done
	cpus=$(taskset -c -p "$agent_pid" | sed 's/.*: //')
	agent_sched 0 -i
}
stop_mover() {
	[ -z "$mover" ] || { kill "$mover" 2>/dev/null; wait "$mover" 2>/dev/null || true; }
	mover=
	[ -z "$agent_pid" ] || agent_sched "$cpus" -o

}

# 1. an attach alone: the allocation stays reserved, its VF is quarantined with the reason
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"placement\":\"pack\",$owner}"
expect 201; id=$(jget .id); vf1=$(jget '.vfs[0].pci')
start_mover
api POST "/v1/allocations/$id/attach" -d "$attach_body"
stop_mover
[ "$code" -ge 400 ] || fail "attach: HTTP $code although the tenant took net1 on: $body"
ip -n "$hide" link show net1 >/dev/null 2>&1 || fail "the tenant did not take the VF on (the race was lost): $body"
msg=$(jget .message)
[ "$(vf_state "$vf1")" = quarantined ] || fail "attach alone: VF $vf1 is $(vf_state "$vf1"), the tenant holds it"
echo "$msg" | grep -q "rolling back failed, VF quarantined" || fail "attach: the failed rollback is not said: $msg"
api GET "/v1/vfs/$vf1"
jget .reason | grep -q "rollback of a failed attach of allocation $id failed" || fail "no reason: $body"
api GET "/v1/allocations/$id"; [ "$(jget .state)" = reserved ] || fail "allocation: $body"
api DELETE "/v1/allocations/$id"; expect 204
[ "$(vf_state "$vf1")" = quarantined ] || fail "released: VF $vf1 is $(vf_state "$vf1")"
ip netns exec "$hide" ip link del net1

# 2. claim and attach in one call: the claim is given back, the VF is not free
start_mover
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"placement\":\"pack\",$owner,\"attach\":$attach_body}"
stop_mover
[ "$code" -ge 400 ] || fail "claim+attach: HTTP $code although the tenant took net1 on: $body"
ip -n "$hide" link show net1 >/dev/null 2>&1 || fail "claim+attach: the tenant did not take the VF on"
api GET '/v1/vfs?pool=eth'; vf2=$(jget ".vfs[] | select(.pci != \"$vf1\" and .state != \"free\") | .pci")
[ -n "$vf2" ] || fail "claim+attach: the VF the tenant holds is free again: $body"
[ "$(vf_state "$vf2")" = quarantined ] || fail "claim+attach: VF $vf2 is $(vf_state "$vf2"), the tenant holds it"
# no later claim gets either VF
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"placement\":\"pack\",$owner}"
expect 201; id=$(jget .id); vf3=$(jget '.vfs[0].pci')
[ "$vf3" != "$vf1" ] && [ "$vf3" != "$vf2" ] || fail "a claim got the VF the tenant holds: $vf3"
ip netns exec "$hide" ip link del net1

# 3. the agent killed in the middle of an attach (intent open, the VF in the namespace),
# the namespace deleted while it is down: the reconcile quarantines, it does not reserve
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"; expect 200
kill -9 "$agent_pid"; wait "$agent_pid" 2>/dev/null || true; agent_pid=
sqlite3 "$tmp/sys/state/ledger.db" "INSERT INTO intents VALUES ('$id', 'attach', 0);
	UPDATE allocations SET state = 'reserved' WHERE id = '$id';
	UPDATE vfs SET state = 'reserved' WHERE pci = '$vf3';"
ip netns del "$ns"
start_agent --config "$tmp/vfagent.json"
grep -q "reconciled: .* 1 intents rolled back, .* 1 quarantined" "$tmp/agent.log" ||
	fail "reconcile: $(grep reconciled "$tmp/agent.log" | tail -1)"
[ "$(vf_state "$vf3")" = quarantined ] || fail "reconcile: VF $vf3 is $(vf_state "$vf3") with its netdev gone"
api GET "/v1/vfs/$vf3"
jget .reason | grep -q "undoing allocation $id after a restart failed: the netdev of VF $vf3" ||
	fail "reconcile: no reason: $body"
api GET "/v1/allocations/$id"; [ "$(jget .state)" = reserved ] || fail "reconcile: allocation: $body"
stop_agent
echo "tenant-undo: all checks passed"
