#!/bin/sh
# Event streams are shared fairly between local users (issue 37, item 11): they were bounded per
# client (8 a process) and per listener (64), so one user's nine processes held all 64 and
# root's GET /v1/events was a 503. Now a uid holds 16 at most, whatever its processes. The
# user is another uid than the test's (setpriv), on the agent's unix socket opened to it. In a
# network namespace of its own (tests/in-netns.sh).
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (setpriv)"; exit 77; }
[ -x /usr/bin/python3 ] && command -v setpriv >/dev/null ||
	{ echo "SKIP: needs python3 and setpriv"; exit 77; }
. "${top_srcdir:-.}/tests/api-lib.sh"
start_agent
chmod 755 "$tmp"
chmod 666 "$sock"
att=$tmp/att
mkdir -m 1777 "$att"
cat >"$tmp/streams.py" <<'PY'
# streams.py SOCKET PROCESSES PER-PROCESS OUT: PROCESSES processes (one uid) each open PER-PROCESS
# event streams and write the HTTP codes they got to OUT.N, then hold them until OUT.go exists
import os, socket, sys, time
path, procs, per, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
kids = []
for k in range(procs):
    pid = os.fork()
    if pid:
        kids.append(pid); continue
    socks = []
    for i in range(per):
        s = socket.socket(socket.AF_UNIX); s.connect(path)
        s.send(b"GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(2)
        try: code = s.recv(64).split(b" ")[1].decode()
        except Exception: code = "none"
        socks.append((s, code))
    with open("%s.%d.tmp" % (out, k), "w") as f:
        f.write(" ".join(c for _, c in socks) + "\n")
    os.rename("%s.%d.tmp" % (out, k), "%s.%d" % (out, k))
    while not os.path.exists(out + ".go"):
        time.sleep(0.05)
    os._exit(0)
for pid in kids:
    os.waitpid(pid, 0)
PY
# one user, nine processes, eight streams each
setpriv --reuid=20001 --regid=20001 --clear-groups /usr/bin/python3 "$tmp/streams.py" "$sock" 9 8 "$att/u" &
users=$!
for _ in $(seq 200); do [ "$(find "$att" -name 'u.[0-9]*' ! -name '*.tmp' | wc -l)" = 9 ] && break; sleep 0.1; done
[ "$(find "$att" -name 'u.[0-9]*' ! -name '*.tmp' | wc -l)" = 9 ] || fail "the user's processes did not all open"
got=$(cat "$att"/u.[0-9]* | tr ' ' '\n' | grep -c '^200$' || true)
# root, while they are held
/usr/bin/python3 "$tmp/streams.py" "$sock" 1 1 "$att/root" &
rootpid=$!
for _ in $(seq 100); do [ -f "$att/root.0" ] && break; sleep 0.1; done
root=$(cat "$att/root.0" 2>/dev/null || echo none)
touch "$att/u.go" "$att/root.go"
wait "$users" || fail "the user's processes failed"
wait "$rootpid" || fail "root's process failed"
[ "$got" = 16 ] || fail "one uid holds $got event streams, wanted 16"
[ "$root" = 200 ] || fail "root's event stream: $root, while one user holds $got"
api GET /v1/health; expect 200
echo "stream-fairness: one uid holds $got event streams of 64; root is served"
