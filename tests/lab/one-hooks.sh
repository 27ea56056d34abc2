# shellcheck shell=sh
# OpenNebula's kvm-sriov actions (hooks/one/vmm/kvm-sriov, copied as they
# are) in the lab guest, on its real libvirtd and real igb VFs, sourced by
# scenario.sh after vm-attach.sh. Each action is called as one_vmm_exec.rb
# calls it (tests/one/harness.sh's conventions: every parameter quoted, then
# VM_ID and HOST, the driver message on stdin through a here-document read by
# a shell); the stock kvm actions are stand-ins doing what OpenNebula's do, on
# qemu:///system. The ledger and the PF are checked after each action.
# The domains are q35 with spare root ports and native PCIe hotplug; a VF is
# only unplugged live when it was plugged live (a slot powered at boot waits
# for a guest OS to let go, which the lab has none of): one-11 is deployed
# with a VF and shut down; one-12 is deployed without, gets one by
# attach_nic, loses it by detach_nic, gets it again, is saved and restored.
# shellcheck disable=SC2154 # sock, igb, api, pass, fail, skip, vfline, lv are the scenario's

one_remotes=/var/tmp/one

one_stand_in() { # ACTION BODY: a stock kvm action on qemu:///system
	printf '#!/bin/sh\n%s\n' "$2" >"$one_remotes/vmm/kvm/$1"
	chmod +x "$one_remotes/vmm/kvm/$1"
}

one_setup() {
	mkdir -p "$one_remotes/vmm/kvm-sriov" "$one_remotes/vmm/kvm" /var/lib/one/datastores/0
	cp /lab/hooks/one/vmm/kvm-sriov/* "$one_remotes/vmm/kvm-sriov/"
	mkdir -p "$one_remotes/vnm/vfagent"
	cp /lab/hooks/one/vnm/vfagent/* "$one_remotes/vnm/vfagent/"
	printf 'VFAGENT_SOCKET=%s\n' "$sock" >"$one_remotes/vmm/kvm-sriov/vfagent.conf"
	v='timeout 240 virsh -q -c qemu:///system'
	one_stand_in deploy "mkdir -p \"\$(dirname \"\$1\")\"; cat >\"\$1\"
$v create \"\$1\" >/dev/null || { echo \"Could not create domain from \$1\" >&2; exit 1; }
$v dominfo \"\$(xmllint --xpath '/domain/name/text()' \"\$1\")\" | awk '/UUID:/ {print \$2}'"
	one_stand_in save "cat >/dev/null; $v save \"\$1\" \"\$2\" >/dev/null"
	one_stand_in restore "cat >/dev/null; $v restore \"\$1\" >/dev/null && rm -f \"\$1\""
	one_stand_in shutdown "cat >/dev/null; $v destroy \"\$1\" >/dev/null"
}

# ACTION VM_ID [PARAM…] < STDIN, as ExecDriver#do_action runs it over its stream.
one_action() {
	act=$1 vmid=$2
	shift 2
	cmd=$one_remotes/vmm/kvm-sriov/$act
	for p; do cmd="$cmd '$p'"; done
	{
		printf "(cat << 'EOT' | %s)\n" "$cmd $vmid lab"
		cat
		printf '\nEOT\n'
	} | timeout 600 sh -s
}

# The network driver's update_nic as the update_nic step runs it over the stream: DEPLOY_ID VN_ID,
# the VM (text) on stdin, sent in base64
one_update_nic() {
	{
		printf "cat << 'EOT' | %s/vnm/vfagent/update_nic '%s' '%s'\n" "$one_remotes" "$1" "$2"
		base64
		printf 'EOT\n'
	} | timeout 120 sh -s
}

# A deployment file (q35, spare root ports, native hotplug): NAME UUID [NIC XML].
one_deployment_file() { lab_q35_domain "$1" "$2" "${3:-}"; } # (tests/lab/vm-attach.sh)

# OpenNebula's VM template: VM_ID NAME [NIC…] where NIC is MAC:VLAN:ATTACH
one_vm_xml() {
	vmid=$1 name=$2
	shift 2
	printf '<VM><ID>%s</ID><NAME>%s</NAME><TEMPLATE>' "$vmid" "$name"
	for n; do
		mac=${n%%-*} rest=${n#*-}
		printf '<NIC><BRIDGE>sriov_eth</BRIDGE><NETWORK>sriov_eth</NETWORK><MAC>%s</MAC><VLAN_ID>%s</VLAN_ID>%s</NIC>' \
			"$mac" "${rest%%-*}" "$([ "${rest#*-}" = yes ] && echo '<ATTACH>YES</ATTACH>')"
	done
	printf '</TEMPLATE></VM>'
}

one_message() { # VM_XML_TEXT DEPLOY_ID [CHECKPOINT]
	printf '<VMM_DRIVER_ACTION_DATA><HOST>lab</HOST><MIGR_HOST></MIGR_HOST><DEPLOY_ID>%s</DEPLOY_ID><CHECKPOINT_FILE>%s</CHECKPOINT_FILE><DATASTORE><TM_MAD>ssh</TM_MAD></DATASTORE>%s</VMM_DRIVER_ACTION_DATA>' \
		"$2" "${3:-}" "$1"
}

one_deploy() { # VM_ID NAME UUID NIC_XML VM_XML_TEXT → the UUID the action printed
	dir=/var/lib/one/datastores/0/$1
	mkdir -p "$dir"
	printf '%s' "$5" >"$dir/vm.xml"
	one_deployment_file "$2" "$3" "$4" | one_action deploy "$1" "$dir/deployment.0" lab
}

# The VM's allocations: "STATE PCI" a line.
one_ledger() { api allocations | jq -r --arg u "$1" '.allocations[] | select(.owner.uuid == $u or .owner.name == $u) | select(.state != "released") | "\(.state) \(.vfs[0].pci)"'; }
one_hostdevs() { lv dumpxml "$1" 2>/dev/null | grep -c "<interface type='hostdev'" || :; }
one_pf() { # MAC: the PF's line of the VF with that MAC, or nothing
	$ip link show "$igb_net" | grep " vf .*$1" | tr -s ' '
}

one_hooks_steps() {
	one_setup
	t0=$(now_ms)
	one_deploy_shutdown
	one_nic_save_restore
	info "hooks" "OpenNebula's actions took $(secs $(($(now_ms) - t0))) s"
}

# one-11: deployed with an igb VF (MAC, VLAN and SPOOFCHK from vm.xml), shut down.
one_deploy_shutdown() {
	u=5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9e11 mac=02:00:0a:0b:00:0b
	nic="<interface type='bridge'><source bridge='sriov_eth'/><mac address='$mac'/><model type='virtio'/></interface>"
	vmxml=$(one_vm_xml 11 one-11 "$mac-311-no" | sed 's#</NIC>#<SPOOFCHK>NO</SPOOFCHK></NIC>#')
	got=$(one_deploy 11 one-11 "$u" "$nic" "$vmxml" 2>/run/one.err)
	led=$(one_ledger "$u")
	held=$(one_pf "$mac")
	if [ "$got" != "$u" ] || [ "$(one_hostdevs one-11)" != 1 ] || [ "${led%% *}" != attached ] ||
		! printf '%s' "$held" | grep -q "vlan 311.*spoof checking off"; then
		fail "hooks: deploy and shutdown" "deploy printed '$got' ($(tr '\n' ' ' </run/one.err | cut -c1-200)); $(one_hostdevs one-11) VFs in one-11; ledger: $led; PF: $held"
		lv destroy one-11 >/dev/null 2>&1
		return 0
	fi
	pci=${led#* }
	idx=$(api show "$pci" | jq -r .index)
	one_message "$vmxml" "$u" | one_action shutdown 11 "$u" lab 2>/run/one.err
	rc=$?
	left=$(one_ledger "$u")
	if [ $rc = 0 ] && [ -z "$left" ] && [ "$(api show "$pci" | jq -r .state)" = free ] &&
		[ -z "$(one_pf "$mac")" ] && [ "$(drv_of "$pci")" = igbvf ] &&
		vfline "$idx" | grep -q "spoof checking on"; then
		pass "hooks: deploy and shutdown: one-11 ($u) deployed with VF $pci (PF: $held); shut down: free on igbvf, the PF's MAC and VLAN gone, spoof checking on again"
	else
		fail "hooks: deploy and shutdown" "shutdown rc $rc ($(tr '\n' ' ' </run/one.err | cut -c1-200)); ledger: $left; VF $pci $(api show "$pci" | jq -r .state) on $(drv_of "$pci"); PF: $(one_pf "$mac")"
	fi
}

# onevnet update of network 5 while one-12 runs with VF $3 (MAC $2): VLAN_ID 312 → 313,
# SPOOFCHK YES → NO, OUTBOUND_AVG_BW none → 12500 KB/s (100 Mbit/s), as oned hands them to
# update_nic (the NIC's new values, the old ones in VNET_UPDATE). The PF shows them at once.
one_network_update() {
	idx=$(api show "$3" | jq -r .index)
	printf '<VM><ID>12</ID><NAME>one-12</NAME><TEMPLATE><NIC><BRIDGE>sriov_eth</BRIDGE><NETWORK>sriov_eth</NETWORK><NETWORK_ID>5</NETWORK_ID><MAC>%s</MAC><VLAN_ID>313</VLAN_ID><SPOOFCHK>NO</SPOOFCHK><OUTBOUND_AVG_BW>12500</OUTBOUND_AVG_BW></NIC><VNET_UPDATE><VLAN_ID>312</VLAN_ID><SPOOFCHK>YES</SPOOFCHK><OUTBOUND_AVG_BW></OUTBOUND_AVG_BW></VNET_UPDATE></TEMPLATE></VM>' "$2" |
		one_update_nic "$1" 5 2>/run/upd.err
	rc=$? now=$(vfline "$idx" | tr -s ' ')
	if [ $rc = 0 ] && printf '%s' "$now" | grep -q "$2 .*vlan 313.*max_tx_rate 100Mbps, spoof checking off"; then
		pass "hooks: update_nic: network 5's new VLAN, rate and spoofchk on VF $3 in running one-12 ($now)"
	else
		fail "hooks: update_nic" "rc $rc, PF: $now: $(tr '\n' ' ' </run/upd.err | cut -c1-300)"
	fi
}

# one-12: deployed without a VF; attach_nic, detach_nic, attach_nic, save, restore, shutdown.
one_nic_save_restore() {
	u=5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9e12 mac=02:00:0a:0b:00:0c
	vmxml=$(one_vm_xml 12 one-12)
	got=$(one_deploy 12 one-12 "$u" "" "$vmxml" 2>/run/one.err)
	if [ "$got" != "$u" ]; then
		fail "hooks: attach_nic and detach_nic" "deploy of one-12: '$got' $(tr '\n' ' ' </run/one.err | cut -c1-200)"
		skip "hooks: save and restore" "one-12 was not deployed"
		return 0
	fi
	# the NIC's network also asks for trust and 6250 KB/s (50 Mbit/s)
	nicmsg=$(one_message "$(one_vm_xml 12 one-12 "$mac-312-yes" |
		sed 's#</NIC>#<TRUST>YES</TRUST><OUTBOUND_AVG_BW>6250</OUTBOUND_AVG_BW></NIC>#')" "$u")
	plug() { printf '%s' "$nicmsg" | one_action attach_nic 12 "$u" "$mac" sriov_eth virtio sriov one-12-0 2>/run/one.err; }
	plug
	rc1=$? led=$(one_ledger "$u") held=$(one_pf "$mac") n1=$(one_hostdevs one-12)
	pci=${led#* }
	one_network_update "$u" "$mac" "$pci"
	printf '%s' "$nicmsg" | one_action detach_nic 12 "$u" "$mac" 2>>/run/one.err
	rc2=$? n2=$(one_hostdevs one-12) left=$(one_ledger "$u")
	if [ $rc1 = 0 ] && [ $rc2 = 0 ] && [ "$n1" = 1 ] && [ "${led%% *}" = attached ] &&
		printf '%s' "$held" | grep -q "vlan 312.*max_tx_rate 50Mbps.*trust on" && [ "$n2" = 0 ] && [ -z "$left" ] &&
		[ "$(api show "$pci" | jq -r .state)" = free ] && [ -z "$(one_pf "$mac")" ] &&
		vfline "$idx" | grep -q "spoof checking on.*trust off" && ! vfline "$idx" | grep -q "vlan\|max_tx_rate [1-9]"; then
		pass "hooks: attach_nic and detach_nic: VF $pci into running one-12 (PF: $held), out again: free, the PF's MAC and VLAN gone, the NIC's trust and rate and the update's spoofchk undone ($(vfline "$idx" | tr -s ' '))"
	else
		fail "hooks: attach_nic and detach_nic" "attach rc $rc1 ($n1 in one-12, ledger $led, PF $held); detach rc $rc2 ($n2 in one-12, ledger $left, PF $(vfline "$idx" | tr -s ' ')): $(tr '\n' ' ' </run/one.err | cut -c1-300)"
	fi
	plug || { skip "hooks: save and restore" "attach_nic failed: $(tr '\n' ' ' </run/one.err | cut -c1-200)"; lv destroy one-12 >/dev/null 2>&1; return 0; }
	ckpt=/var/lib/one/datastores/0/12/checkpoint
	one_message "$vmxml" "$u" "$ckpt" | one_action save 12 "$u" "$ckpt" lab 2>/run/one.err
	rc1=$? saved=$(one_ledger "$u") dom=$(lv domstate one-12 2>&1 | head -n 1) rec=$(cat "$ckpt.vfagent" 2>/dev/null)
	one_message "$vmxml" "$u" "$ckpt" | one_action restore 12 "$ckpt" lab "$u" 2>>/run/one.err
	rc2=$? back=$(one_ledger "$u") n=$(one_hostdevs one-12) held=$(one_pf "$mac")
	one_message "$vmxml" "$u" | one_action shutdown 12 "$u" lab 2>>/run/one.err
	rc3=$? left=$(one_ledger "$u")
	if [ $rc1 = 0 ] && [ -z "$saved" ] && [ -n "$rec" ] &&
		[ $rc2 = 0 ] && [ "${back%% *}" = attached ] && [ "$n" = 1 ] &&
		printf '%s' "$held" | grep -q "$mac.*vlan 312" && [ $rc3 = 0 ] && [ -z "$left" ]; then
		pass "hooks: save and restore: one-12 saved without its VF (none held, recorded $rec), restored with VF ${back#* } (PF: $held); shut down: nothing held"
	else
		fail "hooks: save and restore" "save rc $rc1 (domain $dom, ledger '$saved', record '$rec'); restore rc $rc2 (ledger '$back', $n in one-12, PF $held); shutdown rc $rc3 (ledger '$left'): $(tr '\n' ' ' </run/one.err | cut -c1-300)"
	fi
	lv destroy one-12 >/dev/null 2>&1
}
