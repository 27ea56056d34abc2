#!/bin/sh
# Desired VF counts: the config's "numvfs" rules are applied at start (before
# reconcile) and on SIGHUP, through the planner (a PF whose VFs are held stays
# as it is); `vfctl numvfs --persist` writes them. A reboot is played by the
# simulated kernel putting sriov_numvfs back to 0.
set -eu
b=${top_builddir:-.}
. "${top_srcdir:-.}/tests/api-lib.sh"

numvfs() { api GET "/v1/pfs/$1"; expect 200; jget .numvfs; }
reboot() { "$b/tests/sim-reboot" "$tmp/sys" 0000:af:00.0 0000:d8:00.0 0000:3b:00.0; }
want() { [ "$(numvfs "$1")" = "$2" ] || fail "PF $1 has $(numvfs "$1") VFs, wanted $2"; }

"$b/agent/vfagentd" --simulate "$tmp/sys" --once 2>"$tmp/agent.log"
cat >"$tmp/vfagent.json" <<'JSON'
{
  "pools": [ { "name": "eth", "selector": { "vendors": ["8086"] } } ],
  "numvfs": [ { "pf": "0000:af:00.0", "numvfs": 8 },
              { "driver": "ixgbe", "numvfs": 6 },
              { "pf": "ib0", "numvfs": "max" } ]
}
JSON
chmod 640 "$tmp/vfagent.json"

# at start: each PF as its first matching rule says (by address, driver, netdev name)
start_agent --config "$tmp/vfagent.json"
want 0000:af:00.0 8
want 0000:d8:00.0 6
want 0000:3b:00.0 16
grep -q 'numvfs: PF 0000:af:00.0 4 -> 8 VFs, as the config says' "$tmp/agent.log" || fail "no log line"
api GET /v1/pools
[ "$(jget '.pools[] | select(.name == "eth") | .vfs.free')" = 14 ] || fail "eth pool: $body"

# a reboot: every PF at 0; the agent puts them back before it serves
stop_agent
reboot
[ "$(cat "$tmp/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs")" = 0 ] || fail "reboot did not reset"
start_agent --config "$tmp/vfagent.json"
want 0000:af:00.0 8
want 0000:d8:00.0 6
api GET /v1/pools
[ "$(jget '.pools[] | select(.name == "eth") | .vfs.free')" = 14 ] || fail "after reboot: $body"

# a reservation survives the reboot: its PF comes back from 0 and it keeps its VF
api POST /v1/allocations -d '{"pool":"eth","count":1,"owner":{"kind":"vm","name":"vm1"}}'
expect 201
id=$(jget .id) vf=$(jget '.vfs[0].pci')
stop_agent
reboot
start_agent --config "$tmp/vfagent.json"
api GET "/v1/allocations/$id"
expect 200
[ "$(jget .state)" = reserved ] && [ "$(jget '.vfs[0].pci')" = "$vf" ] &&
	[ "$(jget '.vfs[0].state')" = reserved ] || fail "reservation after reboot: $body"
pf=$(readlink -f "$tmp/sys/bus/pci/devices/$vf/physfn"); pf=${pf##*/}

# a held PF is never resized: SIGHUP with another count leaves it, and says so
sed -i "s/\"pf\": \"$pf\", \"numvfs\": [0-9]*/\"pf\": \"$pf\", \"numvfs\": 2/; s/\"driver\": \"ixgbe\", \"numvfs\": 6/\"driver\": \"ixgbe\", \"numvfs\": 2/" "$tmp/vfagent.json"
grep -q "\"pf\": \"$pf\", \"numvfs\": 2" "$tmp/vfagent.json" || fail "test: sed did not change $pf"
kill -HUP "$agent_pid"
for _ in $(seq 50); do grep -q "stays at" "$tmp/agent.log" && break; sleep 0.1; done
grep -q "numvfs: PF $pf stays at [0-9]* VFs, the config wants 2: .*allocation" "$tmp/agent.log" ||
	fail "held PF: $(grep numvfs "$tmp/agent.log")"
[ "$(numvfs "$pf")" != 2 ] || fail "a held PF was resized"
"$b/agent/vfctl/vfctl" --socket "$sock" doctor >"$tmp/doctor" || true
grep -q "^WARN  numvfs $pf  *[0-9]* VFs, the config wants 2" "$tmp/doctor" ||
	fail "doctor: $(cat "$tmp/doctor")"
api DELETE "/v1/allocations/$id"
expect 204
kill -HUP "$agent_pid"
for _ in $(seq 50); do [ "$(numvfs "$pf")" = 2 ] && break; sleep 0.1; done
want "$pf" 2
want 0000:d8:00.0 2

# vfctl numvfs --persist: applied, written first in the file, kept across a reboot
vfctl numvfs 0000:d8:00.0 4 --persist >"$tmp/out" || fail "persist: $(cat "$tmp/out")"
grep -q 'kept in the agent.s config' "$tmp/out" || fail "persist output: $(cat "$tmp/out")"
[ "$(jq -c '.numvfs[0]' "$tmp/vfagent.json")" = '{"pf":"0000:d8:00.0","numvfs":4}' ] ||
	fail "config file: $(cat "$tmp/vfagent.json")"
[ "$(jq -c '.pools' "$tmp/vfagent.json")" = '[{"name":"eth","selector":{"vendors":["8086"]}}]' ] ||
	fail "the rest of the config was not kept"
[ "$(stat -c %a "$tmp/vfagent.json")" = 640 ] || fail "config mode not kept"
vfctl numvfs 0000:d8:00.0 5 --persist >/dev/null
[ "$(jq '[.numvfs[] | select(.pf == "0000:d8:00.0")] | length' "$tmp/vfagent.json")" = 1 ] ||
	fail "a second persist added a rule instead of replacing it"
ls "$tmp"/vfagent.json.* 2>/dev/null && fail "a temporary file was left"
stop_agent
reboot
start_agent --config "$tmp/vfagent.json"
want 0000:d8:00.0 5

# refusals
api PUT /v1/pfs/0000:d8:00.0/numvfs -d '{"numvfs": 3, "persist": true, "dry_run": true}'
expect 400
api PUT /v1/pfs/0000:d8:00.0/numvfs -d '{"numvfs": 3, "persist": "yes"}'
expect 400
stop_agent
start_agent
api PUT /v1/pfs/0000:d8:00.0/numvfs -d '{"numvfs": 3, "persist": true}'
expect 400
printf '%s' "$body" | grep -q 'built-in config' || fail "persist without a file: $body"
stop_agent

# bad rules: the agent does not start, and the message names the field
config_refused '{"numvfs": [{"numvfs": 3}]}' 'numvfs[0]: names no PF'
config_refused '{"numvfs": [{"pf": "a/b", "numvfs": 3}]}' 'numvfs[0]: pf: must be a PCI address or a netdev name'
config_refused '{"numvfs": [{"pf": "ib0", "numvfs": -1}]}' 'numvfs[0]: numvfs: must be 0-65535 or "max"'
config_refused '{"numvfs": [{"pf": "ib0", "count": 2}]}' 'count'
config_refused '{"numvfs": {"pf": "ib0"}}' 'numvfs: must be a list'
echo "persist: all checks passed"
