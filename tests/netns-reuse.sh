#!/bin/sh
# A network namespace made under a freed one's inode is another owner (issue 37, item 9). The
# kernel gives a namespace inode again as soon as its namespace is freed: delete a tenant's
# namespace, make one under the same name until the inode comes back, and the agent took it for
# the tenant's (the same name, the same inode): the new namespace's owner attached the old
# tenant's reservation, and an attached VF whose namespace was so replaced was never released.
# Now a namespace is also known by its cookie (SO_NETNS_COOKIE, Linux 5.14), which the kernel
# never gives twice while it runs: the attach is a 403, the sweep releases the attachment. In
# network (and mount) namespaces of its own (tests/in-netns.sh).
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || exit 77
. "${top_srcdir:-.}/tests/api-lib.sh"
ns=vfa-reuse-$$
tenant_and_stand_in "$ns"
ip link add ens5f0v1 type veth peer name peer-ens5f0v1
trap 'ip netns del "$ns" 2>/dev/null || :; drop_held || :; cleanup' EXIT # the namespace may be gone (set -e holds in a trap)
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "libvirt": false}
JSON
start_agent --config "$tmp/vfagent.json"
inode() { stat -L -c %i "/run/netns/$ns"; }
# the namespace deleted and made again under its name until the kernel gives its inode back.
# It gives the lowest free one: one lower that another suite (make -j2) let go comes first, and
# is held under a name of its own so that the next is higher; a higher one means another suite
# holds ours for now: asked again (a minute at most). Deleting and remaking alone did not do:
# another suite's freed namespace took the lower inodes each time, and CI saw this test skip
remake() {
	old=$(inode)
	ip netns del "$ns"
	n=0
	for _ in $(seq 2000); do
		n=$((n + 1))
		ip netns add "$ns-$n"
		got=$(stat -L -c %i "/run/netns/$ns-$n")
		[ "$got" -lt "$old" ] && continue
		if [ "$got" = "$old" ]; then # under the tenant's name (a namespace is freed late:
			# deleted and made again, the inode would not be free yet)
			touch "/run/netns/$ns"
			mount --bind "/run/netns/$ns-$n" "/run/netns/$ns"
			drop_held
			return 0
		fi
		ip netns del "$ns-$n"
		sleep 0.03
	done
	drop_held
	echo "SKIP: the kernel did not give inode $old again"; exit 77
}
drop_held() {
	for f in /run/netns/"$ns"-*; do
		[ ! -e "$f" ] || ip netns del "${f##*/}"
	done
}

# 1. a reservation for the tenant's namespace; the tenant goes; a namespace made since under the
# same name and inode asks for it
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
expect 201; id=$(jget .id)
remake
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"
expect 403
jget .message | grep -q "is not the namespace of the allocation's owner" || fail "$body"
ip -n "$ns" link show net1 >/dev/null 2>&1 && fail "the VF went into the namespace made since"
api GET "/v1/allocations/$id"; [ "$(jget .state)" = reserved ] || fail "$body"
api DELETE "/v1/allocations/$id"; expect 204

# 2. an attachment whose namespace was replaced under the same inode: gone for the sweep
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
expect 201; id=$(jget .id)
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"; expect 200
pci=$(jget '.vfs[0].pci')
remake
kill -HUP "$agent_pid" # the full sweep, as every quiet minute
for _ in $(seq 300); do
	api GET "/v1/allocations/$id"
	[ "$(jget .state)" = released ] && break
	sleep 0.1
done
[ "$(jget .state)" = released ] || fail "an attachment whose namespace was replaced is kept: $body"
ip -n "$ns" link show net1 >/dev/null 2>&1 && fail "net1 is in the namespace made since"
api GET "/v1/vfs/$pci"; [ "$(jget .state)" != reserved ] && [ "$(jget .state)" != attached ] ||
	fail "VF $pci: $body"

# 3. a kernel without cookies (before 5.14; the simulated host says so): the agent holds a
# reservation's namespace open, so its inode is not given to another while the agent lives
stop_agent
export VFAGENT_SIM_NO_NETNS_COOKIE=1
start_agent --config "$tmp/vfagent.json"
unset VFAGENT_SIM_NO_NETNS_COOKIE
grep -q "network namespaces have no cookie" "$tmp/agent.log" || fail "the simulated kernel has cookies"
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
expect 201; id=$(jget .id)
old=$(inode)
holds() { # whether the agent holds namespace inode $1 open (an nsfs inode of the same number)
	for fd in "/proc/$agent_pid/fd/"*; do
		[ "$(stat -L -c %i "$fd" 2>/dev/null)" = "$1" ] && return 0
	done
	return 1
}
holds "$old" || fail "the agent does not hold the reservation's namespace"
ip netns del "$ns"
for _ in $(seq 40); do
	ip netns add "$ns"
	[ "$(inode)" != "$old" ] || fail "the inode of a held reservation's namespace was given again"
	ip netns del "$ns"
	sleep 0.03
done
ip netns add "$ns"
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"
expect 403
# released, the namespace is let go
api DELETE "/v1/allocations/$id"; expect 204
holds "$old" && fail "the agent still holds a released reservation's namespace"
echo "netns-reuse: a namespace under a freed inode is another owner (cookie; held open without one)"
