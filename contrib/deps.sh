#!/bin/sh
# Installs what vfagent needs to build (and with --tests, to run every test)
# on Debian 12, as root. Skips apt entirely when every package is there.
set -eu
pkgs="build-essential autoconf automake libtool pkg-config
libjansson-dev libsqlite3-dev check libmicrohttpd-dev libudev-dev libsystemd-dev
libcurl4-openssl-dev libmnl-dev libibverbs-dev libvirt-dev libxml2-dev libcap-ng-dev curl"
[ "${1:-}" = --tests ] && pkgs="$pkgs jq cppcheck valgrind python3 umockdev libumockdev-dev
prometheus wrk nginx-light containernetworking-plugins podman runc busybox-static containerd
libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients qemu-system-x86 bats shellcheck
cpio kmod clang libclang-rt-14-dev bash-completion sqlite3 iproute2 libxml2-utils
debhelper dh-exec devscripts fakeroot lintian mmdebstrap systemd-container
opensm ibsim-utils infiniband-diags iputils-ping"
# the OpenAPI check runs validators from the npm registry; keep a node that is already there
[ "${1:-}" = --tests ] && ! command -v npm >/dev/null && pkgs="$pkgs nodejs npm"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing; run as root or install them" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
