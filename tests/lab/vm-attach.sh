# shellcheck shell=sh
# The lab's live VFIO attach, sourced by scenario.sh (ip, api, pass, fail,
# skip, vf_of, drv_of, vfline, start_agent, the igb PF): libvirtd with its
# QEMU driver runs a paused nested domain (TCG) in the guest; the agent plugs
# an igb VF (<interface type='hostdev'>, MAC and VLAN on the PF) and an NVMe
# VF (<hostdev>) into it live, through vfio-pci, and unplugs them.
# shellcheck disable=SC2154 # ip, igb, agent and sock are scenario.sh's

lv() { virsh -q -c qemu:///system "$@"; }

# libvirtd up and a paused domain "lab" running, or the reason it is not
libvirt_up() {
	command -v libvirtd >/dev/null || { echo "no libvirtd in the guest (none on the lab's host)"; return 1; }
	mkdir -p /var/lib/libvirt/qemu /var/cache/libvirt/qemu /var/log/libvirt/qemu /run/libvirt
	libvirtd --config /etc/libvirt/libvirtd.conf >/run/libvirtd.out 2>&1 &
	for _ in $(seq 120); do
		lv uri >/dev/null 2>&1 && break
		kill -0 $! 2>/dev/null || break
		sleep 0.5
	done
	lv uri >/dev/null 2>&1 || {
		echo "libvirtd did not answer: $(cat /run/libvirtd.out /run/libvirtd.log 2>/dev/null |
			grep -v '^$' | tail -n 4 | tr '\n' ' ' | cut -c1-400)"
		return 1
	}
	cat >/run/lab-domain.xml <<XML
<domain type='qemu'>
  <name>lab</name>
  <memory unit='MiB'>48</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <features><acpi/></features>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator><memballoon model='none'/></devices>
</domain>
XML
	lv define /run/lab-domain.xml >/run/lv.out 2>&1 && lv start --paused lab >>/run/lv.out 2>&1 ||
		{ echo "the nested domain did not start: $(tail -n 3 /run/lv.out | tr '\n' ' ')"; return 1; }
}

# The agent again, on libvirt's QEMU driver (vfio-pci bound by the agent: managed false).
agent_on_qemu() {
	jq '.libvirt = {uri: "qemu:///system", managed: false}' /etc/vfagent/vfagent.json >/run/cfg &&
		mv /run/cfg /etc/vfagent/vfagent.json
	kill "$agent"
	wait "$agent" 2>/dev/null
	start_agent
}

# Why a plug timed out: the nested QEMU's and the kernel's last words.
stuck() {
	echo "no answer from libvirt in $1 s (QEMU's device_add of vfio-pci under nested TCG); qemu: $(tail -n 2 /var/log/libvirt/qemu/lab.log 2>/dev/null | tr '\n' ' ' | cut -c1-200); kernel: $(dmesg | grep -i 'vfio\|dmar' | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
}

# What the attempt met when it last ran here (QEMU 10 under TCG, in QEMU 10 under TCG).
nested_vfio="the nested QEMU's device_add of a vfio-pci VF never returned and the lab guest stopped making progress (libvirtd, the QEMU driver and a paused TCG domain run; the VFIO container gets its type1 IOMMU; QEMU's intel-iommu, with or without caching-mode); VFAGENT_LAB_VFIO=1 tries it again"

vm_attach_steps() {
	if ! grep -q vfagent_lab_vfio=1 /proc/cmdline; then
		skip "live attach (igb)" "$nested_vfio"
		skip "live attach (NVMe)" "$nested_vfio"
		return 0
	fi
	if ! why=$(libvirt_up); then
		skip "live attach (igb)" "$why"
		skip "live attach (NVMe)" "$why"
		return 0
	fi
	agent_on_qemu
	out=$(timeout 60 vfctl -o json alloc igb --owner vm:lab --mac 02:00:0a:0b:00:01 --vlan 300 \
		--domain lab --live 2>&1)
	case $? in 124 | 143)
		why=$(stuck 60)
		lv destroy lab >/dev/null 2>&1 # ends the device_add it waits on: the claim rolls back
		skip "live attach (igb)" "$why"
		skip "live attach (NVMe)" "$why"
		return 0 ;;
	esac
	vm_attach_igb
	out=$(timeout 60 vfctl -o json alloc nvme --owner vm:lab --domain lab --live 2>&1)
	case $? in 124 | 143)
		skip "live attach (NVMe)" "$(stuck 60)"
		lv destroy lab >/dev/null 2>&1
		return 0 ;;
	esac
	vm_attach_nvme
	lv destroy lab >/dev/null 2>&1
}

# The igb VF $out claimed: in the domain with its MAC and VLAN on the PF, then out again.
vm_attach_igb() {
	id=$(printf '%s' "$out" | jq -r .id)
	pci=$(vf_of "$id")
	idx=$(api show "$igb" | jq -r --arg id "$id" '.vfs[] | select(.allocation == $id) | .index')
	live=$(lv dumpxml lab 2>&1)
	if printf '%s' "$live" | grep -q "<interface type='hostdev'" &&
		printf '%s' "$live" | grep -q "02:00:0a:0b:00:01" && [ "$(drv_of "$pci")" = vfio-pci ] &&
		vfline "$idx" | grep -q "02:00:0a:0b:00:01.*vlan 300"; then
		vfctl release "$id" >/run/out 2>&1
		if ! lv dumpxml lab | grep -q "<interface type='hostdev'" &&
			[ "$(drv_of "$pci")" = igbvf ] && ! vfline "$idx" | grep -q "vlan 300"; then
			pass "live attach (igb): VF $pci into the running domain through vfio-pci (MAC and VLAN 300 on the PF: $(vfline "$idx" | tr -s ' ')); unplugged, igbvf again"
		else
			fail "live attach (igb)" "detach: $(lv dumpxml lab | grep -c hostdev) hostdevs, driver $(drv_of "$pci"), $(vfline "$idx"): $(cat /run/out)"
		fi
	else
		fail "live attach (igb)" "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300) / driver $(drv_of "$pci") / agent: $(tail -n 3 /run/agent.log | tr '\n' ' ' | cut -c1-300) / qemu: $(tail -n 2 /var/log/libvirt/qemu/lab.log 2>/dev/null | tr '\n' ' ' | cut -c1-300)"
	fi
}

# The NVMe VF $out claimed: a <hostdev> in the domain, then out again.
vm_attach_nvme() {
	id=$(printf '%s' "$out" | jq -r .id)
	pci=$(vf_of "$id")
	if [ -n "$pci" ] && [ "$pci" != null ] && lv dumpxml lab | grep -q "<hostdev mode='subsystem' type='pci'" &&
		[ "$(drv_of "$pci")" = vfio-pci ]; then
		vfctl release "$id" >/run/out 2>&1
		if ! lv dumpxml lab | grep -q "<hostdev"; then
			pass "live attach (NVMe): VF $pci plugged as <hostdev> through vfio-pci and unplugged (driver now $(drv_of "$pci"))"
		else
			fail "live attach (NVMe)" "still in the domain after release: $(cat /run/out)"
		fi
	else
		fail "live attach (NVMe)" "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300) / agent: $(tail -n 2 /run/agent.log | tr '\n' ' ' | cut -c1-200)"
	fi
}
