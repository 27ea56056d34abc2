#!/bin/sh
# Run by contrib/deb-test.sh inside the fresh Debian 12 root, as root: "booted"
# (systemd is PID 1 of a systemd-nspawn container) or "chroot" (no systemd:
# the unit's settings checked by systemd-analyze, the agent run by hand under
# the unit's bounding set). One line per step.
set -eu
mode=$1
fail() { echo "deb-test: FAIL: $*" >&2; exit 1; }
ok() { echo "deb-test: ok: $*"; }
export DEBIAN_FRONTEND=noninteractive
want_bnd=0000000000281000 # net_admin, sys_ptrace, sys_admin: the README's set

apt-get install -y -q /root/debs/*.deb >/root/apt.log 2>&1 ||
	fail "apt-get install: $(tail -n 5 /root/apt.log)"
grep -qi "warning\|error" /root/apt.log && fail "apt-get install complains: $(grep -i 'warning\|error' /root/apt.log)"
ok "apt-get install vfagent vfagent-opennebula vfagent-opennebula-node"
getent group vfagent >/dev/null || fail "the package made no group vfagent"
ok "group vfagent: $(getent group vfagent)"
[ -s /etc/vfagent/vfagent.json ] || fail "no /etc/vfagent/vfagent.json"
# the daemon never writes its config (numvfs --persist keeps counts in the ledger): a conffile,
# so an upgrade keeps the admin's edits and asks before replacing them
dpkg-query -W -f='${Conffiles}\n' vfagent | grep -q '^ /etc/vfagent/vfagent.json ' ||
	fail "/etc/vfagent/vfagent.json is not a conffile: $(dpkg-query -W -f='${Conffiles}' vfagent)"
[ -d /var/lib/vfagent ] || fail "no /var/lib/vfagent"
useradd --create-home --groups vfagent vfaop
as_op() { runuser -u vfaop -- "$@"; }

# a simulated host: ConnectX and E810 PFs with VFs, built by the agent in its state dir
mkdir -p /etc/systemd/system/vfagentd.service.d
cat >/etc/systemd/system/vfagentd.service.d/simulate.conf <<'EOF'
[Service]
ExecStart=
ExecStart=/usr/sbin/vfagentd --simulate /var/lib/vfagent/sim --config /etc/vfagent/vfagent.json --state-dir /var/lib/vfagent
EOF
cat >/etc/vfagent/vfagent.json <<'EOF'
{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "socket_group": "vfagent",
 "libvirt": false}
EOF

main_pid() { systemctl show -P MainPID vfagentd.service; }
figure() { echo "deb-test: figure: $*"; }
# microseconds of a monotonic timestamp property of vfagentd.service
usec() { systemctl show -P "$1" vfagentd.service; }

# The figures of a booted start: the container's boot, the agent's start to READY=1, the
# unit's exposure (systemd-analyze security, lower is safer).
start_to_ready() {
	figure "container boot: $(systemd-analyze time 2>/dev/null | sed -n 's/^Startup finished in //p')"
	t0=$(usec ExecMainStartTimestampMonotonic) t1=$(usec ActiveEnterTimestampMonotonic)
	figure "vfagentd start to ready (simulated host): $(((t1 - t0) / 1000)) ms"
	figure "exposure: $(systemd-analyze security vfagentd.service 2>/dev/null |
		sed -n 's/.*Overall exposure level for vfagentd.service: //p')"
}

# The autopkgtests of debian/tests, each as autopkgtest runs it (root, its own
# AUTOPKGTEST_TMP), on this booted system.
run_autopkgtests() {
	sed -n 's/^Tests: //p' /root/tests/control | tr ' ' '\n' | while read -r t; do
		dir=$(mktemp -d)
		AUTOPKGTEST_TMP=$dir sh "/root/tests/$t" >"/root/autopkgtest-$t.log" 2>&1 ||
			fail "autopkgtest $t: $(tail -n 15 "/root/autopkgtest-$t.log")"
		rm -rf "$dir"
		ok "autopkgtest $t: $(grep -c '^ok: ' "/root/autopkgtest-$t.log") steps passed"
	done
}

# libvirt's client library removed (a Recommends): the agent serves, says it once with the
# package, and doctor and GET /v1/host say so too
without_libvirt() {
	apt-get remove -y -q libvirt0 >/root/remove.log 2>&1 || fail "apt-get remove libvirt0: $(tail -n 3 /root/remove.log)"
	sed -i 's/"libvirt": false/"libvirt": {"uri": "test:\/\/\/default"}/' /etc/vfagent/vfagent.json
	systemctl reset-failed vfagentd.service || :
	systemctl restart vfagentd.service
	wait_active
	inv=$(systemctl show -P InvocationID vfagentd.service)
	n=$(journalctl --no-pager _SYSTEMD_INVOCATION_ID="$inv" | grep -c "cannot load libvirt" || true)
	[ "$n" = 1 ] || fail "the journal says $n times that libvirt is missing: $(journalctl -u vfagentd --no-pager | tail -n 5)"
	journalctl --no-pager _SYSTEMD_INVOCATION_ID="$inv" | grep "cannot load libvirt" | grep -q "apt-get install libvirt0" ||
		fail "the journal does not name libvirt0"
	[ "$(systemctl show -P NRestarts vfagentd.service)" = 0 ] || fail "vfagentd restarted without libvirt"
	as_op vfctl doctor >/root/doctor.txt 2>&1 || :
	grep -A2 '^WARN  libvirt ' /root/doctor.txt | grep -q 'apt-get install libvirt0' ||
		fail "doctor without libvirt: $(cat /root/doctor.txt)"
	as_op curl -s --unix-socket /run/vfagent/vfagent.sock http://x/v1/host |
		grep -q '"status": *"cannot load libvirt: .*install libvirt0' || fail "GET /v1/host without libvirt"
	id=$(as_op vfctl alloc eth2 --owner vm:deb-test -o json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n 1)
	[ -n "$id" ] && as_op vfctl release "$id" >/dev/null || fail "a claim without libvirt"
	ok "without libvirt0: active, no restart, said once, doctor WARNs naming libvirt0, claims served"
}

# A config that does not load: 5 starts, then the unit stops (its start limit), the reason in
# systemctl status, the socket stopped so that vfctl is refused at once; then back
fatal_config() {
	cp /etc/vfagent/vfagent.json /root/good.json
	echo '{ "pools": 7 }' >/etc/vfagent/vfagent.json
	systemctl reset-failed vfagentd.service || :
	t0=$(date +%s)
	systemctl restart vfagentd.service 2>/dev/null || :
	# failed, and not restarting again: the start limit
	for _ in $(seq 600); do
		[ "$(systemctl show -P ActiveState vfagentd.service)" = failed ] &&
			journalctl -u vfagentd.service --no-pager --since "@$t0" |
			grep -q "Start request repeated too quickly" && break
		sleep 0.1
	done
	[ "$(systemctl show -P ActiveState vfagentd.service)" = failed ] ||
		fail "a config that does not load: $(systemctl status --no-pager vfagentd | tail -n 5)"
	journalctl -u vfagentd.service --no-pager --since "@$t0" | grep -q "Start request repeated too quickly" ||
		fail "the start limit is not in the journal"
	for s in vfagentd.socket vfagentd-cni.socket; do
		figure "$s after the start limit: $(systemctl show -P ActiveState $s), $(systemctl show -P Result $s)"
	done
	# NRestarts counts the restart the start limit refused too: the starts are the exits
	figure "a fatal config: the unit stopped after $(($(date +%s) - t0)) s, $(journalctl -u vfagentd.service \
		--no-pager --since "@$t0" | grep -c 'status=78/CONFIG') starts exited 78," \
		"NRestarts $(systemctl show -P NRestarts vfagentd.service)"
	systemctl status --no-pager -n 20 vfagentd.service >/root/status.txt 2>&1 || :
	# systemd 252 prints "Main PID: N (code=exited, status=78)" and the agent's STATUS= (its
	# journal lines may have scrolled out of status's: systemd's own of the last tries)
	grep -q 'Main PID: .*(code=exited, status=78' /root/status.txt &&
		grep -q 'Status: "not started: /etc/vfagent/vfagent.json does not load' /root/status.txt ||
		fail "systemctl status does not say why: $(cat /root/status.txt)"
	figure "systemctl status: $(grep -o 'status=78' /root/status.txt | head -n 1)," \
		"$(grep 'Status:' /root/status.txt | sed 's/^ *//')"
	t0=$(date +%s)
	set +e; timeout 60 runuser -u vfaop -- vfctl pools 2>/root/vfctl.err; rc=$?; set -e
	[ "$rc" = 1 ] && grep -q "agent not running\|nothing answered\|closed the connection unanswered" /root/vfctl.err ||
		fail "vfctl with the unit stopped: exit $rc: $(cat /root/vfctl.err)"
	figure "vfctl with the unit stopped: $(($(date +%s) - t0)) s: $(cat /root/vfctl.err)"
	cp /root/good.json /etc/vfagent/vfagent.json
	systemctl reset-failed vfagentd.service vfagentd.socket vfagentd-cni.socket || :
	systemctl start vfagentd.socket vfagentd-cni.socket
	wait_active
	ok "a fatal config stopped the unit and its sockets (start limit, the reason in systemctl status); after the fix, the sockets started and vfctl's connect started the agent"
}

booted_steps() {
	run_autopkgtests
	without_libvirt
	fatal_config
}
# vfctl first: its connect starts a stopped service through the socket (after a fatal
# config, the sockets alone are started again)
wait_active() {
	for _ in $(seq 100); do
		as_op vfctl pools >/dev/null 2>&1 && systemctl is-active --quiet vfagentd.service && return 0
		sleep 0.1
	done
	fail "vfagentd did not come up: $(systemctl status --no-pager vfagentd.service | tail -n 5)"
}

if [ "$mode" = booted ]; then
	systemctl is-active --quiet vfagentd.socket || fail "vfagentd.socket is not active after install"
	systemctl is-active --quiet vfagentd.service || fail "vfagentd.service is not active after install: $(systemctl status --no-pager vfagentd.service | tail -n 5)"
	systemctl is-active --quiet vfagentd-cni.socket || fail "vfagentd-cni.socket is not active after install"
	[ "$(stat -c '%a %U %G' /run/vfagent/vfagent-cni.sock)" = "600 root root" ] ||
		fail "the CNI socket is $(stat -c '%a %U %G' /run/vfagent/vfagent-cni.sock)"
	ok "vfagentd.socket, vfagentd-cni.socket (600 root) and vfagentd.service active after install (default config, no libvirt, no /run/netns)"
	systemctl daemon-reload
	systemctl restart vfagentd.service
	wait_active
	pid=$(main_pid)
	bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' "/proc/$pid/status")
	[ "$bnd" = $want_bnd ] || fail "CapBnd $bnd, wanted $want_bnd"
	journalctl -u vfagentd --no-pager | grep -qi "setpcap\|bounding set" &&
		fail "capability warning in the journal"
	ok "bounding set $bnd, no capability warning"
	[ "$(stat -c '%a %G' /run/vfagent/vfagent.sock)" = "660 vfagent" ] ||
		fail "socket is $(stat -c '%a %G' /run/vfagent/vfagent.sock)"
else
	systemd-analyze verify /lib/systemd/system/vfagentd.socket /lib/systemd/system/vfagentd.service ||
		fail "systemd-analyze verify"
	ok "systemd-analyze verify of the installed units"
	mkdir -p /run/vfagent
	rm -f /run/vfagent/vfagent.sock
	setpriv --bounding-set=-all,+net_admin,+sys_admin,+sys_ptrace systemd-socket-activate \
		-l /run/vfagent/vfagent.sock /usr/sbin/vfagentd --simulate /var/lib/vfagent/sim \
		--config /etc/vfagent/vfagent.json --state-dir /var/lib/vfagent >/root/agent.log 2>&1 &
	apid=$!
	for _ in $(seq 50); do [ -S /run/vfagent/vfagent.sock ] && break; sleep 0.1; done
	chgrp vfagent /run/vfagent/vfagent.sock && chmod 0660 /run/vfagent/vfagent.sock
	as_op vfctl pools >/dev/null || fail "the agent under the unit's bounding set: $(cat /root/agent.log)"
	bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' "/proc/$apid/status")
	[ "$bnd" = $want_bnd ] || fail "CapBnd $bnd, wanted $want_bnd"
	grep -qi "setpcap\|bounding set" /root/agent.log && fail "capability warning: $(cat /root/agent.log)"
	ok "agent under the unit's bounding set: CapBnd $bnd, no capability warning"
fi

# a member of the group, not root, claims and releases a VF
id=$(as_op vfctl alloc eth --owner vm:deb-test -o json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n 1)
[ -n "$id" ] || fail "vfaop could not claim a VF"
as_op vfctl release "$id" >/dev/null || fail "vfaop could not release $id"
ok "vfaop (not root, group vfagent) claimed and released $id"
as_op vfctl doctor >/root/doctor.txt 2>&1 || [ $? -le 2 ] || fail "vfctl doctor: $(cat /root/doctor.txt)"
grep -q "socket-group" /root/doctor.txt || fail "doctor did not run its checks: $(cat /root/doctor.txt)"
ok "vfctl doctor: $(grep -c . /root/doctor.txt) checks"

if [ "$mode" = booted ]; then
	sed -i 's/"name": "eth"/"name": "eth2"/' /etc/vfagent/vfagent.json
	systemctl reload vfagentd.service
	for _ in $(seq 50); do as_op vfctl pools | grep -q eth2 && break; sleep 0.1; done
	as_op vfctl pools | grep -q eth2 || fail "systemctl reload did not take the config change"
	ok "systemctl reload took a config change"
	old=$(main_pid)
	kill -9 "$old"
	for _ in $(seq 100); do
		new=$(main_pid)
		[ "$new" != 0 ] && [ "$new" != "$old" ] && systemctl is-active --quiet vfagentd.service && break
		sleep 0.1
	done
	[ "$new" != 0 ] && [ "$new" != "$old" ] || fail "kill -9 was not restarted: $(systemctl status --no-pager vfagentd | tail -n 3)"
	wait_active
	ok "kill -9 of $old restarted as $new"
	start_to_ready
	booted_steps
else
	kill "$apid"; wait "$apid" || true
	echo "deb-test: skip: systemctl reload and the restart after kill -9 need a booted systemd"
fi

rm -rf /etc/systemd/system/vfagentd.service.d # the operator's drop-in is the operator's
apt-get purge -y -q vfagent vfagent-opennebula vfagent-opennebula-node >/root/purge.log 2>&1 ||
	fail "apt purge: $(tail -n 5 /root/purge.log)"
left=$(find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /root \) -prune -o \
	-name '*vfagent*' -print 2>/dev/null | grep -v '^/home/' || true)
figure "purge leftovers: $(printf '%s' "$left" | grep -c . || true) files"
[ -z "$left" ] || fail "apt purge left: $left"
getent group vfagent >/dev/null || fail "the system group went with the purge (Debian keeps it)"
ok "apt purge: nothing left but the system group vfagent"
