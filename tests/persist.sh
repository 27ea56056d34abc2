#!/bin/sh
# Desired VF counts: the config's "numvfs" rules are applied at start (before
# reconcile) and on SIGHUP, through the planner (a PF whose VFs are held stays
# as it is). `vfctl numvfs --persist` keeps a count in the agent's state (the
# ledger), before the file's rules, and never writes the file; `--forget` drops it. A reboot is
# played by the simulated kernel putting sriov_numvfs back to 0.
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
hup_done # its numvfs rules applied (api-lib.sh)
grep -q "numvfs: PF $pf stays at [0-9]* VFs, the config wants 2: .*allocation" "$tmp/agent.log" ||
	fail "held PF: $(grep numvfs "$tmp/agent.log")"
[ "$(numvfs "$pf")" != 2 ] || fail "a held PF was resized"
"$b/agent/vfctl/vfctl" --socket "$sock" doctor >"$tmp/doctor" || true
grep -q "^WARN  numvfs $pf  *[0-9]* VFs, the config wants 2" "$tmp/doctor" ||
	fail "doctor: $(cat "$tmp/doctor")"
api DELETE "/v1/allocations/$id"
expect 204
hup_done
want "$pf" 2
want 0000:d8:00.0 2

# vfctl numvfs --persist: applied, kept in the agent's state (the ledger), the config file
# read and never written; the persisted count comes before the file's rules
sum=$(sha256sum <"$tmp/vfagent.json")
vfctl numvfs 0000:d8:00.0 4 --persist >"$tmp/out" || fail "persist: $(cat "$tmp/out")"
grep -q 'kept in the agent.s state' "$tmp/out" || fail "persist output: $(cat "$tmp/out")"
[ "$(sha256sum <"$tmp/vfagent.json")" = "$sum" ] || fail "persist wrote the config: $(cat "$tmp/vfagent.json")"
[ "$(stat -c %a "$tmp/vfagent.json")" = 640 ] || fail "config mode changed"
vfctl numvfs 0000:d8:00.0 5 --persist >/dev/null
ls "$tmp"/vfagent.json.* 2>/dev/null && fail "a temporary file was left"
[ "$(sha256sum <"$tmp/vfagent.json")" = "$sum" ] || fail "a second persist wrote the config"
# SIGHUP re-reads the file; the persisted count still wins over its ixgbe rule (2)
hup_done
want 0000:d8:00.0 5
stop_agent
reboot
start_agent --config "$tmp/vfagent.json"
want 0000:d8:00.0 5

# vfctl numvfs --forget: the persisted count dropped, the PF keeps its VFs until the next
# start, where the file's ixgbe rule (2) decides again; a second forget has nothing to drop
vfctl numvfs 0000:d8:00.0 --forget >"$tmp/out" || fail "forget: $(cat "$tmp/out")"
grep -q "0000:d8:00.0: its persisted count dropped" "$tmp/out" || fail "forget said: $(cat "$tmp/out")"
want 0000:d8:00.0 5
vfctl numvfs 0000:d8:00.0 --forget >"$tmp/out" || fail "a second forget: $(cat "$tmp/out")"
grep -q "no count was persisted" "$tmp/out" || fail "a second forget said: $(cat "$tmp/out")"
set +e; vfctl numvfs 0000:d8:00.0 3 --forget 2>"$tmp/err"; rc=$?; set -e
[ "$rc" = 2 ] || fail "numvfs PF N --forget: exit $rc, wanted 2 (usage): $(cat "$tmp/err")"
[ "$(sha256sum <"$tmp/vfagent.json")" = "$sum" ] || fail "forget wrote the config"
stop_agent
reboot
start_agent --config "$tmp/vfagent.json"
want 0000:d8:00.0 2
stop_agent

# two persists at once, 40 rounds: both counts are kept, every time (one config, one ledger)
start_agent --config "$tmp/vfagent.json"
lost=0
for i in $(seq 40); do
	a=$((i % 7 + 1)) d=$((i % 5 + 1))
	vfctl numvfs 0000:af:00.0 "$a" --persist >/dev/null 2>"$tmp/err.a" & p1=$!
	vfctl numvfs 0000:d8:00.0 "$d" --persist >/dev/null 2>"$tmp/err.d" & p2=$!
	wait "$p1" || fail "round $i: $(cat "$tmp/err.a")"
	wait "$p2" || fail "round $i: $(cat "$tmp/err.d")"
	stop_agent
	reboot
	start_agent --config "$tmp/vfagent.json"
	[ "$(numvfs 0000:af:00.0)" = "$a" ] && [ "$(numvfs 0000:d8:00.0)" = "$d" ] || lost=$((lost + 1))
done
[ "$lost" = 0 ] || fail "two persists at once lost a count in $lost of 40 rounds"
[ "$(sha256sum <"$tmp/vfagent.json")" = "$sum" ] || fail "the persists wrote the config"
stop_agent

# a symlinked config (configuration management's way) stays a symlink, and unchanged
mkdir "$tmp/etc"
mv "$tmp/vfagent.json" "$tmp/etc/vfagent.json.managed"
ln -s etc/vfagent.json.managed "$tmp/vfagent.json"
start_agent --config "$tmp/vfagent.json"
vfctl numvfs 0000:d8:00.0 3 --persist >/dev/null || fail "persist through a symlinked config"
want 0000:d8:00.0 3
[ -L "$tmp/vfagent.json" ] && [ "$(readlink "$tmp/vfagent.json")" = etc/vfagent.json.managed ] ||
	fail "the config symlink was replaced"
[ "$(sha256sum <"$tmp/etc/vfagent.json.managed")" = "$sum" ] || fail "the symlink's target was written"
stop_agent
reboot
start_agent --config "$tmp/vfagent.json"
want 0000:d8:00.0 3

# refusals
api PUT /v1/pfs/0000:d8:00.0/numvfs -d '{"numvfs": 3, "persist": true, "dry_run": true}'
expect 400
api PUT /v1/pfs/0000:d8:00.0/numvfs -d '{"numvfs": 3, "persist": "yes"}'
expect 400
stop_agent
# the simulated host's built-in config has no file: the count is kept all the same
start_agent
api PUT /v1/pfs/0000:d8:00.0/numvfs -d '{"numvfs": 2, "persist": true}'
expect 200
[ "$(jget .persisted)" = true ] || fail "persist without a file: $body"
stop_agent
reboot
start_agent
want 0000:d8:00.0 2
stop_agent

# bad rules: the agent does not start, and the message names the field
config_refused '{"numvfs": [{"numvfs": 3}]}' 'numvfs[0]: names no PF'
config_refused '{"numvfs": [{"pf": "a/b", "numvfs": 3}]}' 'numvfs[0]: pf: must be a PCI address or a netdev name'
config_refused '{"numvfs": [{"pf": "ib0", "numvfs": -1}]}' 'numvfs[0]: numvfs: must be 0-65535 or "max"'
config_refused '{"numvfs": [{"pf": "ib0", "count": 2}]}' 'count'
config_refused '{"numvfs": {"pf": "ib0"}}' 'numvfs: must be a list'
echo "persist: all checks passed"
