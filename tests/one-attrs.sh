#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# OpenNebula's NIC attributes in the agent's terms, as the hooks make them (vfagent-common.sh's
# one_rate and one_flag, which claims, attach_nic and update_nic share): a PCI NIC and a NIC of
# vm.xml as oned writes them (each attribute in CDATA, the network's OUTBOUND_AVG_BW, SPOOFCHK
# and TRUST copied into the NIC), each row of tests/one/rates.txt and flags.txt, the tables the
# agent's reading of a deployment file is held to as well (check-domxml's test_rates_as_oned).
set -eu
top_srcdir=${top_srcdir:-.}
one=$top_srcdir/tests/one
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
command -v xmllint >/dev/null && command -v jq >/dev/null && command -v curl >/dev/null ||
	{ echo "SKIP: xmllint, jq and curl are needed"; exit 77; }
export VFAGENT_CONF=/dev/null # no host's vfagent.conf
# shellcheck source=../hooks/one/vmm/kvm-sriov/vfagent-common.sh
. "$top_srcdir/hooks/one/vmm/kvm-sriov/vfagent-common.sh"

# vm.xml of VM 42 with a PCI NIC and a NIC on network 5, both with the attributes $1
vm() {
	printf '<VM><ID>42</ID><TEMPLATE><NIC><BRIDGE><![CDATA[sriov_eth0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:02:2a]]></MAC><NETWORK_ID><![CDATA[5]]></NETWORK_ID>%s<VN_MAD><![CDATA[vfagent]]></VN_MAD></NIC><PCI><TYPE><![CDATA[NIC]]></TYPE><ADDRESS><![CDATA[0000:af:01:0]]></ADDRESS><MAC><![CDATA[02:00:c0:a8:02:2b]]></MAC><NETWORK_ID><![CDATA[5]]></NETWORK_ID>%s<VN_MAD><![CDATA[vfagent]]></VN_MAD></PCI></TEMPLATE></VM>' "$1" "$1"
}
cdata() { printf '<%s><![CDATA[%s]]></%s>' "$1" "$2" "$1"; }

rows=0
while read -r kbytes mbits; do
	case $kbytes in '#'* | '') continue ;; esac
	xml=$(vm "$(cdata OUTBOUND_AVG_BW "$kbytes")")
	for p in '/VM/TEMPLATE/NIC[1]' '/VM/TEMPLATE/PCI[1]'; do
		got=$(nic_settings "$xml" "$p" | jq -r .max_tx_rate) || fail "$p: no settings"
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
		got=$(nic_settings "$xml" "$p" | jq -c '[.spoofchk, .trust]') || fail "$p: no settings"
		[ "$got" = "[$value,$value]" ] || fail "$p: SPOOFCHK and TRUST $word: $got, not $value"
	done
	rows=$((rows + 1))
done <"$one/flags.txt"
[ "$rows" -ge 4 ] || fail "tests/one/flags.txt: $rows rows"

# none of them: nothing asked; a rate that is no number: no settings at all
[ "$(nic_settings "$(vm '')" /VM/TEMPLATE/PCI[1] | jq -c 'del(.mac)')" = '{}' ] ||
	fail "a NIC without the attributes asks for them"
nic_settings "$(vm "$(cdata OUTBOUND_AVG_BW fast)")" /VM/TEMPLATE/PCI[1] >/dev/null &&
	fail "OUTBOUND_AVG_BW fast gave settings"
echo "one-attrs: OpenNebula's rates and flags as the tables say"
