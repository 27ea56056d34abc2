#!/bin/sh
# OpenNebula books the VFs: the IM probe's PCI = [...] devices go through an
# imitation of oned's host share, its scheduler's test and its booking
# (each step names the OpenNebula source it imitates, OpenNebula/one
# src/host/HostSharePCI.cc), then the deploy action runs as one_vmm_exec.rb
# calls it (tests/one/harness.sh) on a host with a real libvirtd (test
# driver) and agent. Checked: the VF oned chose is the one the guest gets,
# with its NIC's MAC and VLAN; one VF is never booked or given twice; a VF
# a container takes between two probe runs fails that deploy cleanly and
# leaves oned's list at the next run; with the agent down nothing is
# offered, the booked VF stays booked, and a VM without VFs still deploys;
# a detach_nic whose guest keeps the VF fails, so oned keeps the booking.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
. "$top_srcdir/tests/one/harness.sh"
one_test_start
one_host_start h1
mkdir -p "$ONE_DIR/h1/remotes/im"
cp "$top_srcdir/hooks/one/im/vfagent-pci.sh" "$ONE_DIR/h1/remotes/im/"
share=$ONE_DIR/share # oned's host share of h1: "ADDRESS VENDOR DEVICE CLASS VMID" a line
: >"$share"

# The SYSTEM_HOST probes' output merged into the share, as HostSharePCI::set_monitorization
# (HostSharePCI.cc 522-620): a device seen for the first time joins with VMID -1; one the probe
# no longer prints leaves unless a VM has it booked (VMID != -1); the others stay as they are.
monitor() {
	one_ssh h1 'sh /var/tmp/one/im/vfagent-pci.sh' </dev/null >"$ONE_DIR/probe" ||
		fail "the probe failed the host"
	awk -F' = ' '/^ *ADDRESS/ {a=$2} /^ *VENDOR =/ {v=$2} /^ *DEVICE =/ {d=$2}
		/^ *CLASS =/ {c=$2} /^\]/ {gsub(/[",]/, "", a); gsub(/[",]/, "", v);
		gsub(/[",]/, "", d); gsub(/[",]/, "", c); print a, v, d, c}' "$ONE_DIR/probe" |
		sort >"$ONE_DIR/seen"
	awk -v s="$ONE_DIR/seen" 'FILENAME == s {seen[$1] = $0; next}
		{if ($1 in seen || $5 != -1) print; delete seen[$1]}
		END {for (a in seen) print seen[a], -1}' "$ONE_DIR/seen" "$share" | sort >"$share.new"
	mv "$share.new" "$share"
}

# A VM's PCI = [VENDOR, CLASS] tested and booked on the host, as HostSharePCI::test_by_name and
# add_by_name (HostSharePCI.cc 110-142, 304-346): the first device in address order (the share
# is a std::map keyed by ADDRESS) that matches and has VMID -1 gets the VM's id. Its ADDRESS on
# stdout; nothing and status 1 when none fits (the scheduler leaves the VM pending).
book() { # VM_ID VENDOR CLASS
	a=$(awk -v v="$2" -v c="$3" '$2 == v && $4 == c && $5 == -1 {print $1; exit}' "$share")
	[ -n "$a" ] || return 1
	awk -v a="$a" -v id="$1" '$1 == a {$5 = id} {print}' "$share" >"$share.new"
	mv "$share.new" "$share"
	echo "$a"
}
unbook() { awk -v id="$1" '$5 == id {$5 = -1} {print}' "$share" >"$share.new"; mv "$share.new" "$share"; }
booked_to() { awk -v a="$1" '$1 == a {print $5}' "$share"; }

# vm.xml and the deployment file of VM ID with the device oned booked: the VM's PCI entry gets
# the host device's DOMAIN, BUS, SLOT, FUNCTION, ADDRESS, SHORT_ADDRESS, VENDOR, DEVICE, CLASS
# (HostSharePCI::pci_attribute, HostSharePCI.cc 199-237) and its network's lease (MAC,
# VLAN_ID); LibVirtDriverKVM.cc (2384-2400) writes a plain managed <hostdev> of the address.
vm_files() { # VM_ID ADDRESS MAC VLAN
	dom=${2%%:*} rest=${2#*:}
	bus=${rest%%:*} rest=${rest#*:}
	slot=${rest%%:*} fn=${rest#*:}
	printf '<VM><ID>%s</ID><LCM_STATE>2</LCM_STATE><TEMPLATE><PCI><TYPE>NIC</TYPE><NETWORK>sriov</NETWORK><VN_MAD>vfagent</VN_MAD><DOMAIN>%s</DOMAIN><BUS>%s</BUS><SLOT>%s</SLOT><FUNCTION>%s</FUNCTION><ADDRESS>%s</ADDRESS><SHORT_ADDRESS>%s:%s.%s</SHORT_ADDRESS><VENDOR>8086</VENDOR><CLASS>0200</CLASS><MAC>%s</MAC><VLAN_ID>%s</VLAN_ID></PCI></TEMPLATE></VM>' \
		"$1" "$dom" "$bus" "$slot" "$fn" "$2" "$bus" "$slot" "$fn" "$3" "$4" >"$ONE_DIR/vm-$1.xml"
	sed -e "s/one-43/one-$1/" -e "/<uuid>/d" \
		-e "s#</devices>#<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x$dom' bus='0x$bus' slot='0x$slot' function='0x$fn'/></source></hostdev></devices>#" \
		"$top_srcdir/tests/one/no-sriov.xml" >"$ONE_DIR/dep-$1.xml"
}
pci_of() { echo "$1" | sed 's/^\(.*\):\([0-7]\)$/\1.\2/'; }
nfree() { one_api h1 '/v1/vfs?pool=eth&state=free' '.vfs | length'; }

step "monitor: the Ethernet pool's free VFs reach the share as host PCI devices"
monitor
n=$(awk '$2 == "8086" && $4 == "0200"' "$share" | wc -l)
[ "$n" = "$(nfree)" ] && [ "$n" -gt 1 ] || fail "share has $n Ethernet VFs, the agent $(nfree) free"

step "deploy VM 7 on the VF oned booked: that VF, with the NIC's MAC and VLAN, before it starts"
a7=$(book 7 8086 0200) || fail "no VF booked"
vm_files 7 "$a7" 02:00:c0:a8:05:07 205
uuid=$(one_deploy h1 7 "$ONE_DIR/dep-7.xml" "$ONE_DIR/vm-7.xml") || fail "deploy: $uuid"
one_virsh h1 "dumpxml $uuid" >"$ONE_DIR/live.xml" || fail "no domain $uuid"
x() { xmllint --xpath "$1" "$ONE_DIR/live.xml"; }
[ "$(x 'string(//interface[@type="hostdev"]/mac/@address)')" = 02:00:c0:a8:05:07 ] || fail "MAC"
[ "$(x 'string(//interface[@type="hostdev"]/vlan/tag/@id)')" = 205 ] || fail "VLAN"
[ "$(one_api h1 "/v1/vfs/$(pci_of "$a7")" '.state')" = attached ] || fail "VF $a7 not attached"
[ "$(x 'count(//hostdev)')" = 0 ] || fail "oned's hostdev left in place"

step "every other VM asking for an Ethernet VF gets one of its own, the rest none"
monitor
[ "$(booked_to "$a7")" = 7 ] || fail "the monitor dropped VM 7's booking"
got="" id=20
while a=$(book $id 8086 0200); do got="$got $a"; id=$((id + 1)); done
[ "$(echo "$got" | wc -w)" = "$(nfree)" ] || fail "booked$got, the agent has $(nfree) free"
[ "$(echo "$got $a7" | tr ' ' '\n' | grep . | sort | uniq -d)" = "" ] || fail "a VF booked twice"
for i in $(seq 20 $((id - 1))); do unbook "$i"; done

step "a container takes a VF between two probe runs: the VM oned gives it to fails cleanly"
a9=$(book 9 8086 0200)
# (this shell stands in for the container's process)
out=$(one_ssh h1 "curl -s --unix-socket /run/vfagent/vfagent.sock -X POST -d '{\"pci\":\"$(pci_of "$a9")\",\"owner\":{\"kind\":\"container\",\"pid\":$$}}' http://x/v1/allocations" </dev/null)
[ "$(printf '%s' "$out" | jq -r '.vfs[0].pci')" = "$(pci_of "$a9")" ] || fail "the container's claim: $out"
vm_files 9 "$a9" 02:00:c0:a8:05:09 209
before=$(nfree)
if out=$(one_deploy h1 9 "$ONE_DIR/dep-9.xml" "$ONE_DIR/vm-9.xml" 2>&1); then fail "deployed on a taken VF"; fi
case $out in *"is not free"*) ;; *) fail "deploy: $out" ;; esac
[ "$(one_api h1 '/v1/allocations?owner=vm:one-9' '.allocations | length')" = 0 ] || fail "VM 9 kept a claim"
[ "$(nfree)" = "$before" ] || fail "the failed deploy took VFs"
unbook 9 # oned's failed deploy gives the capacity back
monitor
[ -z "$(booked_to "$a9")" ] || fail "the container's VF is still offered to oned"

step "a NIC on an SR-IOV bridge takes a VF oned has not booked: the next run takes it off oned's list"
# (the agent picks such a VM's VF itself: attach_nic and deploy claim for owner one-<ID>)
a11=$(awk '$2 == "8086" && $5 == -1 {print $1; exit}' "$share")
out=$(one_ssh h1 "curl -s --unix-socket /run/vfagent/vfagent.sock -X POST -d '{\"pci\":\"$(pci_of "$a11")\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-11\"}}' http://x/v1/allocations" </dev/null)
id11=$(printf '%s' "$out" | jq -r .id)
[ "$(printf '%s' "$out" | jq -r '.vfs[0].pci')" = "$(pci_of "$a11")" ] || fail "VM 11's claim: $out"
monitor
[ -z "$(booked_to "$a11")" ] || fail "VM 11's VF is still offered to oned: $(grep "$a11" "$share")"
one_ssh h1 "curl -s --unix-socket /run/vfagent/vfagent.sock -X DELETE http://x/v1/allocations/$id11" </dev/null >/dev/null
monitor
[ "$(booked_to "$a11")" = -1 ] || fail "VM 11's VF given back is not offered again"

step "detach_nic of a PCI NIC whose guest never acknowledges: fails naming the VF and its domain, oned keeps the booking; a retry fails alike, succeeds once the VF is out"
monitor
a12=$(book 12 8086 0200) || fail "no VF booked for VM 12"
vm_files 12 "$a12" 02:00:c0:a8:05:0c 212
u12=$(one_deploy h1 12 "$ONE_DIR/dep-12.xml" "$ONE_DIR/vm-12.xml") || fail "deploy of VM 12: $u12"
# the guest ignores the unplug (the simulated host's stand-in for it; tests/vm-detach.sh)
pci_of "$a12" >"$ONE_DIR/h1/sim/sim-unplug-ignored"
# the driver message of a PCI NIC's detach: VM/TEMPLATE/PCI[ATTACH='YES'] (one_vmm_exec.rb)
sed 's#<TYPE>NIC</TYPE>#<TYPE>NIC</TYPE><ATTACH>YES</ATTACH>#' "$ONE_DIR/vm-12.xml" >"$ONE_DIR/vm-12-detach.xml"
detach12() {
	one_message "$ONE_DIR/vm-12-detach.xml" "$u12" h1 |
		one_action h1 detach_nic 12 "$u12" 02:00:c0:a8:05:0c 2>&1
}
if out=$(detach12); then fail "detach_nic of a VF the guest keeps succeeded: $out"; fi
case $out in *"VF $(pci_of "$a12") stays in domain $u12 (VM 12)"*"unplug not acknowledged"*) ;;
*) fail "VF and holder not named: $out" ;; esac
[ "$(one_api h1 "/v1/vfs/$(pci_of "$a12")" .state)" = quarantined ] || fail "VF $a12 not kept out"
# oned's detach_nic failure keeps the NIC and its booking (LifeCycleStates.cc, clear_attach_nic)
monitor
[ "$(booked_to "$a12")" = 12 ] || fail "VF $a12 no longer booked to VM 12"
if out=$(detach12); then fail "a retry while the guest keeps the VF succeeded: $out"; fi
case $out in *"VF $(pci_of "$a12") stays in domain $u12"*) ;; *) fail "retry: $out" ;; esac
rm "$ONE_DIR/h1/sim/sim-unplug-ignored"
one_virsh h1 "destroy $u12" >/dev/null || fail "destroy VM 12"
for _ in $(seq 100); do [ "$(one_api h1 "/v1/vfs/$(pci_of "$a12")" .state)" = free ] && break; sleep 0.1; done
st=$(one_api h1 "/v1/vfs/$(pci_of "$a12")" .state)
[ "$st" = free ] || fail "VF $(pci_of "$a12") is $st 10 s after its domain's end, wanted free"
# the VF out of the guest (here its domain's end): the retry succeeds, oned frees the booking
out=$(detach12) || fail "a retry once the VF is out: $out"
unbook 12 # detach_nic success: HostSharePCI::del
monitor
[ "$(booked_to "$a12")" = -1 ] || fail "VF $a12 not offered again once out"

step "the agent down: nothing offered, VM 7's booking kept, a VM without VFs still deploys"
one_agent_kill h1 || fail "the agent of h1 did not end"
monitor
grep -q '^VFAGENT_STATUS = "the agent does not answer' "$ONE_DIR/probe" || fail "status: $(cat "$ONE_DIR/probe")"
[ "$(awk '$5 == -1' "$share" | wc -l)" = 0 ] || fail "free VFs still offered: $(cat "$share")"
[ "$(booked_to "$a7")" = 7 ] || fail "VM 7's VF left the share"
printf '<VM><ID>8</ID><TEMPLATE/></VM>' >"$ONE_DIR/vm-8.xml"
sed -e 's/one-43/one-8/' -e 's/8f6fd3c5/8f6fd3c8/' "$top_srcdir/tests/one/no-sriov.xml" >"$ONE_DIR/dep-8.xml"
one_deploy h1 8 "$ONE_DIR/dep-8.xml" "$ONE_DIR/vm-8.xml" >/dev/null 2>&1 || fail "a VM without VFs"
vm_files 10 "$a7" 02:00:c0:a8:05:0a 210
if one_deploy h1 10 "$ONE_DIR/dep-10.xml" "$ONE_DIR/vm-10.xml" >/dev/null 2>&1; then
	fail "a VM with a VF of the agent's deployed without it"
fi
echo "PASS"
