#!/bin/sh
# A VF attached to and detached from a domain's persistent config through the
# agent (HTTP, ledger intents, libvirt API) against `virsh attach-device
# --config` and `detach-device --config` of the same device XML, same run,
# same private libvirtd. Both sides: one process and one connection for all
# N pairs (curl --next; one virsh with N commands), in alternating rounds,
# and one process per request (what a hook pays). Needs root, libvirtd and qemu.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
b=${top_builddir:-$top/build}
n=${BENCH_VM_PAIRS:-50}
. "$top/tests/libvirtd-lib.sh"
libvirtd_can_run || { echo "bench/vm: needs root, libvirtd and qemu"; exit 0; }
tmp=$(mktemp -d /tmp/vfagent-bench-vm-XXXXXX)
sim=$(sh "$(dirname "$0")/sim-dir.sh" vm) # the simulated sysfs: see sim-dir.sh
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null
	libvirtd_stop
	rm -rf "$tmp" "$sim"
}
trap cleanup EXIT
libvirtd_start
libvirtd_define_domain
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "libvirt": {"uri": "$LV_URI"}}
JSON
"$b/agent/vfagentd" --simulate "$sim/sys" --state-dir "$tmp/state" --config "$tmp/vfagent.json" --listen "unix:$tmp/s" \
	>"$tmp/agent.log" 2>&1 &
agent=$!
until curl -sf --unix-socket "$tmp/s" http://x/v1/health >/dev/null; do sleep 0.1; done
id=$(curl -s --unix-socket "$tmp/s" -X POST http://x/v1/allocations \
	-d '{"pool":"eth","count":1,"owner":{"kind":"vm","name":"vfagent-test"},"mac":"02:00:c0:a8:02:07","vlan":120}' |
	jq -r .id)
cat >"$tmp/dev.xml" <<XML
<interface type='hostdev' managed='yes'><mac address='02:00:c0:a8:02:08'/><source><address type='pci' domain='0x0000' bus='0xaf' slot='0x01' function='0x1'/></source><vlan><tag id='120'/></vlan></interface>
XML
now_ms() { date +%s%N | awk '{printf "%.3f", $1 / 1e6}'; }
set --
for i in $(seq "$n"); do
	[ "$i" = 1 ] || set -- "$@" --next
	set -- "$@" --unix-socket "$tmp/s" -o /dev/null -X POST -d '{"domain":"vfagent-test","config":true}' \
		"http://x/v1/allocations/$id/attach" --next \
		--unix-socket "$tmp/s" -o /dev/null -X POST "http://x/v1/allocations/$id/detach"
done
cmds=""
for _ in $(seq "$n"); do
	cmds="$cmds attach-device vfagent-test $tmp/dev.xml --config; detach-device vfagent-test $tmp/dev.xml --config;"
done
curl -sf "$@" >/dev/null # warm both up
virsh -q -c "$LV_URI" "$cmds" >/dev/null
# rounds alternate, so a slow minute of the machine falls on both sides
rounds=${BENCH_VM_ROUNDS:-5}
: >"$tmp/rounds"
for _ in $(seq "$rounds"); do
	t0=$(now_ms); curl -sf "$@"; t1=$(now_ms)
	virsh -q -c "$LV_URI" "$cmds" >/dev/null; t2=$(now_ms)
	echo "$t0 $t1 $t2" >>"$tmp/rounds"
done
t2=$(now_ms)
for _ in $(seq 10); do
	curl -sf --unix-socket "$tmp/s" -o /dev/null -X POST -d '{"domain":"vfagent-test","config":true}' \
		"http://x/v1/allocations/$id/attach"
	curl -sf --unix-socket "$tmp/s" -o /dev/null -X POST "http://x/v1/allocations/$id/detach"
done
t3=$(now_ms)
for _ in $(seq 10); do
	virsh -q -c "$LV_URI" attach-device vfagent-test "$tmp/dev.xml" --config >/dev/null
	virsh -q -c "$LV_URI" detach-device vfagent-test "$tmp/dev.xml" --config >/dev/null
done
t4=$(now_ms)
[ "$(virsh -q -c "$LV_URI" dumpxml --inactive vfagent-test | grep -c hostdev)" = 0 ] ||
	{ echo "bench/vm: a device was left in the config"; exit 1; }
# the median round by its ratio
sort_rounds=$(awk '{printf "%.6f %.3f %.3f\n", ($2 - $1) / ($3 - $2), $2 - $1, $3 - $2}' "$tmp/rounds" |
	sort -n | awk -v m="$(( (rounds + 1) / 2 ))" 'NR == m {print $2, $3}
		{r = r sprintf(" %.2f", $1)} END {print r}')
median=$(echo "$sort_rounds" | head -1)
all=$(echo "$sort_rounds" | tail -1)
awk -v n="$n" -v r="$rounds" -v a="${median% *}" -v v="${median#* }" -v all="$all" \
	-v c="$t2" -v d="$t3" -v e="$t4" 'BEGIN {
	agent = a / n; virsh = v / n; agent1 = (d - c) / 10; virsh1 = (e - d) / 10
	printf "bench/vm: attach+detach to the config, ms per pair (%d pairs, one connection;\n", n
	printf "  the median of %d alternating rounds, ratios%s):\n", r, all
	printf "  agent %.2f  virsh %.2f  ratio %.2f\n", agent, virsh, agent / virsh
	printf "bench/vm: one process per request (10 pairs):\n"
	printf "  agent (curl) %.2f  virsh %.2f  ratio %.2f\n", agent1, virsh1, agent1 / virsh1
}'
