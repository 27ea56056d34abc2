#!/bin/sh
# One client cannot take a listener from the others: 1,000 idle connections and
# 100 slowloris connections from one process get that process its share (the
# rest a 503), the slow ones are cut when their time is up, and a well-behaved
# client is served within a second all along. Event streams are bounded; on TCP
# a client without a token gets its 401 and nothing more.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
# shellcheck disable=SC3045 # dash, the sh of Debian, has ulimit -n
ulimit -n 4096 2>/dev/null || { echo "cannot raise the fd limit to 4096"; exit 77; }
start_agent

# the attacker: 100 slowloris then 1,000 idle connections, held 13 s; it reports how
# many were answered 503 at once, and how many of the others the agent closed
python3 - "$sock" >"$tmp/attack" <<'PY' &
import socket, sys, time, select
path = sys.argv[1]
idle, slow = [], []
for i in range(1100):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
    except OSError:
        continue
    (slow if i < 100 else idle).append(s)
for s in slow:
    try: s.send(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
    except OSError: pass
refused, cut = 0, 0
deadline = time.time() + 13
while time.time() < deadline:
    for s in slow:
        try: s.send(b"X")
        except OSError: pass
    time.sleep(0.5)
for s in idle + slow:
    s.setblocking(False)
    try:
        data = s.recv(200)
    except BlockingIOError:
        continue
    except OSError:
        data = b""
    if data.startswith(b"HTTP/1.1 503"):
        refused += 1
    elif not data:
        cut += 1
print(len(idle) + len(slow), refused, cut)
PY
attacker=$!
sleep 1.5
worst=0
for _ in $(seq 10); do
	t=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --unix-socket "$sock" --max-time 5 http://x/v1/health)
	[ "${t% *}" = 200 ] || fail "a well-behaved client was not served beside the attacker: $t"
	worst=$(printf '%s\n%s\n' "$worst" "${t#* }" | sort -g | tail -1)
	sleep 1
done
wait "$attacker" || fail "the attacker script failed"
read -r opened refused cut <"$tmp/attack"
# the one-second bound is the issue's: the server must not make a good client wait on others
awk -v w="$worst" 'BEGIN { exit !(w < 1.0) }' || fail "a well-behaved client waited ${worst} s"
[ "$opened" -ge 1000 ] || fail "the attacker opened only $opened connections"
[ "$refused" -ge $((opened - 64)) ] || fail "only $refused of $opened were refused: the share is 64"
[ $((refused + cut)) = "$opened" ] || fail "$((opened - refused - cut)) connections were neither refused nor cut"
grep -q "http: refusing connections from pid:" "$tmp/agent.log" || fail "refusals are not logged"
grep -q "http: cut [0-9]* connections that sent no whole request in 10 s" "$tmp/agent.log" ||
	fail "cuts are not logged"

# event streams: eight per client, the ninth is refused while they are open
python3 - "$sock" >"$tmp/streams" <<'PY'
import socket, sys, time
socks = []
for i in range(9):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.send(b"GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(0.1)
    socks.append(s)
time.sleep(0.3)
codes = []
for s in socks:
    s.settimeout(1)
    try: codes.append(s.recv(64).split(b" ")[1].decode())
    except Exception: codes.append("none")
print(" ".join(codes))
PY
[ "$(cat "$tmp/streams")" = "200 200 200 200 200 200 200 200 503" ] ||
	fail "event streams per client: $(cat "$tmp/streams")"
api GET /v1/health; expect 200
stop_agent

# TCP: without a token, the 401 ends the connection
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'tok-%s\n' "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$tmp/token"
chmod 600 "$tmp/token"
start_agent --listen "tcp:127.0.0.1:$port" --token-file "$tmp/token"
python3 - "$port" >"$tmp/tcp" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(3)
s.send(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.split(b"\r\n")[0].decode(), "closed")
PY
[ "$(cat "$tmp/tcp")" = "HTTP/1.1 401 Unauthorized closed" ] || fail "TCP without a token: $(cat "$tmp/tcp")"
stop_agent
echo "admission: all checks passed ($refused of $opened refused, $cut closed after 10 s, worst ${worst} s)"
