#!/bin/sh
# A CNI_NETNS that is not exactly a namespace path is refused before anything is claimed (issue
# 37, item 11): "/proc/PID/ns/netfoo" was read as PID's namespace, so the agent attached a VF
# there while the plugin (which opens the path itself) failed, and the VF stayed attached. Now
# only /proc/PID/ns/net (digits, nothing after), /run/netns/NAME and /var/run/netns/NAME are
# taken; anything else is an EINVAL naming CNI_NETNS, with nothing claimed. Spoken to the
# agent's CNI socket as the plugin speaks, in network namespaces of its own (tests/in-netns.sh).
# test-needs: mounts
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null && command -v python3 >/dev/null ||
	{ echo "SKIP: needs ip, jq and python3"; exit 77; }
ns=vfa-cnp-$$ holder=
tenant_and_stand_in "$ns"
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null; ip netns del "$ns" 2>/dev/null || :; cleanup' EXIT
ip netns exec "$ns" sleep 300 &
holder=$!
for _ in $(seq 300); do # in the namespace once ip netns exec has joined it
	[ "$(ip netns identify "$holder" 2>/dev/null)" = "$ns" ] && break
	sleep 0.1
done
[ "$(ip netns identify "$holder")" = "$ns" ] || fail "the holder never entered $ns"
start_agent
csock=$tmp/vfagent-cni.sock
add() { # CNI_NETNS: an ADD into it, the answer in $out
	out=$(python3 - "$csock" "$1" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1])
s.send(json.dumps({"command": "ADD", "key": "cni:net/ctr/net1", "netns": sys.argv[2],
                   "ifname": "net1", "config": {"pool": "eth"}}).encode())
print(s.recv(65536).decode())
PY
)
}
nothing_claimed() {
	api GET /v1/allocations; [ "$(jget '.allocations | length')" = 0 ] || fail "$1: claimed: $body"
	ip -n "$ns" link show net1 >/dev/null 2>&1 && fail "$1: net1 is in the namespace"
	return 0
}
for path in "/proc/$holder/ns/netfoo" "/proc/$holder/ns/net/" "/proc/$holder/ns/net2" \
	"/proc/+$holder/ns/net" "/proc/0$holder/ns/net" "/proc/ $holder/ns/net" "/proc/$holder/ns/ne" \
	"$ns" "run/netns/$ns" "/run/netns/$ns/x" "/tmp/netns/$ns"; do
	add "$path"
	printf '%s' "$out" | jq -e '.error == "EINVAL"' >/dev/null &&
		printf '%s' "$out" | jq -r .message | grep -q '^CNI_NETNS: ' || fail "CNI_NETNS $path: $out"
	nothing_claimed "CNI_NETNS $path"
done
# the exact forms work
add "/proc/$holder/ns/net"
printf '%s' "$out" | jq -e .ok >/dev/null || fail "CNI_NETNS /proc/$holder/ns/net: $out"
ip -n "$ns" link show net1 >/dev/null || fail "net1 is not in the namespace"
echo "cni-netns-path: only exact namespace paths are taken"
