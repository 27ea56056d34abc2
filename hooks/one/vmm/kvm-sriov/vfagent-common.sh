# shellcheck shell=sh
# What every kvm-sriov action shares: where the agent and the stock KVM
# actions are, and how to ask an agent (this host's, or another's over ssh).
#
#   VFAGENT_SOCKET   the agent's socket            (default /run/vfagent/vfagent.sock)
#   VFAGENT_KVM_DIR  the stock KVM actions         (default: ../kvm next to this directory)
#   VFAGENT_SSH      how to run a command on another host (default ssh)
# A file vfagent.conf next to the actions may set them ($VFAGENT_CONF: where the
# network driver, in another directory, finds it).

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1090,SC1091
[ -r "${VFAGENT_CONF:-$here/vfagent.conf}" ] && . "${VFAGENT_CONF:-$here/vfagent.conf}"
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
# and owner, and the settings its PF reports (the ones the guest knew: MAC,
# VLAN, rate, spoofchk, trust); an IB VF's GUID (node and port: the guest and
# the subnet manager's partitions know it by it) and partition, a failover
# NIC's standby, the allocation's first VF's IP (its IPoIB dummy NIC's
# address) and its NIC's security groups (vfctl doctor names them), from the
# allocation. VFs at the addresses in $2 (oned's bookings,
# which oned books again) are left out.
vf_claims() {
	list=$(api GET "/v1/allocations?owner=vm:$1") || return 1
	printf '%s' "$list" | jq -c '.allocations[] | . as $a | .vfs | to_entries[] |
		{pool: $a.pool, owner: $a.owner, pci: .value.pci,
		 guid: (if .key == 0 and $a.settings.guid then $a.settings.guid else .value.guid end),
		 ip: (if .key == 0 then $a.settings.ip else null end),
		 pkey: $a.settings.pkey, membership: $a.settings.membership,
		 failover: $a.settings.failover, security_groups: $a.settings.security_groups}' |
		while read -r vf; do
			pci=$(printf '%s' "$vf" | jq -r .pci)
			case " ${2:-} " in *" $pci "*) continue ;; esac
			info=$(api GET "/v1/vfs/$pci") || exit 1
			printf '%s' "$info" | jq -c --argjson vf "$vf" '{pool: $vf.pool, count: 1,
				owner: $vf.owner} + ($vf | if .failover then {failover} else {} end)
				+ (.pf_settings // {} |
				{spoofchk, trust, max_tx_rate} | with_entries(select(.value != null and
				.value != 0))) + (if .link_type == "ethernet" then
				(.pf_settings // {} | {mac, vlan} | with_entries(select(.value != null
				and .value != 0))) else ($vf | {guid, pkey, membership} |
				with_entries(select(.value != null))) end) + ($vf | {ip, security_groups} |
				with_entries(select(.value != null)))' || exit 1
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

# Every attached allocation of VM $2 on host $1 back to the host, reserved;
# held while the file $3 exists when given (a suspended VM's checkpoint); with
# $3 "keep-standby", failover NICs' standbys stay in the guest (a live migration).
detach_all() {
	rc=0 hold_body="" # (api_on sets $body)
	case ${3:-} in
	"") ;;
	keep-standby) hold_body='{"keep_standby":true}' ;;
	*) hold_body=$(jq -cn --arg p "$3" '{hold_while: $p}') ;;
	esac
	for id in $(allocations_of "$1" "$2" attached); do
		api_on "$1" POST "/v1/allocations/$id/detach" "$hold_body" >/dev/null || rc=1
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

# ---- OpenNebula's PCI = [TYPE = "NIC", ...] devices (oned booked them; see README) ----
VFAGENT_STATE_DIR=${VFAGENT_STATE_DIR:-/var/tmp/one_db/vfagent}

# Whether the agent answers (its health), quietly.
agent_up() {
	curl -sf --max-time 5 --unix-socket "$VFAGENT_SOCKET" http://vfagent/v1/health >/dev/null 2>&1
}

# x XML XPATH: the string value, "" when absent.
x() { printf '%s' "$1" | xmllint --xpath "string($2)" - 2>/dev/null || true; }

# "INDEX ADDRESS" a line, for each PCI device of the VM in XML $1 (vm.xml or a driver
# message) that has an address ($2: an XPath predicate, e.g. "[ATTACH='YES']").
vm_pcis() {
	n=$(printf '%s' "$1" | xmllint --xpath "count(//VM/TEMPLATE/PCI$2)" - 2>/dev/null) || n=0
	i=1
	while [ "$i" -le "$n" ]; do
		p="//VM/TEMPLATE/PCI$2[$i]"
		d=$(x "$1" "$p/DOMAIN") b=$(x "$1" "$p/BUS") s=$(x "$1" "$p/SLOT") f=$(x "$1" "$p/FUNCTION")
		[ -z "$b" ] || printf '%s %s:%s:%s.%s\n' "$i" "${d:-0000}" "$b" "$s" "$f" | tr 'A-F' 'a-f'
		i=$((i + 1))
	done
}

# Whether file (or directory, $2 = d) $1 is this user's or root's, no link, and no one else
# may write it: what another user could have written is not believed.
trusted() { # PATH [TYPE]
	[ -n "$(find "$1" -maxdepth 0 -type "${2:-f}" \( -user "$(id -u)" -o -user 0 \) ! -perm /022 \
		2>/dev/null)" ]
}

# Whether VF $1 (a PCI address) is one the probe last offered to oned (for when the agent
# does not answer: such a device needs it). A note that another user could have written (the
# state directory or the file theirs, a link, or writable by others) is not believed: every
# device then counts as the agent's.
offered() {
	[ -e "$VFAGENT_STATE_DIR" ] || [ -L "$VFAGENT_STATE_DIR" ] || return 1 # never probed
	if ! trusted "$VFAGENT_STATE_DIR" d; then
		warn "$VFAGENT_STATE_DIR could have been written by another user: not believed"
		return 0
	fi
	[ -e "$VFAGENT_STATE_DIR/offered" ] || [ -L "$VFAGENT_STATE_DIR/offered" ] || return 1
	if ! trusted "$VFAGENT_STATE_DIR/offered"; then
		warn "$VFAGENT_STATE_DIR/offered could have been written by another user: not believed"
		return 0
	fi
	grep -qx "$1" "$VFAGENT_STATE_DIR/offered"
}

# The VM's PCI devices that were the agent's when the probe last ran, with the agent down.
offered_pcis() {
	vm_pcis "$1" "${2:-}" | while read -r _ pci; do offered "$pci" && echo "$pci"; done
}

# OpenNebula's NIC attributes that the agent reads in oned's words and units, as a claim's or an
# update's "opennebula" (jq; every action builds it so): SPOOFCHK and TRUST as oned keeps them
# (YES, on, ...), OUTBOUND_AVG_BW (kilobytes a second) as a number; those with no value left
# out. What they mean (a flag's words, a rate in Mbit/s) the agent alone knows
# (agent/vm/one-attrs.c, as for a deployment file's query and <bandwidth>): tests/one-attrs.sh
# holds the hooks and the agent together to oned's values.
ONE_ATTRS_JQ='
	def opennebula: with_entries(select(.value != "")) |
		if .OUTBOUND_AVG_BW then .OUTBOUND_AVG_BW |= tonumber else . end |
		if . == {} then {} else {opennebula: .} end;'

# The settings of the NIC or PCI entry at XPath $2 of the VM in XML $1, as a claim's JSON:
# MAC, VLAN_ID, SPOOFCHK, TRUST and OUTBOUND_AVG_BW (its "opennebula": the agent sets the VF's
# spoofchk, trust and max_tx_rate from them), IP (an IB VF's IPoIB dummy NIC) and PKEY (its
# partition: the network's PKEY, which oned copies into the NIC when oned.conf has
# INHERIT_VNET_ATTR = "PKEY"; the agent checks it) and SECURITY_GROUPS (oned's "0,101": kept
# with the VF, whose traffic no rule of theirs reaches). Fails on a value that is no number.
nic_settings() { # XML XPATH
	jq -cn --arg mac "$(x "$1" "$2/MAC")" --arg vlan "$(x "$1" "$2/VLAN_ID")" \
		--arg pkey "$(x "$1" "$2/PKEY")" --arg sg "$(x "$1" "$2/SECURITY_GROUPS")" \
		--arg spoof "$(x "$1" "$2/SPOOFCHK")" --arg trust "$(x "$1" "$2/TRUST")" \
		--arg bw "$(x "$1" "$2/OUTBOUND_AVG_BW")" --arg ip "$(x "$1" "$2/IP")" "$ONE_ATTRS_JQ"'
		(if $mac == "" then {} else {mac: $mac} end)
		+ (if $vlan == "" then {} else {vlan: ($vlan | tonumber)} end)
		+ ({SPOOFCHK: $spoof, TRUST: $trust, OUTBOUND_AVG_BW: $bw} | opennebula)
		+ (if $ip == "" then {} else {ip: "\($ip)/32"} end)
		+ (if $pkey == "" then {} else {pkey: $pkey} end)
		+ (if $sg == "" then {} else {security_groups: ($sg | split(",") | map(tonumber))}
			end)' 2>/dev/null
}

# The claim of PCI device number $2 of the VM in XML $1 ($4: the predicate), as oned booked it
# (ADDRESS) with the settings of its network (nic_settings). Owner: the domain ($3: its UUID)
# by OpenNebula's name one-<ID>.
pci_claim() { # XML INDEX UUID [PREDICATE] PCI
	settings=$(nic_settings "$1" "//VM/TEMPLATE/PCI${4:-}[$2]") || return 1
	jq -cn --arg pci "$5" --arg uuid "$3" --arg name "one-$(x "$1" //VM/ID)" \
		--argjson settings "$settings" '{pci: $pci, owner: ({kind: "vm", name: $name} +
		if $uuid == "" then {} else {uuid: $uuid} end)} + $settings'
}

# The allocation holding VF $1, and its owner's UUID: "ID UUID" ("" when free or not the agent's).
vf_holder() {
	v=$(api GET "/v1/vfs/$1" 2>/dev/null) || return 0
	id=$(printf '%s' "$v" | jq -r '.allocation // empty')
	[ -n "$id" ] || return 0
	u=$(api GET "/v1/allocations/$id" | jq -r '.owner.uuid // "" | ascii_downcase')
	echo "$id $u"
}

# Whether VF $1 is in one of the agent's pools.
agent_vf() { api GET "/v1/vfs/$1" 2>/dev/null | jq -e '.pool != null' >/dev/null; }

# Whether each PCI device of VM XML $1 ($2: predicate) that is the agent's VF may serve its
# NIC's network: oned books by VENDOR, DEVICE and CLASS alone (HostSharePCI::add_by_name), so
# two pools of one VF model (two ports, two fabrics) look alike to it. A VF whose pool
# vfagent.json maps networks to (bridges or libvirt networks) serves those alone; a pool that
# maps none, or a NIC with no BRIDGE, is not checked. A mismatch is named; nothing is claimed.
pci_pools_match() { # XML [PREDICATE]
	pools=$(api GET /v1/pools) || return 1
	vm_pcis "$1" "${2:-}" | while read -r i pci; do
		have=$(api GET "/v1/vfs/$pci" 2>/dev/null | jq -r '.pool // empty')
		bridge=$(x "$1" "//VM/TEMPLATE/PCI${2:-}[$i]/BRIDGE")
		[ -n "$have" ] && [ -n "$bridge" ] || continue
		serves=$(printf '%s' "$pools" | jq -r --arg p "$have" \
			'[.pools[] | select(.name == $p) | .networks[]? | .bridge // .network] | join(" ")')
		case " $serves " in "  " | *" $bridge "*) continue ;; esac
		warn "VF $pci is in pool $have, which serves $serves, not its NIC's network $(x "$1" "//VM/TEMPLATE/PCI${2:-}[$i]/NETWORK") (bridge $bridge): tell the pools apart in oned (one pool per VF model offered, or SHORT_ADDRESS)"
		exit 1
	done
}

# VF $1, booked by oned for VM $2, kept here for another VM of oned's since that one's domain
# ended (reserved, held on its VM directory's file): oned books only a device it has freed, so
# that VM was undeployed, terminated or moved where its directory stayed (a shared system
# datastore) and has no VF here any more. Every VF kept for it on that file is given back,
# said in the log. Anything else holding the VF stays as it is (the claim then fails naming it).
take_back_kept() { # PCI VM_ID
	held=$(vf_holder "$1")
	[ -n "$held" ] || return 0
	a=$(api GET "/v1/allocations/${held%% *}" 2>/dev/null) || return 0
	f=$(printf '%s' "$a" | jq -r 'select(.state == "reserved" and .owner.kind == "vm" and
		(.owner.name // "" | startswith("one-")) and (.hold_while // "" |
		test("/\\.vfagent-held\\.[^/]*$"))) | .hold_while')
	[ -n "$f" ] || return 0
	who=$(printf '%s' "$a" | jq -r .owner.name)
	[ "$who" != "one-$2" ] || return 0
	warn "VF $1 was kept for VM $who since its domain ended (held on $f); oned booked it for VM $2, so VM $who has it no more: its VFs kept on that file go back"
	api GET "/v1/allocations?owner=vm:$who" | jq -r --arg f "$f" \
		'.allocations[] | select(.state == "reserved" and .hold_while == $f) | .id' |
		while read -r id; do api DELETE "/v1/allocations/$id" >/dev/null || exit 1; done
}

# Each PCI device of VM XML $1 that is the agent's VF, claimed for domain $2 by its address
# ($3: predicate), after pci_pools_match. The new ids on stdout; a VF the domain holds already
# counts as claimed (a retried action); one kept for another VM of oned's whose domain ended
# goes back first (take_back_kept); one held by another (a lost race, a container): fails,
# naming it.
claim_pcis() { # XML UUID [PREDICATE]
	pci_pools_match "$1" "${3:-}" || return 1
	vm_pcis "$1" "${3:-}" | while read -r i pci; do
		agent_vf "$pci" || continue
		held=$(vf_holder "$pci")
		[ "${held#* }" != "$(printf '%s' "$2" | tr 'A-F' 'a-f')" ] || [ -z "$2" ] || continue
		[ -z "$held" ] || take_back_kept "$pci" "$(x "$1" //VM/ID)" ||
			warn "VF $pci: the VFs kept for its earlier VM not all given back"
		body=$(pci_claim "$1" "$i" "$2" "${3:-}" "$pci") || exit 1
		# a refusal names the NIC (its network's PKEY, say), not only the field
		if ! out=$(api POST /v1/allocations "$body" 2>&1); then
			warn "PCI NIC $(x "$1" "//VM/TEMPLATE/PCI${3:-}[$i]/MAC") on network $(x "$1" "//VM/TEMPLATE/PCI${3:-}[$i]/NETWORK") (VF $pci): $out"
			exit 1
		fi
		printf '%s' "$out" | jq -r .id
	done
}

give_back() { # IDS
	for id in $1; do api DELETE "/v1/allocations/$id" >/dev/null || warn "allocation $id: not given back"; done
}

# ---- a VM without a domain keeps its VFs (oned's poweroff keeps its devices booked) ----
# The file VM $2's allocations on this host are held on ($1: the VM's directory in the system
# datastore, where deploy finds DEPLOYMENT_FILE; $3: the host as oned names it). While the
# VM has no domain (powered off, by oned or by its guest) the agent keeps them reserved for it
# while this file exists: terminating the VM deletes its directory (tm delete), undeploying or
# migrating it moves it away (tm mv), and the agent gives the VFs back at once. On a shared
# system datastore the directory stays: the next deploy of the VM, on whichever host, removes
# the other hosts' files, and theirs go back then.
hold_file() { # VM_DIR HOST
	printf '%s/.vfagent-held.%s' "$1" "$2"
}

# The UUID the domain of VM ID $1 had when its VFs were kept here (a resume reuses it, so
# that the domain finds them), or "".
held_uuid() { # VM_ID
	api GET "/v1/allocations?owner=vm:one-$1" 2>/dev/null | jq -r '[.allocations[] |
		select(.state == "reserved" and .hold_while != null) | .owner.uuid // empty][0] // empty'
}

# Every allocation of domain $1 on this host held on file $2 (null: no longer held).
hold_all() { # UUID FILE
	hold_body=$(jq -cn --arg f "$2" '{hold_while: (if $f == "" then null else $f end)}')
	rc=0 # (api_on sets $body)
	for id in $(allocations_of "" "$1"); do
		api POST "/v1/allocations/$id/hold" "$hold_body" >/dev/null || rc=1
	done
	return $rc
}

# The domain $1 is gone (a poweroff): each allocation still attached back to the host,
# reserved and held on its file, unless the agent has done so already. Those with no hold
# (made before holds were set) are named on stderr and go back when the agent sees the
# domain gone.
keep_held() { # UUID
	list=$(api GET "/v1/allocations?owner=vm:$1") || return 1
	printf '%s' "$list" | jq -r '.allocations[] | select(.state == "attached") |
		"\(.id) \(.hold_while // "")"' | {
		rc=0
		while read -r id f; do
			if [ -z "$f" ]; then
				warn "allocation $id of $1 is held on no file: its VFs go back to the host"
				rc=1
				continue
			fi
			api POST "/v1/allocations/$id/detach" "$(jq -cn --arg f "$f" '{hold_while: $f}')" \
				>/dev/null 2>&1 ||
				[ "$(api GET "/v1/allocations/$id" | jq -r .state)" = reserved ] || rc=1
		done
		exit $rc
	}
}

# The file the allocations of domain $2 on host $1 are held on ("" when none).
vm_hold() { # HOST UUID
	api_on "$1" GET "/v1/allocations?owner=vm:$2" 2>/dev/null |
		jq -r '[.allocations[] | .hold_while // empty | select(test("/\\.vfagent-held\\."))][0]
		// empty'
}

# ---- security groups: none of their rules reaches a VF ----
# oned's security group rules are iptables rules on a NIC's host-side port (the stock network
# drivers' SecurityGroupIPTables, on its tap or bridge port); a VF's traffic goes from the guest
# to the wire and never passes the host's firewall. Every NIC or PCI NIC that becomes a VF keeps
# its SECURITY_GROUPS in its claim (the agent keeps them; vfctl doctor names them) and has them
# said in the VM's log: one_vmm_exec.rb's SSH stream logs each line an action writes on stderr
# as the VM's (DriverExecHelper#log: "[I]", or "[E]" for a line that begins "ERROR:"). The NIC's
# VFAGENT_SECURITY_GROUPS (its network's, copied into it by oned.conf's INHERIT_VNET_ATTR) says
# what to do: WARN (or none) says so and goes on, REFUSE fails the action before anything is
# claimed, naming the NIC and its groups.

# Entry $2 (NIC or PCI) number $3 of the VM in XML $1 ($4: the predicate, "[ATTACH='YES']"):
# "NIC 02:00:c0:a8:02:07 on network hpc-eth".
sg_entry() { # XML KIND INDEX [PREDICATE]
	printf '%s %s on network %s' "$2" "$(x "$1" "//VM/TEMPLATE/$2${4:-}[$3]/MAC")" \
		"$(x "$1" "//VM/TEMPLATE/$2${4:-}[$3]/NETWORK")"
}

# Whether the entry's security groups may stay on its VF: 1, naming why on stderr, when its
# network refuses them or says neither WARN nor REFUSE.
sg_allowed() { # XML KIND INDEX [PREDICATE]
	p="//VM/TEMPLATE/$2${4:-}[$3]"
	sg=$(x "$1" "$p/SECURITY_GROUPS")
	policy=$(x "$1" "$p/VFAGENT_SECURITY_GROUPS" | tr '[:lower:]' '[:upper:]')
	case $policy in
	'' | WARN) return 0 ;;
	REFUSE) [ -n "$sg" ] || return 0
		echo "vfagent $action: $(sg_entry "$@") is a VF with security groups ($sg), whose rules do not apply to it (no host firewall sees a VF's traffic), and its network refuses them (VFAGENT_SECURITY_GROUPS = REFUSE): take them off the NIC and its network (onevnet update: SECURITY_GROUPS)" >&2 ;;
	*) echo "vfagent $action: $(sg_entry "$@"): VFAGENT_SECURITY_GROUPS \"$(x "$1" "$p/VFAGENT_SECURITY_GROUPS")\" is neither WARN nor REFUSE" >&2 ;;
	esac
	return 1
}

# The entry's security groups, if it has any, said in the VM's log.
sg_note() { # XML KIND INDEX [PREDICATE]
	sg=$(x "$1" "//VM/TEMPLATE/$2${4:-}[$3]/SECURITY_GROUPS")
	[ -z "$sg" ] ||
		echo "WARNING: vfagent $action: $(sg_entry "$@") is a VF: its security groups ($sg) do not apply (no host firewall sees a VF's traffic): filter in the guest or on the switch" >&2
}

# "KIND INDEX" a line: the NIC and PCI entries of the VM in XML $1 ($2: the predicate) that
# become VFs of the agent's (NICs on its SR-IOV bridges, PCI NICs on its VFs).
vf_entries() { # XML [PREDICATE]
	n=$(printf '%s' "$1" | xmllint --xpath "count(/VM/TEMPLATE/NIC${2:-})" - 2>/dev/null) || n=0
	i=1
	while [ "$i" -le "$n" ]; do
		! sriov_network "$(x "$1" "/VM/TEMPLATE/NIC${2:-}[$i]/BRIDGE")" 2>/dev/null || echo "NIC $i"
		i=$((i + 1))
	done
	vm_pcis "$1" "${2:-}" | while read -r i pci; do ! agent_vf "$pci" || echo "PCI $i"; done
}
