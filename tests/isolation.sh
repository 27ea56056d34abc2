#!/bin/sh
# Simulated hosts never touch the links of the namespace they are started in,
# and two run side by side. Two vfagentd --simulate are started here as an
# operator's demo beside a test would be (no VFAGENT_SIM_NETNS): each must make
# a network namespace of its own before it acts, take stand-in links of the
# same name (ens5f0v0) there, and attach and release its own into a container
# while the other does the same; this namespace's links are the same at the end.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
for t in ip jq nsenter curl; do command -v $t >/dev/null || { echo "needs $t"; exit 77; }; done
unset VFAGENT_SIM_NETNS
links() { ip -o link show | sed 's/^[0-9]*: //; s/[@: ].*//' | sort | tr '\n' ' '; }
before=$(links)
teardown() {
	for h in 1 2; do
		[ -f "$tmp/h$h.pid" ] && kill "$(cat "$tmp/h$h.pid")" 2>/dev/null
		ip netns del "vfa-iso$h-$$" 2>/dev/null
	done
	wait 2>/dev/null
	cleanup
}
trap teardown EXIT

# sim_host N: one simulated host and a container of its own
sim_host() {
	n=$1 s=$tmp/h$1.sock ns=vfa-iso$1-$$
	"$b/agent/vfagentd" --simulate "$tmp/h$n" --listen "unix:$s" >>"$tmp/h$n.log" 2>&1 &
	pid=$!
	echo "$pid" >"$tmp/h$n.pid"
	for _ in $(seq 100); do
		curl -sf --unix-socket "$s" http://x/v1/health >/dev/null 2>&1 && break
		sleep 0.1
	done
	# checked before any link is made through it
	[ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ] ||
		{ echo "host $n: the simulated agent stayed in the namespace it was started in"; return 1; }
	at() { nsenter --net="/proc/$pid/ns/net" "$@"; }
	at ip link add ens5f0v0 type veth peer name "peer$n"
	ip netns add "$ns"
	c() { curl -s --unix-socket "$s" -X "$1" "http://x$2" -d "$3"; }
	id=$(c POST /v1/allocations "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}" | jq -r .id)
	[ -n "$id" ] && [ "$id" != null ] || { echo "host $n: claim failed: $(tail -3 "$tmp/h$n.log")"; return 1; }
	r=$(c POST "/v1/allocations/$id/attach" "{\"netns\":\"$ns\",\"ifname\":\"net$n\"}")
	# the container got this host's own stand-in: the other end of net$n is peer$n
	want=$(at ip -j link show "peer$n" | jq -r '.[0].ifindex')
	got=$(ip -n "$ns" -j link show "net$n" 2>/dev/null | jq -r '.[0].link_index // empty')
	[ -n "$got" ] && [ "$got" = "$want" ] ||
		{ echo "host $n: net$n in its container is not its stand-in ($got, not $want): $r"; return 1; }
	code=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$s" -X DELETE "http://x/v1/allocations/$id")
	[ "$code" = 204 ] || { echo "host $n: release answered $code"; return 1; }
	[ "$(at ip -j link show ens5f0v0 | jq -r '.[0].link')" = "peer$n" ] ||
		{ echo "host $n: its stand-in did not come back to its host"; return 1; }
	echo "host $n: attached and released its own ens5f0v0"
}

sim_host 1 >"$tmp/r1" 2>&1 &
w1=$!
sim_host 2 >"$tmp/r2" 2>&1 &
w2=$!
rc1=0 rc2=0
wait $w1 || rc1=$?
wait $w2 || rc2=$?
cat "$tmp/r1" "$tmp/r2"
[ $rc1 = 0 ] && [ $rc2 = 0 ] || fail "two simulated hosts side by side: $(tail -n 3 "$tmp/h1.log" "$tmp/h2.log")"
after=$(links)
[ "$after" = "$before" ] || fail "the starting namespace's links changed: before: $before; after: $after"
echo "PASS: two simulated hosts side by side, the starting namespace's links ($before) untouched"
