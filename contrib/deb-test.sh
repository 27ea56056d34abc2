#!/bin/sh
# The packages as an operator meets them: a clean Debian 12 root (mmdebstrap,
# from the archive this machine's apt already uses), booted with
# systemd-nspawn; the .debs of DEBDIR (contrib/deb-build.sh) installed with
# apt on the running system; then the socket and service active, the group
# made by the package, a non-root member of it claiming and releasing a VF
# of a simulated host (set by a drop-in), vfctl doctor, a reload taking a
# config change, a kill -9 restarted, the autopkgtests (debian/tests), a
# missing libvirt, a fatal config stopping the unit, and apt purge leaving
# nothing of ours but the system group; with the figures (exposure, boot to
# ready, restarts, purge leftovers). The root is cached as a tarball in
# /var/cache/vfagent-deb (VFAGENT_DEB_CACHE), made again when the packages'
# run-time dependencies change. Exit 77 when it cannot run here, saying why.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
debs=$(cd "${1:-$top/build-deb}" && pwd)
cache=${VFAGENT_DEB_CACHE:-/var/cache/vfagent-deb}
skip() { echo "deb-test: SKIP: $*"; exit 77; }
fail() { echo "deb-test: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root"
for t in mmdebstrap systemd-nspawn; do
	command -v $t >/dev/null || skip "$t is missing (contrib/deps.sh --tests)"
done
ls "$debs"/vfagent_*.deb "$debs"/vfagent-opennebula_*.deb "$debs"/vfagent-opennebula-node_*.deb \
	>/dev/null 2>&1 ||
	fail "no packages in $debs (contrib/deb-build.sh)"

uri=$(sh "$top/contrib/archive-uri.sh" | head -n 1) # the bookworm archive of the system's apt sources
[ -n "$uri" ] || skip "no bookworm archive in the system's apt sources"

# What the packages load at run time (Depends and Recommends, first alternatives) and what
# their autopkgtests need (debian/tests/control) go into the root, so apt installs the .debs
# on the booted system with no network.
needs=$({
	for d in "$debs"/*.deb; do dpkg-deb -f "$d" Depends Recommends; done
	grep '^Depends: ' "$top/contrib/debian/tests/control"
} |
	sed 's/^[A-Za-z-]*: //' | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' |
	grep -v '^vfagent\|^$' | sort -u | tr '\n' ',')
pkgs="systemd-sysv,dbus,passwd,procps,${needs%,}"
key=$(printf '%s %s' "$uri" "$pkgs" | sha256sum | cut -c1-12)
tarball=$cache/bookworm-$key.tar
mkdir -p "$cache"
if [ ! -s "$tarball" ]; then
	t0=$(date +%s)
	rm -f "$cache"/bookworm-*.tar
	# the name must end in .tar: mmdebstrap picks the output format by it
	mmdebstrap --quiet --variant=apt --include="$pkgs" bookworm "$cache/new.tar" "$uri" \
		>"$cache/mmdebstrap.log" 2>&1 ||
		skip "mmdebstrap from $uri failed: $(tail -n 3 "$cache/mmdebstrap.log")"
	mv "$cache/new.tar" "$tarball"
	echo "deb-test: mmdebstrap bookworm root: $(($(date +%s) - t0)) s (cached as $tarball)"
fi

root=$(mktemp -d /var/tmp/vfagent-deb-XXXXXX)
machine=vfagent-deb-$$
leader=
nspawn_pid=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[ -n "$nspawn_pid" ] && kill "$nspawn_pid" 2>/dev/null && wait "$nspawn_pid" 2>/dev/null
	rm -rf "$root"
}
trap cleanup EXIT
tar -C "$root" -xf "$tarball"
mkdir -p "$root/root/debs"
cp "$debs"/vfagent_*.deb "$debs"/vfagent-opennebula_*.deb "$debs"/vfagent-opennebula-node_*.deb \
	"$root/root/debs/"
cp "$top/contrib/deb-test-inside.sh" "$root/root/"
cp -r "$top/contrib/debian/tests" "$root/root/tests" # the autopkgtests, run when booted

# Boot it. A sandbox may refuse (no cgroup for the container's systemd, no
# namespaces); then the same steps run in the root with the unit's settings
# checked by systemd-analyze and the agent under them by setpriv (below).
systemd-nspawn --quiet --boot --register=no --private-network --keep-unit \
	--machine="$machine" -D "$root" >"$root.console" 2>&1 &
nspawn_pid=$!
for _ in $(seq 150); do
	leader=$(pgrep -P "$nspawn_pid" | head -n 1 || true)
	if [ -n "$leader" ] && nsenter -t "$leader" -a systemctl is-system-running 2>/dev/null |
		grep -q 'running\|degraded'; then
		break
	fi
	kill -0 "$nspawn_pid" 2>/dev/null || { leader=; break; }
	leader=
	sleep 0.2
done
if [ -n "$leader" ]; then
	echo "deb-test: booted $machine with systemd-nspawn"
	nsenter -t "$leader" -a sh /root/deb-test-inside.sh booted || {
		nsenter -t "$leader" -a journalctl -u vfagentd --no-pager | tail -n 20 >&2
		fail "in the booted container (above)"
	}
	exit 0
fi
why=$(grep -v '^$' "$root.console" | tail -n 2 | tr '\n' ' ')
rm -f "$root.console"
kill "$nspawn_pid" 2>/dev/null; wait "$nspawn_pid" 2>/dev/null || true
nspawn_pid=
echo "deb-test: systemd-nspawn --boot refused here ($why): the steps that need a booted systemd" \
	"are checked in the root instead (chroot, systemd-analyze verify, the unit's bounding set by setpriv)"
for m in proc sys dev; do mount --rbind "/$m" "$root/$m"; done
trap 'for m in proc sys dev; do umount -R "$root/$m" 2>/dev/null; done; cleanup' EXIT
chroot "$root" sh /root/deb-test-inside.sh chroot ||
	fail "in the root (above)"
exit 77
