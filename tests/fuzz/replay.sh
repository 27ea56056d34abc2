#!/bin/sh
# Replays each harness's seed corpus and kept crash inputs (tests/fuzz/NAME/)
# through the harness built with replay.c: a crash, an abort on a broken
# invariant, or under ASan a leak or overflow fails make check.
set -eu
b=${top_builddir:-.}
src=${top_srcdir:-.}
for h in pci-addr config netlink domain-xml domain-xml-libvirt mac sysfs api; do
	"$b/tests/fuzz/replay-$h" "$src/tests/fuzz/$h" || { echo "FAIL: replay of tests/fuzz/$h"; exit 1; }
done
