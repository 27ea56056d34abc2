#!/bin/sh
# vfagent-pci.sh: an OpenNebula IM probe (kvm-probes.d/host/system, run with
# the SYSTEM_HOST probes: every 600 s by default, monitord.conf PROBES_PERIOD).
# It offers the agent's VFs to oned as host PCI devices, one PCI = [...] each
# with the fields the stock pci.rb prints and HostSharePCI reads (ADDRESS is
# the key; VENDOR, DEVICE, CLASS and SHORT_ADDRESS are what a VM's PCI = [...]
# matches), so that oned books each VF to one VM and the scheduler counts
# them exactly; NUMA_NODE (copied into the VM's PCI) and PCIE_ROOT (the VF's
# root complex, kept in the host's PCI_DEVICES for SCHED_REQUIREMENTS).
# Offered: the free VFs of the OpenNebula pools. Never a VF held (by a
# container, by any VM: one of oned's keeps its booking while the probe is
# silent about it), quarantined or unavailable: oned drops a device it no
# longer sees unless a VM has it booked.
# With the agent down nothing is offered (the free VFs leave oned's list at
# the next run) and VFAGENT_STATUS says why; the probe always exits 0 (a
# failing probe puts the whole host in ERROR). It prints no count: oned's
# template merge keeps an attribute a probe stops printing.
#   VFAGENT_SOCKET     the agent's socket (default /run/vfagent/vfagent.sock)
#   VFAGENT_ONE_POOLS  the pools offered, by name, blank-separated (default:
#                      every pool the agent maps a network to); never a pool
#                      dedicated to containers ("owners": ["container"])
#   VFAGENT_PCI_DEVICES  the host's PCI devices, to print SHORT_ADDRESS as
#                      lspci does (default /sys/bus/pci/devices)
#   VFAGENT_STATE_DIR  where the VFs of the pools offered are noted for the
#                      actions, held or not (default /var/tmp/one_db/vfagent: kept by
#                      onehost sync, which rewrites /var/tmp/one)
set -u
sock=${VFAGENT_SOCKET:-/run/vfagent/vfagent.sock}
state=${VFAGENT_STATE_DIR:-/var/tmp/one_db/vfagent}

status() { printf 'VFAGENT_STATUS = "%s"\n' "$(printf '%s' "$1" | tr -d '\042\134' | tr '\n' ' ')"; }

get() { curl -sfS --max-time 5 --unix-socket "$sock" "http://vfagent$1" 2>&1; }

command -v curl >/dev/null && command -v jq >/dev/null || {
	status "curl and jq are needed on this host"
	exit 0
}
pools="" vfs="" out="" mine=""
if ! pools=$(get /v1/pools) || ! vfs=$(get /v1/vfs); then
	status "the agent does not answer at $sock: $pools$vfs"
	exit 0
fi
# The VFs of the pools offered to oned: VFAGENT_ONE_POOLS, or those a network maps, never one
# dedicated to containers.
# shellcheck disable=SC2016 # jq's variables, not the shell's
ours='
	($want | split(" ") | map(select(. != ""))) as $named |
	[$p.pools[] | select((.owners // ["vm"]) | index("vm")) |
		select(if $named == [] then ((.networks // []) | length > 0)
		else (.name as $n | $named | index($n)) end) | .name] as $offered |
	$v.vfs[] | select(.pool as $x | $offered | index($x))'
# Only a free VF is printed: oned adds a device it has not seen as unbooked (HostSharePCI::
# set_monitorization, VMID -1), and keeps one it booked when the probe stops printing it. A VF
# held here (by a VM of oned's, a NIC on an SR-IOV bridge, a container) printed would be booked
# again. PCI class by the VF's link: 0200 Ethernet controller, 0207 InfiniBand controller.
# shellcheck disable=SC2016
print='
	def q: tostring | gsub("[\"\\\\]"; "");
	def f(k; v): "  \(k) = \"\(v | q)\"";
	select(.state == "free") |
	(.pci | split(":")) as $d | ($d[2] | split(".")) as $sf |
	(if .link_type == "infiniband" then ["0207", "Infiniband controller"]
	 else ["0200", "Ethernet controller"] end) as $class |
	"PCI = [", ([
	f("TYPE"; "\(.vendor):\(.device):\($class[0])"), f("VENDOR"; .vendor),
	f("DEVICE"; .device), f("CLASS"; $class[0]), f("CLASS_NAME"; $class[1]),
	f("ADDRESS"; "\($d[0]):\($d[1]):\($sf[0]):\($sf[1])"),
	f("SHORT_ADDRESS"; if $domains then .pci else "\($d[1]):\($d[2])" end),
	f("DOMAIN"; $d[0]), f("BUS"; $d[1]), f("SLOT"; $sf[0]), f("FUNCTION"; $sf[1]),
	f("NUMA_NODE"; if (.numa_node // -1) < 0 then "-" else .numa_node end),
	f("PCIE_ROOT"; .pcieRoot // "-"),
	f("IFNAME"; .netdev // "-"), f("SRIOV"; "vf"),
	f("DEVICE_NAME"; "\(.link_type) VF of pool \(.pool) (vfagent)"),
	f("VFAGENT_POOL"; .pool)] | join(",\n")), "]"'
# SHORT_ADDRESS as lspci -mm prints it for pci.rb: with the domain when the host has another than 0000
domains=false
for d in "${VFAGENT_PCI_DEVICES:-/sys/bus/pci/devices}"/*; do
	case ${d##*/} in 0000:*) ;; *:*) domains=true ;; esac
done
query() {
	jq -rn --argjson p "$pools" --argjson v "$vfs" --arg want "${VFAGENT_ONE_POOLS:-}" \
		--argjson domains "$domains" "$ours | $1" 2>&1
}
if ! out=$(query "$print") || ! mine=$(query .pci); then
	status "the agent's answer is not what this probe knows: $out$mine"
	exit 0
fi
# every VF of those pools, whoever holds it, for the actions to know a device of the agent's
# when it is down (oned may have booked any of them). /var/tmp/one_db is open to every user:
# the directory is made private (or refused when it is another user's, a link, or writable by
# others) and the file is written under a name mktemp makes (O_EXCL: a name planted there is
# never written through) and renamed over the last one (a rename replaces a planted link).
note=ok
if ! (umask 077 && mkdir -p "$state") 2>/dev/null ||
	[ -z "$(find "$state" -maxdepth 0 -type d -user "$(id -u)" ! -perm /022 2>/dev/null)" ]; then
	note="$state is not a directory of this user's that others cannot write: the VFs offered are not noted there for the actions"
elif tmp=$(mktemp "$state/offered.XXXXXX" 2>/dev/null); then
	printf '%s\n' "$mine" | grep . >"$tmp"
	mv -f "$tmp" "$state/offered" || { rm -f "$tmp"; note="cannot note the VFs offered in $state"; }
else
	note="cannot note the VFs offered in $state"
fi
[ -z "$out" ] || printf '%s\n' "$out"
status "$note"
