#!/bin/sh
# vfagent-pci.sh: an OpenNebula IM probe (kvm-probes.d/host/system, run with
# the SYSTEM_HOST probes: every 600 s by default, monitord.conf PROBES_PERIOD).
# It offers the agent's VFs to oned as host PCI devices, one PCI = [...] each
# with the fields the stock pci.rb prints and HostSharePCI reads (ADDRESS is
# the key; VENDOR, DEVICE, CLASS and SHORT_ADDRESS are what a VM's PCI = [...]
# matches), so that oned books each VF to one VM and the scheduler counts
# them exactly. Offered: the VFs of the OpenNebula pools that are free, or
# held by an OpenNebula VM (owner one-<ID>: oned booked them). Never a VF a
# container or another VM holds, nor one quarantined or unavailable: oned
# drops a device it no longer sees unless a VM has it booked.
# With the agent down nothing is offered (the free VFs leave oned's list at
# the next run) and VFAGENT_STATUS says why; the probe always exits 0 (a
# failing probe puts the whole host in ERROR). It prints no count: oned's
# template merge keeps an attribute a probe stops printing.
#   VFAGENT_SOCKET     the agent's socket (default /run/vfagent/vfagent.sock)
#   VFAGENT_ONE_POOLS  the pools offered, by name, blank-separated (default:
#                      every pool the agent maps a network to); never a pool
#                      dedicated to containers ("owners": ["container"])
#   VFAGENT_STATE_DIR  where the addresses offered are noted for the deploy
#                      action (default /var/tmp/one_db/vfagent: kept by
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
pools="" vfs="" allocs=""
if ! pools=$(get /v1/pools) || ! vfs=$(get /v1/vfs) || ! allocs=$(get /v1/allocations); then
	status "the agent does not answer at $sock: $pools$vfs$allocs"
	exit 0
fi
# PCI class of a VF by its link: 0200 Ethernet controller, 0207 InfiniBand controller
if ! out=$(jq -rn --argjson p "$pools" --argjson v "$vfs" --argjson a "$allocs" \
	--arg want "${VFAGENT_ONE_POOLS:-}" '
	def q: tostring | gsub("[\"\\\\]"; "");
	def f(k; v): "  \(k) = \"\(v | q)\"";
	($want | split(" ") | map(select(. != ""))) as $named |
	[$p.pools[] | select((.owners // ["vm"]) | index("vm")) |
		select(if $named == [] then ((.networks // []) | length > 0)
		else (.name as $n | $named | index($n)) end) | .name] as $offered |
	([$a.allocations[] | select(.owner.kind == "vm" and
		((.owner.name // "") | test("^one-[0-9]+$"))) | .id]) as $one_vms |
	$v.vfs[] | select(.pool as $x | $offered | index($x)) |
	select(.state == "free" or ((.state == "reserved" or .state == "attached") and
		(.allocation as $id | $one_vms | index($id)))) |
	(.pci | split(":")) as $d | ($d[2] | split(".")) as $sf |
	(if .link_type == "infiniband" then ["0207", "InfiniBand controller"]
	 else ["0200", "Ethernet controller"] end) as $class |
	"PCI = [", ([
	f("TYPE"; "\(.vendor):\(.device):\($class[0])"), f("VENDOR"; .vendor),
	f("DEVICE"; .device), f("CLASS"; $class[0]), f("CLASS_NAME"; $class[1]),
	f("ADDRESS"; "\($d[0]):\($d[1]):\($sf[0]):\($sf[1])"),
	f("SHORT_ADDRESS"; if $d[0] == "0000" then "\($d[1]):\($d[2])" else .pci end),
	f("DOMAIN"; $d[0]), f("BUS"; $d[1]), f("SLOT"; $sf[0]), f("FUNCTION"; $sf[1]),
	f("NUMA_NODE"; if (.numa_node // -1) < 0 then "-" else .numa_node end),
	f("IFNAME"; .netdev // "-"), f("SRIOV"; "vf"),
	f("DEVICE_NAME"; "\(.link_type) VF of pool \(.pool) (vfagent)"),
	f("VFAGENT_POOL"; .pool)] | join(",\n")), "]"' 2>&1); then
	status "the agent's answer is not what this probe knows: $out"
	exit 0
fi
# the addresses offered, for the deploy action to know a VF of the agent's when it is down
if mkdir -p "$state" 2>/dev/null; then
	printf '%s\n' "$out" | sed -n 's/^  ADDRESS = "\(.*\):\([0-7]\)",*$/\1.\2/p' >"$state/offered.new" &&
		mv "$state/offered.new" "$state/offered"
fi
[ -z "$out" ] || printf '%s\n' "$out"
status ok
