# shellcheck shell=sh
# The lab's VMs, sourced by scenario.sh (ip, api, pass, fail, skip, vf_of,
# drv_of, vfline, start_agent, the igb PF): libvirtd with its QEMU driver runs
# nested TCG domains in the guest, on real igb and NVMe VFs through vfio-pci.
# The domains that take devices live are q35 with spare pcie-root-ports and
# ACPI hotplug off on them (native PCIe hotplug: a powered-off slot unplugs at
# once, with no guest to acknowledge it). Steps: live attach and detach
# through the agent; a deployment file rewritten by /v1/domain-xml and started
# cold with `virsh create`; a detach the guest never acknowledges (machine
# 'pc', paused: ACPI hotplug); who sets what on the PF. Every call that can
# block has a timeout: virsh (timeout), vfctl (--timeout, 120 s by default).
# shellcheck disable=SC2154 # ip, igb, igb_net, nvme, agent and sock are scenario.sh's

lv() { timeout 240 virsh -q -c qemu:///system "$@"; } # a nested start on a loaded host: ~50 s
now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; } # ms → "1.2"
# every step's name, for the skips
vm_steps="live attach (igb)|live attach (NVMe)|cold-plug (deployment file)|bounded detach|hooks: deploy and shutdown|hooks: attach_nic and detach_nic|hooks: save and restore|PF side: libvirt's and the agent's settings"
skip_vm_steps() { # WHY
	printf '%s\n' "$vm_steps" | tr '|' '\n' | while read -r s; do skip "$s" "$1"; done
}

# A domain's XML: NAME MACHINE [DEVICES]. q35 gets pcie-root, four spare
# pcie-root-ports and ACPI hotplug off on them (QEMU 10 turns it on by default).
domain_xml() {
	ctl="" qcmd=""
	if [ "$2" = q35 ]; then
		ctl="<controller type='pci' model='pcie-root'/>"
		for _ in 1 2 3 4; do ctl="$ctl<controller type='pci' model='pcie-root-port'/>"; done
		qcmd="<qemu:commandline><qemu:arg value='-global'/><qemu:arg value='ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off'/></qemu:commandline>"
	fi
	cat <<XML
<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>$1</name>
  <memory unit='MiB'>48</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='$2'>hvm</type></os>
  <features><acpi/></features>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator>$ctl<memballoon model='none'/>${3:-}</devices>
  $qcmd
</domain>
XML
}

# libvirtd up, or the reason it is not.
libvirt_up() {
	command -v libvirtd >/dev/null || { echo "no libvirtd in the guest (none on the lab's host)"; return 1; }
	mkdir -p /var/lib/libvirt/qemu /var/cache/libvirt/qemu /var/log/libvirt/qemu /run/libvirt
	libvirtd --config /etc/libvirt/libvirtd.conf >/run/libvirtd.out 2>&1 &
	for _ in $(seq 120); do
		lv uri >/dev/null 2>&1 && return 0
		kill -0 $! 2>/dev/null || break
		sleep 0.5
	done
	echo "libvirtd did not answer: $(cat /run/libvirtd.out /run/libvirtd.log 2>/dev/null |
		grep -v '^$' | tail -n 4 | tr '\n' ' ' | cut -c1-400)"
	return 1
}

# A domain defined and started paused: NAME MACHINE; the reason on stdout when not.
domain_up() {
	domain_xml "$1" "$2" >"/run/$1.xml"
	lv define "/run/$1.xml" >/run/lv.out 2>&1 && lv start --paused "$1" >>/run/lv.out 2>&1 ||
		{ echo "domain $1 did not start: $(tail -n 3 /run/lv.out | tr '\n' ' ')"; return 1; }
}

# The agent again, on libvirt's QEMU driver (vfio-pci bound by the agent:
# managed false), with the lab's SR-IOV networks for deployment files.
agent_on_qemu() {
	jq '.libvirt = {uri: "qemu:///system", managed: false} |
		.networks = [{bridge: "sriov_eth", pool: "igb"}, {bridge: "sriov_nvme", pool: "nvme"}]' \
		/etc/vfagent/vfagent.json >/run/cfg && mv /run/cfg /etc/vfagent/vfagent.json
	kill "$agent"
	wait "$agent" 2>/dev/null
	start_agent
}

wait_vf_state() { # PCI STATE SECONDS: 0 once the agent says so
	for _ in $(seq $(($3 * 10))); do
		[ "$(api show "$1" | jq -r .state)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

vm_attach_steps() {
	if grep -q vfagent_lab_vfio=0 /proc/cmdline; then
		skip_vm_steps "VFAGENT_LAB_VFIO=0 turned the nested domains off"
		return 0
	fi
	if ! why=$(libvirt_up); then
		skip_vm_steps "$why"
		return 0
	fi
	agent_on_qemu
	vm_live_attach
	vm_cold_plug
	vm_bounded_detach
	# shellcheck disable=SC2154 # one_hooks_steps is one-hooks.sh's
	one_hooks_steps
	vm_pf_side
	lv destroy lab >/dev/null 2>&1
}

# -- (b) live attach and detach through the agent, into a paused q35 domain
vm_live_attach() {
	if ! why=$(domain_up lab q35); then
		skip "live attach (igb)" "$why"
		skip "live attach (NVMe)" "$why"
		return 0
	fi
	t0=$(now_ms)
	out=$(api alloc igb --owner vm:lab --mac 02:00:0a:0b:00:01 --vlan 300 --domain lab --live)
	t1=$(now_ms)
	vm_attach_igb "$(secs $((t1 - t0)))"
	t0=$(now_ms)
	out=$(api alloc nvme --owner vm:lab --domain lab --live)
	t1=$(now_ms)
	vm_attach_nvme "$(secs $((t1 - t0)))"
}

# The igb VF $out claimed: in the domain with its MAC and VLAN on the PF (read
# while attached), then out again, the PF's line as before.
vm_attach_igb() {
	id=$(printf '%s' "$out" | jq -r .id)
	pci=$(vf_of "$id")
	idx=$(api show "$igb" | jq -r --arg id "$id" '.vfs[] | select(.allocation == $id) | .index')
	live=$(lv dumpxml lab 2>&1)
	held=$(vfline "$idx" | tr -s ' ')
	if printf '%s' "$live" | grep -q "<interface type='hostdev'" &&
		printf '%s' "$live" | grep -q "02:00:0a:0b:00:01" && [ "$(drv_of "$pci")" = vfio-pci ] &&
		printf '%s' "$held" | grep -q "02:00:0a:0b:00:01.*vlan 300"; then
		t0=$(now_ms)
		vfctl release "$id" >/run/out 2>&1
		t1=$(now_ms)
		if ! lv dumpxml lab | grep -q "<interface type='hostdev'" &&
			[ "$(drv_of "$pci")" = igbvf ] && ! vfline "$idx" | grep -q "vlan 300" &&
			[ "$(api show "$pci" | jq -r .state)" = free ]; then
			pass "live attach (igb): VF $pci into the running domain through vfio-pci in $1 s, the PF while attached: $held; released in $(secs $((t1 - t0))) s, igbvf again, free"
		else
			fail "live attach (igb)" "detach: $(lv dumpxml lab | grep -c hostdev) hostdevs, driver $(drv_of "$pci"), $(vfline "$idx"): $(cat /run/out)"
		fi
	else
		fail "live attach (igb)" "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300) / driver $(drv_of "$pci") / PF $held / agent: $(tail -n 3 /run/agent.log | tr '\n' ' ' | cut -c1-300) / qemu: $(tail -n 2 /var/log/libvirt/qemu/lab.log 2>/dev/null | tr '\n' ' ' | cut -c1-300)"
	fi
}

# The NVMe VF $out claimed: a <hostdev> in the domain, then out again.
vm_attach_nvme() {
	id=$(printf '%s' "$out" | jq -r .id)
	pci=$(vf_of "$id")
	if [ -n "$pci" ] && [ "$pci" != null ] && lv dumpxml lab | grep -q "<hostdev mode='subsystem' type='pci'" &&
		[ "$(drv_of "$pci")" = vfio-pci ]; then
		t0=$(now_ms)
		vfctl release "$id" >/run/out 2>&1
		t1=$(now_ms)
		if ! lv dumpxml lab | grep -q "<hostdev" && [ "$(drv_of "$pci")" != vfio-pci ]; then
			pass "live attach (NVMe): VF $pci plugged as <hostdev> through vfio-pci in $1 s, unplugged and released in $(secs $((t1 - t0))) s (driver now $(drv_of "$pci"))"
		else
			fail "live attach (NVMe)" "after release: $(lv dumpxml lab | grep -c '<hostdev') hostdevs, driver $(drv_of "$pci"): $(cat /run/out)"
		fi
	else
		fail "live attach (NVMe)" "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300) / agent: $(tail -n 2 /run/agent.log | tr '\n' ' ' | cut -c1-200)"
	fi
}

# A nested domain as the lab runs them: q35, spare root ports, native PCIe
# hotplug (an unplug from a powered-off slot is immediate). NAME UUID
# DEVICES_XML [METADATA_XML]
lab_q35_domain() {
	ctl="<controller type='pci' model='pcie-root'/>"
	for _ in 1 2 3 4; do ctl="$ctl<controller type='pci' model='pcie-root-port'/>"; done
	cat <<XML
<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
	<name>$1</name>
	<uuid>$2</uuid>
	<vcpu>1</vcpu>
	<memory>49152</memory>
	<os><type arch='x86_64' machine='q35'>hvm</type></os>
	<devices><emulator>/usr/bin/qemu-system-x86_64</emulator>$ctl<memballoon model='none'/>$3</devices>
	<features><acpi/></features>
	<qemu:commandline><qemu:arg value='-global'/><qemu:arg value='ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off'/></qemu:commandline>
	${4:-}
</domain>
XML
}

# -- (a) an OpenNebula deployment file: NICs on the SR-IOV networks rewritten
# by /v1/domain-xml (igb: <interface type='hostdev'> with MAC and VLAN; NVMe:
# <hostdev>), started as OpenNebula's deploy does (virsh create), the VFs'
# BARs mapped by the nested SeaBIOS; the domain's end gives them back.
one_deployment() { # NAME UUID
	lab_q35_domain "$1" "$2" "
		<interface type='bridge'>
			<source bridge='sriov_eth'/>
			<mac address='02:00:0a:09:00:09'/>
			<target dev='$1-0'/>
			<model type='virtio'/>
		</interface>
		<interface type='bridge'>
			<source bridge='sriov_nvme'/>
			<mac address='02:00:0a:09:01:09'/>
			<target dev='$1-1'/>
			<model type='virtio'/>
		</interface>" \
		'<metadata><one:vm xmlns:one="http://opennebula.org/xmlns/libvirt/1.0"><one:name>lab</one:name></one:vm></metadata>'
}

# HMP "info pci": whether VENDOR:DEVICE is there with its BAR0 mapped (SeaBIOS did it).
bar_mapped() { # DOMAIN VENDOR:DEVICE
	lv qemu-monitor-command --hmp "$1" 'info pci' 2>/dev/null | tr -d '\r' |
		awk -v id="$2" '/PCI device/ { dev = index($0, id) > 0 } dev && /BAR0:/ { print; exit }' |
		grep -q 'memory at 0x[0-9a-f]*[0-9a-e][0-9a-f]* \[' 
}

vm_cold_plug() {
	uuid=5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9e09
	one_deployment one-9 "$uuid" >/run/one-9.xml
	t0=$(now_ms)
	code=$(curl -sS --max-time 60 --unix-socket "$sock" -X POST -H 'Content-Type: application/xml' \
		--data-binary @/run/one-9.xml -D /run/one-9.h -o /run/one-9.out -w '%{http_code}' \
		"http://x/v1/domain-xml?vlan=02:00:0a:09:00:09=309" 2>&1)
	ids=$(sed -n 's/^X-Allocation-Id: *//Ip' /run/one-9.h 2>/dev/null | tr -d '\r' | tr ',' ' ')
	if [ "$code" != 200 ] || ! grep -q "<interface type=.hostdev" /run/one-9.out ||
		! grep -q "<hostdev" /run/one-9.out; then
		fail "cold-plug (deployment file)" "POST /v1/domain-xml: $code $(head -c 300 /run/one-9.out)"
		return 0
	fi
	lv create /run/one-9.out >/run/lv.out 2>&1 ||
		{ fail "cold-plug (deployment file)" "virsh create: $(tail -n 3 /run/lv.out | tr '\n' ' ')"; return 0; }
	t1=$(now_ms)
	epci=$(api show "$igb" | jq -r '[.vfs[] | select(.allocation != null and .state == "attached")][0].pci')
	eidx=$(api show "$epci" | jq -r .index)
	npci=$(api show "$nvme" | jq -r '[.vfs[] | select(.allocation != null and .state == "attached")][0].pci')
	for _ in $(seq 100); do
		bar_mapped one-9 8086:10ca && bar_mapped one-9 1b36:0010 && break
		sleep 0.2
	done
	t2=$(now_ms)
	held=$(vfline "$eidx" | tr -s ' ')
	state=$(lv domstate one-9 2>&1)
	if ! bar_mapped one-9 8086:10ca || ! bar_mapped one-9 1b36:0010 || [ "$state" != running ] ||
		! printf '%s' "$held" | grep -q "02:00:0a:09:00:09.*vlan 309"; then
		fail "cold-plug (deployment file)" "domain $state; PF $held; info pci: $(lv qemu-monitor-command --hmp one-9 'info pci' 2>&1 | tr -d '\r' | grep -A3 -e 10ca -e 'Class 0108' | tr -s ' \n' ' ' | cut -c1-400)"
		lv destroy one-9 >/dev/null 2>&1
		return 0
	fi
	bars="$(lv qemu-monitor-command --hmp one-9 'info pci' | tr -d '\r' | awk '/PCI device 8086:10ca|PCI device 1b36:0010/ { d = $NF } d && /BAR0:/ { for (i = 1; i <= NF; i++) if ($i ~ /^0x/) { print d " BAR0 " $i; break } d = "" }' | tr '\n' ' ')"
	lv destroy one-9 >/dev/null 2>&1
	t3=$(now_ms)
	ok=1
	for p in $epci $npci; do wait_vf_state "$p" free 20 || ok=0; done
	t4=$(now_ms)
	after=$(vfline "$eidx" | tr -s ' ')
	if [ $ok = 1 ] && [ "$(drv_of "$epci")" = igbvf ] && [ "$(drv_of "$npci")" != vfio-pci ] &&
		! printf '%s' "$after" | grep -q "vlan 309\|02:00:0a:09:00:09"; then
		pass "cold-plug (deployment file): one-9 rewritten (allocations $ids) and created in $(secs $((t1 - t0))) s, running, BARs mapped in $(secs $((t2 - t1))) s ($bars); PF while running: $held; destroyed: both VFs free in $(secs $((t4 - t3))) s, PF: $after"
	else
		fail "cold-plug (deployment file)" "after destroy: igb $epci $(api show "$epci" | jq -r .state) on $(drv_of "$epci"), NVMe $npci $(api show "$npci" | jq -r .state) on $(drv_of "$npci"), PF $after"
	fi
}

# -- (d) a detach the guest never acknowledges: machine 'pc' (ACPI hotplug),
# paused. libvirt returns after its own 5 s wait with the device still there;
# the agent waits for the device to leave, gives up within its bound, keeps
# the VF quarantined with the domain on vfio-pci, answers everyone meanwhile,
# and finishes once the domain ends.
vm_bounded_detach() {
	if ! why=$(domain_up labpc pc); then skip "bounded detach" "$why"; return 0; fi
	out=$(api alloc igb --owner vm:labpc --mac 02:00:0a:0d:00:01 --vlan 310 --domain labpc --live)
	id=$(printf '%s' "$out" | jq -r .id)
	pci=$(vf_of "$id")
	if [ -z "$pci" ] || [ "$pci" = null ] || [ "$(drv_of "$pci")" != vfio-pci ]; then
		fail "bounded detach" "attach into labpc: $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300)"
		lv destroy labpc >/dev/null 2>&1
		return 0
	fi
	t0=$(now_ms)
	(vfctl --timeout 60 release "$id" >/run/rel.out 2>&1; echo $? >/run/rel.rc) &
	rel=$!
	answered=0 slowest=0
	while kill -0 "$rel" 2>/dev/null; do # everyone else is answered meanwhile
		a0=$(now_ms)
		vfctl --timeout 5 pools >/dev/null 2>&1 && answered=$((answered + 1))
		a1=$(now_ms)
		[ $((a1 - a0)) -gt "$slowest" ] && slowest=$((a1 - a0))
		sleep 0.5
	done
	wait "$rel"
	t1=$(now_ms)
	state=$(api show "$pci" | jq -r .state)
	reason=$(api show "$pci" | jq -r .reason)
	in_dom=$(lv dumpxml labpc | grep -c "<interface type='hostdev'")
	other=$(api alloc igb --owner vm:other | jq -r '.vfs[0].pci // .message')
	[ -n "$other" ] && [ "$other" != "$pci" ] && api allocations | jq -r '.allocations[] | select(.owner.name == "other") | .id' |
		while read -r o; do vfctl release "$o" >/dev/null 2>&1; done
	r0=$(now_ms)
	vfctl --timeout 60 repair "$pci" >/run/rep.out 2>&1 && repaired=yes || repaired=refused
	r1=$(now_ms)
	if [ "$(cat /run/rel.rc)" != 0 ] || ! grep -q "still in domain labpc" /run/rel.out ||
		[ "$state" != quarantined ] || [ "$(drv_of "$pci")" != vfio-pci ] || [ "$in_dom" != 1 ] ||
		[ "$other" = "$pci" ] || [ "$repaired" != refused ]; then
		fail "bounded detach" "release rc $(cat /run/rel.rc): $(tr '\n' ' ' </run/rel.out | cut -c1-200); VF $state on $(drv_of "$pci"), $in_dom in labpc; claim got $other; repair $repaired: $(tr '\n' ' ' </run/rep.out | cut -c1-150)"
		lv destroy labpc >/dev/null 2>&1
		return 0
	fi
	d0=$(now_ms)
	lv destroy labpc >/dev/null 2>&1
	wait_vf_state "$pci" free 30
	d1=$(now_ms)
	if [ "$(api show "$pci" | jq -r .state)" = free ] && [ "$(drv_of "$pci")" = igbvf ]; then
		pass "bounded detach: labpc (pc, paused) never acknowledges; release answered in $(secs $((t1 - t0))) s (202), VF $pci quarantined in the domain on vfio-pci ($reason); $answered requests answered meanwhile (slowest $slowest ms), a claim got $other, repair refused in $(secs $((r1 - r0))) s; domain destroyed: free on igbvf in $(secs $((d1 - d0))) s"
	else
		fail "bounded detach" "after destroy: $(api show "$pci" | jq -c '{state, reason}') on $(drv_of "$pci"): $(grep "$pci" /run/agent.log | tail -n 3 | tr '\n' ' ')"
	fi
}

# A PF's VF line without its MAC when the VF had none before (BEFORE's is all zeros): libvirt
# puts the zeros back, and igbvf, probed again after the reset, makes a MAC up.
unmac() { # LINE BEFORE
	case $2 in
	*"link/ether 00:00:00:00:00:00"*) printf '%s' "$1" | sed 's#link/ether [0-9a-f:]*#link/ether any#' ;;
	*) printf '%s' "$1" ;;
	esac
}

# -- item 3: on the real PF, libvirt sets and restores an <interface
# type='hostdev'> VF's MAC and VLAN; the agent sets spoofchk, trust and rates
# (never the MAC or VLAN), restores only those; nothing is restored to a wrong
# value when the agent or libvirtd is killed while the VF is attached.
vm_pf_side() {
	if ! lv domstate lab 2>/dev/null | grep -q paused && ! lv start --paused lab >/dev/null 2>&1; then
		skip "PF side: libvirt's and the agent's settings" "domain lab did not start"
		return 0
	fi
	idx=$(api show "$igb" | jq -r '[.vfs[] | select(.state == "free")][0].index')
	before=$(vfline "$idx" | tr -s ' ')
	out=$(api alloc igb --owner vm:lab --mac 02:00:0a:0e:00:01 --vlan 320 --spoofchk off --trust on \
		--max-tx-rate 100 --domain lab --live)
	id=$(printf '%s' "$out" | jq -r .id)
	pci=$(vf_of "$id")
	idx=$(api show "$pci" | jq -r .index)
	held=$(vfline "$idx" | tr -s ' ')
	kill -9 "$agent"; wait "$agent" 2>/dev/null
	start_agent
	after_agent=$(vfline "$idx" | tr -s ' ')
	st_agent=$(api show "$pci" | jq -r .state)
	kill -9 "$(cat /run/libvirtd.pid 2>/dev/null || pidof libvirtd)" 2>/dev/null
	sleep 0.5
	libvirtd --config /etc/libvirt/libvirtd.conf >>/run/libvirtd.out 2>&1 &
	for _ in $(seq 60); do lv uri >/dev/null 2>&1 && break; sleep 0.5; done
	after_lv=$(vfline "$idx" | tr -s ' ')
	vfctl release "$id" >/run/out 2>&1
	wait_vf_state "$pci" free 20
	after=$(vfline "$idx" | tr -s ' ')
	if printf '%s' "$held" | grep -q "02:00:0a:0e:00:01.*vlan 320.*spoof checking off.*trust on" &&
		printf '%s' "$held" | grep -q "max_tx_rate 100" &&
		[ "$after_agent" = "$held" ] && [ "$after_lv" = "$held" ] && [ "$st_agent" = attached ] &&
		[ "$(unmac "$after" "$before")" = "$(unmac "$before" "$before")" ] &&
		! printf '%s' "$after" | grep -q 02:00:0a:0e:00:01 &&
		[ "$(api show "$pci" | jq -r .state)" = free ]; then
		pass "PF side: attached, libvirt's MAC/VLAN and the agent's spoofchk/trust/rate: $held; the same after the agent and after libvirtd were killed -9; released: $after, as before ($before)"
	else
		fail "PF side: libvirt's and the agent's settings" "before: $before / attached: $held / after agent -9: $after_agent ($st_agent) / after libvirtd -9: $after_lv / released: $after ($(api show "$pci" | jq -c '{state, reason}')) $(tr '\n' ' ' </run/out)"
	fi
	# what libvirt does with a VF's MAC and VLAN while its PF is down (the last step: igb
	# resets its VFs when the PF goes down and up)
	$ip link set "$igb_net" down
	out=$(api alloc igb --owner vm:lab --mac 02:00:0a:0e:00:02 --vlan 321 --domain lab --live)
	id=$(printf '%s' "$out" | jq -r '.id // empty')
	if [ -n "$id" ]; then
		info "PF down" "libvirt took the VF with MAC and VLAN: $(vfline "$(api show "$(vf_of "$id")" | jq -r .index)" | tr -s ' ')"
		vfctl release "$id" >/dev/null 2>&1
	else
		info "PF down" "the attach was refused and rolled back: $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-250)"
	fi
	$ip link set "$igb_net" up
}
