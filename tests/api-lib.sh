# shellcheck shell=sh
# Helpers for the API tests: start a vfagentd on a simulated host and a temp
# socket, call it with curl, and stop it (always, even when a test fails).
# A test run by hand goes into a network namespace of its own, as make check does.
[ -n "${VFAGENT_TEST_WRAPPED:-}" ] ||
	exec sh "${top_srcdir:-.}/tests/in-netns.sh" sh "$0" "$@"
b=${top_builddir:-.}
tmp=$(mktemp -d /tmp/vfagent-api-XXXXXX)
sock=$tmp/vfagent.sock
agent_pid=
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/agent.log" ] && tail -20 "$tmp/agent.log" >&2; exit 1; }
cleanup_agent() {
	[ -z "$agent_pid" ] || { kill "$agent_pid" && wait "$agent_pid"; } 2>/dev/null || :
	agent_pid=
}
cleanup() {
	cleanup_agent
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

# Tenant namespace $1 (skip, 77, when none can be made) and the stand-in netdev of the
# simulated host's first Intel VF, ens5f0v0, both in this test's own network namespace
# (tests/in-netns.sh).
tenant_and_stand_in() {
	ip netns add "$1" || { echo "SKIP: cannot make network namespaces"; exit 77; }
	ip link add ens5f0v0 type veth peer name peer-ens5f0v0
}

start_agent() {
	"$b/agent/vfagentd" --simulate "$tmp/sys" --listen "unix:$sock" "$@" >>"$tmp/agent.log" 2>&1 &
	agent_pid=$!
	for _ in $(seq 100); do
		curl -sf --unix-socket "$sock" http://x/v1/health >/dev/null 2>&1 && return 0
		kill -0 "$agent_pid" 2>/dev/null || fail "vfagentd died: $(tail -3 "$tmp/agent.log")"
		sleep 0.1
	done
	fail "vfagentd did not answer"
}

# SIGHUP, waited for until the agent has done all it does on one (reload, rescan, sweep,
# repairs), never for a fixed time: two pending SIGHUPs are one, and the main loop handles one
# after the other, so the reload line of a second means the first is over.
reload_lines() { grep -c 'reload: ' "$tmp/agent.log" || :; }
hup_once() {
	n=$(reload_lines)
	kill -HUP "$agent_pid"
	for _ in $(seq 300); do [ "$(reload_lines)" -gt "$n" ] && return 0; sleep 0.1; done
	fail "SIGHUP not handled: no reload line"
}
hup_done() { hup_once; hup_once; }

stop_agent() {
	kill "$agent_pid"
	wait "$agent_pid" || fail "vfagentd exited $? on SIGTERM"
	agent_pid=
}

# api METHOD PATH [curl args...]: sets $code and $body
api() {
	m=$1 p=$2; shift 2
	# curl's own failure (the agent gone, a reset) is named: under set -e it ended tests silently
	code=$(curl -s -o "$tmp/body" -w '%{http_code}' --unix-socket "$sock" -X "$m" "$@" "http://x$p") ||
		fail "$m $p: curl exit $?; the agent $(kill -0 "$agent_pid" 2>/dev/null && echo runs || echo is gone)"
	body=$(cat "$tmp/body")
}

expect() {
	[ "$code" = "$1" ] || fail "$m $p: HTTP $code, wanted $1: $body"
}

jget() { printf '%s' "$body" | jq -r "$1"; }

vf_state() { api GET "/v1/vfs/$1"; jget .state; } # PCI: free, reserved, attached...

# A deployment-file test's opening (POST /v1/domain-xml): skip (77) without virt-xml-validate
# and virsh; then post_xml FILE [QUERY] posts FILE (the answer's headers in $tmp/headers),
# allocations counts the ledger's, x XPATH reads the rewrite the test kept in $tmp/out.xml,
# valid WHAT checks it against libvirt's schema, read_back WHAT defines and starts it on
# libvirt's test driver and reads it back into $tmp/back.xml.
domain_xml_test_start() {
	command -v virt-xml-validate >/dev/null && command -v virsh >/dev/null ||
		{ echo "SKIP: virt-xml-validate and virsh (libvirt-clients) are needed"; exit 77; }
	# shellcheck disable=SC2317 # called by the test
	post_xml() {
		api POST "/v1/domain-xml${2:-}" -D "$tmp/headers" --data-binary "@$1" \
			-H 'Content-Type: application/xml'
	}
	# shellcheck disable=SC2317
	allocations() { api GET /v1/allocations; jget '.allocations | length'; }
	# shellcheck disable=SC2317
	x() { xmllint --xpath "$1" "$tmp/out.xml"; }
	# shellcheck disable=SC2317
	valid() {
		virt-xml-validate "$tmp/out.xml" domain >/dev/null 2>&1 ||
			fail "$1 does not validate: $(virt-xml-validate "$tmp/out.xml" domain 2>&1)"
	}
	# shellcheck disable=SC2317
	read_back() {
		sed 's/type="kvm"/type="test"/' "$tmp/out.xml" >"$tmp/test.xml"
		n=$(xmllint --xpath 'string(/domain/name)' "$tmp/test.xml")
		virsh -q -c test:///default "define $tmp/test.xml; start $n; dumpxml $n" \
			>"$tmp/back.xml" || fail "test:///default refused $1"
	}
}

# The agent SIGKILLed at a random moment (up to about a second) while COMMAND runs again and
# again beside it, its requests in flight; the caller starts it again. For crash tests: the
# restart must resolve whatever the kill left half done.
kill_agent_amid() { # COMMAND [ARGS...]
	(while :; do "$@" >/dev/null 2>&1 || :; done) &
	cycler=$!
	sleep "0.$(od -An -N1 -tu1 /dev/urandom | tr -d ' ')"
	kill -9 "$agent_pid"
	wait "$agent_pid" 2>/dev/null || true
	kill "$cycler" 2>/dev/null || :
	wait "$cycler" 2>/dev/null || :
	agent_pid=
}

vfctl() { VFAGENT_SOCKET=$sock "$b/agent/vfctl/vfctl" "$@"; }

# config_refused JSON TEXT: vfagentd refuses to start on that config, with TEXT (the field) in
# its message
config_refused() {
	printf '%s' "$1" >"$tmp/bad.json"
	set +e; "$b/agent/vfagentd" --simulate "$tmp/sys" --config "$tmp/bad.json" --once \
		2>"$tmp/bad.log"; rc=$?; set -e
	[ "$rc" != 0 ] && grep -qF "$2" "$tmp/bad.log" || fail "config $1: exit $rc: $(cat "$tmp/bad.log")"
}
