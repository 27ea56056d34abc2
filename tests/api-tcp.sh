#!/bin/sh
# Listeners: TCP is refused without a token file, 401 without or with a wrong
# token, served with it, and the token never reaches the log; a socket from
# systemd (socket activation) is taken as is.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
token=tok-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$token" >"$tmp/token"
chmod 600 "$tmp/token"

if "$b/agent/vfagentd" --simulate "$tmp/sys" --listen "tcp:127.0.0.1:$port" >"$tmp/notoken.log" 2>&1; then
	fail "TCP without a token file started"
fi
grep -q 'needs --token-file' "$tmp/notoken.log" || fail "no reason given: $(cat "$tmp/notoken.log")"

start_agent --listen "tcp:127.0.0.1:$port" --token-file "$tmp/token"
url=http://127.0.0.1:$port
c=$(curl -s -o /dev/null -w '%{http_code}' "$url/v1/host")
[ "$c" = 401 ] || fail "no token: $c"
c=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${token}x" "$url/v1/host")
[ "$c" = 401 ] || fail "wrong token: $c"
c=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$url/v1/host")
[ "$c" = 200 ] || fail "right token: $c"
"$b/agent/vfctl/vfctl" --url "$url" --token-file "$tmp/token" pools >/dev/null || fail "vfctl --url"
api GET /v1/host; expect 200 # the unix socket needs no token
grep -q "$token" "$tmp/agent.log" && fail "the token is in the log"
stop_agent

# socket activation: systemd (here systemd-socket-activate) hands over the listening socket
if command -v systemd-socket-activate >/dev/null; then
	systemd-socket-activate -l "$tmp/act.sock" "$b/agent/vfagentd" --simulate "$tmp/sys" \
		>"$tmp/act.log" 2>&1 &
	act=$!
	for _ in $(seq 300); do
		curl -sf --unix-socket "$tmp/act.sock" http://x/v1/health >/dev/null && break
		sleep 0.1
	done
	curl -sf --unix-socket "$tmp/act.sock" http://x/v1/pools | grep -q '"ib"' || fail "socket activation"
	grep -q 'serving on 1 socket from systemd' "$tmp/act.log" || fail "did not take the socket: $(cat "$tmp/act.log")"
	# the CNI plugin's socket beside systemd's, not in a directory only the packaged unit makes
	[ -S "$tmp/act-cni.sock" ] || fail "no CNI socket beside the activated one: $(cat "$tmp/act.log")"
	kill "$act"; wait "$act" || fail "socket-activated agent exited $?"
fi
echo "api-tcp: all checks passed"
