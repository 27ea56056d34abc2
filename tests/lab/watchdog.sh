#!/bin/sh
# The lab guest's watchdog: at DEADLINE seconds of uptime (run.sh sets it a
# minute before its own timeout kills QEMU), what is running and waiting is
# printed to the console as "LAB STUCK" lines, so that a step that hangs says
# where: the process tree with each process's kernel wait, every thread of
# vfagentd with its own, the agent's log and the failover tier's files' ends.
deadline=$1
while [ "$(cut -d. -f1 /proc/uptime)" -lt "$deadline" ]; do
	sleep 5
done
say() { sed 's/^/LAB STUCK /'; }
echo "at $(cut -d' ' -f1 /proc/uptime)s, a step still running; processes (pid ppid wchan args):" | say
for p in /proc/[0-9]*; do
	[ -r "$p/cmdline" ] || continue
	args=$(tr '\0\n' '  ' <"$p/cmdline" | cut -c1-160)
	[ -n "$args" ] || continue # kernel threads
	printf '%s %s %s %s\n' "${p#/proc/}" "$(awk '/^PPid:/ { print $2 }' "$p/status")" \
		"$(cat "$p/wchan" 2>/dev/null)" "$args"
done | sort -n | say
for p in /proc/[0-9]*; do
	[ "$(cat "$p/comm" 2>/dev/null)" = vfagentd ] || continue
	p=${p#/proc/}
	echo "vfagentd $p's threads (tid comm wchan):" | say
	for t in /proc/"$p"/task/*; do
		printf '%s %s %s\n' "${t##*/}" "$(cat "$t/comm")" "$(cat "$t/wchan" 2>/dev/null)"
	done | say
done
for f in /run/agent.log /run/fo.marks /run/fo.console /run/dr.console /run/swap.out; do
	[ -s "$f" ] || continue
	echo "the end of $f:" | say
	tail -n 25 "$f" | tr -d '\r' | cut -c1-300 | say
done
echo "done" | say
