#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# OpenNebula's NIC attributes in the agent's terms: the agent alone reads them (its one place,
# agent/vm/one-attrs.c; check-domxml holds it to the same tables for a deployment file), the
# hooks hand them over as oned keeps them. A PCI NIC and a NIC of vm.xml as oned writes them
# (each attribute in CDATA, the network's OUTBOUND_AVG_BW, SPOOFCHK and TRUST copied into the
# NIC) become a claim through vfagent-common.sh (pci_claim, nic_settings: what deploy,
# attach_nic and restore send), claimed of an agent on a simulated host: the VF's max_tx_rate,
# spoofchk and trust are each row of tests/one/rates.txt and flags.txt. A word or a rate the
# agent does not read is refused naming the attribute, nothing claimed.
# test-needs: mounts
set -eu
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
command -v xmllint >/dev/null && command -v jq >/dev/null && command -v curl >/dev/null ||
	{ echo "SKIP: xmllint, jq and curl are needed"; exit 77; }
top_srcdir=${top_srcdir:-.}
one=$top_srcdir/tests/one
. "$top_srcdir/tests/api-lib.sh"
printf '{"pools": [{"name": "eth", "selector": {"vendors": ["8086"]}}], "libvirt": false}' \
	>"$tmp/vfagent.json"
start_agent --config "$tmp/vfagent.json"
export VFAGENT_CONF=/dev/null VFAGENT_SOCKET="$sock" # no host's vfagent.conf; this agent
# shellcheck source=../hooks/one/vmm/kvm-sriov/vfagent-common.sh
. "$top_srcdir/hooks/one/vmm/kvm-sriov/vfagent-common.sh" # its api() from here on
pci=$(api GET '/v1/vfs?pool=eth&state=free' | jq -r '.vfs[0].pci')
[ -n "$pci" ] && [ "$pci" != null ] || fail "no free VF in pool eth"

# vm.xml of VM 42 with a NIC on network 5 and a PCI NIC on VF $pci, both with the attributes $1
vm() {
	printf '<VM><ID>42</ID><TEMPLATE><NIC><BRIDGE><![CDATA[sriov_eth0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:02:2a]]></MAC><NETWORK_ID><![CDATA[5]]></NETWORK_ID>%s<VN_MAD><![CDATA[vfagent]]></VN_MAD></NIC><PCI><TYPE><![CDATA[NIC]]></TYPE><ADDRESS><![CDATA[%s]]></ADDRESS><MAC><![CDATA[02:00:c0:a8:02:2b]]></MAC><NETWORK_ID><![CDATA[5]]></NETWORK_ID>%s<VN_MAD><![CDATA[vfagent]]></VN_MAD></PCI></TEMPLATE></VM>' "$1" "$pci" "$1"
}
cdata() { printf '<%s><![CDATA[%s]]></%s>' "$1" "$2" "$1"; }

# The settings the agent made of the entry at XPath $2 of vm.xml $1 (claimed and given back),
# as JSON; the agent's message and status 1 when it refused.
claimed() { # XML XPATH
	body=$(nic_settings "$1" "$2") || return 2
	body=$(printf '%s' "$body" | jq -c --arg pci "$pci" '. + {pci: $pci,
		owner: {kind: "vm", name: "one-42"}}')
	got=$(api POST /v1/allocations "$body") || return 1
	api DELETE "/v1/allocations/$(printf '%s' "$got" | jq -r .id)" >/dev/null ||
		fail "$pci not given back"
	printf '%s' "$got" | jq -c .settings
}

rows=0
while read -r kbytes mbits; do
	case $kbytes in '#'* | '') continue ;; esac
	xml=$(vm "$(cdata OUTBOUND_AVG_BW "$kbytes")")
	for p in '/VM/TEMPLATE/NIC[1]' '/VM/TEMPLATE/PCI[1]'; do
		got=$(claimed "$xml" "$p" | jq -r .max_tx_rate) || fail "$p: OUTBOUND_AVG_BW $kbytes refused"
		[ "$got" = "$mbits" ] || fail "$p: OUTBOUND_AVG_BW $kbytes: max_tx_rate $got, not $mbits"
	done
	rows=$((rows + 1))
done <"$one/rates.txt"
[ "$rows" -ge 5 ] || fail "tests/one/rates.txt: $rows rows"

rows=0
while read -r word value; do
	case $word in '#'* | '') continue ;; esac
	xml=$(vm "$(cdata SPOOFCHK "$word")$(cdata TRUST "$word")")
	for p in '/VM/TEMPLATE/NIC[1]' '/VM/TEMPLATE/PCI[1]'; do
		got=$(claimed "$xml" "$p" | jq -c '[.spoofchk, .trust]') || fail "$p: $word refused"
		[ "$got" = "[$value,$value]" ] || fail "$p: SPOOFCHK and TRUST $word: $got, not $value"
	done
	rows=$((rows + 1))
done <"$one/flags.txt"
[ "$rows" -ge 4 ] || fail "tests/one/flags.txt: $rows rows"

# none of them: nothing asked; a rate that is no number: no settings at all (the hooks' own
# check: attach_nic says so); words and rates the agent does not read: refused, naming them
[ "$(claimed "$(vm '')" /VM/TEMPLATE/PCI[1] | jq -c 'del(.mac)')" = '{}' ] ||
	fail "a NIC without the attributes asks for them"
nic_settings "$(vm "$(cdata OUTBOUND_AVG_BW fast)")" /VM/TEMPLATE/PCI[1] >/dev/null &&
	fail "OUTBOUND_AVG_BW fast gave settings"
for bad in 'SPOOFCHK maybe:opennebula.SPOOFCHK: "maybe" is not YES, NO, ON or OFF' \
	'TRUST true:opennebula.TRUST: "true" is not YES' 'OUTBOUND_AVG_BW -8:opennebula.OUTBOUND_AVG_BW' \
	'OUTBOUND_AVG_BW 1.5:opennebula.OUTBOUND_AVG_BW: must be an integer' \
	'OUTBOUND_AVG_BW 536870911876:opennebula.OUTBOUND_AVG_BW: must be in [0, 536870911875]'; do
	attr=${bad%%:*} text=${bad#*:}
	if claimed "$(vm "$(cdata "${attr% *}" "${attr#* }")")" /VM/TEMPLATE/PCI[1] \
		>/dev/null 2>"$tmp/err"; then
		fail "$attr claimed"
	fi
	grep -qF "$text" "$tmp/err" || fail "$attr: \"$(cat "$tmp/err")\" does not say $text"
done
# a setting given both ways, an attribute the agent does not read: refused, naming them
for bad in '"trust":true,"opennebula":{"TRUST":"NO"}|trust, opennebula.TRUST: give one of the two' \
	'"max_tx_rate":5,"opennebula":{"OUTBOUND_AVG_BW":625}|max_tx_rate, opennebula.OUTBOUND_AVG_BW' \
	'"opennebula":{"VLAN_ID":"7"}|opennebula.VLAN_ID: unknown field' \
	'"opennebula":"YES"|opennebula: must be an object' \
	'"opennebula":{"SPOOFCHK":true}|opennebula.SPOOFCHK: must be a string'; do
	api POST /v1/allocations "{\"pci\":\"$pci\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-42\"},${bad%%|*}}" \
		>/dev/null 2>"$tmp/err" && fail "${bad%%|*} claimed"
	grep -qF "${bad#*|}" "$tmp/err" || fail "${bad%%|*}: \"$(cat "$tmp/err")\" does not say ${bad#*|}"
done
[ "$(api GET /v1/allocations | jq '.allocations | length')" = 0 ] || fail "a refusal left a claim"
echo "one-attrs: OpenNebula's rates and flags as the tables say, read by the agent"
