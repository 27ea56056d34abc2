#!/bin/sh
# What oned believes after a poweroff, and the host holds: oned keeps a
# powered-off VM's capacity and PCI devices booked (LifeCycleStates.cc
# trigger_shutdown_success frees nothing in SHUTDOWN_POWEROFF; the monitor
# moving a VM whose guest powered itself off to POWEROFF frees nothing
# either), frees them when the VM is terminated (its epilog deletes the
# VM's directory, no VMM action), undeployed or terminated from RUNNING
# (shutdown or cancel with LCM_STATE SHUTDOWN_UNDEPLOY 29 or SHUTDOWN 12).
# Each action runs as one_vmm_exec.rb calls it (tests/one/harness.sh), the
# driver message with the LCM_STATE oned sets before it
# (LifeCycleActions.cc). Checked: every VF of the VM (its SR-IOV bridges'
# NICs and the PCI device oned booked) stays reserved for it while it is
# powered off, offered to nobody, and its resume takes the same ones back;
# a terminate of a powered-off or suspended VM gives them back within
# seconds (the agent watches the file, no sweep waited for).
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
. "$top_srcdir/tests/one/harness.sh"
one_test_start
one_host_start h1
mkdir -p "$ONE_DIR/h1/remotes/im"
cp "$top_srcdir/hooks/one/im/vfagent-pci.sh" "$ONE_DIR/h1/remotes/im/"

dep=$top_srcdir/tests/one/deployment.0
uuid=5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9e01
dir=/var/lib/one//datastores/0/7
nfree() { one_api h1 '/v1/vfs?state=free' '.vfs | length'; }
states() { one_api h1 "/v1/allocations?owner=vm:$1" '[.allocations[] | .state] | sort | join(",")'; }
vfs_of() { one_api h1 "/v1/allocations?owner=vm:$1" '[.allocations[].vfs[].pci] | sort | join(" ")'; }
offered() { one_ssh h1 'sh /var/tmp/one/im/vfagent-pci.sh' </dev/null | grep -c '^PCI = \[' || :; }
# the VM with LCM_STATE $1, as oned sets it before the action
vm_in() { sed "s#<LCM_STATE>2</LCM_STATE>#<LCM_STATE>$1</LCM_STATE>#" "$top_srcdir/tests/one/vm.xml" >"$ONE_DIR/vm-$1.xml"; }
action() { # ACTION LCM_STATE DEPLOY_ID
	vm_in "$2"
	one_message "$ONE_DIR/vm-$2.xml" "$3" h1 | one_action h1 "$1" 7 "$3" h1
}
# waits for VM $1's allocations to be $2: the agent's own work, bounded at 30 s only so that
# a release that never comes fails (a loaded machine took over 5 s for three); below the
# minute of quiet after which the agent sweeps anyway, and the log line checked after the
# terminate names the file watch, so "no sweep waited for" still holds
settles() { # UUID STATES
	for _ in $(seq 300); do [ "$(states "$1")" = "$2" ] && return 0; sleep 0.1; done
	return 1
}
all_free=$(nfree)
all_offered=$(offered)

step "deploy VM 7: three VFs of its SR-IOV bridges' NICs"
out=$(one_deploy h1 7 "$dep" "$top_srcdir/tests/one/vm.xml") || fail "deploy: $out"
[ "$(states $uuid)" = attached,attached,attached ] || fail "after deploy: $(states $uuid)"
vfs=$(vfs_of $uuid)
[ "$(nfree)" = $((all_free - 3)) ] || fail "three VFs taken: $(nfree) free"

for a in shutdown cancel; do
	step "poweroff ($a, LCM_STATE SHUTDOWN_POWEROFF 18): every VF kept for the VM, offered to nobody"
	action $a 18 $uuid || fail "$a"
	[ "$(states $uuid)" = reserved,reserved,reserved ] || fail "after poweroff: $(states $uuid)"
	[ "$(vfs_of $uuid)" = "$vfs" ] && [ "$(nfree)" = $((all_free - 3)) ] ||
		fail "after poweroff: $(vfs_of $uuid), $(nfree) free"
	[ "$(offered)" = $((all_offered - 3)) ] || fail "the probe offers a VF of the powered-off VM"
	step "resume (a deploy of a file with no <uuid>): the same VFs, under the same domain UUID"
	sed '/<uuid>/d' "$dep" >"$ONE_DIR/dep-nouuid"
	out=$(one_deploy h1 7 "$ONE_DIR/dep-nouuid" "$top_srcdir/tests/one/vm.xml") || fail "resume: $out"
	[ "$out" = $uuid ] || fail "resume printed $out, not the domain the VFs were kept for"
	[ "$(states $uuid)" = attached,attached,attached ] && [ "$(vfs_of $uuid)" = "$vfs" ] ||
		fail "after resume: $(states $uuid) $(vfs_of $uuid), was $vfs"
	[ "$(nfree)" = $((all_free - 3)) ] || fail "the resume claimed more: $(nfree) free"
done

step "the guest powers itself off (no action; oned's monitor moves the VM to POWEROFF): VFs kept"
one_virsh h1 "destroy $uuid" >/dev/null || fail "destroy"
settles $uuid reserved,reserved,reserved || fail "after the guest's poweroff: $(states $uuid)"
[ "$(vfs_of $uuid)" = "$vfs" ] && [ "$(nfree)" = $((all_free - 3)) ] || fail "VFs given away"

step "terminate the powered-off VM (its epilog deletes its directory): VFs back within seconds"
one_ssh h1 "rm -rf $dir" </dev/null
settles $uuid "" || fail "after terminate: $(states $uuid)"
[ "$(nfree)" = "$all_free" ] || fail "after terminate: $(nfree) free"
grep -q "held while a file existed, and both it and its owner are gone: releasing" \
	"$ONE_DIR/h1/agent.log" || fail "the release is not logged"

for lcm in 12 29; do
	step "terminate or undeploy (LCM_STATE $lcm) from RUNNING: VFs back"
	one_deploy h1 7 "$dep" "$top_srcdir/tests/one/vm.xml" >/dev/null || fail "deploy"
	action shutdown $lcm $uuid || fail "shutdown"
	settles $uuid "" || fail "after LCM_STATE $lcm: $(states $uuid)"
	[ "$(nfree)" = "$all_free" ] || fail "after LCM_STATE $lcm: $(nfree) free"
done

step "a PCI device oned booked, powered off and resumed: the same VF, never offered meanwhile"
pci=$(one_api h1 '/v1/vfs?pool=eth&state=free' '.vfs[0].pci')
printf '<VM><ID>12</ID><LCM_STATE>2</LCM_STATE><TEMPLATE><PCI><TYPE>NIC</TYPE><NETWORK>sriov</NETWORK><DOMAIN>%s</DOMAIN><BUS>%s</BUS><SLOT>%s</SLOT><FUNCTION>%s</FUNCTION><VENDOR>8086</VENDOR><CLASS>0200</CLASS><MAC>02:00:c0:a8:05:0c</MAC></PCI></TEMPLATE></VM>' \
	"$(echo "$pci" | cut -d: -f1)" "$(echo "$pci" | cut -d: -f2)" \
	"$(echo "$pci" | cut -d: -f3 | cut -d. -f1)" "$(echo "$pci" | cut -d. -f2)" >"$ONE_DIR/vm-12.xml"
sed -e "s/one-43/one-12/" -e "/<uuid>/d" \
	-e "s#</devices>#<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x$(echo "$pci" | cut -d: -f1)' bus='0x$(echo "$pci" | cut -d: -f2)' slot='0x$(echo "$pci" | cut -d: -f3 | cut -d. -f1)' function='0x$(echo "$pci" | cut -d. -f2)'/></source></hostdev></devices>#" \
	"$top_srcdir/tests/one/no-sriov.xml" >"$ONE_DIR/dep-12.xml"
dep12() { one_ssh h1 "/bin/mkdir -p /var/lib/one//datastores/0/12 && /bin/cat - >/var/lib/one//datastores/0/12/vm.xml" <"$ONE_DIR/vm-12.xml" &&
	one_action h1 deploy 12 /var/lib/one//datastores/0/12/deployment.0 h1 <"$ONE_DIR/dep-12.xml"; }
u12=$(dep12) || fail "deploy of VM 12: $u12"
[ "$(one_api h1 "/v1/vfs/$pci" .state)" = attached ] || fail "VF $pci not attached"
one_message "$ONE_DIR/vm-12.xml" "$u12" h1 | sed 's#<LCM_STATE>2<#<LCM_STATE>18<#' |
	one_action h1 shutdown 12 "$u12" h1 || fail "poweroff of VM 12"
[ "$(states "$u12")" = reserved ] || fail "VM 12's VF after poweroff: $(states "$u12")"
one_ssh h1 'sh /var/tmp/one/im/vfagent-pci.sh' </dev/null | grep -q "SHORT_ADDRESS = \"${pci#0000:}\"" &&
	fail "the probe offers VM 12's booked VF"
out=$(dep12) || fail "resume of VM 12: $out"
[ "$out" = "$u12" ] && [ "$(states "$u12")" = attached ] && [ "$(vfs_of "$u12")" = "$pci" ] ||
	fail "VM 12 resumed as $out: $(states "$u12") $(vfs_of "$u12")"

step "a suspended VM's checkpoint deleted (terminate): its VFs back within seconds, not at a sweep"
one_message "$ONE_DIR/vm-12.xml" "$u12" h1 | sed 's#<LCM_STATE>2<#<LCM_STATE>18<#' |
	one_action h1 shutdown 12 "$u12" h1 || fail "poweroff of VM 12"
id=$(one_api h1 "/v1/allocations?owner=vm:$u12" '.allocations[0].id')
ckpt=/var/lib/one//datastores/0/12/checkpoint
one_ssh h1 ": >$ckpt && curl -sf --unix-socket /run/vfagent/vfagent.sock -X POST -d '{\"hold_while\":\"$ckpt\"}' http://x/v1/allocations/$id/hold" \
	</dev/null >/dev/null || fail "hold on the checkpoint"
sleep 1 # what must not happen: a release while the checkpoint exists, given a second
[ "$(states "$u12")" = reserved ] || fail "released while its checkpoint exists"
one_ssh h1 "rm -rf /var/lib/one//datastores/0/12" </dev/null
settles "$u12" "" || fail "kept after its checkpoint went: $(states "$u12")"
[ "$(nfree)" = "$all_free" ] || fail "after terminate: $(nfree) free"

step "a powered-off VM undeployed on a shared system datastore (its directory stays): oned books its device for another VM, whose deploy takes it back"
u12=$(dep12) || fail "deploy of VM 12: $u12"
one_message "$ONE_DIR/vm-12.xml" "$u12" h1 | sed 's#<LCM_STATE>2<#<LCM_STATE>18<#' |
	one_action h1 shutdown 12 "$u12" h1 || fail "poweroff of VM 12"
[ "$(states "$u12")" = reserved ] || fail "VM 12's VF after poweroff: $(states "$u12")"
# (undeploy from POWEROFF: no VMM action, and tm mv leaves a shared directory where it is)
sed -e 's#<ID>12</ID>#<ID>13</ID>#' -e 's/05:0c/05:0d/' "$ONE_DIR/vm-12.xml" >"$ONE_DIR/vm-13.xml"
sed -e 's/one-12/one-13/' "$ONE_DIR/dep-12.xml" >"$ONE_DIR/dep-13.xml"
one_ssh h1 "/bin/mkdir -p /var/lib/one//datastores/0/13 && /bin/cat - >/var/lib/one//datastores/0/13/vm.xml" <"$ONE_DIR/vm-13.xml"
out=$(one_action h1 deploy 13 /var/lib/one//datastores/0/13/deployment.0 h1 <"$ONE_DIR/dep-13.xml" 2>"$ONE_DIR/err") ||
	fail "VM 13 on the VF oned freed: $(cat "$ONE_DIR/err")"
grep -q "VF $pci was kept for VM one-12 since its domain ended" "$ONE_DIR/err" || fail "not said: $(cat "$ONE_DIR/err")"
[ -z "$(states "$u12")" ] && [ "$(vfs_of "$out")" = "$pci" ] && [ "$(states "$out")" = attached ] ||
	fail "VM 12: $(states "$u12"); VM 13: $(states "$out") $(vfs_of "$out")"
echo "PASS"
