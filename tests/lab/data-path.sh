# shellcheck shell=sh
# The lab's data-path steps, sourced by scenario.sh (which defines ip, api,
# pass, fail, info, vfline and the igb PF): packets through real igb VFs, and
# the VF settings the agent makes on the PF read back from the kernel.
# shellcheck disable=SC2154 # ip, igb and idx1 are scenario.sh's

# c1 and c2 hold a VF each on VLAN 100 (10.9.0.1 and .2). The emulated 82576
# switches VF to VF (its VMDq loopback, which igb turns on with VFs).
traffic_steps() {
	ok=0
	for _ in 1 2 3 4 5; do
		$ip netns exec c1 ping -c 1 -W 2 10.9.0.2 >/run/ping 2>&1 && { ok=1; break; }
	done
	if [ $ok = 0 ]; then
		fail traffic "c1 → c2 over two igb VFs: no answer: $(tail -n 2 /run/ping | tr '\n' ' ') PF: $(vfline "$idx1" | tr -s ' ')"
		return 0
	fi
	head -c 1048576 /dev/urandom >/run/sent
	# the listener's stdin stays open (at EOF, busybox nc would end the connection)
	sleep 60 | $ip netns exec c2 nc -l -p 5001 >/run/recv 2>/dev/null &
	listener=$!
	sleep 1
	$ip netns exec c1 timeout 30 nc -w 3 10.9.0.2 5001 </run/sent 2>/run/nc
	for _ in $(seq 300); do
		[ "$(wc -c </run/recv)" -ge 1048576 ] && break
		sleep 0.1
	done
	kill "$listener" 2>/dev/null
	if cmp -s /run/sent /run/recv; then
		pass "traffic: c1 → c2 over two igb VFs on VLAN 100: ping answered, 1048576 bytes sent, the same received"
	else
		fail traffic "ping answered; $(wc -c </run/recv) of 1048576 bytes arrived: $(cat /run/nc)"
	fi
	vlan_isolation_step
}

# A third container on VLAN 200 reaches neither: the VLAN the agent set is in effect.
# It keeps its VF (id5) until the scenario has given c1's and c2's back: a reset
# VF's new netdev would take the name theirs had in the host.
vlan_isolation_step() {
	$ip netns add c5
	id5=$(api alloc igb --owner netns:/run/netns/c5 --vlan 200 --netns c5 --ifname eth1 \
		--address 10.9.0.5/24 | jq -r .id)
	if [ -z "$id5" ] || [ "$id5" = null ]; then
		fail "VLAN isolation" "no VF for c5"
	elif $ip netns exec c5 ping -c 2 -W 2 10.9.0.2 >/run/ping 2>&1; then
		fail "VLAN isolation" "c5 on VLAN 200 reached c2 on VLAN 100"
	elif $ip netns exec c1 ping -c 1 -W 2 10.9.0.2 >/dev/null 2>&1; then
		pass "VLAN isolation: c5 on VLAN 200 gets no answer from c2 on VLAN 100, c1 still does"
	else
		fail "VLAN isolation" "c1 lost c2 meanwhile"
	fi
}

vlan_isolation_cleanup() {
	[ -z "$id5" ] || vfctl release "$id5" >/dev/null 2>&1
	$ip netns del c5
}

# spoofchk, trust and max_tx_rate as the kernel reports them on the PF, then
# back at release; a setting igb refuses (link state) rolls the attach back.
pf_settings_steps() {
	$ip netns add c6
	out=$(api alloc igb --owner netns:/run/netns/c6 --spoofchk off --trust on --max-tx-rate 100 \
		--netns c6 --ifname eth1)
	id6=$(printf '%s' "$out" | jq -r .id)
	pci6=$(vfctl -o json show "$igb" | jq -r --arg id "$id6" '.vfs[] | select(.allocation == $id) | .pci')
	idx6=$(vfctl -o json show "$igb" | jq -r --arg id "$id6" '.vfs[] | select(.allocation == $id) | .index')
	line=$(vfline "$idx6" | tr -s ' ')
	back=$(api show "$pci6" | jq -c '.pf_settings | {spoofchk, trust, max_tx_rate}')
	case $line in
	*"spoof checking off"*"trust on"*) ;;
	*) line="MISSING: $line" ;;
	esac
	if [ "${line#MISSING}" = "$line" ] && printf '%s' "$line" | grep -q "max_tx_rate 100Mbps" &&
		[ "$back" = '{"spoofchk":false,"trust":true,"max_tx_rate":100}' ]; then
		pass "PF settings: vf $idx6 has spoof checking off, trust on, max_tx_rate 100 Mbit/s ($line), as vfctl show reads them"
	else
		fail "PF settings" "$line / vfctl: $back / $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-200)"
	fi
	vfctl release "$id6" >/dev/null 2>&1
	line=$(vfline "$idx6" | tr -s ' ')
	case $line in
	*"spoof checking on"*"trust off"*) restored=1 ;;
	*) restored=0 ;;
	esac
	if [ $restored = 1 ] && ! printf '%s' "$line" | grep -q "max_tx_rate 100Mbps"; then
		pass "PF settings restored at release: $line"
	else
		fail "PF settings restore" "$line"
	fi
	out=$(vfctl alloc igb --owner netns:/run/netns/c6 --link-state enable --spoofchk off \
		--netns c6 --ifname eth1 2>&1) && fail "link state" "igb took a VF link state: $out"
	left=$($ip -n c6 link show 2>/dev/null | grep -c '^[0-9]')
	held=$(vfctl -o json allocations --owner netns:c6 | jq '[.allocations[]? | select(.state != "released")] | length')
	line=$(vfline "$idx6" | tr -s ' ')
	if [ "$left" = 1 ] && [ "$held" = 0 ] && printf '%s' "$line" | grep -q "spoof checking on"; then
		pass "link state: igb refuses it; the attach rolled back, nothing held, the VF as it was ($(printf '%s' "$out" | tr '\n' ' ' | cut -c1-120))"
	else
		fail "link state" "links in c6 $left, held $held, $line: $out"
	fi
	$ip netns del c6
}
