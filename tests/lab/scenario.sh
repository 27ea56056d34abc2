#!/bin/sh
# The lab scenario, run inside the guest on the real /sys: vfagentd and vfctl
# against real SR-IOV PFs (QEMU's igb, 7 VFs with igbvf netdevs; QEMU's NVMe,
# 4 VFs), asserted with the kernel's own tools (/usr/bin/ip: busybox's ip
# shadows it otherwise). One line per step: "LAB PASS name", "LAB FAIL name:
# why" or "LAB INFO name: what was seen", each with the guest's uptime.
ip=/usr/bin/ip
sock=/run/vfagent.sock
export VFAGENT_SOCKET=$sock
# each line ends with the guest's uptime, so that a slow step shows
at() { printf '[%s s]' "$(cut -d' ' -f1 /proc/uptime)"; }
pass() { echo "LAB PASS $1 $(at)"; }
fail() { echo "LAB FAIL $1: $2 $(at)"; }
info() { echo "LAB INFO $1: $2 $(at)"; }
skip() { echo "LAB SKIP $1: $2 $(at)"; }
api() { vfctl -o json "$@" 2>&1; }
vf_of() { api show "$1" | jq -r '.vfs[0].pci'; }
drv_of() { basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)" 2>/dev/null; }

# shellcheck source=tests/lab/data-path.sh
. /lab/data-path.sh
# shellcheck source=tests/lab/vm-attach.sh
. /lab/vm-attach.sh
# shellcheck source=tests/lab/cni.sh
. /lab/cni.sh
# shellcheck source=tests/lab/one-hooks.sh
. /lab/one-hooks.sh
# shellcheck source=tests/lab/pcie.sh
. /lab/pcie.sh
# shellcheck source=tests/lab/failover.sh
. /lab/failover.sh
# shellcheck source=tests/lab/migrate.sh
. /lab/migrate.sh
# shellcheck source=tests/lab/drain.sh
. /lab/drain.sh

pf_of() { # VENDOR DEVICE → the PF's address
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = "0x$1" ] && [ "$(cat "$d/device")" = "0x$2" ] &&
			[ -e "$d/sriov_totalvfs" ] && { basename "$d"; return; }
	done
}
igb=$(pf_of 8086 10c9)
nvme=$(pf_of 1b36 0010)
igb_net=$(ls "/sys/bus/pci/devices/$igb/net" 2>/dev/null)
if [ -z "$igb" ] || [ -z "$nvme" ] || [ -z "$igb_net" ]; then
	fail setup "no igb PF ($igb, netdev $igb_net) or NVMe PF ($nvme)"
	exit 0
fi
# the PF's link up: an igb VF's link follows its PF's, and so does its traffic
$ip link set "$igb_net" up
for _ in $(seq 100); do
	[ "$(cat "/sys/class/net/$igb_net/operstate")" = up ] && break
	sleep 0.1
done

cat >/etc/vfagent/vfagent.json <<JSON
{"pools": [{"name": "igb", "selector": {"devices": ["10ca"]}},
           {"name": "nvme", "selector": {"vendors": ["1b36"]}}],
 "libvirt": {"uri": "test:///default", "managed": false}}
JSON
start_agent() {
	vfagentd --config /etc/vfagent/vfagent.json --listen "unix:$sock" --state-dir /var/lib/vfagent \
		>>/run/agent.log 2>&1 &
	agent=$!
	for _ in $(seq 50); do vfctl pools >/dev/null 2>&1 && return 0; sleep 0.1; done
	fail agent "vfagentd did not answer: $(tail -3 /run/agent.log)"
	exit 0
}
start_agent

# -- VFAGENT_LAB_FAILOVER=only: the failover tier alone, on the VFs and libvirtd it needs
if grep -q vfagent_lab_failover=only /proc/cmdline; then
	vfctl numvfs "$igb" 5 >/run/out 2>&1
	udevadm settle --timeout=10
	if why=$(libvirt_up); then
		agent_on_qemu
		failover_steps
	else
		skip_fo_steps "$why"
	fi
	kill "$agent"
	exit 0
fi

# -- inventory matches sysfs
pf_json=$(api show "$igb")
nv_json=$(api show "$nvme")
if [ "$(echo "$pf_json" | jq .totalvfs)" = 7 ] && [ "$(echo "$nv_json" | jq .totalvfs)" = 4 ] &&
	[ "$(echo "$pf_json" | jq -r .vendor):$(echo "$pf_json" | jq -r .device)" = 8086:10c9 ] &&
	[ "$(echo "$pf_json" | jq -r .netdev)" = "$igb_net" ]; then
	pass "inventory: igb $igb totalvfs 7, NVMe $nvme totalvfs 4"
else
	fail inventory "igb: $pf_json / nvme: $nv_json"
fi

# -- numvfs: dry run, then grow igb 0 → 4
if vfctl numvfs "$igb" 4 --dry-run >/run/out 2>&1 && [ "$(cat "/sys/bus/pci/devices/$igb/sriov_numvfs")" = 0 ]; then
	pass "numvfs dry run: plan made, sriov_numvfs still 0"
else
	fail "numvfs dry run" "$(cat /run/out)"
fi
vfctl numvfs "$igb" 4 >/run/out 2>&1
udevadm settle --timeout=10
want=$(for n in 0 1 2 3; do basename "$(readlink "/sys/bus/pci/devices/$igb/virtfn$n")"; done | tr '\n' ' ')
got=$(api show "$igb" | jq -r '[.vfs[].pci] | join(" ")')
if [ "$(cat "/sys/bus/pci/devices/$igb/sriov_numvfs")" = 4 ] && [ "$got " = "$want" ]; then
	pass "numvfs 0 → 4: VFs $got as virtfn0-3 say"
else
	fail "numvfs grow" "sysfs $want, agent $got: $(cat /run/out)"
fi

# -- hotplug: VFs made behind the agent's back reach it through udev
echo 0 >"/sys/bus/pci/devices/$nvme/sriov_drivers_autoprobe"
echo 2 >"/sys/bus/pci/devices/$nvme/sriov_numvfs"
for _ in $(seq 50); do
	[ "$(api show "$nvme" | jq '.vfs | length')" = 2 ] && break
	sleep 0.1
done
nvf=$(api show "$nvme" | jq -r '.vfs[0].pci')
if [ "$(api show "$nvme" | jq '.vfs | length')" = 2 ] && [ "$(api show "$nvf" | jq -r .netdev)" = null ]; then
	pass "udev: 2 NVMe VFs made through sysfs seen without a restart; no netdev"
else
	fail udev "$(api show "$nvme")"
fi

# -- NVMe VF to vfio-pci and back
before=$(basename "$(readlink "/sys/bus/pci/devices/$nvf/driver" 2>/dev/null)" 2>/dev/null)
vfctl bind "$nvf" vfio-pci >/run/out 2>&1
mid=$(basename "$(readlink "/sys/bus/pci/devices/$nvf/driver" 2>/dev/null)" 2>/dev/null)
vfctl bind "$nvf" - >>/run/out 2>&1
after=$(basename "$(readlink "/sys/bus/pci/devices/$nvf/driver" 2>/dev/null)" 2>/dev/null)
if [ "$mid" = vfio-pci ] && [ "$after" != vfio-pci ] && [ -e /dev/vfio ]; then
	pass "vfio-pci: NVMe VF $nvf ${before:-unbound} → vfio-pci → ${after:-unbound}"
else
	fail vfio-pci "${before:-unbound} → ${mid:-unbound} → ${after:-unbound}: $(cat /run/out) $(dmesg | grep -i -e vfio -e iommu | tail -n 3)"
fi

# -- two containers, one igb VF each: MAC and VLAN on the PF, netdev, name and IP inside
$ip netns add c1
$ip netns add c2
claim() { # NETNS MAC → allocation id
	api alloc igb --owner "netns:/run/netns/$1" --mac "$2" --vlan 100 | jq -r .id
}
id1=$(claim c1 02:00:0a:09:00:01)
id2=$(claim c2 02:00:0a:09:00:02)
idx1=$(api show "$igb" | jq -r --arg id "$id1" '.vfs[] | select(.allocation == $id) | .index')
idx2=$(api show "$igb" | jq -r --arg id "$id2" '.vfs[] | select(.allocation == $id) | .index')
pci1=$(vfctl -o json show "$igb" | jq -r --arg id "$id1" '.vfs[] | select(.allocation == $id) | .pci')
name1=$(ls "/sys/bus/pci/devices/$pci1/net")
vfctl attach "$id1" --netns c1 --ifname eth1 --address 10.9.0.1/24 >/run/out 2>&1 || info attach "$(cat /run/out)"
vfctl attach "$id2" --netns c2 --ifname eth1 --address 10.9.0.2/24 >>/run/out 2>&1 || info attach "$(cat /run/out)"
vfline() { $ip link show "$igb_net" | grep "vf $1 "; }
# the kernel says so on the PF, and vfctl show reads the same back over netlink
if vfline "$idx1" | grep -q "02:00:0a:09:00:01.*vlan 100" && vfline "$idx2" | grep -q "02:00:0a:09:00:02.*vlan 100" &&
	api show "$pci1" | jq -e '.pf_settings.mac == "02:00:0a:09:00:01" and .pf_settings.vlan == 100' >/dev/null; then
	pass "PF $igb_net: vf $idx1 and vf $idx2 carry their MAC and VLAN 100 ($(vfline "$idx1" | tr -s ' ')), as vfctl show reads them"
else
	fail "VF MAC/VLAN" "$($ip link show "$igb_net" | grep ' vf ' | tr -s ' ' | tr '\n' ';') $(api show "$pci1" | jq -c '{pf_settings, pf_settings_error}') $(cat /run/out)"
fi
if $ip -n c1 -4 addr show eth1 | grep -q 10.9.0.1/24 && $ip -n c2 -4 addr show eth1 | grep -q 10.9.0.2/24 &&
	$ip -n c1 link show eth1 | grep -q "02:00:0a:09:00:01"; then
	pass "netns: c1 and c2 each hold eth1 with its address and MAC"
else
	fail netns "$($ip -n c1 -br addr) / $($ip -n c2 -br addr)"
fi
traffic_steps


# -- a shrink while VFs are attached names the blocking allocation
if ! vfctl numvfs "$igb" 0 >/run/out 2>&1 && grep -q "$id1" /run/out; then
	pass "numvfs shrink refused while attached, naming $id1"
else
	fail "numvfs shrink" "$(cat /run/out)"
fi

# -- release: netdev back under its own name, MAC and VLAN as they were
vfctl release "$id1" >/run/out 2>&1
if [ "$(ls "/sys/bus/pci/devices/$pci1/net" 2>/dev/null)" = "$name1" ] &&
	$ip link show "$name1" >/dev/null 2>&1 && ! vfline "$idx1" | grep -q "vlan 100" &&
	[ "$(api show "$pci1" | jq -r .state)" = free ] &&
	! vfline "$idx1" | grep -q "02:00:0a:09:00:01"; then
	pass "release: $name1 back in the host, vf $idx1 MAC and VLAN restored ($(vfline "$idx1" | tr -s ' '))"
else
	fail release "$(ls "/sys/bus/pci/devices/$pci1/net") / $(vfline "$idx1") / $(api show "$pci1" | jq -c '{state, reason}') / $(cat /run/out)"
fi

# -- the namespace deleted under an attached VF: the agent notices and restores it
pci2=$(vfctl -o json show "$igb" | jq -r --arg id "$id2" '.vfs[] | select(.allocation == $id) | .pci')
$ip netns del c2
for _ in $(seq 50); do
	[ "$(api show "$pci2" | jq -r .state)" = free ] && break
	sleep 0.1
done
if [ "$(api show "$pci2" | jq -r .state)" = free ] && [ -n "$(ls "/sys/bus/pci/devices/$pci2/net")" ] &&
	! vfline "$idx2" | grep -q "vlan 100"; then
	pass "netns deleted: $pci2 released and restored ($(ls "/sys/bus/pci/devices/$pci2/net"))"
else
	fail "netns deleted" "$(api show "$pci2" | jq -c '{state, netdev, reason}') $(vfline "$idx2")"
fi

vlan_isolation_cleanup

# -- the other PF-side settings on a real igb VF: read back from the kernel, restored at release
pf_settings_steps
# -- the CNI plugin: ADD, CHECK, DEL on a real igb VF
cni_steps
# -- the PCIe tree (two switches, a GPU-class device) and claims near the GPU
pcie_steps

# -- rxe: an RDMA device on a VF netdev is inventoried; in exclusive mode its move is refused
if ! rdma system | grep -q exclusive; then
	fail rxe "the RDMA netns mode is not exclusive: $(rdma system 2>&1)"
elif [ -d /sys/module/rdma_rxe ]; then
	pci3=$(vfctl -o json show "$igb" | jq -r '.vfs[2].pci')
	n3=$(ls "/sys/bus/pci/devices/$pci3/net")
	$ip link set "$n3" up
	rdma link add rxe0 type rxe netdev "$n3"
	# a pool of that one VF, first so it wins
	jq --arg pci "$pci3" '.pools = [{name: "rxe", selector: {pci_addresses: [$pci]}}] + .pools' \
		/etc/vfagent/vfagent.json >/run/cfg && mv /run/cfg /etc/vfagent/vfagent.json
	kill "$agent"; wait "$agent" 2>/dev/null
	start_agent
	api show "$pci3" >/run/show
	rd=$(jq -r .rdma_device /run/show)
	# its port asked of libibverbs (the host's verbs devices listed once per inventory)
	port=$(jq -r '[.rdma_port.link_layer, .rdma_port.state] | map(. // "null") | join(" ")' /run/show)
	if [ "$rd" = rxe0 ] && [ "${port%% *}" = ethernet ]; then
		pass "rxe: rxe0 on $n3 inventoried as VF $pci3's RDMA device, its port: $port"
	else
		fail rxe "VF $pci3 rdma_device $rd, rdma_port $port; $(cd "/sys/bus/pci/devices/$pci3/" && echo *)"
	fi
	$ip netns add c3
	id3=$(api alloc rxe --owner netns:/run/netns/c3 | jq -r .id)
	if vfctl attach "$id3" --netns c3 --ifname ib0 >/run/out 2>&1; then
		fail "rxe move" "attached; host: $(rdma dev | tr '\n' ' '); c3: $(ip netns exec c3 rdma dev 2>&1 | tr '\n' ' '); $(grep -i rdma /run/agent.log | tail -n 3 | tr '\n' ' ')"
	else
		left=$($ip -n c3 link show 2>/dev/null | grep -c '^[0-9]')
		rxe_now=$(rdma dev | grep -q rxe0 && echo "rxe0 still there" || echo "rxe0 gone (the kernel's doing)")
		if [ "$left" = 1 ] && [ -n "$(ls "/sys/bus/pci/devices/$pci3/net")" ] &&
			[ "$(api show "$pci3" | jq -r .state)" = reserved ]; then
			pass "rxe in exclusive mode: attach failed cleanly, $n3 back in the host, $rxe_now: $(tr '\n' ' ' </run/out | cut -c1-150)"
		else
			fail "rxe move" "c3 links $left; $(rdma dev); $(cat /run/out)"
		fi
	fi
else
	fail rxe "rdma_rxe did not load"
fi

# -- SIGKILL in the middle of attaches: after reconcile the ledger matches the kernel
$ip netns add c4
id4=$(api alloc igb --owner netns:/run/netns/c4 | jq -r .id)
pci4=$(vfctl -o json show "$igb" | jq -r --arg id "$id4" '.vfs[] | select(.allocation == $id) | .pci')
ok=1
for round in 1 2 3 4 5 6; do
	(while :; do vfctl attach "$id4" --netns c4 --ifname eth4 >/dev/null 2>&1
		vfctl detach "$id4" >/dev/null 2>&1; done) &
	cycler=$!
	sleep "0.$(od -An -N1 -tu1 /dev/urandom | tr -d ' ')"
	kill -9 "$agent"; wait "$agent" 2>/dev/null
	kill "$cycler"; wait "$cycler" 2>/dev/null
	start_agent
	state=$(api show "$pci4" | jq -r .state)
	inside=$($ip -n c4 link show eth4 >/dev/null 2>&1 && echo yes || echo no)
	host=$([ -n "$(ls "/sys/bus/pci/devices/$pci4/net" 2>/dev/null)" ] && echo yes || echo no)
	case "$state:$inside:$host" in
	attached:yes:no | reserved:no:yes) ;;
	*) ok=0; fail "kill -9 round $round" "ledger $state, in c4 $inside, in host $host" ;;
	esac
done
[ $ok = 1 ] && pass "kill -9 during attach/detach, 6 rounds: ledger and kernel agree after each restart"

# -- vfctl doctor on a real host: the guest's IOMMU (QEMU's intel-iommu), vfio-pci, igb's SR-IOV
vfctl doctor >/run/doctor 2>&1
drc=$?
bad=$(grep -Ev '^(PASS|SKIP|WARN|FAIL)  ' /run/doctor)
if [ -z "$bad" ] && grep -q '^PASS  iommu  .*IOMMU groups' /run/doctor &&
	grep -q '^PASS  vfio-pci ' /run/doctor && grep -q "^PASS  sriov $igb  *igb, ethernet" /run/doctor &&
	grep -q "^PASS  sriov $nvme " /run/doctor; then
	pass "doctor (exit $drc): $(grep -c '^PASS' /run/doctor) PASS, $(grep -c '^WARN' /run/doctor) WARN, $(grep -c '^FAIL' /run/doctor) FAIL; $(grep '  iommu ' /run/doctor | cut -c7- | tr -s ' ')"
else
	fail doctor "exit $drc: $(tr '\n' '|' </run/doctor)"
fi
grep -E '^(WARN|FAIL)' /run/doctor | while read -r line; do info doctor "$line"; done

# -- a reboot-like start: numvfs persisted, the PF reset to 0, the agent puts the VFs back
for id in $(api allocations | jq -r '.allocations[].id'); do vfctl release "$id" >/dev/null 2>&1; done
vfctl numvfs "$igb" 5 --persist >/run/out 2>&1
prc=$?
kill "$agent"; wait "$agent" 2>/dev/null
echo 0 >"/sys/bus/pci/devices/$igb/sriov_numvfs"
zero=$(cat "/sys/bus/pci/devices/$igb/sriov_numvfs")
start_agent
udevadm settle --timeout=10
now=$(cat "/sys/bus/pci/devices/$igb/sriov_numvfs")
seen=$(api show "$igb" | jq '.vfs | length')
if [ $prc = 0 ] && [ "$zero" = 0 ] && [ "$now" = 5 ] && [ "$seen" = 5 ] &&
	grep -q "numvfs: PF $igb 0 -> 5 VFs, as the config says" /run/agent.log; then
	pass "reboot-like start: igb at 0 VFs, the persisted rule ($(jq -c .numvfs /etc/vfagent/vfagent.json)) gave back $now, $seen inventoried"
else
	fail "numvfs persist" "persist exit $prc ($(cat /run/out)), at stop $zero, after start $now, agent sees $seen"
fi
# -- VF reset between tenants on real VFs: igbvf's and the NVMe VF's, by the kernel's reset methods
id5=$(api alloc igb --owner vm:r5 | jq -r .id); pci5=$(vf_of "$id5")
id6=$(api alloc nvme --owner vm:r6 | jq -r .id); pci6=$(vf_of "$id6")
n5=$(ls "/sys/bus/pci/devices/$pci5/net" 2>/dev/null); mac5=$(cat "/sys/bus/pci/devices/$pci5/net/$n5/address" 2>/dev/null)
d6=$(drv_of "$pci6")
vfctl release "$id5" >/run/out 2>&1; vfctl release "$id6" >>/run/out 2>&1
udevadm settle --timeout=10
n5b=$(ls "/sys/bus/pci/devices/$pci5/net" 2>/dev/null); mac5b=$(cat "/sys/bus/pci/devices/$pci5/net/$n5b/address" 2>/dev/null)
st5=$(api show "$pci5" | jq -r .state); st6=$(api show "$pci6" | jq -r .state)
if [ "$st5" = free ] && [ "$st6" = free ] && [ "$(drv_of "$pci5")" = igbvf ] && [ "$(drv_of "$pci6")" = "$d6" ] &&
	[ -n "$n5b" ] && $ip link show "$n5b" >/dev/null 2>&1 &&
	grep -q "VF $pci5: reset (.*), igbvf bound again, netdev back" /run/agent.log &&
	grep -q "VF $pci6: reset (" /run/agent.log; then
	pass "reset: igb VF $pci5 (igbvf: $n5 $mac5 -> $n5b $mac5b, reset_method $(cat "/sys/bus/pci/devices/$pci5/reset_method")) and NVMe VF $pci6 (${d6:-no driver}, $(cat "/sys/bus/pci/devices/$pci6/reset_method")) reset and free"
else
	fail reset "igb $pci5 $st5 $(drv_of "$pci5") net '$n5b'; nvme $pci6 $st6; $(grep "reset\|quarantin" /run/agent.log | tail -3 | tr '\n' '|') $(cat /run/out)"
fi

# -- the kernel cannot reset it (every reset method disabled): quarantined; repair once it can
id7=$(api alloc igb --owner vm:r7 | jq -r .id); pci7=$(vf_of "$id7")
echo "" >"/sys/bus/pci/devices/$pci7/reset_method"
vfctl release "$id7" >/run/out 2>&1
st7=$(api show "$pci7" | jq -r .state); why7=$(api show "$pci7" | jq -r .reason)
vfctl repair "$pci7" >/run/out2 2>&1 && r1=ok || r1=refused
echo default >"/sys/bus/pci/devices/$pci7/reset_method"
vfctl repair "$pci7" >>/run/out2 2>&1 && r2=ok || r2=refused
st7b=$(api show "$pci7" | jq -r .state)
if [ "$st7" = quarantined ] && [ "$r1" = refused ] && [ "$r2" = ok ] && [ "$st7b" = free ] &&
	[ "$(drv_of "$pci7")" = igbvf ]; then
	pass "quarantine: $pci7 with its reset methods disabled: $why7; repaired once 'default' was back"
else
	fail quarantine "$pci7: $st7 ($why7), repair $r1 then $r2, now $st7b: $(cat /run/out /run/out2 | tr '\n' '|')"
fi
# -- nested domains through libvirt's QEMU driver on the VFs, OpenNebula's actions on them
vm_attach_steps
# -- a nested guest that runs: its failover NIC swapped under pings, a NIC without standby replugged
failover_steps

kill "$agent"
