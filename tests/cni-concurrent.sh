#!/bin/sh
# A node's pods started at once (Multus runs their CNI ADDs in parallel): 32
# ADDs at the same moment on one PF with 24 VFs, each a fresh plugin process
# into a namespace of its own. Each gets a VF no other has, or error 101
# (no free VF), never the kernel's EBUSY or another error (sriov-cni #213:
# two ADDs raced for one VF); the ledger holds exactly the 24 attachments;
# 32 DELs at once give every VF back. Then 32 ADDs at once naming the same VF
# by deviceID: one gets it, the others are told it is held.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null || { echo "SKIP: needs ip and jq"; exit 77; }
plugin=$b/hooks/cni/vfagent
N=32 VFS=24
teardown() {
	for i in $(seq 0 $((N - 1))); do ip netns del "vfa-cc$i-$$" 2>/dev/null || true; done
	for i in $(seq 0 $((VFS - 1))); do ip link del "ens5f0v$i" 2>/dev/null || true; done
	cleanup
}
trap teardown EXIT
for i in $(seq 0 $((N - 1))); do
	ip netns add "vfa-cc$i-$$" || { echo "SKIP: cannot make network namespaces"; exit 77; }
done
for i in $(seq 0 $((VFS - 1))); do ip link add "ens5f0v$i" type veth peer name "p-ens5f0v$i"; done
printf '{"numvfs": [{"pf": "0000:af:00.0", "numvfs": %d}],
 "pools": [{"name": "c", "selector": {"pf_names": ["ens5f0"]}, "reset": "none"}]}' "$VFS" >"$tmp/config.json"
start_agent --config "$tmp/config.json"
csock=$tmp/vfagent-cni.sock
conf=$(printf '{"cniVersion":"1.0.0","name":"burst","type":"vfagent","pool":"c","socket":"%s","cacheDir":"%s/cache"}' "$csock" "$tmp")

burst() { # COMMAND CONFIG: N plugin processes at once, container i into namespace i; out.i, rc.i
	pids=
	for i in $(seq 0 $((N - 1))); do
		(
			set +e
			printf '%s' "$2" | env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CNI_COMMAND="$1" \
				CNI_CONTAINERID="pod$i" CNI_NETNS="/run/netns/vfa-cc$i-$$" CNI_IFNAME=net1 \
				CNI_PATH=/usr/lib/cni "$plugin" >"$tmp/out.$i" 2>"$tmp/err.$i"
			echo $? >"$tmp/rc.$i"
		) &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086 # one PID each
	wait $pids # (not the agent, a job of this shell too)
}
burst ADD "$conf"
ok=0 none=0
for i in $(seq 0 $((N - 1))); do
	if [ "$(cat "$tmp/rc.$i")" = 0 ]; then
		ok=$((ok + 1))
		jq -r '.interfaces[0].mac' "$tmp/out.$i" >/dev/null || fail "pod$i: $(cat "$tmp/out.$i")"
		ip -n "vfa-cc$i-$$" link show net1 >/dev/null || fail "pod$i: no net1 in its namespace"
	elif [ "$(jq -r .code "$tmp/out.$i")" = 101 ]; then
		none=$((none + 1))
	else
		fail "pod$i: neither a VF nor 'no free VF': $(cat "$tmp/out.$i" "$tmp/err.$i")"
	fi
done
[ "$ok" = "$VFS" ] && [ "$none" = $((N - VFS)) ] || fail "$ok ADDs got a VF and $none were told none is free"
api GET /v1/allocations
[ "$(jget '[.allocations[] | select(.state == "attached")] | length')" = "$VFS" ] ||
	fail "the ledger does not hold $VFS attachments: $body"
[ "$(jget '[.allocations[].vfs[].pci] | unique | length')" = "$VFS" ] || fail "a VF in two attachments: $body"
grep -q 'EBUSY\|Device or resource busy' "$tmp"/out.* "$tmp/agent.log" && fail "the kernel's EBUSY: $(grep -h EBUSY "$tmp"/out.*)"
burst DEL "$conf"
for i in $(seq 0 $((N - 1))); do
	[ "$(cat "$tmp/rc.$i")" = 0 ] || fail "DEL pod$i: $(cat "$tmp/out.$i")"
done
api GET '/v1/vfs?pool=c&state=free'; [ "$(jget '.vfs | length')" = "$VFS" ] || fail "after the DELs: $body"

# every ADD names the same VF (a device plugin that handed one VF out twice): one wins
burst ADD "$(printf '%s' "$conf" | jq -c '. + {"deviceID": "0000:af:01.5"}')"
ok=0
for i in $(seq 0 $((N - 1))); do
	if [ "$(cat "$tmp/rc.$i")" = 0 ]; then
		ok=$((ok + 1))
	else
		[ "$(jq -r .code "$tmp/out.$i")" = 101 ] || fail "pod$i on a held VF: $(cat "$tmp/out.$i")"
	fi
done
[ "$ok" = 1 ] || fail "$ok ADDs got the one VF"
echo "cni-concurrent: $N ADDs at once on $VFS VFs: $VFS distinct VFs, $((N - VFS)) 'no free VF'; one VF asked $N times: one winner"
