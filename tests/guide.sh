#!/bin/sh
# test-needs: mounts
# vfagent-guide(7) walked on a simulated host (ConnectX IB at 3b:00.0, E810 ens5f0 at
# af:00.0): its config, read from the page, loads and gives both PFs the VFs its numvfs
# rules want, and pools ib and eth VFs; its two hosts' GUID ranges do not overlap; the
# files it copies for vfio-pci and RDMA exclusive mode say what it says (ib_core's
# parameter checked against this kernel's module when there is one); a VF goes into a
# namespace and back as it shows; a numvfs rule dropped as it says leaves the PF as it
# is until vfctl numvfs PF 0.
set -eu
b=${top_builddir:-.}
top=${top_srcdir:-.}
. "$top/tests/api-lib.sh"
page=$top/contrib/vfagent-guide.7
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }

# the page's config, as an operator copies it (groff's \- and \(aq back to - and ')
sed -n '/^\.\\" guide.sh: the config/,/^\.EE/p' "$page" | sed '1,2d; $d' |
	sed 's/\\-/-/g; s/\\(aq/'"'"'/g' >"$tmp/vfagent.json"
jq -e . "$tmp/vfagent.json" >/dev/null || fail "the guide's config is not JSON: $(cat "$tmp/vfagent.json")"
getent group vfagent >/dev/null || sed -i 's/"socket_group": "vfagent"/"socket_group": "root"/' "$tmp/vfagent.json"
"$b/agent/vfagentd" --check-config --config "$tmp/vfagent.json" 2>"$tmp/check" ||
	fail "the guide's config does not load: $(cat "$tmp/check")"
grep -q ': 2 pools' "$tmp/check" || fail "--check-config: $(cat "$tmp/check")"
echo "ok: the guide's config loads: $(cat "$tmp/check")"

# GUID ranges of the guide's hosts: [first, first + count) apart
ranges=$(sed -n 's/^host [0-9]*: *"guids": { "first": "\([0-9a-f:]*\)", "count": \([0-9]*\) }$/\1 \2/p' "$page")
[ "$(printf '%s\n' "$ranges" | grep -c .)" = 2 ] || fail "the guide's per-host GUID ranges: $ranges"
printf '%s\n' "$ranges" | tr -d : | while read -r first count; do
	echo "$((0x$first)) $((0x$first + count))"
done | sort -n | { read -r _ end1; read -r start2 _; [ "$end1" -le "$start2" ]; } ||
	fail "the guide's GUID ranges overlap: $ranges"
grep -q "$(printf '%s\n' "$ranges" | head -n 1 | cut -d' ' -f1)" "$tmp/vfagent.json" ||
	fail "the config's range is not host 1's"
echo "ok: the guide's GUID ranges do not overlap"

# the files it copies
grep -qx 'vfio-pci' "$top/contrib/modules-load.d/vfagent.conf" || fail "modules-load.d/vfagent.conf"
grep -qx 'options ib_core netns_mode=0' "$top/contrib/modprobe.d/vfagent-rdma.conf" || fail "modprobe.d"
for f in modules-load.d/vfagent.conf modprobe.d/vfagent-rdma.conf; do
	sed 's/\\-/-/g' "$page" | grep -q "^cp /usr/share/doc/vfagent/examples/$f /etc/${f%/*}/$" ||
		fail "the guide does not copy $f"
done
if modinfo -p ib_core >/dev/null 2>&1; then
	modinfo -p ib_core | grep -q '^netns_mode:' || fail "this kernel's ib_core has no netns_mode"
	echo "ok: this kernel's ib_core takes netns_mode"
fi
echo "ok: the files for vfio-pci and RDMA exclusive mode"

# the agent on it: numvfs rules applied, pools with VFs
start_agent --config "$tmp/vfagent.json"
api GET /v1/pfs
expect 200
for pf in 0000:3b:00.0 0000:af:00.0; do
	n=$(printf '%s' "$body" | jq -r --arg pf "$pf" '.pfs[] | select(.pci == $pf) | .numvfs')
	[ "$n" = 8 ] || fail "$pf has $n VFs, the guide's rule wants 8: $body"
done
vfctl pools >"$tmp/pools"
grep -q '^ib ' "$tmp/pools" && grep -q '^eth ' "$tmp/pools" || fail "vfctl pools: $(cat "$tmp/pools")"
echo "ok: 8 VFs on each PF, pools ib and eth"
set +e; vfctl doctor >"$tmp/doctor" 2>&1; rc=$?; set -e
grep -qE "^PASS  config +$tmp/vfagent.json: 2 pools" "$tmp/doctor" || fail "doctor: $(cat "$tmp/doctor")"
echo "ok: vfctl doctor (exit $rc)"

# containers: the guide's commands
tenant_and_stand_in demo
id=$(vfctl -o json alloc eth --owner netns:demo --netns demo --ifname eth1 | jq -r .id)
ip -n demo link show eth1 >/dev/null || fail "no eth1 in demo"
vfctl allocations | grep -q "$id" || fail "vfctl allocations does not list $id"
vfctl release "$id" >/dev/null || fail "vfctl release $id"
ip netns del demo
echo "ok: a VF into demo as eth1 and back"

# a numvfs rule dropped: the PF keeps its VFs until vfctl numvfs PF 0
jq '.numvfs |= map(select(.pf != "0000:3b:00.0"))' "$tmp/vfagent.json" >"$tmp/new.json"
mv "$tmp/new.json" "$tmp/vfagent.json"
hup_done # its reload and numvfs rules applied (api-lib.sh)
grep -q "reload: 2 pools" "$tmp/agent.log" || fail "SIGHUP on 2 pools: $(grep 'reload: ' "$tmp/agent.log")"
api GET /v1/pfs/0000:3b:00.0
[ "$(jget .numvfs)" = 8 ] || fail "dropping the rule resized the PF: $body"
vfctl numvfs 0000:3b:00.0 0 >/dev/null || fail "vfctl numvfs 0000:3b:00.0 0"
api GET /v1/pfs/0000:3b:00.0
[ "$(jget .numvfs)" = 0 ] || fail "vfctl numvfs 0: $body"
echo "ok: a rule dropped: the PF kept 8 VFs until vfctl numvfs 0000:3b:00.0 0"
# a count persisted earlier comes before the rules until the guide's --forget
grep -q '^vfctl numvfs 0000:3b:00.0 \\-\\-forget$' "$page" || fail "the guide's --forget line"
vfctl numvfs 0000:af:00.0 4 --persist >/dev/null || fail "persist"
hup_done # its reload and numvfs rules applied (api-lib.sh)
api GET /v1/pfs/0000:af:00.0
[ "$(jget .numvfs)" = 4 ] || fail "the persisted count: $body"
vfctl numvfs 0000:af:00.0 --forget >"$tmp/out" || fail "forget: $(cat "$tmp/out")"
vfctl numvfs 0000:af:00.0 0 >/dev/null
hup_done # the rule (8) decides again
api GET /v1/pfs/0000:af:00.0
[ "$(jget .numvfs)" = 8 ] || fail "after --forget the rule does not decide: $body"
echo "ok: a persisted count dropped with --forget: the rule decides again"
echo "guide: all checks passed"
