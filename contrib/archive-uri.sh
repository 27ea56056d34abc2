#!/bin/sh
# Prints the URI of the Debian bookworm archive that the system's apt sources
# name (deb822 files under /etc/apt/sources.list.d, or a one-line
# /etc/apt/sources.list), nothing when none does. The lab and the packages'
# test fetch from the machine's own mirror this way, never from a name of ours.
for f in /etc/apt/sources.list.d/*.sources; do
	[ -r "$f" ] || continue
	awk '/^URIs:/ {u = $2} /^Suites:/ && / bookworm( |$)/ && u {print u; exit}' "$f"
done | head -n 1
if [ -r /etc/apt/sources.list ]; then
	awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list
fi
