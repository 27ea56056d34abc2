#!/bin/sh
# The full disk of tests/ledger-full.sh and tests/claim-full-disk.sh, sourced after
# tests/api-lib.sh: the agent's ledger on a 2 MiB tmpfs at $state, filled the moment the ledger
# grows. The filler shares one CPU with the agent, whose threads then run only when the filler
# waits (SCHED_IDLE), so the disk fills between the write that grew the ledger and the next one.
# shellcheck shell=sh disable=SC2154 # tmp and agent_pid: tests/api-lib.sh's
state=$tmp/state filler='' cpus=''
# every thread of the agent on CPUs $1, scheduled as chrt $2 says (threads come and go)
agent_sched() {
	for task in "/proc/$agent_pid/task/"*; do
		taskset -c -p "$1" "${task##*/}" >/dev/null 2>&1 && chrt "$2" -p 0 "${task##*/}" 2>/dev/null || true
	done
}
stop_filler() { # the filler gone, the agent back on its CPUs and its policy
	[ -z "$filler" ] || { kill "$filler" 2>/dev/null; wait "$filler" 2>/dev/null || true; }
	filler=
	[ -z "$agent_pid" ] || [ -z "$cpus" ] || agent_sched "$cpus" -o
}
# the agent started with the config $1 and its ledger on the small tmpfs
start_agent_on_small_disk() {
	mkdir -p "$state"
	mount -t tmpfs -o size=2m tmpfs "$state"
	start_agent --config "$1" --state-dir "$state"
	cpus=$(taskset -c -p "$agent_pid" | sed 's/.*: //')
}
# from now, the disk fills the moment the ledger grows; the agent runs only when the filler waits
fill_on_next_write() {
	wal=$(stat -c %s "$state/ledger.db-wal")
	taskset -c 0 sh -c "while [ \$(stat -c %s $state/ledger.db-wal) = $wal ]; do :; done
		dd if=/dev/zero of=$state/filler bs=4k 2>/dev/null" &
	filler=$!
	agent_sched 0 -i
}
# the filler done (the disk full, or not), the agent scheduled as before
filled() {
	wait "$filler" || true
	filler=
	stop_filler
}
