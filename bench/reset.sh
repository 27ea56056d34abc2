#!/bin/sh
# bench/reset: a release that resets its VF (pool "reset": "flr": off the
# driver, the reset, probed again, checked) against a release that does not
# ("reset": "none"), same card, same agent, same run, pair by pair: claim
# one VF of each pool, time each DELETE with curl. Prints the medians and
# the ratio. On the simulated host the reset is sysfs writes only; a real
# FLR adds the device's own 100 ms (PCIe's wait after a function reset).
set -eu
b=${top_builddir:-$(dirname "$0")/..}
command -v curl >/dev/null || { echo "bench/reset: curl is missing"; exit 77; }
N=${BENCH_ROUNDS:-100}
tmp=$(mktemp -d /tmp/vfagent-bench-reset-XXXXXX)
sim=$(sh "$(dirname "$0")/sim-dir.sh" reset) # the simulated sysfs: see sim-dir.sh
agent=
cleanup() { [ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null; rm -rf "$tmp" "$sim"; }
trap cleanup EXIT
cat >"$tmp/config.json" <<'JSON'
{ "pools": [ { "name": "flr", "selector": { "pci_addresses": ["0000:af:01.0", "0000:af:01.1"] } },
             { "name": "none", "selector": { "pci_addresses": ["0000:af:01.2", "0000:af:01.3"] },
               "reset": "none" } ] }
JSON
"$b/agent/vfagentd" --simulate "$sim/sys" --state-dir "$tmp/state" --config "$tmp/config.json" --listen "unix:$tmp/s" \
	>"$tmp/agent.log" 2>&1 &
agent=$!
for _ in $(seq 100); do curl -sf --unix-socket "$tmp/s" http://x/v1/health >/dev/null && break; sleep 0.1; done
release_ms() { # POOL: claim one VF, time its release
	id=$(curl -sf --unix-socket "$tmp/s" -X POST http://x/v1/allocations \
		-d "{\"pool\":\"$1\",\"count\":1,\"owner\":{\"kind\":\"vm\",\"name\":\"bench\"}}" |
		sed 's/.*"id":"\([^"]*\)".*/\1/')
	curl -sf --unix-socket "$tmp/s" -X DELETE -o /dev/null -w '%{time_total}\n' "http://x/v1/allocations/$id" |
		awk '{printf "%.3f\n", $1 * 1000}'
}
for _ in $(seq "$N"); do
	release_ms flr >>"$tmp/flr"
	release_ms none >>"$tmp/none"
done
median() { sort -n "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
resets=$(wc -l <"$sim/sys/sim-resets")
f=$(median "$tmp/flr") n=$(median "$tmp/none")
echo "bench/reset: $N pairs; $resets resets made (wanted $N)"
echo "release with reset:    $f ms (median)"
echo "release without reset: $n ms (median)"
awk -v f="$f" -v n="$n" 'BEGIN {printf "ratio: %.2f\n", f / n}'
