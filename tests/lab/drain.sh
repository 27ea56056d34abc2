# shellcheck shell=sh
# The lab's PF drain (issue 39), sourced by scenario.sh and run by
# failover_steps when VFAGENT_LAB_DRAIN=1 (run.sh: vfagent_lab_drain=1 on the
# lab guest's command line, a third igb PF, more memory): `vfctl drain PF` on
# the igb PF while two nested guests run, each with a failover NIC (libvirt's
# teaming pair, the virtio standby on br-fo) on a VF of it:
#   - "fo", failover.sh's guest, which also holds a NIC without standby there
#     (drain must say it cannot move, and why);
#   - "dr", a second guest of its own (fo_domain's, its failover NIC only),
#     created beside "fo" so that the two boot at once (one wait, not two).
# The drain swaps both failover NICs onto VFs of the third igb PF, on a root
# port of its own (ACS: vfio-pci takes its VFs, where the switch's PF, the
# peer, shares its group with the bridge), its uplink on the same QEMU hub.
# The peer pings each guest every 20 ms meanwhile; each one's lost answers are
# counted as failover.sh counts them. After: both guests run, each with one
# teaming transient hostdev (a VF of the third PF) and its standby; the old
# VFs are free (reset) in the ledger; the drained PF holds no allocation but
# the NIC without standby's. Then "fo" is swapped back to the drained PF and
# "dr" goes, so that the migration step finds the tier as it was.
# shellcheck disable=SC2154 # ip, igb, igb2, sock, api, lv, now_ms, secs, fo_* are the scenario's

dr_steps="drain: second nested guest up|drain: a PF with two failover guests"
dr_mac=02:00:0a:09:0f:04 dr_con=/run/dr.console
dr_on() { grep -q vfagent_lab_drain=1 /proc/cmdline; }
! dr_on || fo_steps="$fo_steps|$dr_steps" # skipped with the tier, saying why

# fo_domain's guest with a name, UUID, console, MAC and address of its own, and its failover NIC only
dr_domain() {
	fo_domain | sed -e 's|<name>fo</name>|<name>dr</name>|' \
		-e 's|<uuid>[^<]*</uuid>|<uuid>5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9f3a</uuid>|' \
		-e "s|$fo_con|$dr_con|" -e 's| plain_mac=[^ <]*||; s| plain_ip=[^ <]*||' \
		-e 's|fo_ip=10.9.9.2/|fo_ip=10.9.9.3/|' -e '/sriov_eth/d' -e "s|$fo_mac|$dr_mac|g" \
		-e "s|'fo-0'|'dr-0'|"
}

# The second guest created (not waited for): failover_steps calls it before
# it waits for its own. Why not in /run/dr.why.
drain_guest_start() {
	dr_on || return 0
	dr_t0=$(now_ms)
	dr_domain >/run/dr.xml
	code=$(curl -sS --max-time 60 --unix-socket "$sock" -X POST -H 'Content-Type: application/xml' \
		--data-binary @/run/dr.xml -o /run/dr.out -w '%{http_code}' "http://x/v1/domain-xml" 2>&1)
	rm -f "$dr_con"
	if [ "$code" != 200 ] || ! grep -q teaming /run/dr.out; then
		echo "POST /v1/domain-xml: $code $(head -c 300 /run/dr.out)" >/run/dr.why
	elif ! lv create /run/dr.out >/run/lv.dr 2>&1; then
		echo "virsh create: $(tail -n 3 /run/lv.dr | tr '\n' ' ')" >/run/dr.why
	else
		echo >/run/dr.why
	fi
}

drain_guest_wait() {
	[ -z "$(cat /run/dr.why)" ] || return 1
	for _ in $(seq 900); do
		grep -q 'NESTED READY' "$dr_con" 2>/dev/null && break
		sleep 1
	done
	grep -q 'NESTED READY' "$dr_con" 2>/dev/null && fo_wait_answer 10.9.9.3 120 && return 0
	echo "no READY or no answer: $(tail -c 300 "$dr_con" 2>/dev/null | tr '\n' ' ')" >/run/dr.why
	return 1
}

# DOMAIN MAC: the hostdev NIC's VF and the allocation that holds it, "PCI ID"
dr_vf_of() {
	lv dumpxml "$1" >/run/dr.live 2>/dev/null
	x="//interface[@type='hostdev'][mac/@address='$2']/source/address"
	pci=$(printf '%04x:%02x:%02x.%x' "$(xmllint --xpath "string($x/@domain)" /run/dr.live)" \
		"$(xmllint --xpath "string($x/@bus)" /run/dr.live)" \
		"$(xmllint --xpath "string($x/@slot)" /run/dr.live)" \
		"$(xmllint --xpath "string($x/@function)" /run/dr.live)" 2>/dev/null)
	echo "$pci $(api show "$pci" | jq -r '.allocation // empty')"
}

# DOMAIN MAC PF: running, one teaming transient hostdev of MAC on a VF of PF (vfio-pci), one standby
dr_paired_on() {
	lv dumpxml "$1" >/run/dr.live 2>/dev/null
	set -- "$1" "$2" "$3" "$(dr_vf_of "$1" "$2" | cut -d' ' -f1)"
	[ "$(lv domstate "$1" 2>/dev/null)" = running ] &&
		[ "$(xmllint --xpath "count(//interface[@type='hostdev'][teaming/@type='transient'])" /run/dr.live)" = 1 ] &&
		[ "$(xmllint --xpath "count(//interface[@type='hostdev'][mac/@address='$2'][teaming])" /run/dr.live)" = 1 ] &&
		[ "$(xmllint --xpath "count(//interface[teaming/@type='persistent'][mac/@address='$2'])" /run/dr.live)" = 1 ] &&
		[ "$(basename "$(readlink "/sys/bus/pci/devices/$4/physfn")")" = "$3" ] && [ "$(drv_of "$4")" = vfio-pci ]
}

# The third igb PF: not the lab's first, not the switch's (the peer); its link up, 2 VFs
dr_pf() {
	igb3=
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x8086 ] && [ "$(cat "$d/device")" = 0x10c9 ] &&
			[ "${d##*/}" != "$igb" ] && [ "${d##*/}" != "$igb2" ] && igb3=${d##*/}
	done
	n3=$(ls "/sys/bus/pci/devices/$igb3/net" 2>/dev/null)
	[ -n "$n3" ] || { echo "no third igb PF netdev ($igb3)" >/run/dr.why; return 1; }
	$ip link set "$n3" up
	vfctl numvfs "$igb3" 2 >/run/out 2>&1
	udevadm settle --timeout=10
	for _ in $(seq 50); do
		[ "$(api show "$igb3" | jq '[.vfs[] | select(.state == "free")] | length')" = 2 ] && return 0
		sleep 0.1
	done
	echo "no 2 free VFs of $igb3: $(tr '\n' ' ' </run/out) $(api show "$igb3" | jq -c '[.vfs[].state]')" >/run/dr.why
	return 1
}

# vfctl drain under pings to both guests; the checks after
drain_move() {
	# shellcheck disable=SC2046 # "PCI ID" each
	set -- $(dr_vf_of fo "$fo_mac") $(dr_vf_of dr "$dr_mac") $(dr_vf_of fo "$plain_mac")
	fo_old=$1 fo_id=$2 dr_old=$3 dr_id=$4 pl_id=$6
	fo_ping_start 10.9.9.2
	p_fo=$fo_ping
	fo_ping_start 10.9.9.3
	p_dr=$fo_ping
	sleep 3
	from_fo=$(fo_answered 10.9.9.2) from_dr=$(fo_answered 10.9.9.3)
	n0=$(wc -l </run/agent.log)
	t0=$(now_ms)
	vfctl drain "$igb" >/run/drain.out 2>/run/drain.err # its lines; vfctl's own error aside
	rc=$?
	t1=$(now_ms)
	sleep 3
	for p in "$p_fo" "$p_dr"; do kill -INT "$p"; wait "$p" 2>/dev/null; done
	# shellcheck disable=SC2046 # four numbers each
	set -- $(fo_lost 10.9.9.2 "$from_fo") $(fo_lost 10.9.9.3 "$from_dr")
	dr_lost_fo=$1 dr_lost_dr=$5
	dr_line="lost $1 of $4 answers from fo (longest gap $3 × 20 ms), $5 of $8 from dr (longest gap $7);"
	dr_line="$dr_line drain of $igb in $(secs $((t1 - t0))) s, exit $rc: $(tr '\n' ';' </run/drain.out | cut -c1-400) (stderr: $(tr '\n' ' ' </run/drain.err | cut -c1-200))"
	fo_new=$(dr_vf_of fo "$fo_mac" | cut -d' ' -f1) dr_new=$(dr_vf_of dr "$dr_mac" | cut -d' ' -f1)
	held=$(api show "$igb" | jq -r '[.vfs[].allocation // empty] | unique | join(" ")')
	[ "$4" -gt "$from_fo" ] && [ "$8" -gt "$from_dr" ] && [ $rc = 1 ] &&
		grep -q "^$fo_id $fo_old -> $fo_new\$" /run/drain.out && grep -q "^$dr_id $dr_old -> $dr_new\$" /run/drain.out &&
		grep -q "^$pl_id .* cannot move: " /run/drain.out && [ "$(wc -l </run/drain.out)" = 3 ] &&
		dr_paired_on fo "$fo_mac" "$igb3" && dr_paired_on dr "$dr_mac" "$igb3" &&
		[ "$(api show "$fo_old" | jq -r .state)" = free ] && [ "$(api show "$dr_old" | jq -r .state)" = free ] &&
		tail -n +$((n0 + 1)) /run/agent.log >/run/agent.drain &&
		grep -q "VF $fo_old: reset (" /run/agent.drain && grep -q "VF $dr_old: reset (" /run/agent.drain &&
		[ "$held" = "$pl_id" ]
}

# Back as the migration step expects it: fo's failover NIC on the drained PF, dr gone, no VFs on the third PF
dr_back() {
	vfctl swap "$fo_id" --pf "$igb" >/run/out 2>&1 || info drain "swap back to $igb: $(tr '\n' ' ' </run/out)"
	lv destroy dr >/dev/null 2>&1
	vfctl release "$dr_id" >/dev/null 2>&1
	vfctl numvfs "$igb3" 0 >/dev/null 2>&1
	udevadm settle --timeout=10
}

drain_steps() {
	dr_on || return 0
	if ! drain_guest_wait; then
		fail "drain: second nested guest up" "$(cat /run/dr.why)"
		skip "drain: a PF with two failover guests" "no second guest"
		lv destroy dr >/dev/null 2>&1
		return 0
	fi
	# (waited for only now, after fo's steps: its console's uptime tells its boot)
	pass "drain: second nested guest up: booted beside fo, answering $(secs $(($(now_ms) - dr_t0))) s after its start ($(grep 'NESTED READY' "$dr_con" | tr -d '\r' | cut -c1-120))"
	if ! dr_pf; then
		fail "drain: a PF with two failover guests" "$(cat /run/dr.why)"
	elif drain_move; then
		pass "drain: a PF with two failover guests: $dr_line"
	else
		fail "drain: a PF with two failover guests" "$dr_line; fo: $fo_old → ${fo_new:-?} ($(api show "$fo_old" | jq -r .state)), dr: $dr_old → ${dr_new:-?} ($(api show "$dr_old" | jq -r .state)); $igb held by '$held' (the NIC without standby: $pl_id); agent: $(tail -n 4 /run/agent.log | tr '\n' ' ' | cut -c1-400)"
	fi
	echo "LAB FIGURE drain-lost-fo ${dr_lost_fo:-none}"
	echo "LAB FIGURE drain-lost-dr ${dr_lost_dr:-none}"
	dr_back
}
