#!/bin/sh
# vfagent-pci.sh — OpenNebula IM monitoring probe: the free VFs of each
# vfagent pool in the format of OpenNebula's own PCI probe, and per pool a
# host attribute VFAGENT_FREE_<POOL> = "N" for SCHED_REQUIREMENTS, e.g.
#   SCHED_REQUIREMENTS = "VFAGENT_FREE_IB > 1"
# OpenNebula's scheduler places VMs; vfagent only says what is free here.
#   VFAGENT_SOCKET  the agent's socket (default /run/vfagent/vfagent.sock)
set -u
sock=${VFAGENT_SOCKET:-/run/vfagent/vfagent.sock}
get() { curl -sfS --unix-socket "$sock" "http://vfagent$1"; }

pools=$(get /v1/pools) || { echo "vfagent-pci: the agent does not answer at $sock" >&2; exit 1; }
vfs=$(get '/v1/vfs?state=free') || exit 1

printf '%s' "$pools" | jq -r '.pools[] |
	"VFAGENT_FREE_\(.name | ascii_upcase | gsub("[^A-Z0-9]"; "_")) = \"\(.vfs.free // 0)\""'
printf '%s' "$vfs" | jq -r '
	def class: if .link_type == "infiniband" then ["0207", "Infiniband controller"]
		   else ["0200", "Ethernet controller"] end;
	def vendor_name: {"15b3": "Mellanox Technologies", "8086": "Intel Corporation",
			  "14e4": "Broadcom Inc. and subsidiaries"}[.vendor] // .vendor;
	.vfs[] | select(.pool != null) |
	(.pci | capture("(?<d>[0-9a-f]{4}):(?<b>[0-9a-f]{2}):(?<s>[0-9a-f]{2})\\.(?<f>[0-7])")) as $a |
	class as $c |
	"PCI = [ TYPE = \"\(.vendor):\(.device):\($c[0])\", VENDOR = \"\(.vendor)\", " +
	"VENDOR_NAME = \"\(vendor_name)\", DEVICE = \"\(.device)\", CLASS = \"\($c[0])\", " +
	"CLASS_NAME = \"\($c[1])\", ADDRESS = \"\($a.d):\($a.b):\($a.s):\($a.f)\", " +
	"SHORT_ADDRESS = \"\($a.b):\($a.s).\($a.f)\", DOMAIN = \"\($a.d)\", BUS = \"\($a.b)\", " +
	"SLOT = \"\($a.s)\", FUNCTION = \"\($a.f)\", " +
	"NUMA_NODE = \"\(if .numa_node == null or .numa_node < 0 then "-" else .numa_node end)\", " +
	"DEVICE_NAME = \"\(vendor_name) SR-IOV VF (vfagent pool \(.pool))\" ]"'
