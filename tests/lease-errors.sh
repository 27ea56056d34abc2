#!/bin/sh
# Errors are not absence. The agent runs out of descriptors (its soft
# RLIMIT_NOFILE lowered under it with prlimit, as 1,024 idle connections
# would): opening a tenant's namespace fails with EMFILE. A link event and
# the full sweep (SIGHUP runs the one every quiet minute runs) must keep the
# live tenant's allocation and its reservation, log the failed look and count
# it in /metrics; once descriptors are back, a namespace really gone is
# released as before. In the network namespace tests/in-netns.sh gives it,
# with a mount namespace of its own for the names under /run/netns.
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, prlimit)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null && command -v prlimit >/dev/null || exit 77
. "${top_srcdir:-.}/tests/api-lib.sh"
ns=vfa-le-$$
tenant_and_stand_in "$ns"
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "reservations": {"orphan_seconds": 0},
 "libvirt": false}
JSON
start_agent --config "$tmp/vfagent.json"
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
expect 201; live=$(jget .id); vf=$(jget '.vfs[0].pci')
api POST "/v1/allocations/$live/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"; expect 200
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
expect 201; held=$(jget .id)
# (its orphan lease of 0 s is over at once: the sweep looks at it)

# the lowest descriptor the agent does not use: with the soft limit there, every open fails
lowest=0
while [ -e "/proc/$agent_pid/fd/$lowest" ]; do lowest=$((lowest + 1)); done
hard=$(prlimit --pid "$agent_pid" --nofile --noheadings --output HARD)
soft=$(prlimit --pid "$agent_pid" --nofile --noheadings --output SOFT)
prlimit --pid "$agent_pid" --nofile="$lowest:$hard"
# waits until the agent looked at allocation $1 $2 times: kept (EMFILE) or released
looked() {
	for _ in $(seq 300); do
		[ "$(grep -c "allocation $1: \(looking for its .* failed: Too many open files: kept\|.*: releasing\)" \
			"$tmp/agent.log")" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "allocation $1: not looked at $2 times"
}
gone() { grep -q "allocation $1: .*: releasing" "$tmp/agent.log" && fail "$2: EMFILE was taken for absence"; true; }
# a link event in the host: the agent looks at every attached tenant's namespace
ip link add vfa-ev-$$ type veth peer name vfa-ev2-$$
looked "$live" 1; gone "$live" "a link event"
# the full sweep, as every quiet minute: attached and reserved owners
kill -HUP "$agent_pid"
looked "$live" 2; gone "$live" "the sweep"
looked "$held" 1; gone "$held" "the sweep of reservations"
grep -q "allocation $live: looking for its network namespace failed: Too many open files: kept" \
	"$tmp/agent.log" || fail "the failed look is not logged"
prlimit --pid "$agent_pid" --nofile="$soft:$hard"

api GET "/v1/allocations/$live"; [ "$(jget .state)" = attached ] || fail "the live tenant lost its VF: $body"
api GET "/v1/allocations/$held"; [ "$(jget .state)" = reserved ] || fail "the reservation went: $body"
api GET "/v1/vfs/$vf"; [ "$(jget .state)" = attached ] || fail "VF $vf: $body"
ip -n "$ns" link show net1 >/dev/null || fail "the VF left the tenant's namespace"
api GET /metrics
n=$(printf '%s\n' "$body" | sed -n 's/^vfagent_lease_check_errors_total \([0-9]*\)$/\1/p')
[ "${n:-0}" -ge 3 ] || fail "failed looks not counted: vfagent_lease_check_errors_total=${n:-missing}"
echo "EMFILE: $n looks failed and were counted, both allocations kept"

# absence is still absence: the namespace deleted, the next link event releases
ip netns del "$ns"
ip link del vfa-ev-$$
for _ in $(seq 300); do
	api GET "/v1/allocations/$live"; [ "$(jget .state)" = released ] && break
	sleep 0.1
done
[ "$(jget .state)" = released ] || fail "a namespace really gone was not released: $body"
stop_agent
echo "lease-errors: all checks passed"
