#!/bin/sh
# The REST API over a real unix socket, driven by curl and vfctl.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
command -v jq >/dev/null || { echo "jq is needed"; exit 77; }
start_agent

# ---- reads
api GET /v1/host; expect 200
[ "$(jget .vfs)" = 14 ] && [ "$(jget .states.free)" = 14 ] || fail "host: $body"
api GET /v1/pfs; expect 200
[ "$(jget '.pfs | length')" = 4 ] || fail "pfs: $body"
api GET '/v1/vfs?pool=eth'; expect 200
[ "$(jget '.vfs | length')" = 6 ] || fail "vfs?pool=eth: $body"
api GET '/v1/vfs?state=free&pf=0000:3b:00.0'; expect 200
[ "$(jget '.vfs | length')" = 4 ] || fail "vfs?pf=: $body"
api GET /v1/vfs/0000:3b:00.2; expect 200
[ "$(jget .driver)" = vfio-pci ] && [ "$(jget .state)" = free ] && [ "$(jget .pool)" = ib ] || fail "vf: $body"
api GET /v1/pfs/0000:af:00.0; expect 200
[ "$(jget .totalvfs)" = 128 ] || fail "pf: $body"
api GET /v1/pools; expect 200
[ "$(jget '.pools[0].vfs.free')" = 8 ] || fail "pools: $body"
# the whole list (kept rendered between changes): the same VFs, in the same form, as a filtered
# answer (built anew each time)
api GET '/v1/vfs?pool=eth'; eth=$(printf '%s' "$body" | jq -c .vfs)
api GET /v1/vfs; expect 200
[ "$(jget '.vfs | length')" = 14 ] || fail "vfs: $body"
[ "$(printf '%s' "$body" | jq -c '[.vfs[] | select(.pool == "eth")]')" = "$eth" ] || fail "vfs and vfs?pool=eth differ: $body"
printf '%s' "$body" | grep -q '^{"vfs":\[{"pci":"0000:3b:00.1",' || fail "vfs: not compact JSON: $body"
api POST /v1/allocations -d '{"pool":"eth","count":1,"owner":{"kind":"vm","name":"list"}}'; expect 201
lid=$(jget .id) lvf=$(jget '.vfs[0].pci')
api GET /v1/vfs; [ "$(jget ".vfs[] | select(.pci == \"$lvf\") | .allocation")" = "$lid" ] ||
	fail "the list does not show the claim: $body"
api DELETE "/v1/allocations/$lid"; expect 204
api GET /v1/vfs; [ "$(jget ".vfs[] | select(.pci == \"$lvf\") | .state")" = free ] ||
	fail "the list does not show the release: $body"

# ---- bad input: 4xx that name the field, and the agent keeps serving
api GET /v1/vfs/0000:3b:00.9; expect 400
api GET '/v1/vfs/..%2f..%2fetc'; expect 400
api GET /v1/vfs/0000:99:00.1; expect 404
api GET /v1/nope; expect 404
api DELETE /v1/pools; expect 405
api GET '/v1/vfs?state=bogus'; expect 400
api POST /v1/allocations -d '{"pool":"ib","count":1,'; expect 400
printf '%s' "$body" | grep -q '"EINVAL"' || fail "truncated JSON: $body"
api POST /v1/allocations -d '{"pool":"ib","count":"2","owner":{"kind":"vm","name":"a"}}'; expect 400
[ "$(jget .message)" = "count: must be an integer" ] || fail "wrong type: $body"
api POST /v1/allocations -d '{"pool":"ib","colour":"red","owner":{"kind":"vm","name":"a"}}'; expect 400
[ "$(jget .message)" = "colour: unknown field" ] || fail "unknown field: $body"
api POST /v1/allocations -d '{"pool":"ib","owner":{"kind":"vm"}}'; expect 400
jget .message | grep -q '^owner.name' || fail "owner: $body"
api POST /v1/allocations -d '{"pool":"ib","owner":{"kind":"vm","name":"a"},"mac":"01:00:5e:00:00:01"}'; expect 400
api POST /v1/allocations -d '{"pool":"ib","owner":{"kind":"vm","name":"a"},"ip":"10.1.0.5/33"}'; expect 400
printf '{"pool":"\377\376"}' >"$tmp/bad-utf8"
api POST /v1/allocations --data-binary @"$tmp/bad-utf8"; expect 400
head -c 10485760 /dev/zero | tr '\0' 'a' >"$tmp/big"
api POST /v1/allocations --data-binary @"$tmp/big"; expect 413
api POST /v1/allocations -H 'Transfer-Encoding: chunked' --data-binary @"$tmp/big"; expect 413
api POST /v1/allocations/00000000-0000-4000-8000-000000000000/attach -d '{"domain":"one-42"}'; expect 404
api POST /v1/allocations/00000000-0000-4000-8000-000000000000/attach -d '{"domain":"x","netns":"y"}'; expect 400
api POST /v1/allocations/00000000-0000-4000-8000-000000000000/attach -d '{}'; expect 400
api POST /v1/allocations/00000000-0000-4000-8000-000000000000/attach -d '{"netns":"x"}'; expect 404
api GET /v1/health; expect 200

# ---- allocate, idempotency, release
api POST /v1/allocations -H 'Idempotency-Key: k-1' \
	-d '{"pool":"ib","count":2,"owner":{"kind":"vm","name":"one-42"},"ip":"10.1.0.5/16"}'
expect 201
id=$(jget .id)
[ "$(jget '.vfs | length')" = 2 ] && [ "$(jget .settings.ip)" = 10.1.0.5/16 ] || fail "alloc: $body"
api POST /v1/allocations -H 'Idempotency-Key: k-1' \
	-d '{"owner":{"name":"one-42","kind":"vm"},"ip":"10.1.0.5/16","count":2,"pool":"ib"}'
expect 200
[ "$(jget .id)" = "$id" ] || fail "replay gave another allocation"
api POST /v1/allocations -H 'Idempotency-Key: k-1' \
	-d '{"pool":"ib","count":3,"owner":{"kind":"vm","name":"one-42"},"ip":"10.1.0.5/16"}'
expect 409
# the same key with other settings is another request: a 409, not the first one's answer
api POST /v1/allocations -H 'Idempotency-Key: k-1' \
	-d '{"pool":"ib","count":2,"owner":{"kind":"vm","name":"one-42"}}'
expect 409
jget .message | grep -q '^Idempotency-Key: "k-1" was used for another request' || fail "$body"
api POST /v1/allocations -H 'Idempotency-Key: k-1' \
	-d '{"pool":"ib","count":2,"owner":{"kind":"vm","name":"one-42"},"ip":"10.1.0.6/16"}'
expect 409
api GET "/v1/allocations?owner=vm:one-42"; expect 200
[ "$(jget '.allocations | length')" = 1 ] || fail "by owner: $body"
api GET "/v1/allocations/$id"; expect 200
api DELETE "/v1/allocations/$id"; expect 204
api DELETE "/v1/allocations/$id"; expect 404
# a replay once released does not hand back the dead allocation as if it were held
api POST /v1/allocations -H 'Idempotency-Key: k-1' \
	-d '{"pool":"ib","count":2,"owner":{"kind":"vm","name":"one-42"},"ip":"10.1.0.5/16"}'
expect 409
jget .message | grep -q "^Idempotency-Key: \"k-1\" named allocation $id, released since" || fail "$body"

# ---- a MAC is in one live allocation at most: 8 claims at once, one wins, 7 are told who holds it
for i in 1 2 3 4 5 6 7 8; do
	curl -s -o "$tmp/mac.$i" -w '%{http_code}\n' --unix-socket "$sock" -X POST http://x/v1/allocations \
		-d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"dup-$i\"},\"mac\":\"02:00:0A:01:00:99\"}" \
		>"$tmp/mac.$i.code" &
	pids="${pids:-} $!"
done
for pid in $pids; do wait "$pid"; done
[ "$(cat "$tmp"/mac.*.code | sort | uniq -c | tr -s ' ' | tr '\n' ,)" = " 1 201, 7 409," ] ||
	fail "8 claims of one MAC: $(cat "$tmp"/mac.*.code | tr '\n' ' ')"
for i in 1 2 3 4 5 6 7 8; do
	[ "$(cat "$tmp/mac.$i.code")" = 409 ] || continue
	jq -r .message "$tmp/mac.$i" | grep -q '^mac: 02:00:0[aA]:01:00:99 is held by allocation ' ||
		fail "a refused MAC claim does not name the field: $(cat "$tmp/mac.$i")"
done
api GET '/v1/allocations?state=reserved'
[ "$(jget '[.allocations[] | select(.settings.mac != null) | .settings.mac | ascii_downcase] | group_by(.) | map(length) | max')" = 1 ] ||
	fail "two live allocations share a MAC: $body"
# once released, the MAC is free again
for a in $(jget '.allocations[] | select(.settings.mac != null) | .id'); do api DELETE "/v1/allocations/$a"; expect 204; done
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"again"},"mac":"02:00:0a:01:00:99"}'; expect 201
api DELETE "/v1/allocations/$(jget .id)"; expect 204
api GET /v1/pools; [ "$(jget '.pools[0].vfs.free')" = 8 ] || fail "not freed: $body"
# a claim by network: the pool the config maps that bridge to, as a deployment file's NIC names it
[ "$(jget '[.pools[] | select(.name == "ib") | .networks[].bridge] | join(",")')" = sriov_ib0 ] ||
	fail "pools do not list their networks: $body"
api POST /v1/allocations -d '{"network":"sriov_ib0","owner":{"kind":"vm","name":"by-net"}}'; expect 201
[ "$(jget .pool)" = ib ] || fail "network sriov_ib0 is pool ib: $body"
api DELETE "/v1/allocations/$(jget .id)"; expect 204
api POST /v1/allocations -d '{"network":"br0","owner":{"kind":"vm","name":"by-net"}}'; expect 400
jget .message | grep -q '^network: "br0" is not an SR-IOV network' || fail "$body"
api POST /v1/allocations -d '{"pool":"ib","network":"sriov_ib0","owner":{"kind":"vm","name":"x"}}'
expect 400
jget .message | grep -q '^pool: required (or "network"' || fail "$body"
api POST /v1/allocations -d '{"owner":{"kind":"vm","name":"x"}}'; expect 400

# ---- API consistency: unknown query parameters, filters, 405 with Allow, 201 with Location
api GET '/v1/vfs?pol=ib'; expect 400
jget .message | grep -q '^pol: unknown query parameter; /v1/vfs takes pool, state, pf' || fail "typo: $body"
api GET '/v1/pools?pool=ib'; expect 400
jget .message | grep -q 'takes none' || fail "no query: $body"
code=$(curl -s -o /dev/null -D "$tmp/h" -w '%{http_code}' --unix-socket "$sock" -X PUT http://x/v1/allocations)
[ "$code" = 405 ] && grep -qi '^Allow: POST, GET' "$tmp/h" || fail "405 without Allow: $code $(cat "$tmp/h")"
code=$(curl -s -o "$tmp/body" -D "$tmp/h" -w '%{http_code}' --unix-socket "$sock" -X POST \
	-d '{"pool":"ib","owner":{"kind":"vm","name":"loc"}}' http://x/v1/allocations)
loc=$(jq -r .id "$tmp/body")
[ "$code" = 201 ] && grep -qi "^Location: /v1/allocations/$loc" "$tmp/h" || fail "201 without Location: $(cat "$tmp/h")"
api GET "/v1/allocations?pool=ib&state=reserved"
[ "$(jget "[.allocations[] | select(.pool != \"ib\" or .state != \"reserved\")] | length")" = 0 ] &&
	[ "$(jget "[.allocations[].id] | index(\"$loc\")")" != null ] || fail "filters: $body"
api GET "/v1/allocations?pool=eth"; [ "$(jget "[.allocations[].id] | index(\"$loc\")")" = null ] ||
	fail "pool filter: $body"
api GET "/v1/allocations?state=bogus"; expect 400
api DELETE "/v1/allocations/$loc"; expect 204
api DELETE "/v1/allocations/$loc"; expect 404
jget .message | grep -q "released already" || fail "a second DELETE: $body"
api GET "/v1/allocations?state=released&owner=vm:loc"; [ "$(jget '.allocations | length')" = 1 ] ||
	fail "released ones by state: $body"

# ---- GUIDs: the one asked for is the one shown (and set), held like a pool GUID
api POST /v1/allocations -d '{"pool":"ib","owner":{"kind":"vm","name":"g1"},"guid":"02:C9:03:00:00:00:00:01"}'
expect 201; g1=$(jget .id)
[ "$(jget '.vfs[0].guid')" = 02:c9:03:00:00:00:00:01 ] || fail "the GUID asked for is not the one shown: $body"
api POST /v1/allocations -d '{"pool":"ib","owner":{"kind":"vm","name":"g2"},"guid":"02:c9:03:00:00:00:00:01"}'
expect 409
jget .message | grep -q "guid: 02:c9:03:00:00:00:00:01 is held by allocation $g1" || fail "duplicate GUID: $body"
api POST /v1/allocations -d '{"pool":"ib","owner":{"kind":"vm","name":"g3"}}'
expect 201; g3=$(jget .id)
g3_guid=$(jget '.vfs[0].guid') # never used first (issue 38): not the lowest free, never one held
api GET '/v1/allocations?state=reserved'
[ "$g3_guid" != null ] && [ "$(jget "[.allocations[].vfs[] | select(.guid == \"$g3_guid\")] | length")" = 1 ] ||
	fail "the pool handed out a GUID in use ($g3_guid): $body"
api DELETE "/v1/allocations/$g1"; expect 204
api DELETE "/v1/allocations/$g3"; expect 204

# ---- a claim that growing cannot satisfy leaves every PF as it was
numvfs_all() { api GET /v1/pfs; jget '[.pfs[] | "\(.pci)=\(.numvfs)"] | join(" ")'; }
sizes=$(numvfs_all)
api POST /v1/allocations -d '{"pool":"eth","count":60,"owner":{"kind":"container","pid":'"$$"'}}'
expect 409
[ "$(numvfs_all)" = "$sizes" ] || fail "a failed claim resized PFs: $(numvfs_all), were $sizes"
grep -q 'the claim failed; PF 0000:d8:00.0 back to' "$tmp/agent.log" || fail "the shrink is not logged"

# ---- numvfs: dry run, blocked, applied
api PUT /v1/pfs/0000:af:00.0/numvfs -d '{"numvfs":8,"dry_run":true}'; expect 200
[ "$(jget .allowed)" = true ] || fail "dry run: $body"
api POST /v1/allocations -d '{"pool":"eth","count":1,"owner":{"kind":"container","pid":'"$$"'},"placement":"pack"}'
expect 201; eid=$(jget .id)
pf=$(jget '.vfs[0].pf')
api GET /v1/vfs; [ "$(jget ".vfs[] | select(.allocation == \"$eid\") | .state")" = reserved ] ||
	fail "the list does not show the claim: $body"
api PUT "/v1/pfs/$pf/numvfs" -d '{"numvfs":0}'; expect 409
[ "$(jget '.blockers[0].allocation')" = "$eid" ] || fail "blockers: $body"
api PUT /v1/pfs/0000:5e:00.0/numvfs -d '{"numvfs":2}'; expect 409
jget .message | grep -q 'module parameter' || fail "mlx4: $body"
api PUT /v1/pfs/0000:af:00.0/numvfs -d '{"numvfs":999}'; expect 400
[ "$pf" = 0000:d8:00.0 ] || fail "pack should pick the 82599: $pf"
api PUT /v1/pfs/0000:af:00.0/numvfs -d '{"numvfs":8}'; expect 200
api GET '/v1/vfs?pf=0000:af:00.0'; [ "$(jget '.vfs | length')" = 8 ] || fail "grown: $body"
api GET /v1/host; n=$(jget .vfs)
api GET /v1/vfs; [ "$(jget '.vfs | length')" = "$n" ] && [ "$n" -gt 14 ] || fail "the list did not grow ($n): $body"
[ -L "$tmp/sys/bus/pci/devices/0000:af:00.0/virtfn7" ] || fail "no virtfn7 in the simulated sysfs"
api DELETE "/v1/allocations/$eid"; expect 204

# ---- vfctl over the socket
vfctl list | grep -q '^  0000:af:01.7 .* eth free$' || fail "vfctl list"
vfctl pools | grep -q '^eth  *10 ' || fail "vfctl pools: $(vfctl pools)"
out=$(vfctl alloc ib --owner vm:one-7 -n 2)
aid=$(printf '%s' "$out" | sed -n 's/^allocation \([^:]*\):.*/\1/p')
[ -n "$aid" ] || fail "vfctl alloc: $out"
vfctl -o json show 0000:3b:00.1 | jq -e '.state == "reserved"' >/dev/null || fail "vfctl show"
# who holds what: lspci's short form in any case, allocations with their owner, list's OWNER
vfctl -o json show 3B:00.1 | jq -e '.pci == "0000:3b:00.1"' >/dev/null || fail "vfctl show 3B:00.1"
vfctl show "$aid" | grep -q "^$aid  *ib  *reserved  *vm:one-7  *0000:3b:00.1" || fail "vfctl show ID: $(vfctl show "$aid")"
vfctl allocations --pool ib --owner vm:one-7 | grep -q "^$aid " || fail "vfctl allocations: $(vfctl allocations)"
vfctl allocations --pool eth | grep -q "^$aid " && fail "vfctl allocations --pool eth lists an ib allocation"
vfctl list | grep -q '^  0000:3b:00.1 .* ib reserved vm:one-7 -$' || fail "vfctl list: no owner: $(vfctl list | grep 3b:00.1)"
api GET /v1/vfs/0000:3b:00.0; expect 404
jget .message | grep -q '0000:3b:00.0 is a PF, not a VF' || fail "a PF as a VF: $body"
# one VF: the devices of its IOMMU group, and its settings on the PF (the simulated PF's
# netdev is not in this kernel: null, and why)
api GET /v1/vfs/0000:3b:00.1; expect 200
jget '.iommu_group_devices | index("0000:3b:00.1")' | grep -q '^[0-9]' || fail "no IOMMU group devices: $body"
[ "$(jget .pf_settings)" = null ] && jget .pf_settings_error | grep -q 'PF 0000:3b:00.0\|ib0\|No such device' ||
	fail "pf_settings: $body"
vfctl show 3b:00.1 | grep -q '^iommu_group_devices 0000:3b:00.1$' || fail "vfctl show: no IOMMU group: $(vfctl show 3b:00.1)"
api GET /v1/pfs/0000:3b:00.1; expect 404
jget .message | grep -q '0000:3b:00.1 is a VF (of PF 0000:3b:00.0), not a PF' || fail "a VF as a PF: $body"
vfctl numvfs 0000:3b:00.0 8 --dry-run 2>"$tmp/err" && fail "numvfs dry run while held should fail"
grep -q "blocked by allocation $aid" "$tmp/err" || fail "vfctl numvfs blockers: $(cat "$tmp/err")"
vfctl release "$aid" | grep -q released || fail "vfctl release"
# the VFs' settings on the PF, asked on the command line, reach the claim as the API spells them
out=$(vfctl -o json alloc eth --owner vm:one-8 --spoofchk off --trust on --link-state enable \
	--max-tx-rate 100 --min-tx-rate 10)
printf '%s' "$out" | jq -e '.settings | .spoofchk == false and .trust == true and
	.link_state == "enable" and .max_tx_rate == 100 and .min_tx_rate == 10' >/dev/null ||
	fail "vfctl alloc PF settings: $out"
vfctl release "$(printf '%s' "$out" | jq -r .id)" >/dev/null
for bad in "--trust yes" "--link-state up" "--max-tx-rate -1" "--spoofchk"; do
	# shellcheck disable=SC2086 # an option and its value, as typed
	vfctl alloc eth --owner vm:one-8 $bad >"$tmp/out" 2>&1 && fail "vfctl alloc $bad was taken"
	grep -q "^vfctl: --\|requires an argument" "$tmp/out" || fail "vfctl alloc $bad: $(cat "$tmp/out")"
done
set +e
vfctl release "$aid" >"$tmp/out" 2>"$tmp/err"; rc=$?
set -e
[ $rc = 0 ] && grep -q "allocation $aid was released already" "$tmp/out" ||
	fail "second release (idempotent for hooks): rc $rc $(cat "$tmp/out" "$tmp/err")"
set +e
vfctl release 00000000-0000-4000-8000-000000000000 2>"$tmp/err"; rc=$?
set -e
[ $rc = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "release of an unknown id: rc $rc $(cat "$tmp/err")"
VFAGENT_SOCKET=$tmp/none.sock "$b/agent/vfctl/vfctl" pools 2>"$tmp/err" && fail "no agent"
grep -q 'agent not running' "$tmp/err" || fail "no-agent message: $(cat "$tmp/err")"

# ---- events: one line each, JSON lines with -o json, followed through an agent restart
# not through the vfctl function: a backgrounded function is a subshell, and killing it
# would leave the follower running (it follows through restarts) with the test's output
VFAGENT_SOCKET=$sock "$b/agent/vfctl/vfctl" events >"$tmp/events" 2>"$tmp/events.err" &
ev=$!
VFAGENT_SOCKET=$sock "$b/agent/vfctl/vfctl" -o json events >"$tmp/events.json" 2>/dev/null &
evj=$!
# FILE PATTERN N: grep finds PATTERN in FILE within N tenths of a second
seen_within() {
	i=0
	until grep -q "$2" "$1"; do
		i=$((i + 1))
		[ $i -le "$3" ] || return 1
		sleep 0.1
	done
}
# Both followers are listening once each has seen a probe allocation's event: an event before
# a stream is open is not sent on it, so probes come until one is seen (never a fixed wait)
followers_listening() {
	for _ in $(seq 60); do
		probe=$(vfctl alloc eth --owner pid:$$ -o json | jq -r .id)
		seen_within "$tmp/events" "allocation $probe reserved" 20 &&
			seen_within "$tmp/events.json" "\"$probe\"" 20 && probe_seen=1 || probe_seen=
		vfctl release "$probe" >/dev/null
		[ -z "$probe_seen" ] || return 0
	done
	fail "the event followers saw no event: $(cat "$tmp/events.err")"
}
followers_listening
eid=$(vfctl alloc eth --owner pid:$$ -o json | jq -r .id)
seen_within "$tmp/events" "^[0-9-]* [0-9:]* allocation $eid reserved pid:$$ eth 0000:" 300 ||
	fail "no readable allocation event: $(cat "$tmp/events")"
seen_within "$tmp/events.json" "\"$eid\"" 300 || fail "no JSON event for $eid: $(cat "$tmp/events.json")"
jq -e "select(.event == \"allocation\" and .id == \"$eid\" and .state == \"reserved\" and .owner == \"pid:$$\" and (.time | type) == \"number\")" \
	"$tmp/events.json" >/dev/null || fail "no JSON allocation event: $(cat "$tmp/events.json")"
stop_agent
start_agent
followers_listening
vfctl release "$eid" >/dev/null
seen_within "$tmp/events" "allocation $eid released pid:$$" 300 ||
	fail "no event after the agent restarted: $(cat "$tmp/events")"
kill $ev $evj 2>/dev/null; wait $ev $evj 2>/dev/null || true
[ "$(grep -c "allocation $eid reserved" "$tmp/events")" = 1 ] || fail "an event came twice: $(cat "$tmp/events")"
grep -q 'the agent closed the stream; waiting for it' "$tmp/events.err" || fail "the restart is not said"

# ---- metrics: Prometheus text that promtool accepts (the agent restarted above: a claim,
# a release and a GET of the host first)
api POST /v1/allocations -d '{"pool":"eth","owner":{"kind":"vm","name":"m"}}'; expect 201
api DELETE "/v1/allocations/$(jget .id)"; expect 204
api GET /v1/host; expect 200
api GET /metrics; expect 200
printf '%s\n' "$body" | grep -q '^vfagent_vfs{pool="eth",state="free"} ' || fail "metrics: no VF gauge"
printf '%s\n' "$body" | grep -q '^vfagent_http_requests_total{route="POST /v1/allocations",code="201"} ' ||
	fail "metrics: no request counter"
printf '%s\n' "$body" | grep -q '^vfagent_http_request_duration_seconds_bucket{route="GET /v1/host",le="+Inf"} ' ||
	fail "metrics: no latency histogram"
# every metric is documented in the man page
for m in $(printf '%s\n' "$body" | sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p'); do
	grep -q "^\.B $m\$" "${top_srcdir:-.}/contrib/vfagentd.8.in" || fail "metric $m is not in vfagentd(8)"
done
# each method of a pattern is its own route: the 204s of DELETE are not GET's
printf '%s\n' "$body" | grep -q '^vfagent_http_requests_total{route="DELETE /v1/allocations/{id}",code="204"} ' ||
	fail "metrics: DELETE's 204s are not under DELETE"
printf '%s\n' "$body" | grep -q '^vfagent_http_requests_total{route="GET /v1/allocations/{id}",code="204"}' &&
	fail "metrics: DELETE's 204s are counted under GET"
if command -v promtool >/dev/null; then
	printf '%s\n' "$body" | promtool check metrics || fail "promtool rejects /metrics"
fi

# ---- SIGHUP with a broken config keeps the running one
stop_agent
printf '{"pools":[{"name":"ib","selector":{"vendors":["15b3"]}}]}' >"$tmp/ok.json"
start_agent --config "$tmp/ok.json"
printf '{"pools":[{"name":"ib","selector":{"vendor":["15b3"]}}]}' >"$tmp/ok.json"
hup_done
grep -q 'unknown key \\"vendor\\"\|unknown key "vendor"' "$tmp/agent.log" || fail "reload error not logged"
api GET /v1/pools; [ "$(jget '.pools | length')" = 1 ] || fail "pools after bad reload: $body"
stop_agent
grep -q 'stopped' "$tmp/agent.log" || fail "no clean stop"

# ---- the log: a read that succeeded is a debug line, a change or a failure an info line
grep -q '^<6>GET /v1/pools 200$' "$tmp/agent.log" && fail "a GET that succeeded is logged at info"
grep -q '^<6>GET /v1/vfs/0000:99:00.1 404 ' "$tmp/agent.log" || fail "a GET that failed is not logged"
grep -q '^<6>POST /v1/allocations 201$' "$tmp/agent.log" || fail "a claim is not logged"
: >"$tmp/agent.log"
start_agent --log-level debug
api GET /v1/pools; expect 200
grep -q '^<7>GET /v1/pools 200$' "$tmp/agent.log" || fail "--log-level debug: no line for a GET"
stop_agent
# ---- libvirt is loaded with the first connection; "libvirt": false never loads it
maps_libvirt() { grep -c '/libvirt\.so' "/proc/$agent_pid/maps" || true; }
start_agent
[ "$(maps_libvirt)" -gt 0 ] || fail "the simulated host's agent has not loaded libvirt"
stop_agent
printf '{"pools":[{"name":"eth","selector":{"vendors":["8086"]}}],"libvirt":false}' >"$tmp/novm.json"
start_agent --config "$tmp/novm.json"
[ "$(maps_libvirt)" = 0 ] || fail "\"libvirt\": false: libvirt.so is mapped"
grep -q 'libvirt: off' "$tmp/agent.log" || fail "\"libvirt\": false is not logged"
api GET /v1/host; expect 200
[ "$(jget '.libvirt.uri')" = null ] && [ "$(jget '.libvirt.connected')" = false ] ||
	fail "GET /v1/host without libvirt: $body"
api GET /v1/host/checks; expect 200
jget '.checks[] | select(.check == "libvirt") | .status' | grep -qx skip ||
	fail "host checks without libvirt: $body"
api POST /v1/allocations -d '{"pool":"eth","count":1,"owner":{"kind":"vm","name":"one-7"}}'; expect 201
id=$(jget .id)
api POST "/v1/allocations/$id/attach" -d '{"domain":"one-7"}'; expect 503
printf '%s' "$body" | grep -q 'runs without libvirt' || fail "attach without libvirt: $body"
[ "$(maps_libvirt)" = 0 ] || fail "\"libvirt\": false: libvirt.so was loaded by a request"
stop_agent
rc=0; "$b/agent/vfagentd" --simulate "$tmp/sys" --log-level verbose >"$tmp/bad.log" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q 'log-level: "verbose" is not' "$tmp/bad.log" ||
	fail "--log-level verbose: exit $rc: $(cat "$tmp/bad.log")"
echo "api: all checks passed"
