#!/bin/sh
# Tenants on partitions of their own, proven against the real subnet manager: Debian's OpenSM
# on a fabric simulated by ibsim whose port GUIDs are the ones two agents (two simulated
# hosts) hand out (ibsim's netfile sets each HCA's GUIDs: "caguid=" gives the node GUID, its
# port 1 is one more). Tenant A and tenant B attach VFs into their containers through the
# agents, each on a network with its own P_Key; `vfctl partitions write` gathers the members
# into OpenSM's partitions.conf and signals it; each port's P_Key table, read with
# `smpquery -G pkeys`, carries its tenant's key and not the other's. A release takes the key
# away; an unchanged gathering leaves the file alone; a hostile agent's members never reach
# the file, nor the new members of an agent whose GUID range another's overlaps (its
# releases still do); an agent restart, an OpenSM restart and a gathering with one agent down leave the
# tables as they were. Skips (77) only when opensm, ibsim or infiniband-diags are missing.
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
for t in ip jq ibsim opensm smpquery sminfo ibnetdiscover python3; do
	command -v $t >/dev/null || { echo "SKIP: $t missing (opensm ibsim-utils infiniband-diags)"; exit 77; }
done
umad=$(find /usr/lib -path '*/umad2sim/libumad2sim.so' 2>/dev/null | head -1)
[ -n "$umad" ] || { echo "SKIP: libumad2sim.so missing (ibsim-utils)"; exit 77; }
. "${top_srcdir:-.}/tests/api-lib.sh"
export IBSIM_SOCKNAME="vfa-sim-$$" OSM_CACHE_DIR="$tmp/osm-cache" OSM_TMP_DIR="$tmp"
hpid1='' hpid2='' osm_pid='' sim_pid='' fifo_pid='' fake_pid=''
# OpenSM waits on ibsim for ever once ibsim is gone: it goes first, and for good (SIGKILL)
kill_opensm() {
	[ -n "$osm_pid" ] || return 0
	kill "$osm_pid" 2>/dev/null || :
	for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$osm_pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$osm_pid" 2>/dev/null || :
	wait "$osm_pid" 2>/dev/null || :
	osm_pid=''
}
stop_all() {
	kill_opensm
	for p in $hpid1 $hpid2 $sim_pid $fifo_pid $fake_pid; do kill "$p" 2>/dev/null || :; done
	for n in h1 h2 tA tB tA2 tB2; do ip netns del "vfa-$n-$$" 2>/dev/null || :; done
	cleanup
}
trap stop_all EXIT
fail() { echo "FAIL: $*" >&2; for f in "$tmp"/h?.log "$tmp"/osm.log; do [ -f "$f" ] && tail -5 "$f" >&2; done; exit 1; }
sim() { LD_PRELOAD=$umad "$@" 2>/dev/null; }

# Two hosts, each a GUID range of its own; networks with a partition each
range1=0x0002c9030000a101 range2=0x0002c9030000a201
guid_text() { printf '%016x' "$1" | sed 's/../&:/g; s/:$//'; }
for h in 1 2; do
	eval first=\$range$h
	cat >"$tmp/h$h.json" <<JSON
{"pools": [{"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}}],
 "networks": [{"network": "tenant-a", "pool": "ib", "pkey": "0x8001"},
              {"network": "tenant-b", "pool": "ib", "pkey": "0x8002"}],
 "guids": {"first": "$(guid_text "$first")", "count": 4}, "libvirt": false}
JSON
	ip netns add "vfa-h$h-$$"
done
for n in tA tB tA2 tB2; do ip netns add "vfa-$n-$$"; done

# The fabric: a switch, and one single-port HCA per GUID of both ranges
{
	printf 'Switch 12 "sw"\n'
	i=1
	for first in $range1 $range2; do
		for k in 0 1 2 3; do printf '[%d] "h%x"[1]\n' $i $((first + k)); i=$((i + 1)); done
	done
	for first in $range1 $range2; do
		for k in 0 1 2 3; do
			printf '\ncaguid=0x%016x\nHca 1 "h%x"\n[1] "sw"[%d]\n' $((first + k - 1)) \
				$((first + k)) $(( (first == range1 ? 0 : 4) + k + 1))
		done
	done
} >"$tmp/net"
mkfifo "$tmp/console"
sleep 100000 >"$tmp/console" & fifo_pid=$! # ibsim spins at EOF on its console
ibsim -s "$tmp/net" <"$tmp/console" >"$tmp/ibsim.log" 2>&1 & sim_pid=$!
conf=$tmp/partitions.conf
printf '# the operator'"'"'s own lines\nDefault=0x7fff, ipoib : ALL=limited, SELF=full ;\n' >"$conf"
start_opensm() { # once ibsim serves its clients (a discovery through it needs no SM)
	for _ in $(seq 300); do sim ibnetdiscover >/dev/null && break; sleep 0.1; done
	sim ibnetdiscover >/dev/null || fail "ibsim does not answer: $(tail -3 "$tmp/ibsim.log")"
	LD_PRELOAD=$umad opensm -F /dev/null -P "$conf" -f "$tmp/osm.log" >/dev/null 2>&1 &
	osm_pid=$!
	echo "$osm_pid" >"$tmp/opensm.pid"
	for _ in $(seq 120); do
		sim sminfo | grep -q SMINFO_MASTER && return 0
		sleep 0.25
	done
	fail "OpenSM is not master after 30 s"
}
start_opensm
# the fabric's port GUIDs are the agents' ranges
disc=$(sim ibnetdiscover)
for g in $range1 $range2; do
	printf '%s' "$disc" | grep -q "^\[1\]($(printf '%x' "$g"))" || fail "port $g not on the fabric: $disc"
done

start_host() { # N: its agent in its own network namespace, which outlives it
	ip netns exec "vfa-h$1-$$" env VFAGENT_SIM_NETNS=inherit "$b/agent/vfagentd" \
		--simulate "$tmp/sys$1" --config "$tmp/h$1.json" --listen "unix:$tmp/h$1.sock" \
		>>"$tmp/h$1.log" 2>&1 &
	eval "hpid$1=\$!"
	for _ in $(seq 100); do
		curl -sf --unix-socket "$tmp/h$1.sock" http://x/v1/health >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "host $1's agent does not answer"
}
stop_host() { eval "kill \$hpid$1; wait \$hpid$1 || :; hpid$1="; }
on() { sock=$tmp/h$1.sock; }
for h in 1 2; do
	start_host $h
	# stand-ins for the simulated IB VFs' netdevs (a VF without a driver gets one on release)
	for n in ib0v0 ib0v1 ib0v2 ib0v3 ib1v0 ib1v1 ib1v2 ib1v3; do
		ip -n "vfa-h$h-$$" link add "$n" type veth peer name "p-$n"
	done
done

attach() { # HOST NETWORK COUNT TENANT → $id $guids
	on "$1"
	api POST /v1/allocations -d "{\"network\":\"$2\",\"count\":$3,\"owner\":{\"kind\":\"container\",\"netns\":\"vfa-$4-$$\"},\"attach\":{\"netns\":\"vfa-$4-$$\",\"ifname\":\"ib\"}}"
	expect 201
	[ "$(jget .state)" = attached ] || fail "not attached: $body"
	id=$(jget .id) guids=$(jget '.vfs[].guid' | tr -d : | sed 's/^/0x/')
}
attach 1 tenant-a 2 tA; a1=$guids
attach 1 tenant-b 1 tB; b1=$guids b1_id=$id
attach 2 tenant-b 2 tB2; b2=$guids
attach 2 tenant-a 1 tA2; a2=$guids
free_guid=$(printf '0x%016x' $((range1 + 3)))

gather() { # [extra vfctl args]: the gatherer for both hosts; its exit status in $rc
	set +e
	"$b/agent/vfctl/vfctl" partitions write --file "$conf" --socket "$tmp/h1.sock" \
		--socket "$tmp/h2.sock" --opensm-pid "$tmp/opensm.pid" "$@" >"$tmp/gather.out" 2>"$tmp/gather.err"
	rc=$?
	set -e
}
pkeys() { sim smpquery -G pkeys "$1" | grep -o '0x[0-9a-f]\{4\}' | grep -v 0x0000 | sort | tr '\n' ' '; }
table() { for g in $a1 $a2 $b1 $b2 $free_guid; do echo "$g: $(pkeys "$g")"; done; }
wait_keys() { # GUID WANT: its table is WANT within 30 s (OpenSM's sweep after SIGHUP)
	for _ in $(seq 150); do [ "$(pkeys "$1")" = "$2" ] && return 0; sleep 0.2; done
	fail "port $1: P_Keys $(pkeys "$1"), wanted $2"
}

gather
[ "$rc" = 0 ] || fail "gather: exit $rc: $(cat "$tmp/gather.err")"
grep -q ': written, OpenSM signalled' "$tmp/gather.out" || fail "gather: $(cat "$tmp/gather.out")"
head -2 "$conf" | grep -q '^Default=0x7fff, ipoib : ALL=limited, SELF=full ;$' ||
	fail "the operator's lines changed: $(cat "$conf")"
for g in $a1 $a2; do wait_keys "$g" "0x7fff 0x8001 "; done
for g in $b1 $b2; do wait_keys "$g" "0x7fff 0x8002 "; done
wait_keys "$free_guid" "0x7fff "
echo "tables with both tenants:"; table

# gathered again with nothing changed: the file is not touched, OpenSM not signalled
ino=$(stat -c %i "$conf")
gather
[ "$rc" = 0 ] && grep -q ': unchanged$' "$tmp/gather.out" && [ "$(stat -c %i "$conf")" = "$ino" ] ||
	fail "unchanged gathering: exit $rc: $(cat "$tmp/gather.out" "$tmp/gather.err")"

# a hostile agent: a GUID with text after it, the default partition, A's GUID for B's key,
# and host 1's GUID range; none of it is written, each is said, the exit status says so
victim=${a1%%[!0-9a-fx]*}
vtext=$(guid_text "$victim")
cat >"$tmp/fake.py" <<'PY'
import json, os, socketserver, sys
class H(socketserver.StreamRequestHandler):
    def handle(self):
        while self.rfile.readline() not in (b"\r\n", b""): pass
        body = open(sys.argv[2], "rb").read()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
socketserver.UnixStreamServer(sys.argv[1], H).serve_forever()
PY
cat >"$tmp/fake.json" <<JSON
{"host": "evil", "guid_range": {"first": "$(guid_text $range1)", "count": 4}, "members": [
 {"pkey": "0x8003", "membership": "full", "guid": "02:c9:03:00:00:00:0e:01 ; ALL=full", "allocation": "x"},
 {"pkey": "0x8003", "membership": "full", "guid": "02:c9:03:00:00:00:0e:02\n0x1=full ;", "allocation": "x"},
 {"pkey": "0xffff", "membership": "full", "guid": "02:c9:03:00:00:00:0e:03", "allocation": "x"},
 {"pkey": "0x8003 : ALL", "membership": "full", "guid": "02:c9:03:00:00:00:0e:04", "allocation": "x"},
 {"pkey": "0x8002", "membership": "full", "guid": "$vtext", "allocation": "x"},
 {"pkey": "0x8003", "membership": "full", "guid": "02:c9:03:00:00:00:0e:05", "allocation": "x"}]}
JSON
python3 "$tmp/fake.py" "$tmp/fake.sock" "$tmp/fake.json" & fake_pid=$!
for _ in $(seq 300); do [ -S "$tmp/fake.sock" ] && break; sleep 0.1; done
[ -S "$tmp/fake.sock" ] || fail "the hostile agent made no socket $tmp/fake.sock in 5 s"
gather --socket "$tmp/fake.sock"
[ "$rc" = 1 ] || fail "hostile agent: exit $rc"
[ "$(grep -c 'member [0-9] refused' "$tmp/gather.err")" = 4 ] || fail "hostile agent: $(cat "$tmp/gather.err")"
grep -q "GUID $victim claimed for 0x8002 by unix:$tmp/fake.sock" "$tmp/gather.err" ||
	fail "the GUID claimed twice is not reported: $(cat "$tmp/gather.err")"
r1="$(printf '0x%016x' "$range1")+4"
grep -q "unix:$tmp/h1.sock and unix:$tmp/fake.sock hand out GUIDs of one range ($r1, $r1)" \
	"$tmp/gather.err" || fail "one range twice: $(cat "$tmp/gather.err")"
grep -q "sharing a GUID range" "$tmp/gather.out" || fail "one range twice: $(cat "$tmp/gather.out")"
! grep -q "ALL=full\|0x8003\|vfagent_7fff\|vfagent_0003\|0x02c9030000000e05\|$victim" "$conf" ||
	fail "a hostile member reached the file: $(cat "$conf")"
wait_keys "$victim" "0x7fff "

# while host 1 shares its range with another agent, a release there still takes its GUID out
# of the partition, and its new member waits (a GUID two hosts may give two tenants); host 1's
# members listed before stay
on 1; api DELETE "/v1/allocations/$b1_id"; expect 204
attach 1 tenant-b 1 tB; n1=$guids n1_id=$id
gather --socket "$tmp/fake.sock"
[ "$rc" = 1 ] && grep -q "unix:$tmp/h1.sock: 1 of its 3 members not written while its GUID range is shared" \
	"$tmp/gather.err" || fail "host 1 sharing its range: exit $rc: $(cat "$tmp/gather.err")"
! grep -q "$n1\|$b1" "$conf" || fail "host 1's new member written while its range is shared: $(cat "$conf")"
wait_keys "$b1" "0x7fff "
for g in $a2; do wait_keys "$g" "0x7fff 0x8001 "; done
for g in $b2; do wait_keys "$g" "0x7fff 0x8002 "; done
kill "$fake_pid"; fake_pid=
gather
[ "$rc" = 0 ] || fail "gather after the hostile agent: exit $rc: $(cat "$tmp/gather.err")"
wait_keys "$victim" "0x7fff 0x8001 "
wait_keys "$n1" "0x7fff 0x8002 "

# a release takes the key from its port
on 1; api DELETE "/v1/allocations/$n1_id"; expect 204
gather
[ "$rc" = 0 ] || fail "gather after a release: exit $rc: $(cat "$tmp/gather.err")"
wait_keys "$n1" "0x7fff "
before=$(table)

# the agent of host 1 restarted, host 2's down for a gathering, OpenSM restarted: as before
stop_host 1; start_host 1
stop_host 2
gather
[ "$rc" = 1 ] && grep -q "unix:$tmp/h2.sock does not answer" "$tmp/gather.err" &&
	grep -q "unix:$tmp/h2.sock: 3 members as of" "$tmp/gather.err" && grep -q ': unchanged$' "$tmp/gather.out" ||
	fail "host 2 down: exit $rc: $(cat "$tmp/gather.out" "$tmp/gather.err")"
kill_opensm
start_opensm
for g in $a1 $a2; do wait_keys "$g" "0x7fff 0x8001 "; done
for g in $b2; do wait_keys "$g" "0x7fff 0x8002 "; done
start_host 2
gather
[ "$rc" = 0 ] && grep -q ': unchanged$' "$tmp/gather.out" || fail "all back: $(cat "$tmp/gather.out")"
[ "$(table)" = "$before" ] || fail "tables after the restarts: $(table), before: $before"
echo "partitions-opensm: ok"
