# shellcheck shell=sh
# The lab's live migration (issue 39), sourced by scenario.sh and run by
# failover_steps on the failover tier's nested guest (one boot): a real
# `virsh migrate --live` of that guest, with its failover NIC, to a second
# libvirtd in the same lab guest, while the peer pings it every 20 ms.
# libvirt refuses a migration to "the same host" only by the host UUID in the
# migration cookie (qemuMigrationCookieXMLParse; the hostname is not compared
# any more), so the second libvirtd has a host_uuid of its own in its
# libvirtd.conf, and its own /run/libvirt and /var/lib/libvirt in a mount
# namespace (the domains' status and monitor sockets; its client socket is
# /run/lv2/libvirt-sock, outside). The second "host" has an agent of its own
# (own config, state dir and socket) whose pool is one free VF of the igb PF;
# the first agent's pool leaves that VF out. Both hosts' standbys are taps on
# br-fo, and the destination's VF is on the same PF, so the peer reaches the
# guest the same way on both sides (a VF's MAC is set on the PF only when it
# is plugged, after the source's VF has let the guest's MAC go).
# The flow is the OpenNebula migrate action's (hooks/one/vmm/kvm-sriov/migrate)
# through REST: the destination claims first, the source unplugs its VF with
# keep_standby (the guest runs on the virtio standby), virsh migrate --live,
# the destination plugs its VF into the running guest, the source's VF goes
# back. The NIC without standby cannot move live: libvirt refuses a domain
# with a PCI hostdev that is not the transient half of a teaming pair
# (qemuMigrationSrcIsAllowedHostdev); the step shows its refusal first, then
# gives that VF back before the migration.
# shellcheck disable=SC2154 # ip, igb, agent, sock, api, lv, now_ms, secs, fo_* are the scenario's

mig_step="failover: live migration to a second libvirtd"
mig_uri="qemu+unix:///system?socket=/run/lv2/libvirt-sock"
mig_sock=/run/vfagent-b.sock
lv2() { timeout 240 virsh -q -c "$mig_uri" "$@"; }
rest() { # SOCKET METHOD PATH [BODY]: the body, then the HTTP code on the last line
	curl -sS --max-time 180 --unix-socket "$1" -X "$2" -H 'Content-Type: application/json' \
		--data-binary "${4:-}" -w '\n%{http_code}' "http://x$3" 2>&1
}
rest_ok() { printf '%s' "$1" | tail -n 1 | grep -q '^2[0-9][0-9]$'; } # 200, 201, 202
rest_body() { printf '%s' "$1" | sed '$d'; }

# Each function below runs in the scenario's shell (it sets what the next
# needs), and says why it failed in /run/mig.why.
mig_why() { echo "$*" >/run/mig.why; }

# The second libvirtd: its own host UUID, state and sockets.
mig_libvirtd() {
	mkdir -p /run/lv2
	printf '%s\n' 'unix_sock_dir = "/run/lv2"' 'auth_unix_rw = "none"' 'auth_unix_ro = "none"' \
		'host_uuid = "39b1d2c4-7e5f-4a39-8c39-5d1e0c628d1b"' \
		'log_outputs = "3:file:/run/lv2/libvirtd.log"' >/run/lv2/libvirtd.conf
	# shellcheck disable=SC2016 # the inner shell's
	unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /run/libvirt &&
		mount -t tmpfs tmpfs /var/lib/libvirt && mkdir -p /var/lib/libvirt/qemu &&
		exec libvirtd --config /run/lv2/libvirtd.conf --pid-file /run/lv2/libvirtd.pid' \
		>/run/lv2/out 2>&1 &
	mig_lvd=$!
	for _ in $(seq 120); do
		lv2 uri >/dev/null 2>&1 && return 0
		kill -0 "$mig_lvd" 2>/dev/null || break
		sleep 0.5
	done
	mig_why "the second libvirtd did not answer: $(cat /run/lv2/out /run/lv2/libvirtd.log 2>/dev/null |
		grep -v '^$' | tail -n 4 | tr '\n' ' ' | cut -c1-300)"
	return 1
}

# The second agent, on VF $1 alone and the second libvirtd; the first agent
# again without that VF in its pool.
mig_agents() {
	mkdir -p /var/lib/vfagent-b
	jq -n --arg vf "$1" --arg uri "$mig_uri" '{pools: [{name: "igb", selector: {pci_addresses: [$vf]}}],
		libvirt: {uri: $uri, managed: false, detach_wait: 60}}' >/etc/vfagent/vfagent-b.json
	vfagentd --config /etc/vfagent/vfagent-b.json --listen "unix:$mig_sock" \
		--state-dir /var/lib/vfagent-b >>/run/agent-b.log 2>&1 &
	mig_agent=$!
	keep=$(api show "$igb" | jq -c --arg vf "$1" '[.vfs[].pci | select(. != $vf)]')
	jq --argjson keep "$keep" '.pools |= map(if .name == "igb" then .selector.pci_addresses = $keep
		else . end)' /etc/vfagent/vfagent.json >/run/cfg && mv /run/cfg /etc/vfagent/vfagent.json
	kill "$agent"
	wait "$agent" 2>/dev/null
	start_agent
	for _ in $(seq 50); do
		VFAGENT_SOCKET=$mig_sock vfctl pools >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	mig_why "the second agent did not answer: $(tail -n 3 /run/agent-b.log | tr '\n' ' ')"
	return 1
}

# The domain's XML for the destination: no tap names (the source's taps are
# still there, in the same network namespace), its console in another file.
mig_dest_xml() {
	lv dumpxml --migratable fo | sed -e "/<target dev=/d" -e "s|$fo_con|/run/fo2.console|" >/run/fo.dest.xml
}

# The refusal of a migration with a VF that is not half of a teaming pair, the
# NIC without standby's VF then given back
mig_plain_away() {
	mig_dest_xml
	if lv migrate --live --xml /run/fo.dest.xml fo "$mig_uri" tcp://127.0.0.1:49239 >/run/mig.out 2>&1; then
		mig_why "migrated with the NIC without standby's VF in"
		return 1
	fi
	info "$mig_step" "with a VF without standby: $(tr '\n' ' ' </run/mig.out | cut -c1-200)"
	pid=$(fo_alloc_of "$plain_mac")
	[ -z "$pid" ] || vfctl release "$pid" >/run/mig.out 2>&1 ||
		{ mig_why "release of the NIC without standby: $(cat /run/mig.out)"; return 1; }
}

# DEST LO HI: the sequence numbers above LO up to HI not answered (a phase's losses, as far
# as the answers known at its two ends tell)
mig_lost_in() {
	sed -n 's/.*icmp_seq=\([0-9]*\).*/\1/p' "/run/ping.$1" | sort -n -u |
		awk -v lo="$2" -v hi="$3" '$1 > lo && $1 <= hi { n++ } END { print hi - lo - n }'
}

# The migration under pings: claim there, unplug here, migrate, plug there, release here
mig_move() {
	id=$(fo_alloc_of "$fo_mac")
	old=$(vf_of "$id")
	body=$(api show "$id" | jq -c --arg mac "$fo_mac" '{pool: "igb", count: 1, owner: .owner,
		mac: $mac, failover: .settings.failover}')
	fo_ping_start 10.9.9.2
	sleep 3
	from=$(fo_answered 10.9.9.2)
	fo_samples_start
	t0=$(now_ms)
	out=$(rest "$mig_sock" POST /v1/allocations "$body")
	rest_ok "$out" || { mig_why "claim there: $out"; return 1; }
	nid=$(rest_body "$out" | jq -r .id)
	new=$(rest_body "$out" | jq -r '.vfs[0].pci')
	t1=$(now_ms) a1=$(fo_answered 10.9.9.2)
	out=$(rest "$sock" POST "/v1/allocations/$id/detach" '{"keep_standby": true}')
	rest_ok "$out" || { mig_why "detach here with keep_standby: $out"; return 1; }
	t2=$(now_ms) a2=$(fo_answered 10.9.9.2)
	mig_dest_xml
	lv migrate --live --xml /run/fo.dest.xml fo "$mig_uri" tcp://127.0.0.1:49239 >/run/mig.out 2>&1 ||
		{ mig_why "virsh migrate --live: $(tr '\n' ' ' </run/mig.out)"; return 1; }
	t3=$(now_ms) a3=$(fo_answered 10.9.9.2)
	out=$(rest "$mig_sock" POST "/v1/allocations/$nid/attach" '{"domain": "fo", "live": true}')
	rest_ok "$out" || { mig_why "plug there: $out"; return 1; }
	t4=$(now_ms) a4=$(fo_answered 10.9.9.2)
	out=$(rest "$sock" DELETE "/v1/allocations/$id")
	t5=$(now_ms)
	at=$(fo_answered 10.9.9.2)
	for _ in $(seq 300); do
		[ "$(fo_answered 10.9.9.2)" -gt "$at" ] && break
		sleep 0.1
	done
	sleep 3
	fo_ping_stop
	fo_samples_stop
	# shellcheck disable=SC2046 # four numbers
	set -- $(fo_lost 10.9.9.2 "$from")
	mig_lost=$1
	job=$(lv2 domjobinfo fo --completed 2>/dev/null | awk -F': *' '/^(Time elapsed|Total downtime)/ {
		gsub(/ +/, " ", $2); printf "%s%s %s", sep, tolower($1), $2; sep = ", " }')
	phases="lost while claiming $(mig_lost_in 10.9.9.2 "$from" "$a1")"
	phases="$phases, unplugging $(mig_lost_in 10.9.9.2 "$a1" "$a2")"
	phases="$phases, migrating $(mig_lost_in 10.9.9.2 "$a2" "$a3")"
	phases="$phases, plugging $(mig_lost_in 10.9.9.2 "$a3" "$a4"), after $(mig_lost_in 10.9.9.2 "$a4" "$4")"
	mig_line="lost $1 of $4 answers ($2 before, longest gap $3 × 20 ms; $phases);"
	mig_line="$mig_line $new claimed there in $(secs $((t1 - t0))) s,"
	mig_line="$mig_line $old unplugged here (standby kept) in $(secs $((t2 - t1))) s,"
	mig_line="$mig_line migrated in $(secs $((t3 - t2))) s (${job:-no job info}),"
	mig_line="$mig_line $new plugged there in $(secs $((t4 - t3))) s, $old given back in $(secs $((t5 - t4))) s"
	mig_line="$mig_line; the plug there from $(secs $((t3 - t0))) to $(secs $((t4 - t0))) s, $(fo_gap_taps "$t0")"
	[ "$4" -gt "$from" ] && rest_ok "$out" || { mig_why "$mig_line; after the move: release here $out"; return 1; }
}

# The guest is there, with its standby and the new VF paired, and not here
mig_check() {
	lv2 dumpxml fo >/run/fo2.live 2>/dev/null
	x="//interface[@type='hostdev'][mac/@address='$fo_mac']"
	[ "$(lv2 domstate fo 2>/dev/null)" = running ] && ! lv domstate fo >/dev/null 2>&1 &&
		[ "$(xmllint --xpath "count(${x}[teaming/@type='transient'])" /run/fo2.live 2>/dev/null)" = 1 ] &&
		[ "$(xmllint --xpath "count(//interface[teaming/@type='persistent'])" /run/fo2.live 2>/dev/null)" = 1 ] &&
		[ "$(drv_of "$new")" = vfio-pci ] && [ "$(api show "$old" | jq -r .state)" = free ] &&
		[ "$(VFAGENT_SOCKET=$mig_sock vfctl -o json show "$new" | jq -r .state)" = attached ]
}

mig_cleanup() {
	lv2 destroy fo >/dev/null 2>&1
	[ -z "${nid:-}" ] || rest "$mig_sock" DELETE "/v1/allocations/$nid" >/dev/null
	[ -z "${mig_agent:-}" ] || { kill "$mig_agent"; wait "$mig_agent" 2>/dev/null; }
	[ -z "${mig_lvd:-}" ] || { kill "$mig_lvd"; wait "$mig_lvd" 2>/dev/null; }
}

migrate_steps() {
	nid="" mig_agent="" mig_lvd="" mig_lost="" fo_ping="" fo_samples=""
	$ip link set lo up # the migration stream: tcp://127.0.0.1
	free=$(api show "$igb" | jq -r '[.vfs[] | select(.state == "free") | .pci] | last // empty')
	if [ -z "$free" ]; then
		fail "$mig_step" "no free VF of $igb for the second agent: $(api show "$igb" | jq -c '[.vfs[].state]')"
	elif ! mig_libvirtd || ! mig_agents "$free" || ! mig_plain_away; then
		fail "$mig_step" "$(cat /run/mig.why)"
	elif ! mig_move; then
		[ -z "$fo_ping" ] || kill -INT "$fo_ping" 2>/dev/null
		[ -z "$fo_samples" ] || fo_samples_stop
		fail "$mig_step" "$(cat /run/mig.why); agent: $(tail -n 3 /run/agent.log | tr '\n' ' ' | cut -c1-300); there: $(tail -n 3 /run/agent-b.log | tr '\n' ' ' | cut -c1-300); libvirtd there: $(tail -n 2 /run/lv2/libvirtd.log | tr '\n' ' ' | cut -c1-200)"
	elif ! mig_check; then
		fail "$mig_step" "$mig_line; there: $(lv2 domstate fo 2>&1), here: $(lv domstate fo 2>&1); $(grep -c teaming /run/fo2.live) teaming lines; new $new $(drv_of "$new"); old $old $(api show "$old" | jq -r .state)"
	else
		pass "$mig_step: $mig_line"
	fi
	echo "LAB FIGURE failover-migrate-lost ${mig_lost:-none}"
	mig_cleanup
}
