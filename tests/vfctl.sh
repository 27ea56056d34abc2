#!/bin/sh
# vfctl --local end to end on a simulated host: table, JSON, show, exit codes.
set -eu
b=${top_builddir:-.}
tmp=$(mktemp -d /tmp/vfctl-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$b/agent/vfagentd" --simulate "$tmp/sys" --once 2>"$tmp/agent.log"
grep -q '4 PFs, 14 VFs under' "$tmp/agent.log" || fail "agent summary: $(cat "$tmp/agent.log")"

vfctl() { "$b/agent/vfctl/vfctl" "$@"; }

# table: PF rows with their VFs indented under them
vfctl --sysfs-root "$tmp/sys" list >"$tmp/table"
[ "$(head -1 "$tmp/table" | awk '{print $1}')" = PCI ] || fail "no header"
grep -q '^0000:3b:00.0 .*mlx5_core .*infiniband .*4/16$' "$tmp/table" || fail "CX6 row: $(cat "$tmp/table")"
grep -q '^  0000:3b:00.2 .*vfio-pci ' "$tmp/table" || fail "vfio VF row"
grep -q '^0000:5e:00.0 .*4/4 (fixed)$' "$tmp/table" || fail "mlx4 row not marked fixed"
[ "$(grep -c '^0000:' "$tmp/table")" = 4 ] || fail "PF rows"
[ "$(grep -c '^  0000:' "$tmp/table")" = 14 ] || fail "VF rows"

# JSON through the environment variable instead of the option
VFAGENT_SYSFS_ROOT="$tmp/sys" vfctl list --local -o json >"$tmp/list.json"
if command -v jq >/dev/null; then
	[ "$(jq '.pfs | length' "$tmp/list.json")" = 4 ] || fail "json pfs"
	[ "$(jq '[.pfs[].vfs[]] | length' "$tmp/list.json")" = 14 ] || fail "json vfs"
	[ "$(jq -r '.pfs[0].vfs[2].driver' "$tmp/list.json")" = null ] || fail "unbound VF driver"
	[ "$(jq -r '.pfs[1].numvfs_writable' "$tmp/list.json")" = false ] || fail "mlx4 writable"
	[ "$(jq -r '.pfs[3].numa_node' "$tmp/list.json")" = -1 ] || fail "numa -1"
fi

vfctl -r "$tmp/sys" show 0000:af:01.2 | grep -q '^netdev  *ens5f0v2$' || fail "show VF"
vfctl -r "$tmp/sys" -o json show 0000:d8:00.0 | grep -q '"totalvfs": 63' || fail "show PF json"

# exit codes: 1 on error with one line on stderr, 2 on bad usage
expect() {
	code=$1; shift
	set +e; vfctl "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; set -e
	[ "$rc" = "$code" ] || fail "vfctl $*: exit $rc, wanted $code"
	if [ "$code" != 0 ]; then
		[ "$(wc -l <"$tmp/err")" -ge 1 ] || fail "vfctl $*: no message"
		[ ! -s "$tmp/out" ] || fail "vfctl $*: wrote to stdout on error"
	fi
}
expect 1 -r /nonexistent/root list
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "more than one line for a missing root"
grep -q 'cannot read /nonexistent/root/bus/pci/devices: No such file' "$tmp/err" || fail "missing-root message"
expect 1 -r "$tmp/sys" show 0000:00:00.0
grep -q 'no SR-IOV PF or VF at 0000:00:00.0' "$tmp/err" || fail "not-found message"
expect 2 -r "$tmp/sys" show ../../etc
expect 2 -r "$tmp/sys" show
expect 2 -r "$tmp/sys" list extra
expect 2 frobnicate
expect 2 -o yaml list
expect 2
expect 1 -r relative/root list
expect 0 --help
expect 0 --version
# the example config of contrib/ parses and reconciles
src=${top_srcdir:-.}
"$b/agent/vfagentd" --simulate "$tmp/sys" --config "$src/contrib/vfagent.json" \
	--state-dir "$tmp/state2" --once 2>"$tmp/example.log" || fail "example config: $(cat "$tmp/example.log")"
bash -n "$src/contrib/bash-completion/vfctl" || fail "bash completion does not parse"
# bind: bad input is a usage error; a host without the kernel's bind files says so
set +e
vfctl --sysfs-root "$tmp/sys" bind 0000:zz vfio-pci 2>"$tmp/err"; rc=$?
set -e
[ $rc = 2 ] && grep -q 'not a PCI address' "$tmp/err" || fail "bind, bad address: $rc $(cat "$tmp/err")"
set +e
vfctl --sysfs-root "$tmp/sys" bind 0000:99:00.1 vfio-pci 2>"$tmp/err"; rc=$?
set -e
[ $rc = 1 ] && grep -q 'bind 0000:99:00.1' "$tmp/err" || fail "bind, no device: $rc $(cat "$tmp/err")"
# libcurl is loaded only to talk to the agent: with a libcurl.so.4 that lacks its symbols first
# on the library path, --local works and a command for the agent says what is wrong
if command -v "${CC:-cc}" >/dev/null; then
	mkdir "$tmp/lib"
	printf 'int not_curl;\n' >"$tmp/lib/empty.c"
	"${CC:-cc}" -shared -fPIC -o "$tmp/lib/libcurl.so.4" "$tmp/lib/empty.c"
	LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" vfctl -r "$tmp/sys" list --local \
		-o json >"$tmp/nocurl.json" || fail "list --local needed libcurl"
	cmp -s "$tmp/nocurl.json" "$tmp/list.json" || fail "list --local without libcurl differs"
	set +e
	LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" VFAGENT_SOCKET="$tmp/none.sock" \
		vfctl pools >"$tmp/out" 2>"$tmp/err"; rc=$?
	set -e
	[ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q 'libcurl.so.4 has no curl_global_init' "$tmp/err" ||
		fail "a broken libcurl: exit $rc, $(cat "$tmp/err")"
	set +e
	VFAGENT_SOCKET="$tmp/none.sock" vfctl pools 2>"$tmp/err"; rc=$?
	set -e
	[ $rc = 1 ] && grep -q "agent not running (cannot connect to $tmp/none.sock: no such socket)" "$tmp/err" ||
		fail "no agent: exit $rc, $(cat "$tmp/err")"
	# a socket that takes connections nobody answers (systemd's, while vfagentd fails to
	# start): vfctl says so after its probe, not after --timeout (120 s; timeout 60 ends it)
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16); time.sleep(300)' \
		"$tmp/mute.sock" &
	mute=$!
	for _ in $(seq 300); do [ -S "$tmp/mute.sock" ] && break; sleep 0.1; done
	[ -S "$tmp/mute.sock" ] || fail "no socket $tmp/mute.sock in 5 s"
	set +e
	VFAGENT_SOCKET="$tmp/mute.sock" timeout 60 "$b/agent/vfctl/vfctl" pools 2>"$tmp/err"; rc=$?
	set -e
	kill "$mute"; wait "$mute" 2>/dev/null || true
	[ $rc = 1 ] && grep -q "mute.sock takes connections but nothing answered within 15 s: vfagentd is starting, hung, or failing to start (systemctl status vfagentd" "$tmp/err" ||
		fail "a socket nobody serves: exit $rc (124: timeout), $(cat "$tmp/err")"
	# one that closes each connection unanswered (the socket unit stopping)
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16)
while True:
    c, _ = s.accept(); c.close()' "$tmp/closing.sock" &
	closing=$!
	for _ in $(seq 300); do [ -S "$tmp/closing.sock" ] && break; sleep 0.1; done
	[ -S "$tmp/closing.sock" ] || fail "no socket $tmp/closing.sock in 5 s"
	set +e
	VFAGENT_SOCKET="$tmp/closing.sock" timeout 60 "$b/agent/vfctl/vfctl" doctor 2>"$tmp/err"; rc=$?
	set -e
	kill "$closing"; wait "$closing" 2>/dev/null || true
	grep -q "closing.sock closed the connection unanswered: vfagentd stopped or failed to start" "$tmp/err" ||
		fail "a socket closed unanswered: exit $rc, $(cat "$tmp/err")"
	set +e
	VFAGENT_SOCKET="$tmp/none.sock" vfctl doctor >/dev/null 2>"$tmp/err"; rc=$?
	set -e
	[ $rc = 2 ] && grep -q 'without the agent, .vfctl doctor --local. checks this host' "$tmp/err" ||
		fail "doctor with no agent: exit $rc, $(cat "$tmp/err")"
fi
echo "vfctl: all checks passed"
