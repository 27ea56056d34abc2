# shellcheck shell=sh
# The lab's failover steps (issue 39), sourced by scenario.sh: a nested guest
# that really runs (Debian's kernel, busybox, virtio_net with net_failover,
# igbvf: tests/lab/nested-init.sh) on the igb PF's VFs, and a peer that pings
# it every 20 ms while the agent moves its VFs. One boot serves both NICs:
#   - a failover NIC (network sriov_fo: a VF with a virtio standby on br-fo,
#     libvirt's teaming pair, the same MAC), swapped to another VF of the PF
#     by `vfctl swap`: the guest's net_failover sends over the standby while
#     the VF is away;
#   - a NIC without standby (network sriov_eth), moved Nova's way: a new VF
#     claimed, the old one unplugged and released, the new one plugged.
# The lost answers of each are counted (the goal: at most 5 with the standby).
# The wire: the igb PF's uplink and the second igb PF's are one QEMU hub
# (run.sh), and the second PF is the peer, in a namespace of its own: frames
# for the guest's MAC come in from the wire, to the VF while it is there and
# to the PF's default pool (the PF, in br-fo, to the standby's tap) while it
# is not. br-fo does not learn on the PF's port (the guest's frames through
# its VF loop back to the PF; a learned entry there would send its frames
# back out the PF while the VF is away: what net_failover.rst's
# 'bridge fdb del $MAC dev $PF master' is for).
# Runs with VFAGENT_LAB_FAILOVER=1 after the other steps, or =only alone
# (after the setup it needs); skipped otherwise, saying so.
# shellcheck disable=SC2154 # ip, igb, igb_net, agent, sock, api, lv, now_ms, secs are the scenario's

fo_steps="failover: nested guest up|failover: control, no move|failover: swap with standby|failover: swap with standby, the guest's MAC on the PF first|failover: swap with standby, again (a VF the guest took by hotplug)|failover: unplug and replug without standby|failover: live migration to a second libvirtd"
fo_mac=02:00:0a:09:0f:02 plain_mac=02:00:0a:09:0f:03
fo_con=/run/fo.console

skip_fo_steps() { # WHY
	printf '%s\n' "$fo_steps" | tr '|' '\n' | while read -r s; do skip "$s" "$1"; done
}

# The nested domain: direct kernel boot (a command line that spares TCG work:
# no page zeroing on allocation, no crypto self-tests, no clocksource
# watchdog), serial console in a file, two NICs on the agent's SR-IOV networks
# (rewritten by /v1/domain-xml), spare root ports with QEMU 10's default ACPI
# hotplug: a running guest ejects at once, where native PCIe hotplug waits 5 s
# after the attention button.
fo_domain() {
	ctl="<controller type='pci' model='pcie-root'/>"
	for _ in 1 2 3 4 5 6; do ctl="$ctl<controller type='pci' model='pcie-root-port'/>"; done
	cat <<XML
<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
	<name>fo</name>
	<uuid>5d1e0c62-8d1b-4a55-9f0e-7c2a4b3d9f39</uuid>
	<vcpu>1</vcpu>
	<memory unit='MiB'>128</memory>
	<os>
		<type arch='x86_64' machine='q35'>hvm</type>
		<kernel>/lab/nested/vmlinuz</kernel>
		<initrd>/lab/nested/initrd.gz</initrd>
		<cmdline>console=ttyS0 quiet panic=-1 mitigations=off init_on_alloc=0 cryptomgr.notests=1 random.trust_cpu=on tsc=reliable no_timer_check audit=0 pci=noaer fo_mac=$fo_mac fo_ip=10.9.9.2/24 plain_mac=$plain_mac plain_ip=10.9.8.2/24</cmdline>
	</os>
	<features><acpi/></features>
	<devices><emulator>/usr/bin/qemu-system-x86_64</emulator>$ctl<memballoon model='none'/>
		<serial type='file'><source path='$fo_con'/><target port='0'/></serial>
		<interface type='bridge'><source bridge='sriov_fo'/><mac address='$fo_mac'/><target dev='fo-0'/><model type='virtio'/></interface>
		<interface type='bridge'><source bridge='sriov_eth'/><mac address='$plain_mac'/><target dev='fo-1'/><model type='virtio'/></interface>
	</devices>
</domain>
XML
}

# The peer and the standby's bridge: the second igb PF's netdev in namespace
# "peer" (10.9.9.1 and 10.9.8.1), br-fo holding the igb PF, no learning there;
# the agent again with the failover network. Why not in /run/fo.why.
fo_net() {
	igb2=
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x8086 ] && [ "$(cat "$d/device")" = 0x10c9 ] &&
			[ "${d##*/}" != "$igb" ] && igb2=${d##*/}
	done
	peer_net=$(ls "/sys/bus/pci/devices/$igb2/net" 2>/dev/null)
	[ -n "$peer_net" ] || { echo "no second igb PF netdev for the peer ($igb2)" >/run/fo.why; return 1; }
	modprobe bridge && modprobe tun || { echo "no bridge or tun module" >/run/fo.why; return 1; }
	$ip netns add peer
	$ip link set "$peer_net" netns peer
	$ip -n peer addr add 10.9.9.1/24 dev "$peer_net"
	$ip -n peer addr add 10.9.8.1/24 dev "$peer_net"
	$ip -n peer link set "$peer_net" up
	$ip -n peer link set lo up
	$ip link add br-fo type bridge
	$ip link set "$igb_net" master br-fo
	$ip link set "$igb_net" type bridge_slave learning off
	$ip link set br-fo up
	# a nested guest under TCG inside TCG takes seconds to eject a device: 60 s to let it go
	jq '.networks += [{bridge: "sriov_fo", pool: "igb", failover: {bridge: "br-fo"}}] |
		.libvirt.detach_wait = 60' \
		/etc/vfagent/vfagent.json >/run/cfg && mv /run/cfg /etc/vfagent/vfagent.json
	kill "$agent"
	wait "$agent" 2>/dev/null
	start_agent
}

# Pings DEST from the peer every 20 ms into /run/ping.DEST until fo_ping_stop, each answer
# with the time it came (-D: epoch seconds); fo_off, epoch ms less now_ms's, turns those into
# now_ms's clock (to its 10 ms; the guest's date is busybox's, without %N: adjtimex says)
fo_epoch_ms() {
	busybox adjtimex | awk '/time.tv_sec/ { s = $2 } /time.tv_usec/ { u = $2 }
		END { printf "%.0f\n", s * 1000 + int(u / 1000) }'
}
fo_ping_start() {
	fo_off=$(($(fo_epoch_ms) - $(now_ms)))
	$ip netns exec peer /usr/bin/ping -D -n -i 0.02 "$1" >"/run/ping.$1" 2>&1 &
	fo_ping=$!
}
fo_answered_at() { # DEST MS: the highest sequence number answered by MS (now_ms's clock)
	awk -v ms="$2" -v off="$fo_off" -F'[][]' '/icmp_seq=/ {
		q = $0; sub(/.*icmp_seq=/, "", q); sub(/ .*/, "", q)
		if ($2 * 1000 - off <= ms && q + 0 > max) max = q + 0 }
		END { print max + 0 }' "/run/ping.$1"
}
fo_answered() { # DEST: the highest sequence number answered so far (0: none)
	sed -n 's/.*icmp_seq=\([0-9]*\).*/\1/p' "/run/ping.$1" | sort -n | tail -n 1 | grep . || echo 0
}
fo_ping_stop() {
	kill -INT "$fo_ping"
	wait "$fo_ping" 2>/dev/null
}
# DEST FROM: the sequence numbers not answered up to the last answered one, as
# "LOST BEFORE MAXGAP SENT": all, those below FROM (before the move), the
# longest run of them, and the last answered
fo_lost() {
	sed -n 's/.*icmp_seq=\([0-9]*\).*/\1/p' "/run/ping.$1" | sort -n -u |
		awk -v from="$2" 'BEGIN { prev = 0 }
			{ gap = $1 - prev - 1
			lost += gap
			if (gap > maxgap) maxgap = gap
			hi = ($1 - 1 < from - 1) ? $1 - 1 : from - 1 # missing prev+1..$1-1, those below from
			if (hi >= prev + 1) before += hi - prev
			prev = $1 }
			END { printf "%d %d %d %d\n", lost, before, maxgap, prev }'
}
# DEST: "BEFORE AFTER", the answers on either side of the longest run of lost ones
fo_gap() {
	sed -n 's/.*icmp_seq=\([0-9]*\).*/\1/p' "/run/ping.$1" | sort -n -u |
		awk 'BEGIN { prev = 0 } { if ($1 - prev - 1 > max) { max = $1 - prev - 1; b = prev; a = $1 }
			prev = $1 } END { printf "%d %d\n", b, a }'
}
# Every 0.2 s until fo_samples_stop, "MS SEQ TO FROM" into /run/fo.samples: the
# time, the last answer, and the frames the standby's taps in br-fo (libvirt
# gives a tap the guest's MAC with fe first) have sent to the guest and
# received from it: where the wire's frames went while the VF moved. Each tap
# counts with its last counters, by ifindex, after it is gone too: a migration
# has two, and the source's goes with the source's domain
fo_samples_start() {
	: >/run/fo.samples
	seen=
	while :; do
		for p in /sys/class/net/br-fo/brif/*; do
			d=/sys/class/net/${p##*/}
			read -r m 2>/dev/null <"$d/address" && [ "$m" = "fe:${fo_mac#*:}" ] &&
				read -r i <"$d/ifindex" && read -r t <"$d/statistics/tx_packets" &&
				read -r f <"$d/statistics/rx_packets" || continue
			case " $seen " in *" $i "*) ;; *) seen="$seen $i" ;; esac
			eval "fo_to_$i=$t fo_fr_$i=$f"
		done
		to=0 fr=0
		for i in $seen; do
			eval "to=\$((to + fo_to_$i)) fr=\$((fr + fo_fr_$i))"
		done
		l=$(tail -n 1 /run/ping.10.9.9.2)
		q=${l##*icmp_seq=} q=${q%% *}
		case $q in '' | *[!0-9]*) q=0 ;; esac
		echo "$(now_ms) $q $to $fr" >>/run/fo.samples
		sleep 0.2
	done &
	fo_samples=$!
}
fo_samples_stop() {
	kill "$fo_samples" 2>/dev/null
	wait "$fo_samples" 2>/dev/null
}
# T0: the longest gap on the swap's clock, and what the standby's tap carried
# in it and in the second before it (to the guest / from the guest)
fo_gap_taps() {
	# shellcheck disable=SC2046 # two numbers
	set -- "$1" $(fo_gap 10.9.9.2)
	awk -v t0="$1" -v b="$2" -v a="$3" '
		$2 >= b && !tb { tb = $1; tob = $3; frb = $4 }
		!tb { t[NR] = $1; to[NR] = $3; fr[NR] = $4; n = NR }
		$2 >= a && !ta { ta = $1; toa = $3; fra = $4 }
		END {
			if (!tb || !ta) { print "gap: no samples"; exit }
			for (i = n; i > 0 && t[i] > tb - 1000; i--) ;
			if (i < 1) i = 1
			printf "longest gap from %.1f to %.1f s: the standby tap %d to the guest, %d from it (the second before: %d, %d)",
				(tb - t0) / 1000, (ta - t0) / 1000, toa - tob, fra - frb, tob - to[i], frb - fr[i]
		}' /run/fo.samples
}
# The swap's moments, as they come: each line of the agent's log or of the
# nested console that marks one, with the time (ms, now_ms's clock, read
# without a fork: a fork per line under TCG put the marks 0.1-0.2 s late,
# and the answers counted at them later still), into /run/fo.marks until
# fo_marks_stop; the highest answer at each is fo_mark's, from ping's times
# (tail and the loop through a FIFO, each with its pid: as one pipeline, a
# wait for the loop waited for tail as well, which ends only at its next line,
# and the step hung when no line came after the swap)
fo_marks_start() {
	: >/run/fo.marks
	rm -f /run/fo.fifo && mkfifo /run/fo.fifo
	fo_tailcmd=/usr/bin/tail # coreutils' (build-initramfs.sh): busybox's -F looks once a second
	[ -x "$fo_tailcmd" ] || fo_tailcmd="tail"
	"$fo_tailcmd" -n0 -F /run/agent.log "$fo_con" >/run/fo.fifo 2>/dev/null &
	fo_tail=$!
	while IFS= read -r l; do
		case $l in
		*": claimed VF "* | *"prepared for the guest"* | *"unicast filter of"* | \
			*"out of the guest"* | *"into the guest"* | *"swapped for"* | \
			*"steering over"* | *"NESTED fo "*)
			read -r up _ </proc/uptime
			echo "${up%.*}${up#*.}0 $l" >>/run/fo.marks ;;
		esac
	done </run/fo.fifo &
	fo_marks=$!
}
fo_marks_stop() {
	kill "$fo_tail" "$fo_marks" 2>/dev/null
	wait "$fo_tail" "$fo_marks" 2>/dev/null
	rm -f /run/fo.fifo
}
fo_mark() { # PATTERN: "MS ANSWERED" of its first mark, or nothing
	m=$(grep -F -- "$1" /run/fo.marks | head -n 1 | cut -d' ' -f1)
	[ -z "$m" ] || echo "$m $(fo_answered_at 10.9.9.2 "$m")"
}
# The swap's losses per phase (claim, prepare, steer, unplug, plug, hold, after: mig_lost_in on
# the highest answers at their ends) and when each ended, from FROM (the highest
# answer before) and LAST, and the guest's own marks
fo_phases() { # T0 FROM LAST
	prev_t=$1 prev_a=$2 out=
	for p in "claim|: claimed VF " "prepare|prepared for the guest" "steer|unicast filter of" \
		"unplug|out of the guest" "plug|into the guest" \
		"hold|steering over" "until the guest's new VF has its link|NESTED fo carrier"; do
		m=$(fo_mark "${p#*|}")
		[ -n "$m" ] && [ "${m% *}" -ge "$prev_t" ] || { out="$out ${p%%|*} -;"; continue; }
		set -- "$1" "$2" "$3" "${m% *}" "${m#* }"
		out="$out ${p%%|*} $(mig_lost_in 10.9.9.2 "$prev_a" "$5") in $(secs $(($4 - prev_t))) s;"
		prev_t=$4 prev_a=$5
	done
	out="$out after $(mig_lost_in 10.9.9.2 "$prev_a" "$3")"
	guest=$(grep -F "NESTED fo " /run/fo.marks | awk -v t0="$1" '{ printf "%s%s %.1f s", sep, $4 " " $5, ($1 - t0) / 1000; sep = ", " }')
	echo "lost per phase:$out; guest: ${guest:-no mark}"
}
fo_wait_answer() { # DEST SECONDS: 0 once DEST answers a ping
	for _ in $(seq "$2"); do
		$ip netns exec peer /usr/bin/ping -n -c 1 -W 1 "$1" >/dev/null 2>&1 && return 0
	done
	return 1
}

fo_guest_up() {
	fo_domain >/run/fo.xml
	code=$(curl -sS --max-time 60 --unix-socket "$sock" -X POST -H 'Content-Type: application/xml' \
		--data-binary @/run/fo.xml -D /run/fo.h -o /run/fo.out -w '%{http_code}' \
		"http://x/v1/domain-xml" 2>&1)
	if [ "$code" != 200 ] || ! grep -q "teaming" /run/fo.out; then
		echo "POST /v1/domain-xml: $code $(head -c 300 /run/fo.out)"
		return 1
	fi
	rm -f "$fo_con"
	lv create /run/fo.out >/run/lv.out 2>&1 ||
		{ echo "virsh create: $(tail -n 3 /run/lv.out | tr '\n' ' ')"; return 1; }
	for _ in $(seq 900); do
		grep -q 'NESTED READY' "$fo_con" 2>/dev/null && break
		sleep 1
	done
	grep -q 'NESTED READY' "$fo_con" 2>/dev/null ||
		{ echo "no READY on the nested console: $(tail -c 300 "$fo_con" 2>/dev/null | tr '\n' ' ')"; return 1; }
	fo_wait_answer 10.9.9.2 120 && fo_wait_answer 10.9.8.2 60 ||
		{ echo "no answer from 10.9.9.2 or 10.9.8.2: $(tr '\n' ' ' <"$fo_con" | cut -c1-300)"; return 1; }
}

# The allocation of the VF the domain holds with MAC (its live XML says which VF)
fo_alloc_of() {
	lv dumpxml fo >/run/fo.live 2>/dev/null
	x="//interface[@type='hostdev'][mac/@address='$1']/source/address"
	pci=$(printf '%04x:%02x:%02x.%x' "$(xmllint --xpath "string($x/@domain)" /run/fo.live)" \
		"$(xmllint --xpath "string($x/@bus)" /run/fo.live)" \
		"$(xmllint --xpath "string($x/@slot)" /run/fo.live)" \
		"$(xmllint --xpath "string($x/@function)" /run/fo.live)" 2>/dev/null)
	api show "$pci" | jq -r '.allocation // empty'
}

# A swap of the failover NIC's VF under pings: NAME [steer]. With "steer", the lab
# puts the guest's MAC in the PF's own unicast filter before the swap and takes
# it out after (bridge fdb add MAC dev PF self): the wire's frames for the
# guest then reach the standby through the PF and br-fo while the old VF is
# still on its way out, which under nested TCG takes seconds (its MAC stays
# the VF's on the PF until the domain has let it go, and igb delivers to it).
# The agent now does the same itself (agent/vm/standby-steer.c; it finds the
# entry there, EEXIST, and takes it out after its hold): the hand-made step
# stays as the reference the plain swap's figure is held against.
fo_swap_step() {
	steer=${2:-} fig=failover-swap-lost
	[ "$steer" = steer ] && fig=failover-swap-steered-lost
	case $1 in *again*) fig=failover-swap-again-lost ;; esac
	id=$(fo_alloc_of "$fo_mac")
	old=$(vf_of "$id")
	fo_ping_start 10.9.9.2
	sleep 3
	from=$(fo_answered 10.9.9.2)
	[ "$steer" = steer ] && /usr/bin/bridge fdb add "$fo_mac" dev "$igb_net" self permanent
	fo_marks_start
	fo_samples_start
	t0=$(now_ms)
	vfctl swap "$id" --pf "$igb" >/run/swap.out 2>&1
	rc=$?
	t1=$(now_ms)
	[ "$steer" = steer ] && { /usr/bin/bridge fdb del "$fo_mac" dev "$igb_net" self 2>/dev/null || :; }
	new=$(vf_of "$id")
	# the agent's steering outlives the request (libvirt.steer_hold), and the guest
	# brings its new VF up in its own time: both waited for, 60 s at most
	until [ "$(now_ms)" -gt $((t1 + 60000)) ]; do
		{ [ "$steer" = steer ] || [ -n "$(fo_mark "steering over")" ]; } &&
			[ -n "$(fo_mark "NESTED fo carrier")" ] && break
		sleep 0.5
	done
	sleep 3
	fo_ping_stop
	fo_marks_stop
	fo_samples_stop
	# shellcheck disable=SC2046 # four numbers
	set -- "$1" $(fo_lost 10.9.9.2 "$from")
	fo_swap_lost="$fo_swap_lost $2"
	line="lost $2 of $5 answers ($3 before the swap, longest gap $4 × 20 ms); swap $old → $new in $(secs $((t1 - t0))) s; $(fo_phases "$t0" "$from" "$5"); $(fo_gap_taps "$t0")"
	lv dumpxml fo >/run/fo.live 2>/dev/null
	if [ $rc = 0 ] && [ "$new" != "$old" ] && [ -n "$new" ] && [ "$(drv_of "$new")" = vfio-pci ] &&
		[ "$(api show "$old" | jq -r .state)" = free ] && [ "$5" -gt "$from" ] &&
		[ "$(xmllint --xpath "count(//interface[@type='hostdev'][mac/@address='$fo_mac'])" /run/fo.live)" = 1 ] &&
		[ "$(xmllint --xpath "count(//interface[teaming/@type='persistent'])" /run/fo.live)" = 1 ]; then
		pass "failover: $1: $line"
	else
		fail "failover: $1" "$line; rc $rc: $(tr '\n' ' ' </run/swap.out | cut -c1-300); old $(api show "$old" | jq -r .state); agent: $(tail -n 4 /run/agent.log | tr '\n' ' ' | cut -c1-400); guest: $(tail -n 3 "$fo_con" | tr '\n' ' ')"
	fi
	echo "LAB FIGURE $fig $2"
}

# The control: what a swap's claim phase does, with no move. A swap's claim (its first phase,
# to "claimed VF") touches no link, PF or domain: a new vfctl process, a request, rows written
# with their syncs. Three such claims (vfctl alloc, one VF of the pool each; as many as there
# are free VFs, one at least) run here beside the pings, one after the other, and are released
# after the count: the answers lost meanwhile are what that work costs the nested guest (it
# shares the lab guest's two vCPUs under TCG), not the network.
fo_control_step() {
	fo_ping_start 10.9.9.2
	sleep 3
	from=$(fo_answered 10.9.9.2)
	t0=$(now_ms) ids=
	for _ in 1 2 3; do
		ids="$ids $(api alloc igb --owner vm:fo-control | jq -r '.id // empty')"
	done
	t1=$(now_ms) a1=$(fo_answered 10.9.9.2)
	sleep 3
	fo_ping_stop
	for id in $ids; do vfctl release "$id" >/dev/null 2>&1; done
	# shellcheck disable=SC2046 # four numbers
	set -- $(fo_lost 10.9.9.2 "$from")
	n=$(echo "$ids" | wc -w)
	line="lost $1 of $4 answers ($2 before, longest gap $3 × 20 ms): $(mig_lost_in 10.9.9.2 "$from" "$a1") while $n claims ran one after the other ($(secs $((t1 - t0))) s), $(mig_lost_in 10.9.9.2 "$a1" "$4") in the 3 s after"
	if [ "$n" -ge 1 ] && [ "$4" -gt "$from" ]; then
		pass "failover: control, no move: $line"
	else
		fail "failover: control, no move" "$line; $n of 3 claims made"
	fi
	echo "LAB FIGURE failover-control-lost $1"
}

# Nova's way on the NIC without standby: the old VF unplugged and given back, a new one
# claimed with the same MAC (the agent refuses a MAC another allocation holds) and plugged;
# answers waited for up to 60 s.
fo_replug_step() {
	id=$(fo_alloc_of "$plain_mac")
	old=$(vf_of "$id")
	fo_ping_start 10.9.8.2
	sleep 3
	from=$(fo_answered 10.9.8.2)
	t0=$(now_ms)
	vfctl release "$id" >/run/replug.out 2>&1
	t1=$(now_ms)
	api alloc igb --owner vm:fo --mac "$plain_mac" --domain fo --live >/run/alloc.out
	rc=$?
	cat /run/alloc.out >>/run/replug.out
	nid=$(jq -r .id </run/alloc.out)
	t2=$(now_ms)
	new=$(vf_of "$nid")
	at=$(fo_answered 10.9.8.2)
	for _ in $(seq 600); do
		[ "$(fo_answered 10.9.8.2)" -gt "$at" ] && break
		sleep 0.1
	done
	t3=$(now_ms)
	sleep 3
	fo_ping_stop
	# shellcheck disable=SC2046 # four numbers
	set -- $(fo_lost 10.9.8.2 "$from")
	fo_lost_plain=$1
	line="lost $1 of $4 answers ($2 before the move, longest gap $3 × 20 ms); $old unplugged and released in $(secs $((t1 - t0))) s, $new plugged in $(secs $((t2 - t1))) s, answers again $(secs $((t3 - t2))) s later"
	# (the new VF may be the old one again, reset and free in between)
	if [ $rc = 0 ] && [ -n "$new" ] && [ "$new" != null ] && grep -q "$id released" /run/replug.out &&
		[ "$(api show "$new" | jq -r .state)" = attached ] && [ "$4" -gt "$from" ]; then
		pass "failover: unplug and replug without standby: $line"
	else
		fail "failover: unplug and replug without standby" "$line; rc $rc: $(tr '\n' ' ' </run/replug.out | cut -c1-300); agent: $(tail -n 4 /run/agent.log | tr '\n' ' ' | cut -c1-400); guest: $(tail -n 3 "$fo_con" | tr '\n' ' ')"
	fi
	echo "LAB FIGURE failover-replug-lost $1"
}

failover_steps() {
	case $(cat /proc/cmdline) in
	*vfagent_lab_failover=1* | *vfagent_lab_failover=only*) ;;
	*) skip_fo_steps "a tier of its own: VFAGENT_LAB_FAILOVER=1 (or =only) runs it"; return 0 ;;
	esac
	lv uri >/dev/null 2>&1 || { skip_fo_steps "no libvirtd (the nested domains' steps say why)"; return 0; }
	[ -x /usr/bin/ping ] || { skip_fo_steps "no iputils ping in the guest (none on the lab's host)"; return 0; }
	[ -f /lab/nested/vmlinuz ] || { skip_fo_steps "no nested kernel in the guest"; return 0; }
	if ! fo_net; then skip_fo_steps "$(cat /run/fo.why)"; return 0; fi
	drain_guest_start # (tests/lab/drain.sh: with VFAGENT_LAB_DRAIN=1, a second guest boots beside)
	t0=$(now_ms)
	if ! why=$(fo_guest_up); then
		fail "failover: nested guest up" "$why"
		lv destroy fo >/dev/null 2>&1
		return 0
	fi
	t1=$(now_ms)
	pass "failover: nested guest up: booted and answering on both NICs in $(secs $((t1 - t0))) s ($(grep NESTED "$fo_con" | tr -d '\r' | tr '\n' ';' | cut -c1-300))"
	fo_control_step
	fo_swap_lost=
	fo_swap_step "swap with standby"
	fo_swap_step "swap with standby, the guest's MAC on the PF first" steer
	# the first swap moves the VF the guest booted with, whose unplug takes the guest seconds
	# under nested TCG (bench/RESULTS.md, run 16): the agent's swap again, on a hotplugged one
	fo_swap_step "swap with standby, again (a VF the guest took by hotplug)"
	fo_replug_step
	info failover "lost answers at 20 ms:$fo_swap_lost with the standby (vfctl swap; then with the MAC steered first; then vfctl swap again), $fo_lost_plain without (unplug, replug)"
	drain_steps # (tests/lab/drain.sh: with VFAGENT_LAB_DRAIN=1, vfctl drain with two guests)
	migrate_steps # (tests/lab/migrate.sh: the guest moves to a second libvirtd)
	lv destroy fo >/dev/null 2>&1
}
