#!/bin/sh
# The agent's own stall is not charged to a client: a connection that has sent part of its
# request, while the agent is held up (SIGSTOP here; a starved process, a loaded host alike)
# for longer than a whole request may take (10 s), is not cut for it, and its request is
# answered once the rest comes. The slow client that the cut is for (tests/admission.sh)
# is cut as before.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
start_agent

# the client: headers begun, then (once $tmp/go exists) the rest; prints the status line
python3 - "$sock" "$tmp/sent" "$tmp/go" >"$tmp/answer" 2>&1 <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
try:
    s.sendall(b"Connection: close\r\n\r\n")
    print(s.recv(200).split(b"\r\n")[0].decode() or "no answer: the connection was closed")
except OSError as e:
    print("no answer:", e)
PY
client=$!
for _ in $(seq 100); do [ -f "$tmp/sent" ] && break; sleep 0.1; done
[ -f "$tmp/sent" ] || fail "the client did not connect"
sleep 0.5 # the agent reads the part sent
kill -STOP "$agent_pid"
sleep 12 # longer than a whole request may take: the agent's own stall
kill -CONT "$agent_pid"
sleep 1 # the agent looks at its connections again before the rest comes
touch "$tmp/go"
wait "$client" || true
grep -q '^HTTP/1.1 200' "$tmp/answer" || fail "after the agent's stall: $(cat "$tmp/answer")"

# a client that is slow on its own is still cut: nothing sent for the 10 s
python3 - "$sock" >"$tmp/slow" 2>&1 <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"GET /v1/health HTTP/1.1\r\n")
s.settimeout(20)
t0 = time.monotonic()
try:
    data = s.recv(200)
except OSError:
    data = b""
print("closed" if not data else "answered", round(time.monotonic() - t0))
PY
grep -q '^closed' "$tmp/slow" || fail "a slow client was not cut: $(cat "$tmp/slow")"
stop_agent
echo "admission-stall: a 12 s stall of the agent charged to no client; a slow client cut ($(cat "$tmp/slow"))"
