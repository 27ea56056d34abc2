#!/bin/sh
# Least privilege: once serving, vfagentd holds CAP_NET_ADMIN, CAP_SYS_ADMIN
# and CAP_SYS_PTRACE only (effective, permitted, bounding; none inheritable)
# with no_new_privs; its unix socket is 0660 and in the configured group, so
# a user outside the group gets EACCES (and vfctl says who may connect and
# how to join) and one inside is served; request
# bodies never reach the log.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: needs setpriv (util-linux)"; exit 77; }
chmod 755 "$tmp" # the socket's directory must be passable; the socket itself is the gate
group=vfagent-test
made=
# the users and group made here go when the test ends, whatever its outcome
remove_made() {
	for u in vfa-member vfa-outsider; do
		case " $made " in *" $u "*) userdel "$u" 2>/dev/null || true ;; esac
	done
	case " $made " in *" $group "*) groupdel "$group" 2>/dev/null || true ;; esac
}
trap 'remove_made; cleanup' EXIT
getent group "$group" >/dev/null || { groupadd --system "$group" && made="$made $group"; }
for u in vfa-member vfa-outsider; do
	getent passwd "$u" >/dev/null ||
		{ useradd --system --no-create-home --shell /usr/sbin/nologin "$u" && made="$made $u"; }
done
usermod -a -G "$group" vfa-member
cat >"$tmp/vfagent.json" <<JSON
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "socket_group": "$group"}
JSON
start_agent --config "$tmp/vfagent.json"

status() { sed -n "s/^$1:[[:space:]]*//p" "/proc/$agent_pid/status"; }
want=0000000000281000 # bits 12 (net_admin), 19 (sys_ptrace), 21 (sys_admin)
[ "$(status CapEff)" = $want ] || fail "CapEff $(status CapEff), wanted $want"
[ "$(status CapPrm)" = $want ] || fail "CapPrm $(status CapPrm)"
[ "$(status CapBnd)" = $want ] || fail "CapBnd $(status CapBnd)"
[ "$(status CapInh)" = 0000000000000000 ] || fail "CapInh $(status CapInh)"
[ "$(status NoNewPrivs)" = 1 ] || fail "no_new_privs not set"

[ "$(stat -c '%a %G' "$sock")" = "660 $group" ] || fail "socket is $(stat -c '%a %G' "$sock")"
# connect(2) itself must fail with EACCES (curl only says it could not connect)
connect='import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])'
out=$(setpriv --reuid=vfa-outsider --regid=vfa-outsider --init-groups \
	/usr/bin/python3 -c "$connect" "$sock" 2>&1) && fail "an outsider could connect"
printf '%s' "$out" | grep -q "Errno 13" || fail "outsider: $out"
# vfctl tells the outsider who may connect and how to join, not "agent not running"
out=$(setpriv --reuid=vfa-outsider --regid=vfa-outsider --init-groups \
	"$b/agent/vfctl/vfctl" --socket "$sock" pools 2>&1) && fail "vfctl served an outsider"
printf '%s' "$out" | grep -q "permission denied on $sock: root and members of the group $group may connect; to join it: usermod -aG $group vfa-outsider" ||
	fail "vfctl as an outsider: $out"
code=$(setpriv --reuid=vfa-member --regid=vfa-member --init-groups \
	curl -s -o /dev/null -w '%{http_code}' --unix-socket "$sock" http://x/v1/host)
[ "$code" = 200 ] || fail "a member of $group got $code"

marker=BODY-MARKER-$$
api POST /v1/allocations -d "{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"$marker\"}}"
expect 201
api POST /v1/allocations -d "{\"pool\":\"$marker\""
expect 400
api POST /v1/domain-xml --data-binary "<domain><name>$marker</name></domain>"
expect 200
if grep -q "$marker" "$tmp/agent.log"; then
	fail "a request body reached the log: $(grep "$marker" "$tmp/agent.log" | head -n 2)"
fi
stop_agent

# As the unit starts it: systemd made the socket (LISTEN_FDS), and the bounding set is the
# unit's CapabilityBoundingSet= without CAP_SETPCAP, so the agent cannot drop it itself.
command -v systemd-socket-activate >/dev/null || { echo "SKIP: needs systemd-socket-activate"; exit 77; }
unit_caps=-all,+net_admin,+sys_admin,+sys_ptrace
# start_activated BOUNDING LOG: the agent runs at the first connection to $sock
start_activated() {
	rm -f "$sock"
	setpriv --bounding-set="$1" systemd-socket-activate -l "$sock" \
		"$b/agent/vfagentd" --simulate "$tmp/sys" --config "$tmp/vfagent.json" >"$2" 2>&1 &
	agent_pid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	[ -S "$sock" ] || fail "systemd-socket-activate made no socket: $(cat "$2")"
}
# exited: 0 once $agent_pid ended (within 10 s) with a failure, else 1 (killed when still up)
exited() {
	for _ in $(seq 100); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.1; done
	kill "$agent_pid" 2>/dev/null && { wait "$agent_pid" || true; return 1; }
	! wait "$agent_pid"
}
# a socket in another group than socket_group: refused, naming both settings
start_activated $unit_caps "$tmp/sa1.log"
curl -s --max-time 5 --unix-socket "$sock" http://x/v1/health >/dev/null 2>&1 || true
exited || fail "the agent served a socket whose group is not socket_group"
grep -q "socket_group is \"$group\" but systemd made $sock with group root: set SocketGroup=$group" \
	"$tmp/sa1.log" || fail "group mismatch not explained: $(cat "$tmp/sa1.log")"
# the same group: served; the bounding set is the unit's, with no complaint about it
start_activated $unit_caps "$tmp/sa2.log"
chgrp "$group" "$sock"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$sock" http://x/v1/health)
[ "$code" = 200 ] || fail "socket-activated agent: HTTP $code: $(cat "$tmp/sa2.log")"
[ "$(status CapBnd)" = $want ] || fail "socket-activated CapBnd $(status CapBnd)"
[ "$(status CapEff)" = $want ] || fail "socket-activated CapEff $(status CapEff)"
grep -qi "bounding set\|setpcap\|failed" "$tmp/sa2.log" && fail "capability warning: $(cat "$tmp/sa2.log")"
api GET /v1/host/checks
expect 200
printf '%s' "$body" | jq -e --arg g "$group" '.checks[] | select(.check == "socket-group")
	| select(.status == "pass" and .subject == $g and (.fact | test("members of " + $g)))' \
	>/dev/null || fail "doctor's socket-group under socket activation: $body"
kill "$agent_pid"; wait "$agent_pid" || true
# a bounding set without CAP_NET_ADMIN: said as that, not as a bounding-set failure
start_activated -all,+sys_admin,+sys_ptrace "$tmp/sa3.log"
chgrp "$group" "$sock"
curl -s --max-time 5 --unix-socket "$sock" http://x/v1/health >/dev/null 2>&1 || true
exited || fail "the agent ran without CAP_NET_ADMIN"
grep -q "capability net_admin is not permitted to vfagentd" "$tmp/sa3.log" ||
	fail "missing CAP_NET_ADMIN not reported: $(cat "$tmp/sa3.log")"
agent_pid=
echo "privileges: all checks passed"
