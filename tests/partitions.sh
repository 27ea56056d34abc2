#!/bin/sh
# InfiniBand partitions on the agent's side: a claim (or the config's network) carries a
# P_Key and a membership, as ib-sriov-cni's "pkey" spells it; bad values and the default
# partition are refused naming the field; GET /v1/partitions lists one member per IB VF
# GUID of a live allocation with a key, and a "partitions" event follows a change. The
# subnet manager's side (vfctl partitions write, OpenSM) is tests/partitions-opensm.sh.
# The host's side on mlx4: an attached VF's P_Key index 0 maps onto the port's index of its
# tenant's key once the key is there ("partition": pending, then applied), and back at
# release (the simulated host's iov/ files, as the kernel's mlx4 sysfs.c has them).
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
command -v jq >/dev/null && command -v ip >/dev/null || exit 77
. "${top_srcdir:-.}/tests/api-lib.sh"
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}},
           {"name": "eth", "selector": {"vendors": ["8086"]}}],
 "networks": [{"network": "ib-a", "pool": "ib", "pkey": "0x8001"},
              {"bridge": "sriov_ib_b", "pool": "ib", "pkey": 2, "membership": "limited"}],
 "guids": {"first": "02:c9:03:00:00:00:00:01", "count": 16}, "libvirt": false}
JSON
config_refused '{"pools":[{"name":"ib","selector":{"is_rdma":true}}],"networks":[{"network":"n","pool":"ib","pkey":"0xffff"}]}' \
	'networks[0].pkey: the default partition'
start_agent --config "$tmp/vfagent.json"
owner='"owner":{"kind":"vm","name":"one-7"}'
claim_refused() { # JSON TEXT: 400 naming the field
	api POST /v1/allocations -d "{$owner,$1}"
	expect 400
	printf '%s' "$body" | jq -r .message | grep -qF "$2" || fail "$1: $body, wanted $2"
}
claim_refused '"pool":"ib","pkey":"0x7fff"' 'pkey: the default partition'
claim_refused '"pool":"ib","pkey":65535' 'pkey: the default partition'
claim_refused '"pool":"ib","pkey":"0x8000"' 'pkey: 0x0000 and 0x8000 are no partition'
claim_refused '"pool":"ib","pkey":"0x8001\n0x2"' 'pkey: must be a P_Key'
claim_refused '"pool":"ib","pkey":"0x8001 : ALL=full ;"' 'pkey: must be a P_Key'
claim_refused '"pool":"ib","pkey":true' 'pkey: must be a P_Key'
claim_refused '"pool":"ib","pkey":"0x8001","membership":"both"' 'membership: must be "full" or "limited"'
claim_refused '"pool":"ib","membership":"full"' 'membership: needs a "pkey"'
claim_refused '"pool":"ib","pkey":"0x8001","membership":"limited"' 'membership: "limited" contradicts'
claim_refused '"network":"ib-a","pkey":"0x8003"' 'pkey: 0x8003, but network "ib-a" is partition 0x8001'
api GET /v1/allocations; [ "$(jget '.allocations | length')" = 0 ] || fail "a refused claim claimed: $body"

# the network's key; the claim's own; the same key as the network's is fine
api POST /v1/allocations -d "{$owner,\"network\":\"ib-a\",\"count\":2}"
expect 201; aid=$(jget .id)
[ "$(jget .settings.pkey)/$(jget .settings.membership)" = 0x8001/full ] || fail "network ib-a: $body"
api POST /v1/allocations -d "{$owner,\"network\":\"sriov_ib_b\",\"pkey\":\"0x0002\",\"membership\":\"limited\"}"
expect 201; bid=$(jget .id) bguid=$(jget '.vfs[0].guid')
[ "$(jget .settings.pkey)" = 0x0002 ] || fail "bridge sriov_ib_b: $body"
api POST /v1/allocations -d "{$owner,\"pool\":\"ib\",\"pkey\":32771,\"guid\":\"02:c9:03:00:00:00:01:00\"}"
expect 201; cid=$(jget .id)
api POST /v1/allocations -d "{$owner,\"pool\":\"eth\"}"
expect 201
api GET "/v1/allocations/$cid"
[ "$(jget .settings.pkey)/$(jget .settings.membership)" = 0x8003/full ] || fail "allocation $cid: $body"
api PATCH "/v1/allocations/$cid" -d '{"pkey":"0x8004"}'
expect 400

api GET /v1/partitions
expect 200
members=$(printf '%s' "$body" | jq -r '.members[] | "\(.pkey) \(.membership) \(.guid) \(.allocation) \(.state)"')
want="0x0002 limited $bguid $bid reserved
0x8001 full 02:c9:03:00:00:00:00:01 $aid reserved
0x8001 full 02:c9:03:00:00:00:00:02 $aid reserved
0x8003 full 02:c9:03:00:00:00:01:00 $cid reserved"
[ "$members" = "$want" ] || fail "members: $body, wanted $want"
[ "$(jget .guid_range.first)/$(jget .guid_range.count)" = 02:c9:03:00:00:00:00:01/16 ] ||
	fail "guid_range: $body"

# a release takes its members away, with a "partitions" event; one of no member, none
# (the stream's headers come once its cursor is taken: every later event is on it)
curl -sN -D "$tmp/events.head" --unix-socket "$sock" http://x/v1/events >"$tmp/events" 2>/dev/null &
events_pid=$!
for _ in $(seq 300); do grep -q '^HTTP/1.1 200' "$tmp/events.head" 2>/dev/null && break; sleep 0.1; done
grep -q '^HTTP/1.1 200' "$tmp/events.head" || fail "GET /v1/events did not answer"
api DELETE "/v1/allocations/$bid"
expect 204
api GET /v1/allocations?pool=eth
api DELETE "/v1/allocations/$(jget '.allocations[0].id')"
expect 204
# a marker claim's events come after anything the releases emitted (in their requests)
api POST /v1/allocations -d "{$owner,\"pool\":\"eth\"}"
expect 201; marker=$(jget .id)
api DELETE "/v1/allocations/$marker"
expect 204
for _ in $(seq 300); do grep -q "\"$marker\".*released" "$tmp/events" && break; sleep 0.1; done
grep -q "\"$marker\".*released" "$tmp/events" || fail "no event of the marker claim: $(cat "$tmp/events")"
kill "$events_pid"
[ "$(grep -c '^event: partitions' "$tmp/events")" = 1 ] || fail "events: $(cat "$tmp/events")"
grep -A1 '^event: partitions' "$tmp/events" | grep -q '"members":3' || fail "events: $(cat "$tmp/events")"
api GET /v1/partitions
[ "$(jget '.members | length')" = 3 ] && ! printf '%s' "$body" | grep -q "$bid" || fail "after release: $body"

# mlx4: attached before the subnet manager put the key on the port, the VF is pending and its
# index 0 stays on the default partition; once the key is there (and at the agent's next look:
# SIGHUP here, each minute else) index 0 is on the key; an attach then is applied at once;
# a limited member does not get a full member's key; a release puts index 0 back
ns=vfa-pk-$$
ip netns add "$ns"
trap 'ip netns del "$ns" 2>/dev/null || :; cleanup' EXIT
for n in ib1v0 ib1v1 ib1v2 ib1v3; do ip link add "$n" type veth peer name "p-$n"; done
phys() { find "$tmp/sys/" -path "*/infiniband/mlx4_*/iov/ports/1/pkeys/$1"; }
idx0() { cat "$(find "$tmp/sys/" -path "*/infiniband/mlx4_*/iov/$1/ports/1/pkey_idx/0")"; }
attach_mlx4() { # PCI PKEY [MEMBERSHIP] → $id, $body
	api POST /v1/allocations -d "{\"pool\":\"ib\",\"pci\":\"$1\",\"pkey\":\"$2\",\"membership\":\"${3:-full}\",\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"},\"attach\":{\"netns\":\"$ns\",\"ifname\":\"ib${1##*.}\"}}"
	expect 201; id=$(jget .id)
}
attach_mlx4 0000:5e:00.3 0x8005; m1=$id
[ "$(jget '.vfs[0].partition')" = pending ] && [ "$(idx0 0000:5e:00.3)" = 0 ] ||
	fail "before the key is on the port: $body, index 0 on $(idx0 0000:5e:00.3)"
echo 0x8005 >"$(phys 3)"
kill -HUP "$agent_pid"
for _ in $(seq 300); do [ "$(idx0 0000:5e:00.3)" = 3 ] && break; sleep 0.1; done
api GET "/v1/allocations/$m1"
[ "$(jget '.vfs[0].partition')" = applied ] && [ "$(idx0 0000:5e:00.3)" = 3 ] ||
	fail "once the key is on the port: $body, index 0 on $(idx0 0000:5e:00.3)"
attach_mlx4 0000:5e:00.4 0x0005 limited; m2=$id
[ "$(jget '.vfs[0].partition')" = pending ] && [ "$(idx0 0000:5e:00.4)" = 0 ] ||
	fail "a limited member on a full member's key: $body, index 0 on $(idx0 0000:5e:00.4)"
api DELETE "/v1/allocations/$m2"; expect 204
attach_mlx4 0000:5e:00.4 0x8005; m2=$id
[ "$(jget '.vfs[0].partition')" = applied ] && [ "$(idx0 0000:5e:00.4)" = 3 ] ||
	fail "attached with the key on the port: $body, index 0 on $(idx0 0000:5e:00.4)"
for id in $m1 $m2; do api DELETE "/v1/allocations/$id"; expect 204; done
[ "$(idx0 0000:5e:00.3)/$(idx0 0000:5e:00.4)" = 0/0 ] ||
	fail "after release: index 0 on $(idx0 0000:5e:00.3)/$(idx0 0000:5e:00.4)"

# vfctl partitions write --follow: the file follows the agent's changes
conf=$tmp/partitions.conf
"$b/agent/vfctl/vfctl" partitions write --follow --file "$conf" --socket "$sock" \
	>"$tmp/follow.out" 2>&1 &
follow_pid=$!
has() { grep -q "^vfagent_$1=.*0x$(printf '%s' "$2" | tr -d :)=$3" "$conf" 2>/dev/null; }
wait_file() { # WHAT: `has ARGS` true (or with !, false) within 30 s
	for _ in $(seq 300); do "$@" && return 0; sleep 0.1; done
	kill "$follow_pid"; fail "$conf: not $*: $(cat "$conf" "$tmp/follow.out")"
}
wait_file has 0001 02:c9:03:00:00:00:00:02 full
api POST /v1/allocations -d "{$owner,\"pool\":\"ib\",\"pkey\":\"0x0005\",\"membership\":\"limited\",\"guid\":\"02:c9:03:00:00:00:05:00\"}"
expect 201; eid=$(jget .id)
wait_file has 0005 02:c9:03:00:00:00:05:00 limited
api DELETE "/v1/allocations/$eid"
expect 204
wait_file eval '! has 0005 02:c9:03:00:00:00:05:00 limited'
kill "$follow_pid"
grep -q '^Default=0x7fff, ipoib : ALL=full ;$' "$conf" || fail "a new file's default rule: $(cat "$conf")"

# a restarted agent lists the same members
api GET /v1/partitions
before=$(printf "%s" "$body" | jq -c .members)
stop_agent
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'tok-%016d\n' "$$" >"$tmp/token"; printf 'wrong-token-0123456789\n' >"$tmp/wrong"; chmod 600 "$tmp/token"
start_agent --config "$tmp/vfagent.json" --listen "tcp:127.0.0.1:$port" --token-file "$tmp/token"
api GET /v1/partitions
[ "$(printf "%s" "$body" | jq -c .members)" = "$before" ] || fail "after restart: $body"

# agents over TCP, each --token-file the --url's before it: one answers, one is refused (its
# token), named, and the exit status says so; one GUID with one key from both is written once
rm -f "$conf"
set +e
"$b/agent/vfctl/vfctl" partitions write --file "$conf" --url "http://127.0.0.1:$port" \
	--token-file "$tmp/token" --url "http://localhost:$port" --token-file "$tmp/wrong" \
	>"$tmp/tcp.out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "http://localhost:$port does not answer" "$tmp/tcp.out" &&
	grep -q ': 3 members from 2 agents (1 not answering): written' "$tmp/tcp.out" &&
	[ "$(grep -c '^vfagent_' "$conf")" = 2 ] && [ "$(grep -o '0x02c9030000000001' "$conf" | wc -l)" = 1 ] ||
	fail "over TCP: exit $rc: $(cat "$tmp/tcp.out" "$conf")"
echo "partitions: ok"
