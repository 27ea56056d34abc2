#!/bin/sh
# bench/sim-dir.sh NAME: a new directory for a simulated host's sysfs, in
# memory (/dev/shm) when there is a tmpfs there, as the kernel's sysfs is;
# else under /tmp. On a disk, each file the agent rewrites there costs the
# disk's work (on a filesystem mounted with discard, a synchronous discard
# per truncated file), which no real sysfs write pays. The ledger's state
# directory stays on the disk: its fsyncs are part of what is measured.
set -eu
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	mktemp -d "/dev/shm/vfagent-bench-$1-XXXXXX"
else
	mktemp -d "/tmp/vfagent-bench-$1-sim-XXXXXX"
fi
