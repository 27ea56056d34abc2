#!/bin/sh
# A config file that no longer loads: vfagentd --check-config (the unit's first ExecReload)
# exits 1 naming the field, so systemctl reload fails; a SIGHUP keeps the running config and
# says so; a start on it exits 78 (EX_CONFIG); vfctl doctor FAILs the file on disk, naming the running config as kept (it checked
# the config in memory under the file's name and said PASS); a corrected file passes again.
set -eu
b=${top_builddir:-.}
. "${top_srcdir:-.}/tests/api-lib.sh"

cat >"$tmp/vfagent.json" <<'JSON'
{ "pools": [ { "name": "eth", "selector": { "vendors": ["8086"] } } ], "libvirt": false }
JSON
cp "$tmp/vfagent.json" "$tmp/good.json"
"$b/agent/vfagentd" --check-config --config "$tmp/vfagent.json" 2>"$tmp/check" ||
	fail "--check-config of a good file: $(cat "$tmp/check")"
grep -q "config $tmp/vfagent.json: 1 pools" "$tmp/check" || fail "--check-config said: $(cat "$tmp/check")"
start_agent --config "$tmp/vfagent.json"

sed -i 's/"name": "eth"/"name": 7/' "$tmp/vfagent.json"
set +e; "$b/agent/vfagentd" --check-config --config "$tmp/vfagent.json" 2>"$tmp/check"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'pools\[0\]\.name: missing or not a string' "$tmp/check" ||
	fail "--check-config of a broken file: exit $rc: $(cat "$tmp/check")"
echo "ok: --check-config exits 1: $(cat "$tmp/check")"
set +e; "$b/agent/vfagentd" --simulate "$tmp/sys2" --config "$tmp/vfagent.json" --once 2>"$tmp/start"; rc=$?; set -e
[ $rc = 78 ] || fail "a start on a config that does not load exits $rc, wanted 78 (EX_CONFIG): $(cat "$tmp/start")"
echo "ok: a start on it exits 78 (systemd says status=78/CONFIG)"

hup_once # (api-lib.sh)
grep -q "reload: keeping the running config" "$tmp/agent.log" || fail "SIGHUP: $(tail -3 "$tmp/agent.log")"
vfctl pools | grep -q '^eth ' || fail "the running config is gone: $(vfctl pools)"

set +e; vfctl doctor >"$tmp/doctor" 2>&1; rc=$?; set -e
[ $rc = 2 ] || fail "doctor exit $rc with a broken file on disk, wanted 2: $(cat "$tmp/doctor")"
grep -E "^FAIL  config $tmp/vfagent.json " "$tmp/doctor" | grep -q 'pools\[0\]\.name: missing or not a string' ||
	fail "doctor does not FAIL the file on disk: $(cat "$tmp/doctor")"
grep -A2 -E "^FAIL  config " "$tmp/doctor" | grep -q "systemctl reload vfagentd" ||
	fail "doctor's fix: $(cat "$tmp/doctor")"
grep -E "^PASS  config " "$tmp/doctor" |
	grep -q "the running config (kept: $tmp/vfagent.json on disk does not load): 1 pools" ||
	fail "doctor does not name the running config as kept: $(cat "$tmp/doctor")"
echo "ok: doctor: $(grep -E '^(PASS|FAIL)  config ' "$tmp/doctor" | tr -s ' ' | tr '\n' ';')"

cp "$tmp/good.json" "$tmp/vfagent.json"
set +e; vfctl doctor >"$tmp/doctor" 2>&1; set -e
grep -qE "^FAIL  config" "$tmp/doctor" && fail "a corrected file still FAILs: $(cat "$tmp/doctor")"
grep -qE "^PASS  config +$tmp/vfagent.json: 1 pools" "$tmp/doctor" || fail "doctor: $(cat "$tmp/doctor")"
echo "reload-refused: all checks passed"
