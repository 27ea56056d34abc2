#!/bin/sh
# Each room of the source tree includes only what its README's "May include:" line allows
# (a folder: any header directly in it; a path: that header). "FILE may include:" lines
# allow more for one file. A room's own files may include each other by bare name.
set -u
top=${top_srcdir:-.}
cd "$top" || exit 1
bad=0
for readme in libvfpool/README api/README agent/README agent/*/README hooks/cni/README; do
	room=${readme%/README}
	allowed=$(sed -n 's/^May include: //p' "$readme")
	[ -n "$allowed" ] || { echo "FAIL: $readme has no 'May include:' line"; bad=1; continue; }
	for f in "$room"/*.c "$room"/*.h; do
		[ -f "$f" ] || continue
		extra=$(sed -n "s/^$(basename "$f") may include: //p" "$readme")
		incs=$(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
		for inc in $incs; do
			[ "$inc" = config.h ] && continue
			case $inc in */*) path=$inc ;; *) path=$room/$inc ;; esac
			[ -f "$path" ] || { echo "FAIL: $f includes $inc, which is not in the tree"; bad=1; continue; }
			dir=$(dirname "$path")
			ok=0
			for a in $allowed $extra; do
				[ "$a" = "$dir" ] || [ "$a" = "$path" ] && ok=1
			done
			[ $ok = 1 ] || { echo "FAIL: $f includes $path; $readme allows: $allowed $extra"; bad=1; }
		done
	done
done
# One owner of the ledger's lock in the agent: agent/ledger.c alone takes it (its guard is
# taken there too); the REST layer reads through its functions and never holds the guard.
lockers=$(grep -l 'pthread_mutex_lock([^)]*ledger\|ledger_guard_take\|ledger->lock' \
	agent/*.c agent/*/*.c api/*.c 2>/dev/null | grep -vx agent/ledger.c)
for f in $lockers; do
	echo "FAIL: $f takes the ledger's lock; only agent/ledger.c does (LEDGER_GUARD, or its functions)"
	bad=1
done
guards=$(grep -l 'LEDGER_GUARD' api/*.c api/*.h 2>/dev/null)
for f in $guards; do
	echo "FAIL: $f holds the ledger's guard; api/ reads snapshots through agent/ledger.h"
	bad=1
done
# api/ reaches the agent through functions (agent/agent-facts.h and the operations' headers),
# never into struct agent: its names for it are a and ...->agent.
fields=$(grep -n 'agent->\|[^a-z_0-9.>]a->' api/*.c api/*.h 2>/dev/null)
[ -z "$fields" ] || { printf 'FAIL: api/ reaches into struct agent:\n%s\n' "$fields"; bad=1; }
# No include cycle between modules (x.c and x.h are one module): a room the agent calls is
# handed to it (agent/rooms.c), a file that keeps part of its state includes agent-state.h.
cycles=$(for f in agent/*.[ch] agent/*/*.[ch] api/*.[ch] libvfpool/*.[ch] hooks/cni/*.[ch]; do
	[ -f "$f" ] || continue
	incs=$(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	for inc in $incs; do
		[ "$inc" = config.h ] && continue
		case $inc in */*) path=$inc ;; *) path=$(dirname "$f")/$inc ;; esac
		[ "${f%.*}" = "${path%.*}" ] || echo "${f%.*} ${path%.*}"
	done
done | sort -u | awk -f tests/include-cycles.awk | sort)
for m in $cycles; do
	echo "FAIL: $m is in an include cycle"
	bad=1
done
# Every source folder has its README, so a new room cannot slip past the rules.
for d in $(find agent api libvfpool hooks -name '*.[ch]' -exec dirname {} \; | sort -u); do
	[ -f "$d/README" ] || { echo "FAIL: $d has source files and no README with its rules"; bad=1; }
done
[ $bad = 0 ] || exit 1
echo "layout: every include is one its room allows"
