# shellcheck shell=sh
# What every kvm-sriov action shares: where the agent and the stock KVM
# actions are, and how to ask an agent (this host's, or another's over ssh).
#
#   VFAGENT_SOCKET   the agent's socket            (default /run/vfagent/vfagent.sock)
#   VFAGENT_KVM_DIR  the stock KVM actions         (default: ../kvm next to this directory)
#   VFAGENT_SSH      how to run a command on another host (default ssh)
# A file vfagent.conf next to the actions may set them.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1091
[ -r "$here/vfagent.conf" ] && . "$here/vfagent.conf"
VFAGENT_SOCKET=${VFAGENT_SOCKET:-/run/vfagent/vfagent.sock}
VFAGENT_KVM_DIR=${VFAGENT_KVM_DIR:-$here/../kvm}
VFAGENT_SSH=${VFAGENT_SSH:-ssh}
action=$(basename "$0")

die() {
	echo "vfagent $action: $*" >&2
	exit 1
}

warn() { echo "vfagent $action: $*" >&2; }

for tool in curl jq; do
	command -v "$tool" >/dev/null || die "$tool is needed (apt-get install $tool)"
done

# One word for a POSIX shell, whatever it holds: OpenSSH joins a remote
# command's words with spaces and hands the string to the remote shell.
shquote() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# api_on HOST METHOD PATH [DATA]: the body on stdout; 0 for a 2xx, else the
# agent's message on stderr. HOST "" is this host. DATA goes on stdin, so
# only the quoted command line reaches a remote shell.
api_on() {
	host=$1 method=$2 path=$3 data=${4:-}
	set -- curl -sS --unix-socket "$VFAGENT_SOCKET" -X "$method" -w '\n%{http_code}' \
		-H 'Content-Type: application/json' --data-binary @- "http://vfagent$path"
	if [ -n "$host" ]; then
		line=""
		for word; do line="$line $(shquote "$word")"; done
		out=$(printf '%s' "$data" | $VFAGENT_SSH "$host" "$line") || out="
000"
	else
		out=$(printf '%s' "$data" | "$@") || out="
000"
	fi
	code=$(printf '%s\n' "$out" | tail -n 1)
	body=$(printf '%s\n' "$out" | sed '$d')
	case $code in
	2??) printf '%s\n' "$body"; return 0 ;;
	000) echo "the agent${host:+ on $host} does not answer at $VFAGENT_SOCKET" >&2 ;;
	*) printf '%s\n' "$body" | jq -r '.message // .' >&2 ;;
	esac
	return 1
}

api() { api_on "" "$@"; }

# Whether bridge (or libvirt network) $1 is one the agent maps to a pool.
sriov_network() {
	[ -n "$1" ] || return 1
	pools=$(api GET /v1/pools) || die "cannot ask the agent whether $1 is an SR-IOV network"
	printf '%s' "$pools" | jq -e --arg n "$1" \
		'[.pools[].networks[]? | select(.bridge == $n or .network == $n)] | length > 0' \
		>/dev/null
}

# The ids of the allocations of VM $2 on host $1, in state $3 (or any). $2 is
# OpenNebula's DEPLOY_ID: the domain's UUID (a name works too).
allocations_of() {
	api_on "$1" GET "/v1/allocations?owner=vm:$2" |
		jq -r --arg s "${3:-}" '.allocations[] | select($s == "" or .state == $s) | .id'
}

# One claim a line for each VF of VM $1 on this host, that another host (or
# this one after a save) can make to give the VM the same devices: its pool
# and owner, and for an Ethernet VF the MAC and VLAN its PF reports (the
# ones the guest knew; a VF of a deployment file has them from its NIC).
vf_claims() {
	list=$(api GET "/v1/allocations?owner=vm:$1") || return 1
	printf '%s' "$list" | jq -c '.allocations[] | {pool, owner} + (.vfs[] | {pci})' |
		while read -r vf; do
			info=$(api GET "/v1/vfs/$(printf '%s' "$vf" | jq -r .pci)") || exit 1
			printf '%s' "$info" | jq -c --argjson vf "$vf" '{pool: $vf.pool, count: 1,
				owner: $vf.owner} + (if .link_type == "ethernet" then
				(.pf_settings // {} | {mac, vlan} | with_entries(select(.value != null
				and .value != 0))) else {} end)' || exit 1
		done
}

# Every allocation of VM $2 on host $1 into its domain, live: the ids that failed on stderr.
attach_all_live() {
	rc=0
	for id in $(allocations_of "$1" "$2" reserved); do
		api_on "$1" POST "/v1/allocations/$id/attach" "{\"domain\":\"$2\",\"live\":true}" \
			>/dev/null || rc=1
	done
	return $rc
}

detach_all() {
	rc=0
	for id in $(allocations_of "$1" "$2" attached); do
		api_on "$1" POST "/v1/allocations/$id/detach" >/dev/null || rc=1
	done
	return $rc
}

# Every allocation of VM $2 on host $1 back. One the agent released by itself
# meanwhile (it does once it sees the domain gone) counts as given back.
release_all() {
	rc=0
	for id in $(allocations_of "$1" "$2"); do
		api_on "$1" DELETE "/v1/allocations/$id" >/dev/null 2>&1 ||
			[ "$(api_on "$1" GET "/v1/allocations/$id" | jq -r .state)" = released ] ||
			rc=1
	done
	return $rc
}

# The stock action with the arguments this one got, and its stdin ($stdin
# when the wrapper read it first; OpenNebula's driver message otherwise).
stock() {
	[ -x "$VFAGENT_KVM_DIR/$action" ] || die "no stock action $VFAGENT_KVM_DIR/$action"
	printf '%s\n' "${stdin-}" | "$VFAGENT_KVM_DIR/$action" "$@"
}

# OpenNebula's driver message (or deployment XML) on stdin, read once.
read_stdin() {
	if [ -t 0 ]; then stdin=""; else stdin=$(cat); fi
}
