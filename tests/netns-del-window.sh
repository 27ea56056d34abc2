#!/bin/sh
# `ip netns del` unmounts the namespace, then unlinks its name: in between, /run/netns/NAME is
# an empty file of mode 0000 that the agent (no CAP_DAC_OVERRIDE) may not open. A look at the
# owner in that window got EACCES, which is not absence: the allocation was kept until the next
# quiet minute's sweep (tests/netns.sh failed on it under load). The window held open here: the
# namespace unmounted, its name left as ip leaves it. The agent must see that the name names no
# namespace and release on the link going, as it does once the name is gone. In network and
# mount namespaces of its own (tests/in-netns.sh).
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || exit 77
. "${top_srcdir:-.}/tests/api-lib.sh"
ns=vfa-ndw-$$
tenant_and_stand_in "$ns"
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"pf_names": ["ens5f0"]}, "reset": "none"}], "libvirt": false}
JSON
start_agent --config "$tmp/vfagent.json"
api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$ns\"}}"
expect 201; id=$(jget .id)
api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$ns\",\"ifname\":\"net1\"}"; expect 200

umount "/run/netns/$ns" # the namespace dies with its last reference; its name stays, mode 0000
[ -f "/run/netns/$ns" ] && [ "$(stat -c %a "/run/netns/$ns")" = 0 ] || fail "not ip's window: $(ls -l /run/netns)"
for _ in $(seq 300); do
	api GET "/v1/allocations/$id"; [ "$(jget .state)" = released ] && break
	sleep 0.1
done
[ "$(jget .state)" = released ] || fail "kept while its namespace's name names none: $body; $(grep "$id" "$tmp/agent.log" | tail -2)"
grep -q "allocation $id: its network namespace is gone: releasing" "$tmp/agent.log" || fail "not logged"
grep -q "looking for its .* failed: Permission denied" "$tmp/agent.log" && fail "EACCES taken for a look that failed"
rm -f "/run/netns/$ns"
stop_agent
echo "netns-del-window: an owner's namespace name with no namespace under it is gone"
