#!/bin/sh
# A hold file on a path that hangs delays only its own hold (issue 37, item 7). The agent
# stat()ed each detach's "hold_while" on its main loop: a path on a FUSE filesystem whose daemon
# does not answer (or a hung NFS server) stopped the sweeps, so another tenant's deleted
# namespace went unnoticed, and SIGTERM, for as long as it hung. Now each look is a stat() in a
# thread of its own: the hung hold is kept, the rest of the sweep goes on, SIGTERM ends the
# agent. The hung filesystem: /dev/fuse mounted by a process that never answers the kernel
# (not even FUSE_INIT), so any lookup under it waits. In network and mount namespaces of its
# own (tests/in-netns.sh).
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, mounts)"; exit 77; }
command -v ip >/dev/null && command -v jq >/dev/null && command -v python3 >/dev/null || exit 77
[ -c /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 77; }
. "${top_srcdir:-.}/tests/api-lib.sh"
held=vfa-hh-held-$$ other=vfa-hh-other-$$ hang=$tmp/hang fuse=
tenant_and_stand_in "$held"
ip netns add "$other"
ip link add ens5f0v1 type veth peer name peer-ens5f0v1
teardown() {
	[ -z "$agent_pid" ] || kill -9 "$agent_pid" 2>/dev/null || true
	[ -z "$fuse" ] || kill "$fuse" 2>/dev/null || true # the connection ends: waiting stats fail
	umount -l "$hang" 2>/dev/null || true
	for n in $held $other; do ip netns del "$n" 2>/dev/null || true; done
	cleanup
}
trap teardown EXIT
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}, "reset": "none"}],
 "reservations": {"orphan_seconds": 0}, "libvirt": false}
JSON
# Under ASan, LeakSanitizer stops every thread with ptrace at exit; the thread waiting on the
# hung FUSE lookup (a killable wait) never stops, so the exit would hang in the sanitizer, not in
# the agent: leaks are checked by every other suite.
ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS} start_agent --config "$tmp/vfagent.json"
claim_attached() { # NETNS: sets $id
	api POST /v1/allocations -d "{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"netns\":\"$1\"}}"
	expect 201; id=$(jget .id)
	api POST "/v1/allocations/$id/attach" -d "{\"netns\":\"$1\",\"ifname\":\"net1\"}"; expect 200
}

# a filesystem that never answers
mkdir "$hang"
python3 - "$hang" >"$tmp/fuse.log" 2>&1 <<'PY' &
import ctypes, os, sys, time
fd = os.open("/dev/fuse", os.O_RDWR)
libc = ctypes.CDLL(None, use_errno=True)
opts = "fd=%d,rootmode=40000,user_id=0,group_id=0" % fd
if libc.mount(b"hung", sys.argv[1].encode(), b"fuse", 0, opts.encode()) != 0:
    print("mount:", os.strerror(ctypes.get_errno())); sys.exit(1)
print("mounted", flush=True)
while True:
    time.sleep(3600) # never reads /dev/fuse: every request waits
PY
fuse=$!
for _ in $(seq 300); do grep -q mounted "$tmp/fuse.log" && break; sleep 0.1; done
grep -q mounted "$tmp/fuse.log" || { echo "SKIP: cannot mount FUSE: $(cat "$tmp/fuse.log")"; exit 77; }
timeout 2 stat "$hang/checkpoint" >/dev/null 2>&1 && fail "the hung filesystem answered"

# a reservation held while a file on it exists, its owner gone
claim_attached "$held"; hung_id=$id
api POST "/v1/allocations/$hung_id/detach" -d "{\"hold_while\":\"$hang/checkpoint\"}"; expect 200
ip netns del "$held"
# another tenant, attached
claim_attached "$other"; other_id=$id

# the full sweep looks at the hung path (SIGHUP, as every quiet minute)
looks() { grep -c "allocation $hung_id: looking for its hold file failed" "$tmp/agent.log" || :; }
n=$(looks)
kill -HUP "$agent_pid"
for _ in $(seq 300); do [ "$(looks)" -gt "$n" ] && break; sleep 0.1; done # its look left hanging
[ "$(looks)" -gt "$n" ] || fail "the sweep never got past the hung hold path"
# the other tenant's namespace goes: its link event's sweep releases it all the same
ip netns del "$other"
for _ in $(seq 100); do
	api GET "/v1/allocations/$other_id"
	[ "$(jget .state)" = released ] && break
	sleep 0.1
done
[ "$(jget .state)" = released ] || fail "a deleted namespace went unnoticed while a hold path hangs: $body"
# the hung hold is kept
api GET "/v1/allocations/$hung_id"; [ "$(jget .state)" = reserved ] || fail "the hung hold: $body"
grep -q "hold file" "$tmp/agent.log" || fail "the hung look is not said"

# SIGTERM ends the agent
kill "$agent_pid"
for _ in $(seq 100); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$agent_pid" 2>/dev/null && fail "vfagentd does not end on SIGTERM while a hold path hangs"
wait "$agent_pid" || fail "vfagentd exited $? on SIGTERM"
agent_pid=
echo "hold-hung: a hung hold path delays only its own hold"
