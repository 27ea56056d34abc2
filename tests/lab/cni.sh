# shellcheck shell=sh
# shellcheck disable=SC2154 # ip, igb and the helpers are scenario.sh's
# The lab step of the CNI plugin (sourced by scenario.sh): ADD, CHECK and DEL
# as a runtime runs the plugin, on a real igb VF, with a config in
# sriov-cni's form (vlanQoS, vlanProto "802.1q", spoofchk and trust "on"/"off",
# logLevel and logFile) and the MAC as podman's --mac-address passes it
# (CNI_ARGS MAC, in upper case). What it asks is read back on the PF with the
# kernel's ip (MAC, VLAN and priority, spoof checking, trust); the address and
# MAC inside the namespace; DEL restores the PF side and brings the netdev
# home; a second DEL succeeds.
cni_steps() {
	cni_conf='{"cniVersion":"1.1.0","name":"labnet","type":"vfagent","pool":"igb","socket":"/run/vfagent-cni.sock","vlan":133,"vlanQoS":3,"vlanProto":"802.1q","spoofchk":"off","trust":"on","logLevel":"debug","logFile":"/run/cni.log","runtimeConfig":{"ips":["10.9.3.3/24"]}}'
	cni() { # COMMAND CONFIG
		echo "$2" | CNI_COMMAND=$1 CNI_CONTAINERID=lab-ctr CNI_NETNS=/run/netns/cni1 CNI_IFNAME=net1 \
			CNI_PATH=/usr/lib/cni CNI_ARGS='IgnoreUnknown=1;MAC=02:00:0A:09:03:03' /usr/bin/vfagent 2>>/run/cni.err
	}
	$ip netns add cni1
	cni_out=$(cni ADD "$cni_conf") || {
		fail cni "ADD: $cni_out $(cat /run/cni.err) / agent: $(tail -n 3 /run/agent.log | tr '\n' ' ') / kernel: $(dmesg | tail -n 4 | tr '\n' ' ')"
		$ip netns del cni1
		return
	}
	cni_pci=$(echo "$cni_out" | jq -r '.interfaces[0].pciID')
	cni_idx=
	for l in /sys/bus/pci/devices/"$igb"/virtfn*; do
		[ "$(basename "$(readlink "$l")")" = "$cni_pci" ] && cni_idx=${l##*virtfn}
	done
	cni_pf=$(vfline "$cni_idx" | tr -s ' ')
	cni_in=$($ip -n cni1 addr show net1 2>&1)
	check_conf=$(echo "$cni_conf" | jq -c --argjson p "$cni_out" '. + {prevResult: $p}')
	cni CHECK "$check_conf" >/run/cni.check && cni_check=ok || cni_check="failed: $(cat /run/cni.check)"
	cni DEL "$cni_conf" >/run/cni.del && cni_del=ok || cni_del="failed: $(cat /run/cni.del)"
	cni DEL "$cni_conf" >>/run/cni.del && cni_del2=ok || cni_del2="failed: $(cat /run/cni.del)"
	for _ in $(seq 50); do [ "$(api show "$cni_pci" | jq -r .state)" = free ] && break; sleep 0.1; done
	if echo "$cni_pf" | grep -q "02:00:0a:09:03:03.*vlan 133, qos 3.*spoof checking off.*trust on" &&
		echo "$cni_in" | grep -q "10.9.3.3/24" && grep -q ' debug ADD lab-ctr net1: ' /run/cni.log &&
		echo "$cni_in" | grep -q "02:00:0a:09:03:03" && [ "$cni_check" = ok ] && [ "$cni_del" = ok ] &&
		[ "$cni_del2" = ok ] && ! vfline "$cni_idx" | grep -q "vlan 133" &&
		[ -n "$(ls "/sys/bus/pci/devices/$cni_pci/net")" ] && [ "$(api show "$cni_pci" | jq -r .state)" = free ]; then
		pass "cni: the plugin's ADD put VF $cni_pci in a namespace (PF: $cni_pf), CHECK passed, DEL restored it"
	else
		fail cni "ADD $cni_pci: PF '$cni_pf', inside '$cni_in'; CHECK $cni_check; DEL $cni_del, again $cni_del2; now $(vfline "$cni_idx") $(api show "$cni_pci" | jq -c '{state, reason}') $(cat /run/cni.err) log: $(tail -n 2 /run/cni.log 2>&1)"
	fi
	$ip netns del cni1
}
