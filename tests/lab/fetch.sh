#!/bin/sh
# Fetches what the QEMU SR-IOV lab needs into $VFAGENT_LAB_CACHE (default
# /var/cache/vfagent-lab), with apt-get download and dpkg-deb -x: nothing is
# installed on the host. From bookworm: Debian's kernel, busybox-static, and
# udev with the systemd library it links. From bookworm-backports: QEMU 10
# (it has the igb NIC, an 82576 PF with 7 VFs) and its SeaBIOS, through a
# private apt state whose one sources line is built from the archive URI the
# system's own apt configuration already uses. A second run reuses the cache.
# Exit 77 when the archive cannot be reached.
set -eu
cache=${VFAGENT_LAB_CACHE:-/var/cache/vfagent-lab}
[ -f "$cache/fetched" ] && exit 0
mkdir -p "$cache/dl" "$cache/bpo/lists/partial" "$cache/bpo/cache/archives/partial"

uri=$(sh "$(dirname "$0")/../../contrib/archive-uri.sh" | head -n 1) # the bookworm archive of the system's apt sources
[ -n "$uri" ] || { echo "lab: no bookworm archive in the system's apt sources"; exit 77; }

unreachable() { echo "lab: the package archive is unreachable ($1): skipped"; exit 77; }
apt-get update -qq >/dev/null 2>&1 || unreachable "apt-get update"
kernel=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -n 1)
[ -n "$kernel" ] || unreachable "no linux-image-amd64"
(cd "$cache/dl" && apt-get download -qq "$kernel" busybox-static udev >/dev/null 2>&1) ||
	unreachable "apt-get download $kernel"

b=$cache/bpo
printf 'deb %s bookworm-backports main\n' "$uri" >"$b/sources.list"
set -- -o "Dir::Etc::SourceList=$b/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
	-o "Dir::State::Lists=$b/lists" -o "Dir::Cache=$b/cache"
apt-get "$@" update -qq >/dev/null 2>&1 || unreachable "bookworm-backports"
(cd "$b" && apt-get "$@" download -qq qemu-system-x86/bookworm-backports \
	qemu-system-data/bookworm-backports seabios/bookworm-backports >/dev/null 2>&1) ||
	unreachable "QEMU from bookworm-backports"
rm -rf "$cache/root" "$b/root"
for f in "$cache"/dl/*.deb; do dpkg-deb -x "$f" "$cache/root"; done
for f in "$b"/*.deb; do dpkg-deb -x "$f" "$b/root"; done
touch "$cache/fetched"
