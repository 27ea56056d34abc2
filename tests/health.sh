#!/bin/sh
# Health at claim time on the simulated host: a pool's "health" policy keeps
# back the VFs that fail it (unavailable, "unhealthy: …"), shown in /v1/vfs,
# vfctl show and vfctl doctor, never claimed, and offered again once they pass.
set -eu
b=${top_builddir:-.}
. "${top_srcdir:-.}/tests/api-lib.sh"

"$b/agent/vfagentd" --simulate "$tmp/sys" --once 2>"$tmp/agent.log"
cat >"$tmp/vfagent.json" <<'JSON'
{ "pools": [ { "name": "e810", "selector": { "devices": ["1889"] },
               "health": { "drivers": ["iavf"], "pf_link": "up", "iommu_group": "pool" } } ] }
JSON
dev=$tmp/sys/bus/pci/devices
echo up >"$tmp/sys/class/net/ens5f0/operstate"
start_agent --config "$tmp/vfagent.json"
hup() { hup_done; }
state_of() { api GET "/v1/vfs/$1"; jget .state; }
reason_of() { api GET "/v1/vfs/$1"; jget .reason; }
free_count() { api GET /v1/pools; jget '.pools[0].vfs.free // 0'; }
[ "$(free_count)" = 4 ] || fail "healthy pool: $(free_count) free"
api GET /v1/pools
[ "$(printf '%s' "$body" | jq -c '.pools[0].health')" = '{"drivers":["iavf"],"pf_link":"up","iommu_group":"pool"}' ] ||
	fail "health policy in /v1/pools: $body"

# a VF off its driver: kept back with the reason, in every view
vf=0000:af:01.1
rm "$dev/$vf/driver"
hup
[ "$(state_of $vf)" = unavailable ] || fail "driverless VF is $(state_of $vf)"
[ "$(reason_of $vf)" = "unhealthy: driver none, not one of the pool's" ] || fail "reason: $(reason_of $vf)"
[ "$(free_count)" = 3 ] || fail "free after one unhealthy: $(free_count)"
vfctl show $vf | grep -q 'unhealthy: driver none' || fail "vfctl show: $(vfctl show $vf)"
set +e; vfctl doctor >"$tmp/doctor"; set -e
grep -q "^WARN  pool e810 .*4 VFs, 1 not offered by its health policy (first: $vf: unhealthy: driver none" \
	"$tmp/doctor" || fail "doctor: $(cat "$tmp/doctor")"
api GET /metrics
printf '%s' "$body" | grep -q '^vfagent_vfs_unhealthy{pool="e810"} 1$' || fail "metric: $(printf '%s' "$body" | grep unhealthy)"
api POST /v1/allocations -d '{"pool":"e810","count":4,"owner":{"kind":"vm","name":"v"}}'
[ "$code" != 201 ] || fail "a claim of 4 got the unhealthy VF: $body"
api POST /v1/allocations -d '{"pool":"e810","count":3,"owner":{"kind":"vm","name":"v"}}'
expect 201
printf '%s' "$body" | grep -q "$vf" && fail "the unhealthy VF was claimed"
api DELETE "/v1/allocations/$(jget .id)"
expect 204
ln -s ../../../../bus/pci/drivers/iavf "$dev/$vf/driver" 2>/dev/null ||
	ln -s "$(readlink -f "$dev/0000:af:01.0/driver")" "$dev/$vf/driver"
hup
[ "$(state_of $vf)" = free ] || fail "healthy again but $(state_of $vf): $(reason_of $vf)"

# the PF's link down: all of its VFs kept back
echo down >"$tmp/sys/class/net/ens5f0/operstate"
hup
[ "$(free_count)" = 0 ] || fail "PF down, $(free_count) free"
[ "$(reason_of $vf)" = "unhealthy: PF 0000:af:00.0 link down" ] || fail "link reason: $(reason_of $vf)"
echo up >"$tmp/sys/class/net/ens5f0/operstate"
hup
[ "$(free_count)" = 4 ] || fail "PF up again, $(free_count) free"

# an IOMMU group shared with a device outside the pool; a VF of the same pool is fine
grp=$(readlink -f "$dev/$vf/iommu_group")
ln -s "$(readlink -f "$dev/0000:af:01.0")" "$grp/devices/0000:af:01.0"
hup
[ "$(state_of $vf)" = free ] || fail "group shared within the pool: $(reason_of $vf)"
ln -s "$(readlink -f "$dev/0000:02:00.0")" "$grp/devices/0000:02:00.0"
hup
[ "$(reason_of $vf)" = "unhealthy: IOMMU group shared with 0000:02:00.0" ] || fail "group: $(reason_of $vf)"
rm "$grp/devices/0000:02:00.0" "$grp/devices/0000:af:01.0"
hup
[ "$(state_of $vf)" = free ] || fail "group alone again: $(reason_of $vf)"
stop_agent

# bad policies: the agent does not start, and says which field
config_refused '{"pools":[{"name":"p","selector":{"vendors":["8086"]},"health":{"pf_link":"down"}}]}' 'pools[0].health: pf_link: must be one of any, up'
config_refused '{"pools":[{"name":"p","selector":{"vendors":["8086"]},"health":{"drivers":["Bad Driver"]}}]}' 'pools[0].health: drivers[0]: not a driver name'
config_refused '{"pools":[{"name":"p","selector":{"vendors":["8086"]},"health":{"speed":1}}]}' 'speed'
config_refused '{"pools":[{"name":"p","selector":{"vendors":["8086"]},"reset":"warm"}]}' 'pools[0].reset: must be "flr" or "none"'
config_refused '{"repair":{"retry_seconds":-1}}' 'repair: retry_seconds: must be an integer in [0, 86400]'
config_refused '{"repair":{"retry":5}}' 'repair: unknown key "retry"'
echo "health: all checks passed"
