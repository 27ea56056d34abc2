#!/bin/sh
# VF health on the simulated host: a release resets each VF (its pool's
# "reset": "flr", the default) and checks it came back; a failed reset, a
# driver that does not take the VF back, or a VF with no reset method leaves
# it quarantined with the reason and the time; repair brings it back once
# the cause is gone. The simulated kernel implements `reset` as Linux's
# reset_store() and counts resets in sim-resets; faults come from sim-faults.
set -eu
b=${top_builddir:-.}
. "${top_srcdir:-.}/tests/api-lib.sh"
events_pid=
trap '[ -z "$events_pid" ] || kill "$events_pid" 2>/dev/null; cleanup' EXIT

"$b/agent/vfagentd" --simulate "$tmp/sys" --once 2>"$tmp/agent.log"
cat >"$tmp/vfagent.json" <<'JSON'
{ "pools": [ { "name": "e810", "selector": { "devices": ["1889"] } },
             { "name": "x520", "selector": { "devices": ["10ed"] }, "reset": "none" } ] }
JSON
start_agent --config "$tmp/vfagent.json"
fault() { printf '%s\n' "$1" >"$tmp/sys/sim-faults"; }
dev_dir=$tmp/sys/bus/pci/devices
resets() { grep -c "^$1\$" "$tmp/sys/sim-resets" 2>/dev/null || true; }
claim() { # POOL: one VF claimed for vm1; sets $id and $vf
	api POST /v1/allocations -d "{\"pool\":\"$1\",\"count\":1,\"owner\":{\"kind\":\"vm\",\"name\":\"vm1\"}}"
	expect 201
	id=$(jget .id) vf=$(jget '.vfs[0].pci')
}
release() { api DELETE "/v1/allocations/$id"; expect 204; }
vf_is() { # STATE [REASON-TEXT]
	api GET "/v1/vfs/$vf"
	[ "$(jget .state)" = "$1" ] || fail "VF $vf is $(jget .state), wanted $1: $body"
	[ -z "${2:-}" ] || jget .reason | grep -qF -- "$2" || fail "VF $vf reason: $(jget .reason), wanted $2"
}
follow_events() { # the program itself in the background: a killed subshell would leave it
	VFAGENT_SOCKET=$sock "$b/agent/vfctl/vfctl" events >>"$tmp/events" 2>&1 &
	events_pid=$!
}
follow_events

# a release resets the VF, and it is free again, on its driver, with its netdev
claim e810
release
[ "$(resets "$vf")" = 1 ] || fail "release did not reset $vf: $(cat "$tmp/sys/sim-resets" 2>/dev/null)"
vf_is free
[ "$(readlink "$tmp/sys/bus/pci/devices/$vf/driver" | sed 's|.*/||')" = iavf ] || fail "driver after reset"
[ -n "$(ls "$tmp/sys/bus/pci/devices/$vf/net")" ] || fail "no netdev after reset"
grep -q "VF $vf: reset (flr), iavf bound again, netdev back" "$tmp/agent.log" || fail "no reset log line"

# a pool with "reset": "none" is not reset
claim x520
release
[ "$(resets "$vf")" = 0 ] || fail "x520 pool VF was reset"
api GET /v1/pools
[ "$(jget '.pools[] | select(.name == "x520") | .reset')" = none ] || fail "pool reset in /v1/pools"

# the reset fails: the VF is quarantined with why and since when; the release still ends
claim e810
fault "reset EIO 1"
release
vf_is quarantined 'reset failed: reset (flr): writing reset: Input/output error'
[ "$(jget .since)" -gt 0 ] || fail "no since"
bad=$vf
api GET "/v1/allocations/$id"
[ "$(jget .state)" = released ] || fail "the release did not end: $body"
# no claim gets it: all 4 of the pool asked for, 3 given at most
api POST /v1/allocations -d '{"pool":"e810","count":4,"owner":{"kind":"vm","name":"vm2"}}'
[ "$code" = 409 ] || [ "$code" = 503 ] || fail "a claim got the quarantined VF: $code $body"
api GET /metrics
printf '%s' "$body" | grep -q '^vfagent_vfs{pool="e810",state="quarantined"} 1$' || fail "metrics state"
printf '%s' "$body" | grep -q '^vfagent_vf_resets_total{result="failed"} 1$' || fail "metrics resets"
"$b/agent/vfctl/vfctl" --socket "$sock" show "$bad" >"$tmp/show"
grep -q 'quarantined' "$tmp/show" && grep -q 'reset failed' "$tmp/show" || fail "vfctl show: $(cat "$tmp/show")"

# repair while the cause is still there: 409, still quarantined, the new reason
fault "reset EIO"
api POST "/v1/vfs/$bad/repair"
expect 409
printf '%s' "$body" | grep -q 'stays quarantined: repair failed: reset (flr): writing reset' || fail "repair 409: $body"
vf=$bad vf_is quarantined 'repair failed'
# the cause gone: vfctl repair frees it
fault ""
vfctl repair "$bad" >"$tmp/out" || fail "vfctl repair: $(cat "$tmp/out")"
grep -q "VF $bad repaired: free" "$tmp/out" || fail "vfctl repair output: $(cat "$tmp/out")"
vf=$bad vf_is free

# the driver does not take it back after the reset (its probe fails): quarantined, unbound
claim e810
fault "drivers_probe EIO 1"
release
vf_is quarantined 'reset failed: reset (flr): binding its driver again: Input/output error'
[ ! -e "$tmp/sys/bus/pci/devices/$vf/driver" ] || fail "VF still bound after a failed probe"
vfctl repair "$vf" >/dev/null || fail "repair after a failed probe"
vf_is free
[ -e "$tmp/sys/bus/pci/devices/$vf/driver" ] || fail "repair did not bind the VF"

# a VF the kernel cannot reset (no reset method) is not handed on unreset
claim e810
: >"$tmp/sys/bus/pci/devices/$vf/reset_method"
release
vf_is quarantined 'no method'
echo flr >"$tmp/sys/bus/pci/devices/$vf/reset_method"
vfctl repair "$vf" >/dev/null || fail "repair after the method came back"

# refusals: a free VF, a held VF, an unknown VF, a PF, garbage
api POST "/v1/vfs/$vf/repair"
expect 409
printf '%s' "$body" | grep -q 'is free: only a quarantined VF is repaired' || fail "free: $body"
claim e810
api POST "/v1/vfs/$vf/repair"
expect 409
printf '%s' "$body" | grep -q "held by allocation $id" || fail "held: $body"
release
api POST /v1/vfs/0000:af:0f.7/repair
expect 404
api POST /v1/vfs/0000:af:00.0/repair
expect 404
api POST /v1/vfs/zz/repair
expect 400
set +e; vfctl repair 3b:zz >/dev/null 2>&1; rc=$?; set -e
[ $rc = 2 ] || fail "vfctl repair of garbage: exit $rc"

# events: the quarantines and the repair, one line each (waited for: the stream may lag)
for _ in $(seq 300); do
	grep -q "vf $bad quarantined: reset failed" "$tmp/events" && grep -q "vf $bad free" "$tmp/events" && break
	sleep 0.1
done
kill "$events_pid"; events_pid=
grep -q "vf $bad quarantined: reset failed" "$tmp/events" || fail "events: $(cat "$tmp/events")"
grep -q "vf $bad free" "$tmp/events" || fail "repair event: $(cat "$tmp/events")"
api GET /metrics
printf '%s' "$body" | grep -q '^vfagent_vf_repairs_total{result="ok"} 3$' || fail "repairs metric: $(printf '%s' "$body" | grep repairs)"

# automatic repair (repair.retry_seconds): tried that long after the quarantine, then after
# twice as long each time it fails; SIGHUP (like each quiet minute) tries those that are due
stop_agent
printf '{"pools":[{"name":"e810","selector":{"devices":["1889"]}}],"repair":{"retry_seconds":1}}' \
	>"$tmp/retry.json"
start_agent --config "$tmp/retry.json"
claim e810
fault "reset EIO"
release
vf_is quarantined 'reset failed'
sleep 1.2 # time itself: the retry is due a whole second after the quarantine (seconds)
hup_done # the SIGHUP's sweep over, repairs included (api-lib.sh)
vf_is quarantined 'repair failed'
grep -q "VF $vf: next repair in 2 s" "$tmp/agent.log" || fail "no backoff: $(grep "$vf" "$tmp/agent.log" | tail -3)"
hup_done
[ "$(grep -c "VF $vf: next repair in" "$tmp/agent.log")" = 1 ] || fail "retried before its time"
fault ""
sleep 2 # time itself: the backoff's 2 s pass
hup_done
vf_is free
stop_agent
start_agent --config "$tmp/vfagent.json"

# the agent killed in the middle of a reset (the VF off its driver): the next start resumes
# the release, resets the VF and frees it
claim e810
before=$(resets "$vf")
fault "reset SLOW 1"
curl -s --unix-socket "$sock" -X DELETE "http://x/v1/allocations/$id" >/dev/null 2>&1 &
curl_pid=$!
for _ in $(seq 600); do [ -e "$dev_dir/$vf/driver" ] || break; sleep 0.05; done
[ ! -e "$dev_dir/$vf/driver" ] || fail "the reset did not start"
kill -9 "$agent_pid"; wait "$agent_pid" 2>/dev/null || true; agent_pid=
wait "$curl_pid" || true
start_agent --config "$tmp/vfagent.json"
vf_is free
[ "$(readlink "$dev_dir/$vf/driver" | sed 's|.*/||')" = iavf ] || fail "resumed reset: not on iavf"
[ "$(resets "$vf")" -gt "$before" ] || fail "the resumed release did not reset $vf"
api GET "/v1/allocations/$id"
[ "$(jget .state)" = released ] || fail "resumed release: $body"
grep -q "1 rolled forward" "$tmp/agent.log" || fail "no roll forward in the log"

echo "reset: all checks passed"
