#!/bin/sh
# vfagent-pci.sh: an OpenNebula IM monitoring probe (kvm-probes.d/host/system).
# Per vfagent pool, host attributes for the scheduler:
#   VFAGENT_FREE_<POOL> = "N"   free VFs of the pool when this probe ran
#   VFAGENT_VFS_<POOL>  = "N"   VFs of the pool
# and VFAGENT_STATUS = "ok", or why the agent could not say. It never
# prints PCI = [...]: oned hands out the devices listed there to any VM that
# asks, behind the agent's back. It always exits 0: a probe that fails puts
# the whole host in ERROR, and a host whose agent is down still runs VMs.
#   VFAGENT_SOCKET  the agent's socket (default /run/vfagent/vfagent.sock)
set -u
sock=${VFAGENT_SOCKET:-/run/vfagent/vfagent.sock}

status() { printf 'VFAGENT_STATUS = "%s"\n' "$(printf '%s' "$1" | tr -d '\042\134' | tr '\n' ' ')"; }

command -v curl >/dev/null && command -v jq >/dev/null || {
	status "curl and jq are needed on this host"
	exit 0
}
if ! pools=$(curl -sfS --max-time 5 --unix-socket "$sock" http://vfagent/v1/pools 2>&1); then
	status "the agent does not answer at $sock: ${pools:-no reply}"
	exit 0
fi
if ! out=$(printf '%s' "$pools" | jq -r '.pools[] |
	(.name | ascii_upcase | gsub("[^A-Z0-9]"; "_")) as $n |
	"VFAGENT_FREE_\($n) = \"\(.vfs.free // 0)\"",
	"VFAGENT_VFS_\($n) = \"\([.vfs[]] | add // 0)\""' 2>&1); then
	status "the agent's /v1/pools is not what this probe knows: $out"
	exit 0
fi
[ -z "$out" ] || printf '%s\n' "$out"
status ok
