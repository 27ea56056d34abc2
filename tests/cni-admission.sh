#!/bin/sh
# The CNI socket counts its connections as the REST listener does (issue 37, item 11): it took
# every connection and gave each a thread until its 10 s ran out, so 1,100 idle connections
# took the agent's descriptors and the REST health check failed. Now a process holds 8 at most
# and all processes 128: one beyond is answered EBUSY and closed at once. Twenty processes
# (root, as only root may connect) open 55 idle connections each; the REST API answers all
# along and the socket answers a STATUS once they let go. In a network namespace of its own
# (tests/in-netns.sh).
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (the CNI socket is root's)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: needs python3"; exit 77; }
. "${top_srcdir:-.}/tests/api-lib.sh"
start_agent
# the soft descriptor limit most machines give a process (the unit's is higher): 1,100 idle
# connections go past it
command -v prlimit >/dev/null && prlimit --pid "$agent_pid" --nofile=1024: ||
	echo "cni-admission: the agent's descriptor limit is left as it is"
csock=$tmp/vfagent-cni.sock
[ -S "$csock" ] || fail "no CNI socket beside the agent's socket"
python3 - "$csock" "$tmp/held" <<'PY' &
# 20 processes x 55 idle connections; each reports how many the agent kept open, then holds
import os, resource, socket, sys, time
path, out = sys.argv[1], sys.argv[2]
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, max(4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
kids = []
for k in range(20):
    pid = os.fork()
    if pid:
        kids.append(pid); continue
    socks = []
    for i in range(55):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try: s.connect(path)
        except OSError: continue
        socks.append(s)
    time.sleep(1)
    held = 0
    for s in socks:
        s.setblocking(False)
        try: s.recv(1024, socket.MSG_PEEK)
        except BlockingIOError: held += 1  # no answer yet: the agent keeps it open
        except OSError: pass
    with open("%s.%d" % (out, k), "w") as f: f.write("%d %d\n" % (len(socks), held))
    time.sleep(4)
    os._exit(0)
for pid in kids: os.waitpid(pid, 0)
PY
attackers=$!
for _ in $(seq 300); do [ "$(find "$tmp" -maxdepth 1 -name "held.*" | wc -l)" = 20 ] && break; sleep 0.1; done
# while they hold: the REST API answers
for _ in $(seq 5); do
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --unix-socket "$sock" http://x/v1/health) || code=000
	[ "$code" = 200 ] || fail "GET /v1/health: HTTP $code while the CNI socket is flooded"
done
[ "$(find "$tmp" -maxdepth 1 -name "held.*" | wc -l)" = 20 ] || fail "the attackers did not report"
opened=$(cat "$tmp"/held.* | awk '{ n += $1 } END { print n }')
held=$(cat "$tmp"/held.* | awk '{ n += $2 } END { print n }')
wait "$attackers" || fail "the attackers failed"
[ "$opened" -ge 1000 ] || fail "only $opened connections were made"
[ "$held" -le 128 ] || fail "the agent kept $held of $opened idle CNI connections open, 128 at most wanted"
grep -q "CNI socket: refusing connections of pid" "$tmp/agent.log" || fail "refusals are not logged"
out=$(python3 - "$csock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1])
s.send(b'{"command":"STATUS","config":{"pool":"eth"}}'); print(s.recv(4096).decode())
PY
)
printf '%s' "$out" | grep -q '"ok": *true' || fail "STATUS after the flood: $out"
echo "cni-admission: $held of $opened idle CNI connections kept; REST served throughout"
