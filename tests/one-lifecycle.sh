#!/bin/sh
# OpenNebula's VM lifecycle through the kvm-sriov actions, each called as
# one_vmm_exec.rb calls it (tests/one/harness.sh: argument layout, stdin,
# here-documents over an OpenSSH-like ssh, one agent and libvirtd per host),
# with the ledger and the domain's XML checked after each step. libvirt's
# test driver cannot hot-plug a device and this machine has no VFIO, so
# save and live migrate are seen refusing cleanly here: the VM keeps its VFs
# and nothing is left booked anywhere.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
. "$top_srcdir/tests/one/harness.sh"
one_test_start
one_host_start h1
one_host_start h2

dep=$top_srcdir/tests/one/deployment.0
vmxml=$top_srcdir/tests/one/vm.xml
uuid=5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9e01
dir=/var/lib/one//datastores/0/7
nfree() { one_api "$1" '/v1/vfs?state=free' '.vfs | length'; }
held() { one_api "$1" "/v1/allocations?owner=vm:$uuid" '[.allocations[] | .state] | join(",")'; }
vfs_of() { one_api "$1" "/v1/allocations?owner=vm:$uuid" '[.allocations[].vfs[].pci] | sort | join(" ")'; }
message() { one_message "$vmxml" "$uuid" "$@"; }
live() { one_virsh "$1" "dumpxml $uuid" >"$ONE_DIR/live.xml" || fail "no domain $uuid on $1"; }
x() { xmllint --xpath "$1" "$ONE_DIR/live.xml"; }
all_free_h1=$(nfree h1)
all_free_h2=$(nfree h2)

step "deploy: the domain's UUID printed; two IB VFs, an Ethernet VF on vm.xml's VLAN, dummies"
out=$(one_deploy h1 7 "$dep" "$vmxml" 2>"$ONE_DIR/deploy.err") ||
	fail "deploy: $out; its stderr: $(tail -n 5 "$ONE_DIR/deploy.err"); the agent: $(tail -n 5 "$ONE_DIR/h1/agent.log" 2>/dev/null)"
[ "$out" = "$uuid" ] || fail "deploy printed '$out', not the domain's UUID"
step "deploy: the security groups of the NICs that became VFs said in the VM's log, not the others'"
sed "s/^/  /" "$ONE_DIR/deploy.err"
for mac in 02:00:0a:01:00:07 02:00:c0:a8:02:07 02:00:0a:02:00:07; do
	grep -q "NIC $mac on network .* is a VF: its security groups (0) do not apply" "$ONE_DIR/deploy.err" ||
		fail "NIC $mac's security groups not said"
done
! grep -q 02:00:c0:a8:01:07 "$ONE_DIR/deploy.err" || fail "br0's NIC named: its groups apply"
# and kept with their VFs' claims: the agent's checks (vfctl doctor) name each of those NICs
sg_nics=$(one_api h1 /v1/host/checks '[.checks[] | select(.check == "security-groups") |
	.fact | capture("^NIC (?<m>[0-9a-f:]+) of VM one-7 .*: security groups 0 do not apply").m] |
	sort | join(" ")')
[ "$sg_nics" = "02:00:0a:01:00:07 02:00:0a:02:00:07 02:00:c0:a8:02:07" ] ||
	fail "the agent's checks name the NICs with groups: '$sg_nics'"
[ "$(held h1)" = attached,attached,attached ] || fail "allocations by UUID: $(held h1)"
[ "$(one_api h1 '/v1/allocations?owner=vm:one-7' '.allocations | length')" = 3 ] ||
	fail "the domain's name no longer finds its allocations"
live h1
[ "$(x 'count(/domain/devices/hostdev[@type="pci"])')" = 2 ] || fail "two IB hostdevs"
[ "$(x 'string(//interface[@type="hostdev"]/vlan/tag/@id)')" = 120 ] || fail "VLAN from vm.xml"
[ "$(x 'string(//interface[@type="hostdev"]/mac/@address)')" = 02:00:c0:a8:02:07 ] || fail MAC
[ "$(x 'string(//interface[@type="hostdev"]/boot/@order)')" = 2 ] || fail "boot order lost"
[ "$(x 'count(//interface[@type="ethernet"]/mac[starts-with(@address, "02:1b:0a:0")])')" = 2 ] ||
	fail "IPoIB dummies"
[ "$(nfree h1)" = $((all_free_h1 - 3)) ] || fail "three VFs taken: $(nfree h1) free"

step "reboot and reset: the VFs stay in the domain and booked"
for a in reboot reset; do
	message h1 | one_action h1 $a 7 "$uuid" h1 || fail "$a"
	[ "$(held h1)" = attached,attached,attached ] || fail "after $a: $(held h1)"
done

step "NIC hot-plug on an SR-IOV network: libvirt's test driver cannot plug; nothing stays claimed"
sed "s#</TEMPLATE>#<NIC><ATTACH><![CDATA[YES]]></ATTACH><BRIDGE><![CDATA[sriov_eth0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:02:17]]></MAC><VLAN_ID><![CDATA[121]]></VLAN_ID><NIC_ID><![CDATA[4]]></NIC_ID><TARGET><![CDATA[one-7-4]]></TARGET></NIC></TEMPLATE>#" \
	"$vmxml" >"$ONE_DIR/vm-nic.xml"
n=$(nfree h1)
if out=$(one_message "$ONE_DIR/vm-nic.xml" "$uuid" h1 |
	one_action h1 attach_nic 7 "$uuid" 02:00:c0:a8:02:17 sriov_eth0 virtio bridge one-7-4 2>&1); then
	fail "a VF plugged into a test domain"
fi
printf '%s\n' "$out" | sed "s/^/  /"
case $out in *"no VF for NIC 02:00:c0:a8:02:17"*) ;; *) fail "attach_nic: $out" ;; esac
[ "$(nfree h1)" = "$n" ] && [ "$(held h1)" = attached,attached,attached ] || fail "attach_nic left a claim"
step "NIC hot-detach of a NIC deployed on an SR-IOV bridge: its own allocation goes, the others stay"
pci=$(one_api h1 "/v1/allocations?owner=vm:$uuid" '.allocations[] | select(.settings.mac == "02:00:c0:a8:02:07") | .vfs[0].pci')
out=$(one_message "$ONE_DIR/vm-nic.xml" "$uuid" h1 | sed 's/02:00:c0:a8:02:17/02:00:c0:a8:02:07/' |
	one_action h1 detach_nic 7 "$uuid" 02:00:c0:a8:02:07 2>&1) || fail "detach_nic: $out"
# its own allocation released, the IB NICs' kept; libvirt's test driver cannot unplug, so the VF
# stays quarantined, out of every pool (the QEMU lab unplugs it for real)
[ "$(held h1)" = attached,attached ] &&
	[ "$(one_api h1 "/v1/allocations?owner=vm:$uuid" '[.allocations[].settings.mac] | sort | join(" ")')" = \
		"02:00:0a:01:00:07 02:00:0a:02:00:07" ] || fail "after detach_nic: $(held h1)"
case $(one_api h1 "/v1/vfs/$pci" .state) in free | quarantined) ;; *) fail "VF $pci: $(one_api h1 "/v1/vfs/$pci" .state)" ;; esac

step "shutdown: the domain gone, its VFs back"
message h1 | one_action h1 shutdown 7 "$uuid" h1 || fail shutdown
[ -z "$(held h1)" ] && [ "$(nfree h1)" = "$all_free_h1" ] || fail "after shutdown: $(held h1)"

step "a deploy retried after its claim (the hook killed before libvirt): the same VFs, no more"
one_ssh h1 "curl -sf --unix-socket /run/vfagent/vfagent.sock -X POST -H 'Content-Type: application/xml' --data-binary @- 'http://x/v1/domain-xml?vlan=02:00:c0:a8:02:07=120' >/dev/null" <"$dep" ||
	fail "first post"
claimed=$(vfs_of h1)
out=$(one_deploy h1 7 "$dep" "$vmxml") || fail "retried deploy: $out"
[ "$(vfs_of h1)" = "$claimed" ] || fail "retried deploy: $(vfs_of h1), was $claimed"
[ "$(nfree h1)" = $((all_free_h1 - 3)) ] || fail "retried deploy claimed more: $(nfree h1) free"

step "a deploy while the domain runs: refused by libvirt, the running VM keeps its VFs"
if one_deploy h1 7 "$dep" "$vmxml" >/dev/null 2>&1; then fail "second deploy of a running VM"; fi
[ "$(held h1)" = attached,attached,attached ] && [ "$(vfs_of h1)" = "$claimed" ] ||
	fail "a refused deploy took the VFs of the running VM: $(held h1)"

step "cancel (LCM_STATE 2: no poweroff, see one-poweroff.sh) + deploy: VFs back, then claimed again"
message h1 | one_action h1 cancel 7 "$uuid" h1 || fail cancel
[ "$(nfree h1)" = "$all_free_h1" ] || fail "after cancel: $(nfree h1) free"
one_deploy h1 7 "$dep" "$vmxml" >/dev/null || fail "resume"
[ "$(held h1)" = attached,attached,attached ] || fail "after resume: $(held h1)"

step "undeploy + resume on another host: h1 gives all back, h2 claims"
message h1 | one_action h1 shutdown 7 "$uuid" h1 || fail undeploy
one_deploy h2 7 "$dep" "$vmxml" >/dev/null || fail "resume on h2"
[ -z "$(held h1)" ] && [ "$(nfree h1)" = "$all_free_h1" ] || fail "h1 still holds $(held h1)"
[ "$(held h2)" = attached,attached,attached ] || fail "h2: $(held h2)"

step "save (suspend): the unplug is refused here; the VM runs on with its VFs, no checkpoint"
if out=$(message h2 | one_action h2 save 7 "$uuid" "$dir/checkpoint" h2 2>&1); then
	fail "save succeeded without unplugging"
fi
printf "%s\n" "$out" | sed "s/^/  /"
case $out in *"not saving"*) ;; *) fail "save: $out" ;; esac
[ "$(one_virsh h2 "domstate $uuid")" = running ] || fail "the VM stopped"
[ "$(held h2)" = attached,attached,attached ] || fail "after a refused save: $(held h2)"
one_ssh h2 "test ! -e $dir/checkpoint && test ! -e $dir/checkpoint.vfagent" </dev/null ||
	fail "a refused save left files"

step "live migrate h2 → h1: h1 claims first; the refused unplug gives h1's claim back"
if out=$(message h2 "" h1 | one_action h2 migrate 7 "$uuid" h1 h2 2>&1); then
	fail "migrated without unplugging"
fi
printf "%s\n" "$out" | sed "s/^/  /"
case $out in *"not migrating"*) ;; *) fail "migrate: $out" ;; esac
[ "$(nfree h1)" = "$all_free_h1" ] || fail "h1 kept the destination's claim: $(nfree h1) free"
[ "$(held h2)" = attached,attached,attached ] || fail "h2 after a refused migrate: $(held h2)"

step "live migrate to a host with too few VFs: nothing moves"
one_ssh h1 "curl -sf --unix-socket /run/vfagent/vfagent.sock -X POST -d '{\"pool\":\"ib\",\"count\":7,\"owner\":{\"kind\":\"vm\",\"name\":\"other\"}}' http://x/v1/allocations" \
	</dev/null >/dev/null || fail "filling h1"
if out=$(message h2 "" h1 | one_action h2 migrate 7 "$uuid" h1 h2 2>&1); then fail "migrated"; fi
case $out in *"h1 cannot give"*) ;; *) fail "migrate to a full host: $out" ;; esac
[ "$(held h2)" = attached,attached,attached ] || fail "h2 after: $(held h2)"
[ "$(one_api h1 '/v1/allocations' '.allocations | length')" = 1 ] || fail "h1 claims left"

step "cancel on h2: all back"
message h2 | one_action h2 cancel 7 "$uuid" h2 || fail cancel
[ "$(nfree h2)" = "$all_free_h2" ] || fail "h2 after cancel: $(nfree h2) free"

step "the IM probe: the VFs oned may book as PCI = [...], exit 0 even with the agent down"
mkdir -p "$ONE_DIR/h1/remotes/im"
cp "$top_srcdir/hooks/one/im/vfagent-pci.sh" "$ONE_DIR/h1/remotes/im/"
out=$(one_ssh h1 'VFAGENT_STATE_DIR=/var/lib/one/vfagent sh /var/tmp/one/im/vfagent-pci.sh' </dev/null) ||
	fail "probe failed"
# h1's IB pool holds 7 VFs for "other", not an OpenNebula VM: one IB VF and the Ethernet pool
[ "$(printf '%s\n' "$out" | grep -c '^PCI = \[')" = $((all_free_h1 - 7)) ] || fail "probe: $out"
printf '%s\n' "$out" | grep -qx 'VFAGENT_STATUS = "ok"' || fail "probe: $out"
one_agent_kill h1 || fail "the agent of h1 did not end"
out=$(one_ssh h1 'VFAGENT_STATE_DIR=/var/lib/one/vfagent sh /var/tmp/one/im/vfagent-pci.sh' </dev/null) ||
	fail "probe failed the host"
case $out in 'VFAGENT_STATUS = "the agent does not answer'*) ;; *) fail "probe: $out" ;; esac
echo "PASS"
