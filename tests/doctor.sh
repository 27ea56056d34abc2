#!/bin/sh
# vfctl doctor: every check passes on a well-kept simulated host, and each
# fails (or warns) alone when one fact of the tree is spoiled; the agent's
# GET /v1/host/checks gives the same lines plus libvirt's; this machine's
# real host is checked too.
set -eu
b=${top_builddir:-.}
. "${top_srcdir:-.}/tests/api-lib.sh"

vfctl_local() { "$b/agent/vfctl/vfctl" doctor --local -r "$tmp/sys" --proc-root "$tmp/proc" \
	--modules-dir "$tmp/mods" --config-file "$tmp/vfagent.json" "$@"; }

# doctor EXIT: runs the local doctor into $tmp/out and checks its exit status
doctor() {
	set +e; vfctl_local >"$tmp/out" 2>"$tmp/err"; rc=$?; set -e
	[ "$rc" = "$1" ] || fail "doctor exit $rc, wanted $1: $(cat "$tmp/out" "$tmp/err")"
	bad=$(grep -Ev '^(PASS|SKIP|WARN|FAIL)  ' "$tmp/out" || true)
	[ -z "$bad" ] || fail "lines not of the form STATUS CHECK FACT: $bad"
}
# line STATUS CHECK-AND-SUBJECT TEXT: that line is in the output and says TEXT
line() {
	grep -E "^$1  $2 " "$tmp/out" | grep -qF -- "$3" ||
		fail "no '$1 $2 … $3' line: $(cat "$tmp/out")"
}
# only STATUS: every line but those of PASS/SKIP is this one
only() {
	n=$(grep -Ec '^(WARN|FAIL)' "$tmp/out" || true)
	[ "$n" = 1 ] || fail "$n warnings and failures, wanted only '$1': $(cat "$tmp/out")"
	grep -qE "^(WARN|FAIL)  $1 " "$tmp/out" || fail "the one line is not $1: $(cat "$tmp/out")"
}

# a well-kept host: IOMMU on, vfio-pci a module, SR-IOV on, ports active, exclusive RDMA
"$b/agent/vfagentd" --simulate "$tmp/sys" --once 2>"$tmp/agent.log"
mkdir -p "$tmp/proc" "$tmp/mods"
echo 'BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt' >"$tmp/proc/cmdline"
printf 'processor\t: 0\nvendor_id\t: GenuineIntel\n' >"$tmp/proc/cpuinfo"
echo 'kernel/drivers/vfio/pci/vfio-pci.ko: kernel/drivers/vfio/pci/vfio-pci-core.ko' >"$tmp/mods/modules.dep"
cat >"$tmp/vfagent.json" <<'JSON'
{ "pools": [ { "name": "ib", "selector": { "vendors": ["15b3"] } },
             { "name": "eth", "selector": { "vendors": ["8086"] } } ],
  "socket_group": "root" }
JSON
doctor 0
line PASS iommu '21 IOMMU groups; kernel command line: intel_iommu=on iommu=pt'
line PASS vfio-pci 'vfio-pci is loaded'
line PASS iommu-groups 'each of 14 VFs has an IOMMU group of its own'
line PASS 'sriov 0000:3b:00.0' 'mlx5_core, infiniband: 4 of 16 VFs'
line PASS 'sriov 0000:5e:00.0' 'mlx4_core: 4 of 4 VFs, set by num_vfs=4'
line PASS 'ib-port mlx5_0/1' 'ACTIVE, LinkUp, SM lid 0x1'
line PASS rdma-netns exclusive
line PASS config "$tmp/vfagent.json: 2 pools"
line PASS 'socket-group root' 'group root is gid 0'
line PASS 'pool ib' '8 VFs'
line PASS 'pool eth' '6 VFs'

# -o json: the same report, with the worst status
vfctl_local -o json >"$tmp/json"
[ "$(jq -r .status "$tmp/json")" = pass ] || fail "json status: $(cat "$tmp/json")"
[ "$(jq '.checks | length' "$tmp/json")" = "$(wc -l <"$tmp/out")" ] || fail "json has other lines"
[ "$(jq -r '.checks[] | select(.check == "sriov" and .subject == "0000:af:00.0") | .fact' \
	"$tmp/json")" = "ice, ethernet: 4 of 128 VFs" ] || fail "json sriov fact"
[ "$(jq '[.checks[] | select(.fix != null)] | length' "$tmp/json")" = 0 ] || fail "fix on a pass"

# IOMMU off: no groups; the fix depends on the command line and the CPU
mv "$tmp/sys/kernel/iommu_groups" "$tmp/groups"
echo 'BOOT_IMAGE=/vmlinuz root=/dev/sda1' >"$tmp/proc/cmdline"
doctor 2
line FAIL iommu 'kernel command line: none (fix: add intel_iommu=on iommu=pt to the kernel command line'
line SKIP iommu-groups 'no IOMMU'
grep -c '^FAIL' "$tmp/out" | grep -qx 1 || fail "IOMMU off failed more than its check"
echo 'root=/dev/sda1 intel_iommu=on' >"$tmp/proc/cmdline"
doctor 2
line FAIL iommu 'enable VT-d in the firmware setup'
printf 'vendor_id\t: AuthenticAMD\n' >"$tmp/proc/cpuinfo"
doctor 2
line FAIL iommu 'AMD-Vi'
mv "$tmp/groups" "$tmp/sys/kernel/iommu_groups"
printf 'vendor_id\t: GenuineIntel\n' >"$tmp/proc/cpuinfo"
doctor 0

# vfio-pci: loaded, a module (compressed or not), or nowhere
mv "$tmp/sys/bus/pci/drivers/vfio-pci" "$tmp/vfio-pci"
doctor 0
line PASS vfio-pci "a module of this kernel ($tmp/mods), loaded on first use"
echo 'kernel/drivers/vfio/pci/vfio-pci.ko.xz:' >"$tmp/mods/modules.dep"
doctor 0
echo 'kernel/drivers/net/igb/igb.ko:' >"$tmp/mods/modules.dep"
doctor 2
only vfio-pci
line FAIL vfio-pci 'neither loaded nor a module of this kernel'
rm "$tmp/mods/modules.dep"
doctor 1
line WARN vfio-pci 'modules.dep is unreadable'
mv "$tmp/vfio-pci" "$tmp/sys/bus/pci/drivers/vfio-pci"

# a VF sharing its IOMMU group with another device
vf=$(readlink -f "$tmp/sys/bus/pci/devices/0000:af:01.0")
grp=$(readlink -f "$vf/iommu_group")
ln -s "$(readlink -f "$tmp/sys/bus/pci/devices/0000:02:00.0")" "$grp/devices/0000:02:00.0"
doctor 1
only iommu-groups
line WARN iommu-groups '1 of 14 VFs share their IOMMU group (first: 0000:af:01.0 with 0000:02:00.0)'
rm "$grp/devices/0000:02:00.0"

# SR-IOV off in the firmware: totalvfs 0 (mstconfig, Debian's mstflint, for Mellanox, the BIOS for Intel)
pf=$(readlink -f "$tmp/sys/bus/pci/devices/0000:3b:00.0")
cp "$pf/sriov_totalvfs" "$tmp/total"
echo 0 >"$pf/sriov_totalvfs"
doctor 2
only 'sriov 0000:3b:00.0'
line FAIL 'sriov 0000:3b:00.0' 'fix: mstconfig -d 0000:3b:00.0 set SRIOV_EN=1 NUM_OF_VFS=16 (package mstflint)'
cp "$tmp/total" "$pf/sriov_totalvfs"
pf=$(readlink -f "$tmp/sys/bus/pci/devices/0000:d8:00.0")
cp "$pf/sriov_totalvfs" "$tmp/total"
echo 0 >"$pf/sriov_totalvfs"
doctor 2
line FAIL 'sriov 0000:d8:00.0' 'enable SR-IOV for 0000:d8:00.0 in the firmware (BIOS/UEFI) setup'
cp "$tmp/total" "$pf/sriov_totalvfs"

# a Mellanox function whose firmware hides SR-IOV (no sriov_* files)
d=$tmp/sys/devices/pci0000:00/0000:00:04.0/0000:04:00.0
mkdir -p "$d"
echo 0x15b3 >"$d/vendor"; echo 0x020700 >"$d/class"; echo 0x1017 >"$d/device"
ln -s ../../../devices/pci0000:00/0000:00:04.0/0000:04:00.0 "$tmp/sys/bus/pci/devices/0000:04:00.0"
doctor 2
only 'sriov 0000:04:00.0'
line FAIL 'sriov 0000:04:00.0' 'without an SR-IOV capability'
rm "$tmp/sys/bus/pci/devices/0000:04:00.0"

# mlx4: the VF count is the module's
pf=$(readlink -f "$tmp/sys/bus/pci/devices/0000:5e:00.0")
echo 0 >"$pf/sriov_numvfs"; echo 0 >"$tmp/sys/module/mlx4_core/parameters/num_vfs"
doctor 2
only 'sriov 0000:5e:00.0'
line FAIL 'sriov 0000:5e:00.0' "options mlx4_core num_vfs=8 probe_vf=0"
echo 4 >"$pf/sriov_numvfs"; echo 4 >"$tmp/sys/module/mlx4_core/parameters/num_vfs"

# IB ports: INIT (no subnet manager), DOWN (no link)
port=$(readlink -f "$tmp/sys/class/infiniband/mlx5_0")/ports/1
echo '2: INIT' >"$port/state"; echo 0x0 >"$port/sm_lid"
doctor 1
only 'ib-port mlx5_0/1'
line WARN 'ib-port mlx5_0/1' 'no subnet manager has configured the port (fix: run a subnet manager'
echo '1: DOWN' >"$port/state"; echo '2: Polling' >"$port/phys_state"
doctor 1
line WARN 'ib-port mlx5_0/1' 'DOWN (Polling): VFs on this port get no link (fix: check the cable'
echo '4: ACTIVE' >"$port/state"; echo '5: LinkUp' >"$port/phys_state"; echo 0x1 >"$port/sm_lid"

# RDMA devices shared by every namespace
echo Y >"$tmp/sys/module/ib_core/parameters/netns_mode"
doctor 1
only rdma-netns
line WARN rdma-netns 'rdma system set netns exclusive'
echo N >"$tmp/sys/module/ib_core/parameters/netns_mode"

# the config: a missing group, a pool that matches nothing, a key it does not know
cp "$tmp/vfagent.json" "$tmp/good.json"
sed -i 's/"root"/"vfagent-nosuchgroup"/' "$tmp/vfagent.json"
doctor 2
only 'socket-group vfagent-nosuchgroup'
line FAIL 'socket-group vfagent-nosuchgroup' 'groupadd --system vfagent-nosuchgroup'
cp "$tmp/good.json" "$tmp/vfagent.json"
sed -i 's/"8086"/"1af4"/' "$tmp/vfagent.json"
doctor 1
only 'pool eth'
line WARN 'pool eth' 'its selector matches no VF of this host'
echo '{ "pools": [], "frobnicate": 1 }' >"$tmp/vfagent.json"
doctor 2
only config
line FAIL config 'frobnicate'
rm "$tmp/vfagent.json"
doctor 2
line FAIL config "$tmp/vfagent.json: No such file or directory (fix: write it"
cp "$tmp/good.json" "$tmp/vfagent.json"
doctor 0

# the agent's view: the same checks, and libvirt's connection
start_agent --config "$tmp/vfagent.json"
api GET /v1/host/checks
expect 200
[ "$(jget '[.checks[] | select(.check == "config")] | length')" = 1 ] || fail "agent: config line"
[ "$(jget '.checks[] | select(.check == "libvirt") | .status')" != null ] || fail "no libvirt line: $body"
api GET '/v1/host/checks?verbose=1'
expect 400
set +e; vfctl doctor >"$tmp/out"; rc=$?; set -e
grep -qE '^(PASS|WARN)  libvirt ' "$tmp/out" || fail "vfctl doctor via the agent: $(cat "$tmp/out")"
case $rc in 0|1) ;; *) fail "vfctl doctor via the agent: exit $rc: $(cat "$tmp/out")" ;; esac
! grep -q 'security-groups' "$tmp/out" || fail "security groups named with none kept: $(cat "$tmp/out")"
# a VM's NIC whose claim carries OpenNebula security groups (deploy passes the NIC's
# SECURITY_GROUPS): no rule of theirs reaches its VF, and doctor warns, naming the VM, the NIC's
# MAC, its VF and the groups; a claim without groups, or given back, is not named
u=6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c
api POST /v1/allocations -d '{"pool": "eth", "mac": "02:00:c0:a8:02:07", "security_groups": [101, 0],
	"owner": {"kind": "vm", "name": "one-7", "uuid": "'$u'"}}'
expect 201; sg_id=$(jget .id); sg_pci=$(jget '.vfs[0].pci')
[ "$(jget '.settings.security_groups | map(tostring) | join(",")')" = 0,101 ] || fail "groups kept: $body"
api POST /v1/allocations -d '{"pool": "eth", "mac": "02:00:c0:a8:02:08", "owner": {"kind": "vm", "name": "one-8"}}'
expect 201; other_id=$(jget .id)
for bad in '"0,101"' '[-1]' '["0"]' '[2147483648]' "[$(seq -s, 0 32)]"; do
	api POST /v1/allocations -d '{"pool": "eth", "security_groups": '"$bad"', "owner": {"kind": "vm", "name": "one-9"}}'
	expect 400
	jget .message | grep -q '^security_groups: not a list of at most 32 security group ids' ||
		fail "security_groups $bad: $body"
done
set +e; vfctl doctor >"$tmp/out"; rc=$?; set -e
[ "$rc" = 1 ] || [ "$rc" = 2 ] || fail "doctor with a VF's security groups: exit $rc: $(cat "$tmp/out")"
line WARN 'security-groups one-7' "NIC 02:00:c0:a8:02:07 of VM one-7 (domain $u): security groups 0,101 do not apply to its VF $sg_pci (allocation $sg_id)"
line WARN 'security-groups one-7' '(fix: filter in the guest or on the switch'
[ "$(grep -c 'security-groups' "$tmp/out")" = 1 ] || fail "one NIC with groups, one line: $(cat "$tmp/out")"
api GET /v1/host/checks
[ "$(jget '[.checks[] | select(.check == "security-groups" and .status == "warn") | .subject] | join(",")')" = one-7 ] ||
	fail "checks: $body"
api DELETE "/v1/allocations/$sg_id"; expect 204
api DELETE "/v1/allocations/$other_id"; expect 204
set +e; vfctl doctor >"$tmp/out"; set -e
! grep -q 'security-groups' "$tmp/out" || fail "a given-back claim's groups named: $(cat "$tmp/out")"
stop_agent
set +e; vfctl doctor >/dev/null 2>"$tmp/err"; rc=$?; set -e
[ "$rc" = 2 ] && [ -s "$tmp/err" ] || fail "doctor without an agent: exit $rc"

# this machine's real host: every line well formed; no SR-IOV here, so at least one failure
set +e; "$b/agent/vfctl/vfctl" doctor --local --config-file "$tmp/vfagent.json" >"$tmp/out"; rc=$?; set -e
bad=$(grep -Ev '^(PASS|SKIP|WARN|FAIL)  ' "$tmp/out" || true)
[ -z "$bad" ] || fail "real host: lines not well formed: $bad"
grep -q '^[A-Z]*  iommu ' "$tmp/out" && grep -q '^[A-Z]*  vfio-pci ' "$tmp/out" ||
	fail "real host: checks missing: $(cat "$tmp/out")"
if [ -z "$(ls /sys/class/net/*/device/sriov_totalvfs 2>/dev/null)" ]; then
	[ "$rc" = 2 ] && line FAIL sriov 'no SR-IOV PF under /sys/bus/pci/devices'
fi
echo "doctor: all checks passed"
sed "s/^/  real host: /" "$tmp/out"
