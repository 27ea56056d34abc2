#!/usr/bin/env bats
# hooks/guest/vfagent-ipoib: against a test root with fake /sys/class/net
# entries (dry run: the ip commands it would run), and for real inside a
# network namespace with veth stand-ins for the dummy NICs and ib0/ib1.

script="${top_srcdir:-.}/hooks/guest/vfagent-ipoib"

# fake_nic ROOT NAME MAC [PCI]
fake_nic() {
	mkdir -p "$1/sys/class/net/$2"
	echo "$3" >"$1/sys/class/net/$2/address"
	echo 7 >"$1/sys/class/net/$2/ifindex"
	if [ -n "${4:-}" ]; then
		mkdir -p "$1/sys/devices/pci0000:00/$4"
		ln -s "../../../devices/pci0000:00/$4" "$1/sys/class/net/$2/device"
	fi
}

setup() {
	root=$(mktemp -d)
	# the dummy of the first IB VF sits at the lower PCI address, whatever its name
	fake_nic "$root" eth2 02:1b:0a:01:00:05 0000:00:04.0
	fake_nic "$root" eth1 02:1B:0A:02:00:07 0000:00:06.0
	fake_nic "$root" eth0 02:00:c0:a8:01:2a 0000:00:03.0
	fake_nic "$root" ib0 80:00:00:48:fe:80
	fake_nic "$root" ib1 80:00:00:49:fe:80
	printf 'IB0_MASK="255.255.0.0"\nIB0_GATEWAY="10.1.0.1"\nIB1_PREFIX_LENGTH="20"\n' >"$root/context.sh"
	unset ETH0_IP ETH1_IP ETH2_IP
	export VFAGENT_ROOT=$root VFAGENT_DRY_RUN=1 CONTEXT_FILE=$root/context.sh
}

teardown() {
	rm -rf "$root"
	[ -z "${ns:-}" ] || ip netns del "$ns" 2>/dev/null || true
}

@test "dummies in PCI order address ib0 and ib1, with the context's masks and gateway" {
	run sh "$script"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ip addr replace 10.1.0.5/16 dev ib0"* ]]
	[[ "$output" == *"ip route add default via 10.1.0.1 dev ib0"* ]]
	[[ "$output" == *"ip addr replace 10.2.0.7/20 dev ib1"* ]]
	[[ "$output" == *"ip link set dev ib1 up"* ]]
	[[ "$output" != *"192.168"* ]] # an OpenNebula NIC is not a dummy
}

@test "the default prefix length is 24, and another MAC prefix can be set" {
	printf '' >"$root/context.sh"
	fake_nic "$root" eth9 02:1c:0a:03:00:01 0000:00:09.0
	run env VFAGENT_IPOIB_PREFIX=02:1c sh "$script"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ip addr replace 10.3.0.1/24 dev ib0"* ]]
	[[ "$output" != *"10.1.0.5"* ]]
}

@test "a missing ib interface, a bad mask and a bad prefix are named and fail" {
	rm -r "$root/sys/class/net/ib1"
	run sh "$script"
	[ "$status" -eq 1 ]
	[[ "$output" == *"ib1: no such interface"* ]]
	[[ "$output" == *"ip addr replace 10.1.0.5/16 dev ib0"* ]]
	printf 'IB0_MASK="255.0.255.0"\n' >"$root/context.sh"
	run sh "$script"
	[ "$status" -eq 1 ]
	[[ "$output" == *"IB0_MASK=255.0.255.0: not a netmask; ib0 left alone"* ]]
	run env VFAGENT_IPOIB_PREFIX=zz sh "$script"
	[ "$status" -eq 2 ]
	[[ "$output" == *"must be two MAC bytes"* ]]
}

@test "each ibN takes the mask, gateway, metric and MTU of the OpenNebula NIC it stands for" {
	# one-context's variable names; the NIC is found by the dummy's address, not by order
	printf '%s\n' "ETH0_IP='192.168.1.42'" "ETH0_MASK='255.255.255.0'" "ETH0_GATEWAY='192.168.1.1'" \
		"ETH1_IP='10.2.0.7'" "ETH1_MASK='255.255.0.0'" "ETH1_MTU='2044'" \
		"ETH2_IP='10.1.0.5'" "ETH2_MASK='255.255.252.0'" "ETH2_GATEWAY='10.1.0.1'" \
		"ETH2_METRIC='200'" >"$root/context.sh"
	run sh "$script"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ip addr replace 10.1.0.5/22 dev ib0"* ]]
	[[ "$output" == *"ip route add default via 10.1.0.1 dev ib0 metric 200"* ]]
	[[ "$output" == *"ip addr replace 10.2.0.7/16 dev ib1"* ]]
	[[ "$output" == *"ip link set dev ib1 mtu 2044"* ]]
	[[ "$output" != *"via 192.168.1.1"* ]]
	[[ "$output" != *"dev ib0 mtu"* ]]
	# IB<n>_* override the NIC's
	printf '%s\n' "IB0_MASK='255.0.0.0'" "IB1_MTU='65520'" >>"$root/context.sh"
	run sh "$script"
	[[ "$output" == *"ip addr replace 10.1.0.5/8 dev ib0"* ]]
	[[ "$output" == *"ip link set dev ib1 mtu 65520"* ]]
	# a NIC's bad mask is named
	printf '%s\n' "ETH1_IP='10.2.0.7'" "ETH1_MASK='255.0.255.0'" >"$root/context.sh"
	run sh "$script"
	[ "$status" -eq 1 ]
	[[ "$output" == *"ETH1_MASK=255.0.255.0: not a netmask; ib1 left alone"* ]]
}

@test "an IB VF that oned booked as PCI = [TYPE = \"NIC\"] takes its PCI<k>_* variables" {
	# oned's generate_pci_context (VirtualMachineContext.cc): "PCI" << PCI_ID << "_" << IP, MASK...
	printf '%s\n' "ETH0_IP='192.168.1.42'" "ETH0_GATEWAY='192.168.1.1'" \
		"PCI0_IP='10.1.0.5'" "PCI0_MASK='255.255.248.0'" "PCI0_GATEWAY='10.1.0.1'" "PCI0_METRIC='300'" \
		"PCI1_IP='10.2.0.7'" "PCI1_MTU='2044'" >"$root/context.sh"
	run sh "$script"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ip addr replace 10.1.0.5/21 dev ib0"* ]]
	[[ "$output" == *"ip route add default via 10.1.0.1 dev ib0 metric 300"* ]]
	[[ "$output" == *"ip addr replace 10.2.0.7/24 dev ib1"* ]]
	[[ "$output" == *"ip link set dev ib1 mtu 2044"* ]]
}

@test "a P_Key other than ibN's own gets a child interface on it, once; ibN's own, none" {
	echo 0xffff >"$root/sys/class/net/ib0/pkey"
	echo 0x8002 >"$root/sys/class/net/ib1/pkey"
	printf 'IB0_PREFIX_LENGTH="16"\nIB0_PKEY="0x8001"\nIB1_PKEY="0x0002"\n' >"$root/context.sh"
	run sh "$script"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ip link add link ib0 name ib0.8001 type ipoib pkey 0x8001"* ]]
	[[ "$output" == *"ip addr replace 10.1.0.5/16 dev ib0.8001"* ]]
	[[ "$output" == *"ip link set dev ib0 up"* ]]
	[[ "$output" == *"ip addr replace 10.2.0.7/24 dev ib1"* ]] # mlx4: the key at index 0
	[[ "$output" != *"ib1.8002"* ]]
	mkdir "$root/sys/class/net/ib0.8001" # made: run again, it is not made twice
	run sh "$script"
	[ "$status" -eq 0 ]
	[[ "$output" != *"ip link add"* ]]
	[[ "$output" == *"ip addr replace 10.1.0.5/16 dev ib0.8001"* ]]
	for bad in 0x7fff 0xffff 0x8000 0x18001 "0x1 type"; do
		printf 'IB0_PKEY="%s"\n' "$bad" >"$root/context.sh"
		run sh "$script"
		[ "$status" -eq 1 ]
		[[ "$output" == *"IB0_PKEY=$bad: not a tenant's P_Key"* ]]
		[[ "$output" != *"dev ib0"* ]]
	done
}

@test "no dummy: nothing to do" {
	rm -r "$root/sys/class/net/eth1" "$root/sys/class/net/eth2"
	run sh "$script"
	[ "$status" -eq 0 ]
	[[ "$output" == *"nothing to do"* ]]
	[[ "$output" != *"ip "* ]]
}

@test "a guest with a default route keeps it: none added without a METRIC, one beside it with" {
	echo "default via 192.168.1.1 dev eth0 proto dhcp" >"$root/default-routes"
	run sh "$script"
	[ "$status" -eq 0 ]
	[[ "$output" != *"ip route"* ]]
	[[ "$output" == *"ib0: the guest has a default route: none added via 10.1.0.1"* ]]
	printf '%s\n' "ETH2_IP='10.1.0.5'" "ETH2_GATEWAY='10.1.0.1'" "ETH2_METRIC='300'" >"$root/context.sh"
	run sh "$script"
	[[ "$output" == *"ip route add default via 10.1.0.1 dev ib0 metric 300"* ]]
	[[ "$output" != *"replace default"* ]]
	# run again (one-context replays the scripts on every NIC change): there already
	echo "default via 10.1.0.1 dev ib0 metric 300" >>"$root/default-routes"
	run sh "$script"
	[[ "$output" != *"ip route"* ]]
	[[ "$output" == *"ib0: default route via 10.1.0.1 metric 300 already"* ]]
}

@test "in a real namespace: addresses, link and route end up configured, twice the same" {
	[ "$(id -u)" = 0 ] || skip "needs root for ip netns"
	ns=vfagent-guest-$$
	ip netns add "$ns"
	ip -n "$ns" link add d0 address 02:1b:0a:01:00:05 type veth peer name p0
	ip -n "$ns" link add d1 address 02:1b:0a:02:00:07 type veth peer name p1
	ip -n "$ns" link add ib0 type veth peer name q0
	ip -n "$ns" link add ib1 type veth peer name q1
	ip -n "$ns" link set q0 up
	ip -n "$ns" link set q1 up
	unset VFAGENT_ROOT VFAGENT_DRY_RUN
	# ib1's NIC as one-context names it: its mask and MTU
	printf '%s\n' "ETH3_IP='10.2.0.7'" "ETH3_MASK='255.255.240.0'" "ETH3_MTU='1400'" \
		"IB0_MASK='255.255.0.0'" "IB0_GATEWAY='10.1.0.1'" >"$root/context.sh"
	for _ in 1 2; do
		run ip netns exec "$ns" sh "$script"
		[ "$status" -eq 0 ]
	done
	[[ "$output" == *"ib0: 10.1.0.5/16 already"* ]]
	[ "$(ip -n "$ns" -4 -o addr show dev ib0 | awk '{print $4}')" = 10.1.0.5/16 ]
	[ "$(ip -n "$ns" -4 -o addr show dev ib1 | awk '{print $4}')" = 10.2.0.7/20 ]
	ip -n "$ns" link show ib0 | grep -q "state UP"
	ip -n "$ns" link show ib1 | grep -q " mtu 1400 "
	[ "$(ip -n "$ns" route show default)" = "default via 10.1.0.1 dev ib0 " ] ||
		[ "$(ip -n "$ns" route show default)" = "default via 10.1.0.1 dev ib0" ]
	[ -z "$(ip -n "$ns" -4 -o addr show dev d0)" ] # dummies stay unconfigured
	# the guest's own default route (here: another gateway on ib1) is never replaced
	ip -n "$ns" route del default
	ip -n "$ns" route add default via 10.2.0.1 dev ib1
	run ip netns exec "$ns" sh "$script"
	[ "$status" -eq 0 ]
	[ "$(ip -n "$ns" route show default | tr -s ' ' | sed 's/ $//')" = "default via 10.2.0.1 dev ib1" ]
}
