#!/usr/bin/env bats
# hooks/one: the kvm-sriov VMM actions and the IM probe, against two real
# vfagentd on simulated hosts ("src" and "dst"; ssh between them joins its
# words as OpenSSH does and runs them here against dst's socket) and stub
# stock KVM actions that record what they were given and fail when told:
# the failure paths. tests/one-lifecycle.sh runs the lifecycle as OpenNebula
# calls it, on real libvirt domains.

top=${top_srcdir:-.}
b=${top_builddir:-.}
hooks=$top/hooks/one/vmm/kvm-sriov
one=$top/tests/one

start_agent() { # NAME [CONFIG]
	"$b/agent/vfagentd" --simulate "$dir/$1" ${2:+--config "$2"} --listen "unix:$dir/$1.sock" \
		>"$dir/$1.log" 2>&1 &
	echo $! >"$dir/$1.pid"
	for _ in $(seq 100); do
		curl -sf --unix-socket "$dir/$1.sock" http://x/v1/health >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

setup() {
	dir=$(mktemp -d)
	start_agent src
	start_agent dst
	mkdir "$dir/kvm"
	for a in deploy shutdown cancel reset save restore migrate attach_nic detach_nic; do
		cat >"$dir/kvm/$a" <<STUB
#!/bin/sh
# the stock $a: records its arguments and stdin; fails when told to; deploy
# prints the UUID of the domain its file defines, as the stock one does
echo "\$*" >"$dir/$a.args"
[ "$a" = deploy ] && cat >"$dir/deploy.stdin"
[ "$a" = save ] && : >"\$2" # the checkpoint, before the domain goes
[ "\${FAIL_STOCK:-}" = "$a" ] && { echo "stock $a failed" >&2; exit 1; }
[ "$a" = deploy ] && xmllint --xpath 'string(/domain/uuid)' "$dir/deploy.stdin" && echo
exit 0
STUB
		chmod +x "$dir/kvm/$a"
	done
	cat >"$dir/ssh" <<SSH
#!/bin/sh
# ssh HOST COMMAND…: as OpenSSH, the words joined into one string for the
# remote shell; run here, pointed at the agent of HOST
host=\$1; shift
exec bash -c "\$(printf '%s' "\$*" | sed "s#$dir/src.sock#$dir/\$host.sock#g")"
SSH
	chmod +x "$dir/ssh"
	export VFAGENT_SOCKET=$dir/src.sock VFAGENT_KVM_DIR=$dir/kvm VFAGENT_SSH=$dir/ssh VFAGENT_STATE_DIR=$dir/state
}

teardown() {
	for n in src dst ct; do [ ! -f "$dir/$n.pid" ] || kill "$(cat "$dir/$n.pid")" 2>/dev/null || true; done
	sleep 0.1
	rm -rf "$dir"
}

q() { # HOST PATH JQ
	curl -s --unix-socket "$dir/$1.sock" "http://x$2" | jq -r "$3"
}

# as one_vmm_exec.rb calls them: deploy 'DFILE' 'HOST' VM_ID HOST; every later action gets
# the UUID the stock deploy printed (the DEPLOY_ID), then its own arguments, VM_ID and HOST
deploy() { sh "$hooks/deploy" "$dir/deployment.0" host1 42 host1 <"$1"; }

# vm.xml of VM 42 with one PCI NIC as oned books it (HostSharePCI::pci_attribute copies the
# host device's DOMAIN, BUS, SLOT, FUNCTION, ADDRESS, SHORT_ADDRESS, VENDOR, DEVICE, CLASS; the
# network's lease gives MAC, VLAN_ID, ...): PCI_VM DOMAIN BUS SLOT FUNCTION [EXTRA XML]
pci_vm() {
	printf '<VM><ID>42</ID><LCM_STATE>%s</LCM_STATE><TEMPLATE><PCI><TYPE>NIC</TYPE><DOMAIN>%s</DOMAIN><BUS>%s</BUS><SLOT>%s</SLOT><FUNCTION>%s</FUNCTION><ADDRESS>%s:%s:%s:%s</ADDRESS><SHORT_ADDRESS>%s:%s.%s</SHORT_ADDRESS><MAC>02:00:c0:a8:02:2b</MAC><VLAN_ID>130</VLAN_ID><IP>10.1.0.43</IP><VN_MAD>vfagent</VN_MAD>%s</PCI></TEMPLATE></VM>' \
		"${LCM:-3}" "$1" "$2" "$3" "$4" "$1" "$2" "$3" "$4" "$2" "$3" "$4" "${5:-}"
}
# the same for the VF at address $1 (0000:BB:SS.F), $2: extra XML
pci_vm_at() { pci_vm 0000 "$(echo "$1" | cut -c6-7)" "$(echo "$1" | cut -c9-10)" "$(echo "$1" | cut -c12)" "${2:-}"; }

@test "deploy: two IB NICs and an Ethernet NIC become VFs, dummies added, UUID printed" {
	run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 0 ]
	[ ${#output} = 36 ]
	[ "$output" = "$(q src '/v1/allocations?owner=vm:one-42' '.allocations[0].owner.uuid')" ]
	[ "$(q src "/v1/allocations?owner=vm:$output" '.allocations | length')" = 3 ]
	[ "$(cat "$dir/deploy.args")" = "$dir/deployment.0 host1 42 host1" ]
	[ "$(xmllint --xpath 'count(//hostdev)' "$dir/deploy.stdin")" = 2 ]
	[ "$(xmllint --xpath 'count(//interface[@type="hostdev"])' "$dir/deploy.stdin")" = 1 ]
	[ "$(xmllint --xpath 'count(//interface[@type="ethernet"])' "$dir/deploy.stdin")" = 2 ]
	[ "$(q src '/v1/allocations?owner=vm:one-42' '[.allocations[] | .state] | join(",")')" = attached,attached,attached ]
}

@test "deploy: a bridge NIC's SPOOFCHK and TRUST from vm.xml reach the PF (refused here: no PF netdev), nothing claimed" {
	printf '<VM><ID>42</ID><TEMPLATE><NIC><BRIDGE><![CDATA[sriov_eth0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:02:2a]]></MAC><SPOOFCHK><![CDATA[NO]]></SPOOFCHK><VN_MAD><![CDATA[vfagent]]></VN_MAD></NIC></TEMPLATE></VM>' >"$dir/vm.xml"
	run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"settings on PF"* ]]
	[ ! -e "$dir/deploy.args" ]
	[ "$(q src /v1/allocations '.allocations | length')" = 0 ]
	sed -i 's#<SPOOFCHK><!\[CDATA\[NO\]\]></SPOOFCHK>#<TRUST><![CDATA[maybe]]></TRUST>#' "$dir/vm.xml"
	run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *'trust: "maybe" for devices/interface'*'is not yes or no'* ]]
}

@test "deploy: a VM with no SR-IOV NIC passes through untouched" {
	run deploy "$one/no-sriov.xml"
	[ "$status" -eq 0 ]
	cmp "$dir/deploy.stdin" "$one/no-sriov.xml"
	[ "$(q src /v1/allocations '.allocations | length')" = 0 ]
}

@test "deploy: more VFs than are free fails with a message and claims nothing" {
	run deploy "$one/too-many.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *'pool "ib" has '*' free VFs'*'9 requested of pool "ib"'* ]]
	[ ! -e "$dir/deploy.args" ] # the stock deploy never ran
	[ "$(q src /v1/allocations '.allocations | length')" = 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
}

@test "deploy: a failed stock deploy gives every VF back" {
	FAIL_STOCK=deploy run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stock deploy failed"* ]]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
}

@test "IM probe: its state directory private, a link planted in it never written through, another user's directory refused" {
	VFAGENT_STATE_DIR=$dir/state run sh "$top/hooks/one/im/vfagent-pci.sh"
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$dir/state")" = 700 ]
	[ "$(wc -l <"$dir/state/offered")" = 14 ]
	# another user's files beside it: links named as the old probe's temporary file and as the
	# note itself, to a file of the probe's user (oneadmin's)
	echo precious >"$dir/victim"
	ln -s "$dir/victim" "$dir/state/offered.new"
	rm "$dir/state/offered" && ln -s "$dir/victim" "$dir/state/offered"
	VFAGENT_STATE_DIR=$dir/state run sh "$top/hooks/one/im/vfagent-pci.sh"
	[ "$status" -eq 0 ]
	[[ "$output" == *'VFAGENT_STATUS = "ok"'* ]]
	[ "$(cat "$dir/victim")" = precious ]
	[ ! -L "$dir/state/offered" ] && [ "$(wc -l <"$dir/state/offered")" = 14 ]
	# a directory another user made (or anyone may write): nothing written, the status says why
	mkdir -m 1777 "$dir/open"
	chown nobody "$dir/open"
	ln -s "$dir/victim" "$dir/open/offered.new"
	VFAGENT_STATE_DIR=$dir/open run sh "$top/hooks/one/im/vfagent-pci.sh"
	[ "$status" -eq 0 ]
	[[ "$output" == *'VFAGENT_STATUS = "'"$dir/open"' is not a directory of this user'* ]]
	[ "$(printf '%s\n' "$output" | grep -c '^PCI = \[')" = 14 ]
	[ "$(cat "$dir/victim")" = precious ] && [ ! -e "$dir/open/offered" ]
}

@test "deploy: the agent down, a note of the VFs offered that another user could write is not believed" {
	pci_vm 0000 d8 10 2 >"$dir/vm.xml"
	# the VF is not in the note: believed, the VM would deploy without the agent
	mkdir -m 0777 "$dir/state" && : >"$dir/state/offered"
	VFAGENT_STATE_DIR=$dir/state VFAGENT_SOCKET=$dir/nowhere.sock run deploy "$one/no-sriov.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"could have been written by another user: not believed"* ]]
	[ ! -e "$dir/deploy.args" ]
	chmod 0755 "$dir/state" && chmod 0666 "$dir/state/offered"
	VFAGENT_STATE_DIR=$dir/state VFAGENT_SOCKET=$dir/nowhere.sock run deploy "$one/no-sriov.xml"
	[ "$status" -eq 1 ]
	[ ! -e "$dir/deploy.args" ]
	# the probe's own note, and the VF not in it: the stock deploy alone
	chmod 0644 "$dir/state/offered"
	VFAGENT_STATE_DIR=$dir/state VFAGENT_SOCKET=$dir/nowhere.sock run deploy "$one/no-sriov.xml"
	[ "$status" -eq 0 ]
}

@test "deploy: the agent down, a VM none of whose devices is the agent's goes to the stock deploy" {
	VFAGENT_SOCKET=$dir/nowhere.sock run deploy "$one/no-sriov.xml"
	[ "$status" -eq 0 ]
	[[ "$output" == *"does not answer"*"the stock deploy alone"* ]]
	cmp "$dir/deploy.stdin" "$one/no-sriov.xml"
}

@test "deploy: the agent down, a VM with a VF the probe offered is not deployed" {
	mkdir -p "$dir/state"
	echo 0000:d8:10.2 >"$dir/state/offered"
	pci_vm 0000 d8 10 2 >"$dir/vm.xml"
	VFAGENT_STATE_DIR=$dir/state VFAGENT_SOCKET=$dir/nowhere.sock run deploy "$one/no-sriov.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not deploying without VFs 0000:d8:10.2"* ]]
	[ ! -e "$dir/deploy.args" ]
}

@test "shutdown and cancel: the stock action, then the VFs back" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	run sh "$hooks/shutdown" "$uuid" host1 42 host1
	[ "$status" -eq 0 ]
	[ "$(cat "$dir/shutdown.args")" = "$uuid host1 42 host1" ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	FAIL_STOCK=cancel run sh "$hooks/cancel" "$uuid" host1 42 host1
	[ "$status" -eq 1 ]
	[ "$(q src '/v1/vfs?state=attached' '.vfs | length')" = 3 ] # a failed cancel keeps them
	run sh "$hooks/cancel" "$uuid" host1 42 host1
	[ "$status" -eq 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
}

@test "reset: the stock reset, VFs untouched" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	run sh "$hooks/reset" "$uuid" host1 42 host1
	[ "$status" -eq 0 ]
	[ "$(cat "$dir/reset.args")" = "$uuid host1 42 host1" ]
	[ "$(q src '/v1/vfs?state=attached' '.vfs | length')" = 3 ]
}

@test "save and restore: VFs unplugged and given back with the save, claimed again at restore" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	run sh "$hooks/save" "$uuid" "$dir/checkpoint" host1 42 host1
	[ "$status" -eq 0 ]
	[ "$(cat "$dir/save.args")" = "$uuid $dir/checkpoint host1 42 host1" ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	[ "$(jq -s 'map(.count) | add' "$dir/checkpoint.vfagent")" = 3 ]
	run sh "$hooks/restore" "$dir/checkpoint" host1 "$uuid" 42 host1
	[ -e "$dir/restore.args" ]
	# the simulated host's libvirt (test:///default) has no such domain to plug into: the
	# guest was restored all the same (the stock restore deleted the checkpoint), so the
	# action succeeds, says so, and the VFs stay booked for the domain
	[ "$status" -eq 0 ]
	[[ "$output" == *"$uuid restored without all its VFs"* ]]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[].state] | unique | join(",")')" = reserved ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 11 ]
}

@test "restore: too few free VFs here, nothing restored" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	sh "$hooks/save" "$uuid" "$dir/checkpoint" host1 42 host1
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations \
		-d '{"pool":"ib","count":7,"owner":{"kind":"vm","name":"other"}}' >/dev/null
	run sh "$hooks/restore" "$dir/checkpoint" host1 "$uuid" 42 host1
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot give $uuid its VFs: not restoring"* ]]
	[ ! -e "$dir/restore.args" ]
	[ "$(q src '/v1/allocations?owner=vm:one-42' '.allocations | length')" = 0 ]
}

@test "save: a failed stock save plugs the VFs back and keeps them" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	FAIL_STOCK=save run sh "$hooks/save" "$uuid" "$dir/checkpoint" host1 42 host1
	[ "$status" -eq 1 ]
	[ ! -e "$dir/checkpoint.vfagent" ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 11 ]
}

@test "migrate: the destination cannot give the VFs, nothing moves" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	# dst's IB pool is nearly full
	curl -s --unix-socket "$dir/dst.sock" -X POST http://x/v1/allocations \
		-d '{"pool":"ib","count":7,"owner":{"kind":"vm","name":"other"}}' >/dev/null
	run sh "$hooks/migrate" "$uuid" dst src 42 src
	[ "$status" -eq 1 ]
	[[ "$output" == *"dst cannot give $uuid its VFs: not migrating"* ]]
	[ ! -e "$dir/migrate.args" ]
	[ "$(q src '/v1/vfs?state=attached' '.vfs | length')" = 3 ]
	[ "$(q dst '/v1/allocations?owner=vm:one-42' '.allocations | length')" = 0 ]
	[ "$(q dst '/v1/vfs?pool=eth&state=free' '.vfs | length')" = 6 ]
}

@test "migrate: released on the source, claimed on the destination" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	# the IB VFs' GUIDs go along: the guest and the subnet manager's partitions know them
	ib='[.allocations[] | select(.pool == "ib")]'
	guids=$(q src '/v1/allocations?owner=vm:one-42' "[${ib}[].vfs[].guid] | sort | join(\",\")")
	[ "$guids" = 02:c9:03:00:00:00:00:01,02:c9:03:00:00:00:00:02 ]
	run sh "$hooks/migrate" "$uuid" dst src 42 src
	[ "$(q dst '/v1/allocations?owner=vm:one-42' "[${ib}[].settings.guid] | sort | join(\",\")")" = "$guids" ]
	[ "$(q dst /v1/partitions .members)" = "[]" ] # no key asked: no member
	[ "$(cat "$dir/migrate.args")" = "$uuid dst src 42 src" ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	[ "$(q dst '/v1/allocations?owner=vm:one-42' '[.allocations[] | .pool] | sort | join(",")')" = eth,ib,ib ]
	[ "$(q dst '/v1/allocations?owner=vm:one-42' '[.allocations[].vfs[]] | length')" = 3 ]
	# dst's simulated libvirt has no such domain to plug into: the guest has moved all the
	# same (oned runs every later step no_fail), so the action succeeds, says so, and the VFs
	# stay booked there
	[ "$status" -eq 0 ]
	[[ "$output" == *"$uuid migrated to dst without its VF"* ]]
}

# both hosts with the Ethernet network's NICs as failover pairs (its "failover" in vfagent.json)
failover_hosts() {
	cat >"$dir/fo.json" <<'JSON'
{"pools": [{"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}},
           {"name": "eth", "selector": {"vendors": ["8086"]}}],
 "networks": [{"bridge": "sriov_ib0", "pool": "ib"},
              {"bridge": "sriov_eth0", "pool": "eth", "failover": {"bridge": "br-fo"}}],
 "guids": {"first": "02:c9:03:00:00:00:00:01", "count": 4096}}
JSON
	# the standby's bridge, which both agents look for (they share this test's namespace)
	ip link show br-fo >/dev/null 2>&1 || ip link add br-fo type bridge
	for h in src dst; do
		kill "$(cat "$dir/$h.pid")"
		while kill -0 "$(cat "$dir/$h.pid")" 2>/dev/null; do sleep 0.1; done
		rm -rf "${dir:?}/$h"
		start_agent "$h" "$dir/fo.json"
	done
}

@test "migrate: a failover NIC's VF unplugged alone, the destination claims it with the same standby" {
	failover_hosts
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	# the deployment file oned starts: the pair, the standby before its VF
	[ "$(xmllint --xpath 'string(//interface[teaming/@type="persistent"]/source/@bridge)' "$dir/deploy.stdin")" = br-fo ]
	[ "$(xmllint --xpath 'string(//interface[@type="hostdev"]/teaming/@persistent)' "$dir/deploy.stdin")" = ua-failover-0200c0a8022a ]
	run sh "$hooks/migrate" "$uuid" dst src 42 src
	[ "$(cat "$dir/migrate.args")" = "$uuid dst src 42 src" ]
	# the source's unplug kept the standby: the detach asked it
	grep -q "POST /v1/allocations/.*/detach 200" "$dir/src.log"
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	[ "$(q dst '/v1/allocations?owner=vm:one-42' '[.allocations[] | select(.pool == "eth") | .settings.failover.bridge] | join(",")')" = br-fo ]
	[ "$(q dst '/v1/allocations?owner=vm:one-42' '[.allocations[] | select(.pool == "ib") | .settings.failover] | map(select(. != null)) | length')" = 0 ]
	[ "$status" -eq 0 ]
}

@test "migrate: a failover NIC, the destination unable to claim: nothing moves, the guest keeps its VF and standby" {
	failover_hosts
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	n=$(q dst '/v1/vfs?pool=eth&state=free' '.vfs | length') # dst's Ethernet VFs all taken
	curl -s --unix-socket "$dir/dst.sock" -X POST http://x/v1/allocations \
		-d "{\"pool\":\"eth\",\"count\":$n,\"owner\":{\"kind\":\"vm\",\"name\":\"other\"}}" >/dev/null
	[ "$(q dst '/v1/vfs?pool=eth&state=free' '.vfs | length')" = 0 ]
	run sh "$hooks/migrate" "$uuid" dst src 42 src
	[ "$status" -eq 1 ]
	[[ "$output" == *"dst cannot give $uuid its VFs: not migrating"* ]]
	[ ! -e "$dir/migrate.args" ]
	[ "$(q src '/v1/vfs?state=attached' '.vfs | length')" = 3 ]
	[ "$(q src '/v1/allocations?owner=vm:one-42' '[.allocations[] | select(.pool == "eth") | .settings.failover.bridge] | join(",")')" = br-fo ]
	[ "$(q dst '/v1/allocations?owner=vm:one-42' '.allocations | length')" = 0 ]
}

@test "migrate: a failover NIC, the destination without the standby's bridge: refused at its claim, nothing moves" {
	failover_hosts
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	# dst again in a network namespace of its own (a simulated agent makes one unless told to
	# inherit this test's): no br-fo there
	kill "$(cat "$dir/dst.pid")"
	while kill -0 "$(cat "$dir/dst.pid")" 2>/dev/null; do sleep 0.1; done
	VFAGENT_SIM_NETNS='' start_agent dst "$dir/fo.json"
	run sh "$hooks/migrate" "$uuid" dst src 42 src
	[ "$status" -eq 1 ]
	[[ "$output" == *"failover.bridge: no network device br-fo on this host for the standby"* ]]
	[[ "$output" == *"dst cannot give $uuid its VFs: not migrating"* ]]
	[ ! -e "$dir/migrate.args" ]
	[ "$(q src '/v1/vfs?state=attached' '.vfs | length')" = 3 ]
	[ "$(q dst '/v1/allocations?owner=vm:one-42' '.allocations | length')" = 0 ]
}

@test "migrate: the destination's hold failing once the guest has moved: the action succeeds, saying so" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	: >"$dir/.vfagent-held.src" # the VFs held on the VM's file here, as a poweroff leaves them
	for id in $(q src "/v1/allocations?owner=vm:$uuid" '.allocations[].id'); do
		curl -sf --unix-socket "$dir/src.sock" -X POST "http://x/v1/allocations/$id/hold" \
			-d "{\"hold_while\":\"$dir/.vfagent-held.src\"}" >/dev/null
	done
	# dst's agent gone when the hook makes its file there: its holds cannot be set
	cat >"$dir/ssh-kill" <<SSH
#!/bin/sh
case "\$2" in ": >"*) kill "\$(cat "$dir/dst.pid")"
	while kill -0 "\$(cat "$dir/dst.pid")" 2>/dev/null; do sleep 0.1; done ;; esac
exec "$dir/ssh" "\$@"
SSH
	chmod +x "$dir/ssh-kill"
	VFAGENT_SSH=$dir/ssh-kill run sh "$hooks/migrate" "$uuid" dst src 42 src
	[ "$status" -eq 0 ]
	[[ "$output" == *"not held on $dir/.vfagent-held.dst"* ]]
	[ ! -e "$dir/.vfagent-held.src" ]
}

@test "migrate: a failed stock migrate leaves the VM's VFs where they were" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	FAIL_STOCK=migrate run sh "$hooks/migrate" "$uuid" dst src 42 src
	[ "$status" -eq 1 ]
	[ "$(q dst '/v1/allocations?owner=vm:one-42' '.allocations | length')" = 0 ]
	[ "$(q src '/v1/allocations?owner=vm:one-42' '.allocations | length')" = 3 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 11 ]
}

# "GUID MAC" a line for each IB VF of VM $2 on host $1, sorted: its node/port GUID and the MAC
# of its IPoIB dummy NIC (ipoib_mac_prefix 02:1b and the four bytes of its claim's "ip", which
# the agent plugs the dummy from at attach): what the guest and the subnet manager know it by
ib_ports() { # HOST OWNER
	q "$1" "/v1/allocations?owner=vm:$2" '.allocations[] | select(.pool == "ib") |
		"\(.vfs[0].guid) \(.settings.ip // "none" | split("/")[0] | gsub("\\."; " "))"' |
		while read -r guid a b c d; do
			if [ "$a" = none ]; then echo "$guid none"; continue; fi
			printf '%s 02:1b:%02x:%02x:%02x:%02x\n' "$guid" "$a" "$b" "$c" "$d"
		done | sort
}
# what deploy of two-ib-one-eth.xml gives: the first GUIDs of the range, the dummies of the
# NICs' OpenNebula MACs 02:00:0a:01:00:05 and 02:00:0a:02:00:05 (10.1.0.5, 10.2.0.5)
IB_PORTS='02:c9:03:00:00:00:00:01 02:1b:0a:01:00:05
02:c9:03:00:00:00:00:02 02:1b:0a:02:00:05'

@test "stop and resume (SAVE_STOP): the IB VFs' GUIDs and IPoIB dummy NICs the same after" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	[ "$(ib_ports src one-42)" = "$IB_PORTS" ]
	ib0=$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[] | select(.pool == "ib") | .vfs[0].pci] | sort | .[0]')
	[ "$(grep -o '02:1b:[0-9a-f:]*' "$dir/deploy.stdin" | sort | tr '\n' ' ')" = "02:1b:0a:01:00:05 02:1b:0a:02:00:05 " ]
	LCM=5 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	run sh "$hooks/save" "$uuid" "$dir/checkpoint" host1 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	# the VFs went back: another VM takes the first IB VF meanwhile, with a GUID the range
	# never handed out, not one of the stopped VM's (its restore claims them again)
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations \
		-d '{"pool":"ib","count":1,"owner":{"kind":"vm","name":"other"}}' >/dev/null
	[ "$(q src '/v1/allocations?owner=vm:other' '.allocations[0].vfs[0].pci')" = "$ib0" ]
	[ "$(q src '/v1/allocations?owner=vm:other' '.allocations[0].vfs[0].guid')" = 02:c9:03:00:00:00:00:03 ]
	run sh "$hooks/restore" "$dir/checkpoint" host1 "$uuid" 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(ib_ports src "$uuid")" = "$IB_PORTS" ] # on other VFs: the GUIDs set on them
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[].vfs[].pci] | index("'"$ib0"'")')" = null ]
}

@test "cold migrate (SAVE_MIGRATE): restored on another host with the same GUIDs and IPoIB dummy NICs" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	LCM=7 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	mkdir "$dir/ds-src" "$dir/ds-dst"
	run sh "$hooks/save" "$uuid" "$dir/ds-src/checkpoint" host1 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	# PROLOG_MIGRATE: the tm mv moves the VM's directory, checkpoint and note with it
	mv "$dir/ds-src/checkpoint" "$dir/ds-src/checkpoint.vfagent" "$dir/ds-dst/"
	VFAGENT_SOCKET=$dir/dst.sock run sh "$hooks/restore" "$dir/ds-dst/checkpoint" dst "$uuid" 42 dst <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(ib_ports dst "$uuid")" = "$IB_PORTS" ]
	[ "$(q dst "/v1/allocations?owner=vm:$uuid" '[.allocations[] | .pool] | sort | join(",")')" = eth,ib,ib ]
}

@test "cold migrate (SAVE_MIGRATE): a NIC's security groups go with its VF's claim to the new host (vfctl doctor names them there)" {
	sg_vm 0,101 >"$dir/vm.xml"
	uuid=$(deploy "$one/two-ib-one-eth.xml" 2>/dev/null)
	LCM=7 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	mkdir "$dir/ds-src" "$dir/ds-dst"
	sh "$hooks/save" "$uuid" "$dir/ds-src/checkpoint" host1 42 host1 <"$dir/msg"
	mv "$dir/ds-src/checkpoint" "$dir/ds-src/checkpoint.vfagent" "$dir/ds-dst/"
	VFAGENT_SOCKET=$dir/dst.sock run sh "$hooks/restore" "$dir/ds-dst/checkpoint" dst "$uuid" 42 dst <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q dst "/v1/allocations?owner=vm:$uuid" '[.allocations[] | "\(.pool)=\(.settings.security_groups // [] | map(tostring) | join("+"))"] | sort | join(" ")')" = "eth=0+101 ib= ib=" ]
	[ "$(q dst /v1/host/checks '[.checks[] | select(.check == "security-groups") | .subject] | join(",")')" = one-42 ]
}

@test "poweroff and resume (SHUTDOWN_POWEROFF, then deploy): the same GUIDs and IPoIB dummy NICs" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	LCM=18 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	run sh "$hooks/shutdown" "$uuid" host1 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[].state] | unique | join(",")')" = reserved ]
	rm "$dir/deploy.stdin"
	run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 0 ]
	[ "$output" = "$uuid" ]
	[ "$(ib_ports src "$uuid")" = "$IB_PORTS" ]
	[ "$(grep -o '02:1b:[0-9a-f:]*' "$dir/deploy.stdin" | sort | tr '\n' ' ')" = "02:1b:0a:01:00:05 02:1b:0a:02:00:05 " ]
}

@test "undeploy and resume (SHUTDOWN_UNDEPLOY, then deploy): the same GUIDs, though another VM claimed meanwhile" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	LCM=29 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	run sh "$hooks/shutdown" "$uuid" host1 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	# no note of its claims (undeploy saves nothing): its GUIDs wait for it here, unhanded
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations \
		-d '{"pool":"ib","count":1,"owner":{"kind":"vm","name":"other"}}' >/dev/null
	[ "$(q src '/v1/allocations?owner=vm:other' '.allocations[0].vfs[0].guid')" = 02:c9:03:00:00:00:00:03 ]
	rm "$dir/deploy.stdin"
	run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 0 ]
	[ "$(ib_ports src one-42)" = "$IB_PORTS" ] # by its name: this deployment file has no <uuid>
}

@test "live migrate: the IPoIB dummy NICs' addresses go along with the GUIDs" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	run sh "$hooks/migrate" "$uuid" dst src 42 src
	[ "$status" -eq 0 ]
	[ "$(ib_ports dst "$uuid")" = "$IB_PORTS" ]
}

@test "IM probe: a PCI = [...] per free VF, as pci.rb prints them; nothing with the agent down" {
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations \
		-d '{"pool":"ib","count":2,"owner":{"kind":"vm","name":"one-9"}}' >/dev/null
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations \
		-d '{"pool":"ib","count":1,"owner":{"kind":"vm","name":"not-opennebula"}}' >/dev/null
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations -d \
		"{\"pool\":\"eth\",\"count\":1,\"owner\":{\"kind\":\"container\",\"pid\":$$}}" >/dev/null
	VFAGENT_STATE_DIR=$dir/state run sh "$top/hooks/one/im/vfagent-pci.sh"
	[ "$status" -eq 0 ]
	# 8 IB VFs less the three VMs hold, 6 Ethernet VFs less the container's. one-9's VFs too, as
	# oned adds a device it has not seen unbooked (HostSharePCI::set_monitorization, VMID -1)
	# and books it again: a VM of oned's keeps its booking while the probe is silent about it
	[ "$(printf '%s\n' "$output" | grep -c '^PCI = \[')" = 10 ]
	[[ "$output" == *'VFAGENT_STATUS = "ok"'* ]]
	printf '%s\n' "$output" | grep -q '^VFAGENT_FREE' && false
	# the fields HostSharePCI reads: ADDRESS (its key), SHORT_ADDRESS, VENDOR, DEVICE, CLASS
	# oned's ADDRESS is DOMAIN:BUS:SLOT:FUNCTION, the PCI address with a colon for its dot
	free=$(q src '/v1/vfs?pool=ib&state=free' '.vfs[0].pci')
	printf '%s\n' "$output" | grep -qx "  ADDRESS = \"${free%.*}:${free##*.}\","
	printf '%s\n' "$output" | grep -qx "  SHORT_ADDRESS = \"${free#0000:}\","
	printf '%s\n' "$output" | grep -qx '  CLASS = "0207",'
	printf '%s\n' "$output" | grep -qx '  CLASS_NAME = "Infiniband controller",'
	printf '%s\n' "$output" | grep -qx '  VENDOR = "15b3",'
	# where the VF sits: its NUMA node and root complex (the simulated host's IB PFs are on
	# pci0000:36, node 0), as the host's PCI_DEVICES keep them for SCHED_REQUIREMENTS
	printf '%s\n' "$output" | grep -A20 "ADDRESS = \"${free%.*}:${free##*.}\"" |
		grep -qx '  PCIE_ROOT = "pci0000:36",'
	printf '%s\n' "$output" | grep -A20 "ADDRESS = \"${free%.*}:${free##*.}\"" |
		grep -qx '  NUMA_NODE = "0",'
	held=$(q src '/v1/allocations?owner=vm:one-9' '.allocations[0].vfs[0].pci')
	printf '%s\n' "$output" | grep -q "ADDRESS = \"${held%.*}:${held##*.}\"" && false
	# the state file names every VF of the pools offered, held or not, for the actions
	grep -qx "$held" "$dir/state/offered"
	[ "$(wc -l <"$dir/state/offered")" = 14 ]
	# a host with a second PCI domain: SHORT_ADDRESS with the domain, as lspci -mm prints it
	mkdir -p "$dir/pci/0000:00:00.0" "$dir/pci/10000:00:02.0"
	VFAGENT_PCI_DEVICES=$dir/pci VFAGENT_STATE_DIR=$dir/state run sh "$top/hooks/one/im/vfagent-pci.sh"
	printf '%s\n' "$output" | grep -qx "  SHORT_ADDRESS = \"$free\","
	# only the pools named
	VFAGENT_ONE_POOLS=eth VFAGENT_STATE_DIR=$dir/state run sh "$top/hooks/one/im/vfagent-pci.sh"
	[ "$(printf '%s\n' "$output" | grep -c '^PCI = \[')" = 5 ]
	[ "$(wc -l <"$dir/state/offered")" = 6 ]
	# the agent down: no device, a status saying why, exit 0; the last offer kept for the hooks
	VFAGENT_STATE_DIR=$dir/state VFAGENT_SOCKET=$dir/nowhere.sock run sh "$top/hooks/one/im/vfagent-pci.sh"
	[ "$status" -eq 0 ]
	[[ "$output" == 'VFAGENT_STATUS = "the agent does not answer at '*nowhere.sock* ]]
	[ "$(printf '%s\n' "$output" | grep -c '^PCI')" = 0 ]
	[ "$(wc -l <"$dir/state/offered")" = 6 ]
}

@test "IM probe: an answer it does not know says so and exits 0 (a failing probe puts the host in ERROR)" {
	# an agent of another version: JSON, but not the shape the probe reads
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
for _ in range(2):
    c, _ = s.accept(); c.recv(4096)
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{\"pools\": null}"); c.close()
' "$dir/odd.sock" &
	for _ in $(seq 50); do [ -S "$dir/odd.sock" ] && break; sleep 0.1; done
	VFAGENT_SOCKET=$dir/odd.sock VFAGENT_STATE_DIR=$dir/state run sh "$top/hooks/one/im/vfagent-pci.sh"
	[ "$status" -eq 0 ]
	[[ "$output" == 'VFAGENT_STATUS = "the agent'"'"'s answer is not what this probe knows: '* ]]
	[ "$(printf '%s\n' "$output" | grep -c '^PCI')" = 0 ]
}

@test "IM probe: a pool dedicated to containers is never offered to oned" {
	cat >"$dir/ct.json" <<'JSON'
{"pools": [{"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}},
           {"name": "eth", "selector": {"vendors": ["8086"]}, "owners": ["container"]}],
 "networks": [{"bridge": "sriov_ib0", "pool": "ib"}, {"bridge": "sriov_eth0", "pool": "eth"}],
 "libvirt": false}
JSON
	start_agent ct "$dir/ct.json"
	VFAGENT_SOCKET=$dir/ct.sock VFAGENT_STATE_DIR=$dir/state run sh "$top/hooks/one/im/vfagent-pci.sh"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -c '^PCI = \[')" = 8 ]
	printf '%s\n' "$output" | grep -q 'VENDOR = "8086"' && false
	# named explicitly, still not
	VFAGENT_ONE_POOLS="eth ib" VFAGENT_SOCKET=$dir/ct.sock VFAGENT_STATE_DIR=$dir/state \
		run sh "$top/hooks/one/im/vfagent-pci.sh"
	[ "$(printf '%s\n' "$output" | grep -c '^PCI = \[')" = 8 ]
}

# the driver message of a NIC hot-plug: VM/TEMPLATE/NIC[ATTACH='YES']
nic_message() { # BRIDGE MAC [VLAN]
	printf '<VMM_DRIVER_ACTION_DATA><VM><ID>42</ID><TEMPLATE><NIC><ATTACH><![CDATA[YES]]></ATTACH><BRIDGE><![CDATA[%s]]></BRIDGE><MAC><![CDATA[%s]]></MAC>%s</NIC></TEMPLATE></VM></VMM_DRIVER_ACTION_DATA>' \
		"$1" "$2" "${3:+<VLAN_ID><![CDATA[$3]]></VLAN_ID>}"
}

@test "attach_nic/detach_nic: a NIC on an ordinary network goes to the stock actions" {
	nic_message br0 02:00:c0:a8:01:09 >"$dir/msg"
	run sh "$hooks/attach_nic" 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c \
		02:00:c0:a8:01:09 br0 virtio bridge one-42-5 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(cat "$dir/attach_nic.args")" = "6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c 02:00:c0:a8:01:09 br0 virtio bridge one-42-5 42 host1" ]
	nic_message br0 02:00:c0:a8:01:09 >"$dir/msg"
	run sh "$hooks/detach_nic" 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c \
		02:00:c0:a8:01:09 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ -e "$dir/detach_nic.args" ]
	[ "$(q src /v1/allocations '.allocations | length')" = 0 ]
}

@test "attach_nic: a NIC on an SR-IOV network is a VF claimed and plugged at once, or nothing" {
	# the simulated host's libvirt has no such domain: refused, and nothing stays claimed
	nic_message sriov_eth0 02:00:c0:a8:02:09 130 >"$dir/msg"
	run sh "$hooks/attach_nic" 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c 02:00:c0:a8:02:09 sriov_eth0 \
		virtio bridge one-42-5 42 host1 <"$dir/msg"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no VF for NIC 02:00:c0:a8:02:09 on sriov_eth0"* ]]
	[ ! -e "$dir/attach_nic.args" ] # not the stock action
	[ "$(q src /v1/allocations '.allocations | length')" = 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	# the agent down: a NIC that is no device the probe offered goes to the stock action (which
	# fails itself on a bridge that does not exist)
	VFAGENT_SOCKET=$dir/nowhere.sock run sh "$hooks/attach_nic" 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c \
		02:00:c0:a8:02:09 sriov_eth0 virtio bridge one-42-5 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ -e "$dir/attach_nic.args" ]
}

@test "attach_nic: a NIC on an SR-IOV network carries its network's settings; a rate that is no number is refused" {
	printf '<VMM_DRIVER_ACTION_DATA><VM><ID>42</ID><TEMPLATE><NIC><ATTACH><![CDATA[YES]]></ATTACH><BRIDGE><![CDATA[sriov_eth0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:02:09]]></MAC><TRUST><![CDATA[YES]]></TRUST><OUTBOUND_AVG_BW><![CDATA[fast]]></OUTBOUND_AVG_BW></NIC></TEMPLATE></VM></VMM_DRIVER_ACTION_DATA>' >"$dir/msg"
	run sh "$hooks/attach_nic" 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c 02:00:c0:a8:02:09 sriov_eth0 \
		virtio vfagent one-42-5 42 host1 <"$dir/msg"
	[ "$status" -eq 1 ]
	[[ "$output" == *"VLAN_ID or OUTBOUND_AVG_BW is not a number"* ]]
	[ ! -e "$dir/attach_nic.args" ]
	[ "$(q src /v1/allocations '.allocations | length')" = 0 ]
}

@test "attach_nic: a PCI NIC oned booked is claimed by address and plugged at once, or nothing; another pool's VF is refused" {
	pci=$(q src '/v1/vfs?pool=eth&state=free' '.vfs[-1].pci')
	# the driver message of a PCI NIC hot-plug: VM/TEMPLATE/PCI[ATTACH='YES'] (one_vmm_exec.rb)
	msg() { # BRIDGE
		printf '<VMM_DRIVER_ACTION_DATA>%s</VMM_DRIVER_ACTION_DATA>' \
			"$(pci_vm_at "$pci" "<ATTACH>YES</ATTACH><NETWORK>net</NETWORK><BRIDGE>$1</BRIDGE>")"
	}
	# the simulated host's libvirt has no such domain: refused, and nothing stays claimed
	msg sriov_eth0 >"$dir/msg"
	run sh "$hooks/attach_nic" 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c 02:00:c0:a8:02:2b sriov_eth0 \
		virtio vfagent one-42-5 42 host1 <"$dir/msg"
	[ "$status" -eq 1 ]
	[[ "$output" == *"VF $pci not plugged into 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c"* ]]
	[[ "$output" != *"which serves"* ]]
	[ ! -e "$dir/attach_nic.args" ]
	[ "$(q src /v1/allocations '.allocations | length')" = 0 ]
	# an Ethernet VF for a NIC on the network vfagent.json maps to the IB pool
	msg sriov_ib0 >"$dir/msg"
	run sh "$hooks/attach_nic" 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c 02:00:c0:a8:02:2b sriov_ib0 \
		virtio vfagent one-42-5 42 host1 <"$dir/msg"
	[ "$status" -eq 1 ]
	[[ "$output" == *"VF $pci is in pool eth, which serves sriov_eth0, not its NIC's network net (bridge sriov_ib0)"* ]]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
}

@test "detach_nic: a VF that attach_nic made is given back, and so is one deployed with the VM (its own allocation), the VM's others untouched" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	# a VF hot-plugged earlier (here: claimed as attach_nic claims it)
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations -d \
		"{\"network\":\"sriov_eth0\",\"mac\":\"02:00:c0:a8:02:09\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-42\",\"uuid\":\"$uuid\"}}" >/dev/null
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '.allocations | length')" = 4 ]
	nic_message sriov_eth0 02:00:C0:A8:02:09 >"$dir/msg"
	run sh "$hooks/detach_nic" "$uuid" 02:00:C0:A8:02:09 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '.allocations | length')" = 3 ]
	# the Ethernet NIC deployed with the VM: its VF alone, the two IB NICs' stay
	nic_message sriov_eth0 02:00:c0:a8:02:2a >"$dir/msg"
	run sh "$hooks/detach_nic" "$uuid" 02:00:c0:a8:02:2a 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[] | .settings.mac] | sort | join(" ")')" = "02:00:0a:01:00:05 02:00:0a:02:00:05" ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 12 ]
}

# oned's deployment file for VM 42 with the PCI device it booked, as LibVirtDriverKVM.cc
# writes one (a plain <hostdev> of the address): HOSTDEV_FILE PCI
hostdev_file() {
	b=$(echo "$1" | cut -c6-7) s=$(echo "$1" | cut -c9-10) f=$(echo "$1" | cut -c12)
	sed -e 's/one-43/one-42/' -e "s#</devices>#<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' bus='0x$b' slot='0x$s' function='0x$f'/></source></hostdev></devices>#" \
		"$one/no-sriov.xml"
}

@test "deploy: the VF oned booked is claimed by address and configured from the NIC before the guest starts" {
	pci=$(q src '/v1/vfs?pool=eth&state=free' '.vfs[-1].pci')
	pci_vm_at "$pci" '<NETWORK>hpc-eth</NETWORK><BRIDGE>sriov_eth0</BRIDGE>' >"$dir/vm.xml"
	hostdev_file "$pci" >"$dir/dep.xml"
	run deploy "$dir/dep.xml"
	[ "$status" -eq 0 ]
	[ "$(xmllint --xpath 'count(//hostdev)' "$dir/deploy.stdin")" = 0 ]
	[ "$(xmllint --xpath 'string(//interface[@type="hostdev"]/mac/@address)' "$dir/deploy.stdin")" = 02:00:c0:a8:02:2b ]
	[ "$(xmllint --xpath 'string(//interface[@type="hostdev"]/vlan/tag/@id)' "$dir/deploy.stdin")" = 130 ]
	[ "$(q src "/v1/vfs/$pci" .state)" = attached ]
	[ "$(q src "/v1/allocations?owner=vm:$output" '[.allocations[].vfs[].pci] | join(",")')" = "$pci" ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 13 ]
}

@test "deploy: a VF oned booked from another pool than its network's (oned matches VENDOR/DEVICE/CLASS only) is refused, nothing claimed" {
	pci=$(q src '/v1/vfs?pool=eth&state=free' '.vfs[-1].pci')
	# the NIC's network is the one vfagent.json maps to the IB pool (nic_attribute copies BRIDGE)
	pci_vm_at "$pci" '<NETWORK>hpc-ib</NETWORK><BRIDGE>sriov_ib0</BRIDGE>' >"$dir/vm.xml"
	hostdev_file "$pci" >"$dir/dep.xml"
	run deploy "$dir/dep.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"VF $pci is in pool eth, which serves sriov_eth0, not its NIC's network hpc-ib (bridge sriov_ib0)"* ]]
	[ ! -e "$dir/deploy.args" ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
}

@test "deploy: a VF of a pool that serves no network (offered by VFAGENT_ONE_POOLS) takes any PCI NIC, even on a network whose bridge NICs another pool serves" {
	cat >"$dir/ct.json" <<'JSON'
{"pools": [{"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}},
           {"name": "eth", "selector": {"vendors": ["8086"]}}],
 "networks": [{"bridge": "sriov_ib0", "pool": "ib"}], "libvirt": {"uri": "test:///default"}}
JSON
	start_agent ct "$dir/ct.json"
	pci=$(q ct '/v1/vfs?pool=eth&state=free' '.vfs[-1].pci')
	pci_vm_at "$pci" '<NETWORK>hpc-ib</NETWORK><BRIDGE>sriov_ib0</BRIDGE>' >"$dir/vm.xml"
	hostdev_file "$pci" >"$dir/dep.xml"
	VFAGENT_SOCKET=$dir/ct.sock run deploy "$dir/dep.xml"
	[ "$status" -eq 0 ]
	[ "$(q ct "/v1/vfs/$pci" .state)" = attached ]
}

# vm.xml of VM 42 for two-ib-one-eth.xml, each IB NIC with its network's PKEY (oned copies it
# into the NIC as it does VLAN_ID when oned.conf has INHERIT_VNET_ATTR = "PKEY")
pkey_vm() { # PKEY_OF_FIRST PKEY_OF_SECOND
	printf '<VM><ID>42</ID><TEMPLATE><NIC><BRIDGE><![CDATA[sriov_ib0]]></BRIDGE><MAC><![CDATA[02:00:0a:01:00:05]]></MAC><NETWORK><![CDATA[hpc-ib-a]]></NETWORK><PKEY><![CDATA[%s]]></PKEY><VN_MAD><![CDATA[vfagent]]></VN_MAD></NIC><NIC><BRIDGE><![CDATA[sriov_ib0]]></BRIDGE><MAC><![CDATA[02:00:0a:02:00:05]]></MAC><NETWORK><![CDATA[hpc-ib-b]]></NETWORK><PKEY><![CDATA[%s]]></PKEY><VN_MAD><![CDATA[vfagent]]></VN_MAD></NIC></TEMPLATE></VM>' "$1" "$2"
}

@test "deploy: a bridge NIC's PKEY (its network's) makes its IB VF a member, across stop and resume; a bad one is refused naming the NIC" {
	pkey_vm 0x8001 0x2 >"$dir/vm.xml"
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	keys() { q "$1" "/v1/allocations?owner=vm:$uuid" '[.allocations[] | select(.pool == "ib") | "\(.vfs[0].guid)=\(.settings.pkey)"] | sort | join(",")'; }
	[ "$(keys src)" = "02:c9:03:00:00:00:00:01=0x8001,02:c9:03:00:00:00:00:02=0x8002" ]
	[ "$(q src /v1/partitions '[.members[] | "\(.guid)=\(.pkey)"] | sort | join(",")')" = "02:c9:03:00:00:00:00:01=0x8001,02:c9:03:00:00:00:00:02=0x8002" ]
	LCM=5 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	sh "$hooks/save" "$uuid" "$dir/checkpoint" host1 42 host1 <"$dir/msg"
	[ "$(q src /v1/partitions '.members | length')" = 0 ]
	run sh "$hooks/restore" "$dir/checkpoint" host1 "$uuid" 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(keys src)" = "02:c9:03:00:00:00:00:01=0x8001,02:c9:03:00:00:00:00:02=0x8002" ]
	sh "$hooks/shutdown" "$uuid" host1 42 host1
	for bad in 0x7fff 0xffff zz 0x10000; do
		pkey_vm 0x8001 "$bad" >"$dir/vm.xml"
		rm -f "$dir/deploy.args"
		run deploy "$one/two-ib-one-eth.xml"
		[ "$status" -eq 1 ]
		[[ "$output" == *"devices/interface[3]: pkey: "* ]]
		[ ! -e "$dir/deploy.args" ]
		[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	done
}

@test "deploy: a bridge NIC's PKEY against its network's pkey in vfagent.json: the same partition taken, another refused" {
	cat >"$dir/ct.json" <<'JSON'
{"pools": [{"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}},
           {"name": "eth", "selector": {"vendors": ["8086"]}}],
 "networks": [{"bridge": "sriov_ib0", "pool": "ib", "pkey": "0x0001", "membership": "limited"},
              {"bridge": "sriov_eth0", "pool": "eth"}],
 "libvirt": {"uri": "test:///default"}}
JSON
	start_agent ct "$dir/ct.json"
	pkey_vm 0x8001 0x8002 >"$dir/vm.xml"
	VFAGENT_SOCKET=$dir/ct.sock run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"devices/interface[3]: pkey: 0x8002, but its network in the config is on partition 0x0001"* ]]
	[ "$(q ct '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	pkey_vm 0x8001 "" >"$dir/vm.xml"
	VFAGENT_SOCKET=$dir/ct.sock run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 0 ]
	[ "$(q ct "/v1/allocations?owner=vm:$output" '[.allocations[] | select(.pool == "ib") | "\(.settings.pkey)/\(.settings.membership)"] | join(",")')" = "0x0001/limited,0x0001/limited" ]
}

@test "deploy: a PCI NIC's PKEY reaches its IB VF's claim; a bad one is refused naming the NIC, nothing claimed" {
	pci=$(q src '/v1/vfs?pool=ib&state=free' '.vfs[-1].pci')
	pci_vm_at "$pci" '<NETWORK>hpc-ib-a</NETWORK><BRIDGE>sriov_ib0</BRIDGE><PKEY>0x8001</PKEY>' |
		sed 's#<VLAN_ID>130</VLAN_ID>##' >"$dir/vm.xml"
	hostdev_file "$pci" >"$dir/dep.xml"
	run deploy "$dir/dep.xml"
	[ "$status" -eq 0 ]
	[ "$(q src "/v1/allocations?owner=vm:$output" '[.allocations[].settings.pkey] | join(",")')" = 0x8001 ]
	sh "$hooks/shutdown" "$output" host1 42 host1
	sed -i 's#<PKEY>0x8001</PKEY>#<PKEY>0x7fff</PKEY>#' "$dir/vm.xml"
	rm -f "$dir/deploy.args"
	run deploy "$dir/dep.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"PCI NIC 02:00:c0:a8:02:2b on network hpc-ib-a (VF $pci): pkey: "* ]]
	[ ! -e "$dir/deploy.args" ]
	[ "$(q src '/v1/allocations?owner=vm:one-42' '.allocations | length')" = 0 ]
}

# vm.xml of VM 42 with security groups as oned gives them: every network has the default group 0
# (VirtualNetwork::insert), VirtualNetwork::nic_attribute joins the network's, its address
# range's and the NIC's own into the NIC's SECURITY_GROUPS ("0,101"), and a network attribute
# oned.conf names in INHERIT_VNET_ATTR (VFAGENT_SECURITY_GROUPS) is copied into the NIC:
# SG_VM SECURITY_GROUPS_OF_THE_SRIOV_ETH_NIC [VFAGENT_SECURITY_GROUPS]
sg_vm() {
	printf '<VM><ID>42</ID><TEMPLATE><NIC><BRIDGE><![CDATA[br0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:01:2a]]></MAC><NETWORK><![CDATA[br0]]></NETWORK><SECURITY_GROUPS><![CDATA[0]]></SECURITY_GROUPS><VN_MAD><![CDATA[bridge]]></VN_MAD>%s</NIC><NIC><BRIDGE><![CDATA[sriov_ib0]]></BRIDGE><MAC><![CDATA[02:00:0a:01:00:05]]></MAC><NETWORK><![CDATA[hpc-ib]]></NETWORK><VN_MAD><![CDATA[vfagent]]></VN_MAD></NIC><NIC><BRIDGE><![CDATA[sriov_eth0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:02:2a]]></MAC><NETWORK><![CDATA[hpc-eth]]></NETWORK><SECURITY_GROUPS><![CDATA[%s]]></SECURITY_GROUPS><VN_MAD><![CDATA[vfagent]]></VN_MAD>%s</NIC></TEMPLATE></VM>' \
		"${2:+<VFAGENT_SECURITY_GROUPS><![CDATA[$2]]></VFAGENT_SECURITY_GROUPS>}" "$1" \
		"${2:+<VFAGENT_SECURITY_GROUPS><![CDATA[$2]]></VFAGENT_SECURITY_GROUPS>}"
}

@test "deploy: a bridge NIC's security groups go with its VF's claim and are said in the VM's log, the ordinary NIC's not" {
	sg_vm 0,101 >"$dir/vm.xml"
	run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 0 ]
	uuid=$(printf '%s\n' "${lines[@]}" | grep -xE '[0-9a-f-]{36}') # stdout's line
	# each stderr line is the VM's log (one_vmm_exec.rb's SSH stream: DriverExecHelper#log)
	[[ "$output" == *"WARNING: vfagent deploy: NIC 02:00:c0:a8:02:2a on network hpc-eth is a VF: its security groups (0,101) do not apply"* ]]
	[[ "$output" != *02:00:c0:a8:01:2a* ]] # br0's groups apply
	[[ "$output" != *"NIC 02:00:0a:01:00:05"* ]] # no groups
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[] | "\(.settings.mac)=\(.settings.security_groups // [] | map(tostring) | join("+"))"] | sort | join(" ")')" = \
		"02:00:0a:01:00:05= 02:00:0a:02:00:05= 02:00:c0:a8:02:2a=0+101" ]
}

@test "deploy: a network whose VFAGENT_SECURITY_GROUPS is REFUSE fails a VF NIC's security groups naming it, nothing claimed; without groups it deploys" {
	sg_vm 0,101 REFUSE >"$dir/vm.xml"
	run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"vfagent deploy: NIC 02:00:c0:a8:02:2a on network hpc-eth is a VF with security groups (0,101), whose rules do not apply to it"*"its network refuses them (VFAGENT_SECURITY_GROUPS = REFUSE)"* ]]
	[[ "$output" != *02:00:c0:a8:01:2a* ]] # REFUSE on br0's NIC too: its groups apply there
	[ ! -e "$dir/deploy.args" ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	sg_vm 0 maybe >"$dir/vm.xml"
	run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *'NIC 02:00:c0:a8:02:2a on network hpc-eth: VFAGENT_SECURITY_GROUPS "maybe" is neither WARN nor REFUSE'* ]]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	sg_vm "" refuse >"$dir/vm.xml"
	run deploy "$one/two-ib-one-eth.xml"
	[ "$status" -eq 0 ]
	[[ "$output" != *WARNING* ]]
	[ "$(q src "/v1/allocations?owner=vm:$output" '[.allocations[].settings.security_groups] | unique | join(",")')" = "" ]
}

@test "deploy: a PCI NIC's security groups go with its VF's claim and are said in the VM's log; refused when its network says so" {
	pci=$(q src '/v1/vfs?pool=eth&state=free' '.vfs[-1].pci')
	pci_vm_at "$pci" '<NETWORK>hpc-eth</NETWORK><BRIDGE>sriov_eth0</BRIDGE><SECURITY_GROUPS>0,101</SECURITY_GROUPS>' >"$dir/vm.xml"
	hostdev_file "$pci" >"$dir/dep.xml"
	run deploy "$dir/dep.xml"
	[ "$status" -eq 0 ]
	uuid=$(printf '%s\n' "${lines[@]}" | grep -xE '[0-9a-f-]{36}') # stdout's line
	[[ "$output" == *"WARNING: vfagent deploy: PCI 02:00:c0:a8:02:2b on network hpc-eth is a VF: its security groups (0,101) do not apply"* ]]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '.allocations[0].settings.security_groups | map(tostring) | join(",")')" = 0,101 ]
	sh "$hooks/shutdown" "$uuid" host1 42 host1
	sed -i 's#</SECURITY_GROUPS>#</SECURITY_GROUPS><VFAGENT_SECURITY_GROUPS>REFUSE</VFAGENT_SECURITY_GROUPS>#' "$dir/vm.xml"
	rm -f "$dir/deploy.args"
	run deploy "$dir/dep.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"PCI 02:00:c0:a8:02:2b on network hpc-eth is a VF with security groups (0,101)"*"VFAGENT_SECURITY_GROUPS = REFUSE"* ]]
	[ ! -e "$dir/deploy.args" ]
	[ "$(q src '/v1/allocations?owner=vm:one-42' '.allocations | length')" = 0 ]
}

@test "attach_nic: a NIC on an SR-IOV network with security groups its network refuses is refused before anything is claimed" {
	printf '<VMM_DRIVER_ACTION_DATA><VM><ID>42</ID><TEMPLATE><NIC><ATTACH><![CDATA[YES]]></ATTACH><BRIDGE><![CDATA[sriov_eth0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:02:09]]></MAC><NETWORK><![CDATA[hpc-eth]]></NETWORK><SECURITY_GROUPS><![CDATA[0,7]]></SECURITY_GROUPS><VFAGENT_SECURITY_GROUPS><![CDATA[REFUSE]]></VFAGENT_SECURITY_GROUPS></NIC></TEMPLATE></VM></VMM_DRIVER_ACTION_DATA>' >"$dir/msg"
	run sh "$hooks/attach_nic" 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c 02:00:c0:a8:02:09 sriov_eth0 \
		virtio vfagent one-42-5 42 host1 <"$dir/msg"
	[ "$status" -eq 1 ]
	[[ "$output" == *"vfagent attach_nic: NIC 02:00:c0:a8:02:09 on network hpc-eth is a VF with security groups (0,7)"* ]]
	[ ! -e "$dir/attach_nic.args" ]
	[ "$(q src /v1/allocations '.allocations | length')" = 0 ]
}

@test "deploy: the VF oned booked taken meanwhile (a shared pool): the deploy fails naming it, nothing claimed" {
	pci=$(q src '/v1/vfs?pool=eth&state=free' '.vfs[-1].pci')
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations -d \
		"{\"pci\":\"$pci\",\"owner\":{\"kind\":\"container\",\"pid\":$$}}" >/dev/null
	pci_vm_at "$pci" >"$dir/vm.xml"
	hostdev_file "$pci" >"$dir/dep.xml"
	run deploy "$dir/dep.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"VF $pci is not free"* ]]
	[ ! -e "$dir/deploy.args" ]
	[ "$(q src '/v1/allocations?owner=vm:one-42' '.allocations | length')" = 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 13 ]
}

@test "save: a suspended VM keeps its VFs booked (oned keeps its capacity); stop gives them back" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	LCM=6 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	# the simulated libvirt has no domain: the checkpoint stands for it from the start (a
	# held reservation whose file and owner are both gone is released at once)
	: >"$dir/checkpoint"
	run sh "$hooks/save" "$uuid" "$dir/checkpoint" host1 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[].state] | join(",")')" = reserved,reserved,reserved ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 11 ]
	[ "$(jq -s 'map(.count) | add' "$dir/checkpoint.vfagent")" = 3 ]
	# held while the checkpoint exists, not while a domain does: a suspended VM has none
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[].hold_while] | unique | join(",")')" = "$dir/checkpoint" ]
	# resume here: nothing to claim, the booked VFs go back in (the test libvirt has no domain)
	run sh "$hooks/restore" "$dir/checkpoint" host1 "$uuid" 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 11 ]
	LCM=5 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	run sh "$hooks/save" "$uuid" "$dir/checkpoint" host1 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
}

@test "a suspended VM migrated cold (its checkpoint moved): restore there claims its VFs, here they go back" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	LCM=6 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	mkdir "$dir/ds-src" "$dir/ds-dst"
	: >"$dir/ds-src/checkpoint" # the simulated libvirt has no domain to stand for it
	run sh "$hooks/save" "$uuid" "$dir/ds-src/checkpoint" host1 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	# PROLOG_MIGRATE_SUSPEND: no VMM action on the source; the tm mv moves the VM's directory
	mv "$dir/ds-src/checkpoint" "$dir/ds-src/checkpoint.vfagent" "$dir/ds-dst/"
	VFAGENT_SOCKET=$dir/dst.sock run sh "$hooks/restore" "$dir/ds-dst/checkpoint" dst "$uuid" 42 dst <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q dst "/v1/allocations?owner=vm:$uuid" '[.allocations[] | .pool] | sort | join(",")')" = eth,ib,ib ]
	[ "$(q dst "/v1/allocations?owner=vm:$uuid" '[.allocations[].vfs[]] | length')" = 3 ]
	# here: held while the checkpoint existed; it has gone, so they go back at once (watched)
	[ ! -e "$dir/ds-src/checkpoint" ]
	for _ in $(seq 50); do
		[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ] && break
		sleep 0.1
	done
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
}

@test "restore after stop: the noted claims are made even when the VM still holds a VF here (a release that failed)" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	LCM=5 pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	run sh "$hooks/save" "$uuid" "$dir/checkpoint" host1 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 14 ]
	# what a release that failed at stop leaves: a VF still booked for the domain, no hold
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations -d \
		"{\"pool\":\"eth\",\"owner\":{\"kind\":\"vm\",\"name\":\"one-42\",\"uuid\":\"$uuid\"}}" >/dev/null
	run sh "$hooks/restore" "$dir/checkpoint" host1 "$uuid" 42 host1 <"$dir/msg"
	[ "$status" -eq 0 ]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[].vfs[]] | length')" = 4 ]
}

@test "migrate: to another system datastore of the same host (DEST_HOST = SRC_HOST) moves no VF" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	before=$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[].vfs[].pci] | sort | join(",")')
	run sh "$hooks/migrate" "$uuid" src src 42 src
	[ "$status" -eq 0 ]
	[ "$(cat "$dir/migrate.args")" = "$uuid src src 42 src" ]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[].vfs[].pci] | sort | join(",")')" = "$before" ]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[].state] | join(",")')" = attached,attached,attached ]
	[ "$(q src '/v1/vfs?state=free' '.vfs | length')" = 11 ]
}

@test "the agent down: a VM without VFs saves, restores, migrates, hot-plugs and stops through the stock actions" {
	export VFAGENT_SOCKET=$dir/nowhere.sock
	u=6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c
	pci_vm 0000 00 00 0 | sed 's#<TEMPLATE>.*</TEMPLATE>#<TEMPLATE/>#' >"$dir/msg"
	sh "$hooks/save" "$u" "$dir/checkpoint" host1 42 host1 <"$dir/msg"
	sh "$hooks/restore" "$dir/checkpoint" host1 "$u" 42 host1 <"$dir/msg"
	sh "$hooks/migrate" "$u" dst src 42 src <"$dir/msg"
	nic_message br0 02:00:c0:a8:01:09 >"$dir/nic"
	sh "$hooks/attach_nic" "$u" 02:00:c0:a8:01:09 br0 virtio bridge one-42-5 42 host1 <"$dir/nic"
	sh "$hooks/detach_nic" "$u" 02:00:c0:a8:01:09 42 host1 <"$dir/nic"
	sh "$hooks/reboot" "$u" host1 42 host1 </dev/null 2>/dev/null || true # no stock reboot stub
	sh "$hooks/shutdown" "$u" host1 42 host1 </dev/null
	for a in save restore migrate attach_nic detach_nic shutdown; do [ -e "$dir/$a.args" ]; done
}

# the network driver's update_nic as one_vmm_exec.rb's update_nic step runs it through
# VirtualNetworkDriver#do_action and the host's SSH stream (a shell reading its commands from
# stdin): the line `cat << 'EOT' | vnm/vfagent/update_nic 'DEPLOY_ID' 'VN_ID'`, then the VM in
# base64 (Base64.encode64: lines of 60) and "EOT"; no VM_ID or HOST
vnm=$top/hooks/one/vnm/vfagent
update_nic() { # DEPLOY_ID VM_XML_FILE [VN_ID]
	{ echo "cat << 'EOT' | $vnm/update_nic '$1' '${3:-5}'"; base64 <"$2"; echo EOT; } | bash -s
}

# vm.xml of VM 42 after oned took network 5's new VLAN_ID 140, OUTBOUND_AVG_BW 12500 (KB/s) and
# TRUST into its PCI NIC: VNET_UPDATE lists VLAN_ID and OUTBOUND_AVG_BW with their old values
# (VirtualNetwork::set_updated_attributes; TRUST unchanged, so not listed): PCI [NETWORK_ID]
updated_vm() {
	pci_vm_at "$1" "<NETWORK_ID><![CDATA[${2:-5}]]></NETWORK_ID><OUTBOUND_AVG_BW><![CDATA[12500]]></OUTBOUND_AVG_BW><TRUST><![CDATA[YES]]></TRUST>" |
		sed -e 's#<VLAN_ID>130</VLAN_ID>#<VLAN_ID><![CDATA[140]]></VLAN_ID>#' \
			-e 's#</TEMPLATE>#<VNET_UPDATE><VLAN_ID><![CDATA[130]]></VLAN_ID><OUTBOUND_AVG_BW><![CDATA[]]></OUTBOUND_AVG_BW></VNET_UPDATE></TEMPLATE>#'
}

@test "update_nic: a network's changed VLAN_ID and rate reach the VM's booked VF, nothing else" {
	pci=$(q src '/v1/vfs?pool=eth&state=free' '.vfs[-1].pci')
	u=6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c
	curl -s --unix-socket "$dir/src.sock" -X POST http://x/v1/allocations -d \
		"{\"pci\":\"$pci\",\"vlan\":130,\"owner\":{\"kind\":\"vm\",\"name\":\"one-42\",\"uuid\":\"$u\"}}" >/dev/null
	updated_vm "$pci" >"$dir/vm.xml"
	run update_nic "$u" "$dir/vm.xml"
	[ "$status" -eq 0 ]
	[[ "$output" == *'{"vlan":140,"max_tx_rate":100}'* ]]
	[ "$(q src "/v1/allocations?owner=vm:$u" '.allocations[0].settings | [.vlan, .max_tx_rate, .trust] | join(",")')" = 140,100, ]
	# a network the VM's VF is not on: nothing asked
	updated_vm "$pci" 6 | sed 's#<VLAN_ID><!\[CDATA\[140\]\]>#<VLAN_ID><![CDATA[150]]>#' >"$dir/vm.xml"
	run update_nic "$u" "$dir/vm.xml"
	[ "$status" -eq 0 ]
	[ "$(q src "/v1/allocations?owner=vm:$u" '.allocations[0].settings.vlan')" = 140 ]
	# the VF of another domain at that address: not this VM's to change
	updated_vm "$pci" >"$dir/vm.xml"
	run update_nic 11111111-2222-4333-8444-555555555555 "$dir/vm.xml"
	[ "$status" -eq 0 ]
	[ "$(q src "/v1/allocations?owner=vm:$u" '.allocations[0].settings.vlan')" = 140 ]
}

@test "update_nic: a NIC deployed on an SR-IOV bridge reaches its own VF, not the VM's other NICs'" {
	uuid=$(deploy "$one/two-ib-one-eth.xml")
	# oned copied network 2's new VLAN_ID 140 into the VM's NIC on it (sriov_eth0, MAC ...:2a)
	printf '<VM><ID>42</ID><LCM_STATE>3</LCM_STATE><TEMPLATE><NIC><BRIDGE>sriov_ib0</BRIDGE><MAC>02:00:0a:01:00:05</MAC><NETWORK_ID>1</NETWORK_ID></NIC><NIC><BRIDGE>sriov_eth0</BRIDGE><MAC>02:00:c0:a8:02:2a</MAC><NETWORK_ID>2</NETWORK_ID><VLAN_ID><![CDATA[140]]></VLAN_ID></NIC><VNET_UPDATE><VLAN_ID><![CDATA[120]]></VLAN_ID></VNET_UPDATE></TEMPLATE></VM>' >"$dir/vm.xml"
	# the simulated PF has no netdev to set it on: the update fails naming that NIC's own
	# allocation (oned marks the network UPDATE_FAILURE), the VF as it was; one-lifecycle.sh
	# sees it set on a simulated host that answers
	id=$(q src "/v1/allocations?owner=vm:$uuid" '.allocations[] | select(.settings.mac == "02:00:c0:a8:02:2a") | .id')
	[ -n "$id" ]
	run update_nic "$uuid" "$dir/vm.xml" 2
	[ "$status" -eq 1 ]
	[[ "$output" == *"allocation $id: not updated"* ]]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '[.allocations[] | .settings.vlan] | unique | join(",")')" = "" ]
}

@test "update_nic: a VF in the guest whose PF refuses fails the update, the VF as it was" {
	pci=$(q src '/v1/vfs?pool=eth&state=free' '.vfs[-1].pci')
	pci_vm_at "$pci" >"$dir/vm.xml"
	hostdev_file "$pci" >"$dir/dep.xml"
	uuid=$(deploy "$dir/dep.xml")
	updated_vm "$pci" >"$dir/vm.xml"
	run update_nic "$uuid" "$dir/vm.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"No such device"*"not updated"* ]]
	[ "$(q src "/v1/allocations?owner=vm:$uuid" '.allocations[0] | "\(.state) \(.settings.vlan) \(.settings.max_tx_rate)"')" = "attached 130 null" ]
}

@test "update_nic: bad input and the agent down fail naming why" {
	run bash -c "echo 'not base64!' | $vnm/update_nic 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c 5"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not the VM in base64"* ]]
	run bash -c "echo '<VM/>' | base64 | $vnm/update_nic 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c x5"
	[ "$status" -eq 1 ]
	[[ "$output" == *'VN_ID "x5" is not a network ID'* ]]
	updated_vm 0000:d8:10.2 >"$dir/vm.xml"
	VFAGENT_SOCKET=$dir/nowhere.sock run update_nic 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c "$dir/vm.xml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"does not answer"*"network 5 not updated on VM 42"* ]]
	# oned runs every driver of the VM's NICs whatever network changed: nothing on this one,
	# nothing asked, even with the agent down
	updated_vm 0000:d8:10.2 7 >"$dir/vm.xml"
	VFAGENT_SOCKET=$dir/nowhere.sock run update_nic 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c "$dir/vm.xml"
	[ "$status" -eq 0 ]
	# onevm nic-update of a NIC on no network: oned sends VN_ID -1 (DispatchManagerActions.cc,
	# nic_update: net_id = -1 unless the NIC has a NETWORK_ID), and stops at a driver that fails
	updated_vm 0000:d8:10.2 >"$dir/vm.xml"
	VFAGENT_SOCKET=$dir/nowhere.sock run update_nic 6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c "$dir/vm.xml" -1
	[ "$status" -eq 0 ]
	for a in pre post clean vnet_create vnet_delete; do
		echo data | "$vnm/$a" 'x' 5
	done
}

# update_sg as one_vmm_exec.rb's update_sg step runs it for each network driver of the VM's NICs
# (VirtualNetworkDriver#do_action over the host's SSH stream): `cat << 'EOT' | vnm/vfagent/update_sg
# 'DEPLOY_ID'`, then the VM in base64 as get_vnm_drivers builds it (ID, DEPLOY_ID, the group's new
# TEMPLATE/SECURITY_GROUP_RULEs, every NIC and PCI with a VN_MAD)
update_sg() { # DEPLOY_ID VM_XML_FILE
	{ echo "cat << 'EOT' | $vnm/update_sg '$1'"; base64 <"$2"; echo EOT; } | bash -s
}

@test "update_sg: the VM's VF NICs and their groups named in its log (no rule reaches a VF), exit 0; input that is no VM fails" {
	u=6a5d2f5c-7b1e-4c1f-9b7a-0d1e2f3a4b5c
	printf '<VM><ID>42</ID><DEPLOY_ID>%s</DEPLOY_ID><TEMPLATE><SECURITY_GROUP_RULE><PROTOCOL><![CDATA[TCP]]></PROTOCOL><RANGE><![CDATA[22]]></RANGE><RULE_TYPE><![CDATA[INBOUND]]></RULE_TYPE><SECURITY_GROUP_ID><![CDATA[101]]></SECURITY_GROUP_ID><SECURITY_GROUP_NAME><![CDATA[ssh]]></SECURITY_GROUP_NAME></SECURITY_GROUP_RULE><NIC><BRIDGE><![CDATA[br0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:01:2a]]></MAC><NETWORK><![CDATA[br0]]></NETWORK><SECURITY_GROUPS><![CDATA[0,101]]></SECURITY_GROUPS><VN_MAD><![CDATA[bridge]]></VN_MAD></NIC><NIC><BRIDGE><![CDATA[sriov_eth0]]></BRIDGE><MAC><![CDATA[02:00:c0:a8:02:2a]]></MAC><NETWORK><![CDATA[hpc-eth]]></NETWORK><SECURITY_GROUPS><![CDATA[0,101]]></SECURITY_GROUPS><VN_MAD><![CDATA[vfagent]]></VN_MAD></NIC><NIC><BRIDGE><![CDATA[sriov_ib0]]></BRIDGE><MAC><![CDATA[02:00:0a:01:00:05]]></MAC><NETWORK><![CDATA[hpc-ib]]></NETWORK><VN_MAD><![CDATA[vfagent]]></VN_MAD></NIC><PCI><TYPE><![CDATA[NIC]]></TYPE><MAC><![CDATA[02:00:c0:a8:02:2b]]></MAC><NETWORK><![CDATA[hpc-eth]]></NETWORK><SECURITY_GROUPS><![CDATA[101]]></SECURITY_GROUPS><VN_MAD><![CDATA[vfagent]]></VN_MAD></PCI></TEMPLATE></VM>' "$u" >"$dir/vm.xml"
	VFAGENT_SOCKET=$dir/nowhere.sock run update_sg "$u" "$dir/vm.xml"
	[ "$status" -eq 0 ]
	[[ "$output" == *"WARNING: vfagent update_sg: NIC 02:00:c0:a8:02:2a on network hpc-eth is a VF: its security groups (0,101) do not apply"* ]]
	[[ "$output" == *"WARNING: vfagent update_sg: PCI 02:00:c0:a8:02:2b on network hpc-eth is a VF: its security groups (101) do not apply"* ]]
	[ "${#lines[@]}" = 2 ] # not br0's (the bridge driver applies them), not the IB NIC's (none)
	run bash -c "echo 'not base64!' | $vnm/update_sg $u"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stdin is not the VM in base64"* ]]
	run bash -c "echo '<NIC/>' | base64 | $vnm/update_sg $u"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stdin holds no VM"* ]]
}
