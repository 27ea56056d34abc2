#!/bin/sh
# Builds the lab guest's initramfs in $VFAGENT_LAB_CACHE/initrd.gz: busybox,
# the kernel modules the lab needs (with their dependencies, resolved by the
# host's modprobe against the unpacked kernel), udevd, our vfagentd and vfctl
# from a build tree ($1), the hooks, and iproute2, rdma, jq and
# libibverbs' rxe provider for the assertions, each with its libraries.
set -eu
build=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${VFAGENT_LAB_CACHE:-/var/cache/vfagent-lab}
root=$cache/root
for d in "$root"/lib/modules/*; do k=${d##*/}; done
[ -f "$root/lib/modules/$k/modules.dep" ] || depmod -b "$root" "$k"
i=$cache/initrd
rm -rf "$i"
mkdir -p "$i/bin" "$i/sbin" "$i/etc" "$i/proc" "$i/sys" "$i/dev" "$i/tmp" "$i/run" "$i/lib64" \
	"$i/usr/bin" "$i/usr/lib/x86_64-linux-gnu" "$i/lib/modules/$k" "$i/lib/systemd" "$i/lab"
cp "$root/bin/busybox" "$i/bin/busybox"
for a in $("$i/bin/busybox" --list); do [ -e "$i/bin/$a" ] || ln -s busybox "$i/bin/$a"; done
ln -s ../bin/busybox "$i/sbin/modprobe" # the kernel's request_module() runs /sbin/modprobe

mods="nvme virtio_pci virtio_net igb igbvf veth rdma_rxe ib_uverbs vfio-pci vfio_iommu_type1 crc32_generic bridge tun"
for m in $mods; do
	modprobe -d "$root" -S "$k" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | sort -u | while read -r ko; do
	rel=${ko#"$root"/}
	mkdir -p "$i/$(dirname "$rel")"
	cp "$root/$rel" "$i/$rel"
done
cp "$root/lib/modules/$k/modules.order" "$root/lib/modules/$k/modules.builtin" \
	"$root/lib/modules/$k/modules.builtin.modinfo" "$i/lib/modules/$k/"
depmod -b "$i" "$k"

cp "$root/bin/udevadm" "$i/bin/udevadm"
ln -s /bin/udevadm "$i/lib/systemd/systemd-udevd"
# a libtool build's programs are shell wrappers: the linked ones are in .libs/, and they
# find libvfpool.so there (ldd below is told where)
linked() {
	f=$1
	case $(head -c 2 "$f") in '#!') f=$(dirname "$f")/.libs/$(basename "$f") ;; esac
	[ -x "$f" ] || { echo "lab: no program $1 (is $build a built tree?)" >&2; exit 1; }
	echo "$f"
}
vfagentd=$(linked "$build/agent/vfagentd")
vfctl=$(linked "$build/agent/vfctl/vfctl")
cni=$(linked "$build/hooks/cni/vfagent")
LD_LIBRARY_PATH=$build/libvfpool/.libs
export LD_LIBRARY_PATH
# curl and xmllint for OpenNebula's actions (one-hooks.sh) and the deployment-file step, bridge
# for the failover steps' FDB
bins="$vfagentd $vfctl $cni /usr/sbin/ip /usr/sbin/bridge /usr/bin/rdma /usr/bin/jq /usr/bin/curl /usr/bin/xmllint"
# shellcheck disable=SC2086 # a list of paths without spaces
cp $bins "$i/usr/bin/"
rxe=/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
# libraries loaded with dlopen(), which ldd does not name: libcurl (vfctl, when it first talks
# to the agent) and libvirt (vfagentd, at its first libvirt connection)
dlopened=
for so in libcurl.so.4 libvirt.so.0; do
	path=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ {print $NF; exit}')
	[ -n "$path" ] || { echo "build-initramfs: no $so on this machine" >&2; exit 1; }
	cp -L "$path" "$i/usr/lib/x86_64-linux-gnu/"
	dlopened="$dlopened $path"
done
# (the CNI plugin is static: ldd says "not a dynamic executable" and fails, which under
# set -e would end the loop there and leave the later programs without their libraries)
# shellcheck disable=SC2086
for b in $bins "$i/bin/udevadm" $rxe $dlopened; do ldd "$b" 2>/dev/null || :; done | awk '/=> \// {print $3}' |
	sort -u | while read -r l; do cp -L "$l" "$i/usr/lib/x86_64-linux-gnu/"; done
cp -L /lib64/ld-linux-x86-64.so.2 "$i/lib64/"
ln -s ../usr/lib/x86_64-linux-gnu "$i/lib/x86_64-linux-gnu"
mkdir -p "$i/usr/lib/x86_64-linux-gnu/libibverbs" "$i/etc/libibverbs.d"
cp "$rxe" "$i/usr/lib/x86_64-linux-gnu/libibverbs/"
cp /etc/libibverbs.d/rxe.driver "$i/etc/libibverbs.d/"
# libvirtd (its QEMU driver), virsh and QEMU 10 itself, for the live VFIO attach
# into a nested domain; the step says why it skips when this host has none
lvd=/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so
qemu=$cache/bpo/root/usr/bin/qemu-system-x86_64
if [ -x /usr/sbin/libvirtd ] && [ -x /usr/bin/virsh ] && [ -f "$lvd" ] && [ -x "$qemu" ]; then
	mkdir -p "$i/usr/lib/x86_64-linux-gnu/libvirt/connection-driver" \
		"$i/usr/share/qemu" "$i/usr/share/libvirt" "$i/etc/libvirt"
	cp /usr/sbin/libvirtd /usr/bin/virsh "$qemu" "$i/usr/bin/"
	mkdir -p "$i/usr/lib/libvirt"
	cp /usr/lib/libvirt/libvirt_iohelper "$i/usr/lib/libvirt/" # virsh save and restore
	cp "$lvd" "$i/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/"
	for b in /usr/sbin/libvirtd /usr/bin/virsh "$qemu" "$lvd" /usr/lib/libvirt/libvirt_iohelper; do
		ldd "$b"
	done |
		awk '/=> \// {print $3}' | sort -u |
		while read -r l; do cp -L "$l" "$i/usr/lib/x86_64-linux-gnu/"; done
	cp -L "$cache/bpo/root/usr/share/seabios/bios-256k.bin" \
		"$cache/bpo/root/usr/share/qemu/kvmvapic.bin" \
		"$cache/bpo/root/usr/share/qemu/linuxboot_dma.bin" "$i/usr/share/qemu/"
	# the failover standby's option ROM (a virtio NIC): ipxe-qemu, which the host's
	# qemu-system-x86 depends on (QEMU 10's unpacked data has none)
	[ -f /usr/lib/ipxe/qemu/efi-virtio.rom ] && cp /usr/lib/ipxe/qemu/efi-virtio.rom "$i/usr/share/qemu/"
	cp -r /usr/share/libvirt/cpu_map "$i/usr/share/libvirt/"
	# libvirtd's QEMU driver looks its compiled-in user and group up at start
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
		'libvirt-qemu:x:64055:64055::/nonexistent:/bin/false' >"$i/etc/passwd"
	printf '%s\n' 'root:x:0:' 'kvm:x:64054:' 'libvirt-qemu:x:64055:' >"$i/etc/group"
	printf '%s\n' 'user = "root"' 'group = "root"' 'dynamic_ownership = 0' \
		'security_driver = "none"' 'namespaces = [ ]' 'stdio_handler = "file"' \
		'cgroup_controllers = [ ]' >"$i/etc/libvirt/qemu.conf"
	printf '%s\n' 'auth_unix_rw = "none"' 'auth_unix_ro = "none"' \
		'log_outputs = "3:file:/run/libvirtd.log"' >"$i/etc/libvirt/libvirtd.conf"
fi
# the nested guest of the failover steps (tests/lab/failover.sh): Debian's kernel, busybox,
# virtio_net with net_failover and igbvf, and its own /init; ping from iputils (busybox's
# cannot send every 20 ms) for the peer that counts its answers
n=$cache/nested
rm -rf "$n"
mkdir -p "$n/bin" "$n/sbin" "$n/proc" "$n/sys" "$n/dev" "$n/lib/modules/$k" "$i/lab/nested"
cp "$root/bin/busybox" "$n/bin/busybox"
for a in $("$n/bin/busybox" --list); do [ -e "$n/bin/$a" ] || ln -s busybox "$n/bin/$a"; done
ln -s ../bin/busybox "$n/sbin/modprobe"
for m in virtio_pci virtio_net igbvf; do
	modprobe -d "$root" -S "$k" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | sort -u | while read -r ko; do
	rel=${ko#"$root"/}
	mkdir -p "$n/$(dirname "$rel")"
	cp "$root/$rel" "$n/$rel"
done
cp "$root/lib/modules/$k/modules.order" "$root/lib/modules/$k/modules.builtin" \
	"$root/lib/modules/$k/modules.builtin.modinfo" "$n/lib/modules/$k/"
depmod -b "$n" "$k"
cp "$top/tests/lab/nested-init.sh" "$n/init"
chmod +x "$n/init"
(cd "$n" && find . | cpio -o -H newc --quiet | gzip -1) >"$i/lab/nested/initrd.gz"
cp "$root/boot/vmlinuz-$k" "$i/lab/nested/vmlinuz"
if [ -x /usr/bin/ping ] && /usr/bin/ping -V 2>/dev/null | grep -q iputils; then
	cp /usr/bin/ping "$i/usr/bin/ping"
	ldd /usr/bin/ping | awk '/=> \// {print $3}' |
		while read -r l; do cp -L "$l" "$i/usr/lib/x86_64-linux-gnu/"; done
fi
# GNU tail for the failover tier's marks (tests/lab/failover.sh): busybox's -F looks at its
# files once a second, which put a swap's marks up to a second late; coreutils' waits on inotify
if /usr/bin/tail --version 2>/dev/null | grep -q coreutils; then
	cp /usr/bin/tail "$i/usr/bin/tail"
	ldd /usr/bin/tail | awk '/=> \// {print $3}' |
		while read -r l; do cp -L "$l" "$i/usr/lib/x86_64-linux-gnu/"; done
fi
cp -r "$top/hooks" "$i/lab/hooks"
cp "$top/tests/lab/init.sh" "$i/init"
cp "$top/tests/lab/scenario.sh" "$top/tests/lab/data-path.sh" "$top/tests/lab/vm-attach.sh" "$top/tests/lab/cni.sh" \
	"$top/tests/lab/one-hooks.sh" "$top/tests/lab/pcie.sh" "$top/tests/lab/failover.sh" \
	"$top/tests/lab/migrate.sh" "$top/tests/lab/drain.sh" "$top/tests/lab/watchdog.sh" "$i/lab/"
chmod +x "$i/init"
(cd "$i" && find . | cpio -o -H newc --quiet | gzip -1) >"$cache/initrd.gz"
cp "$root/boot/vmlinuz-$k" "$cache/vmlinuz"
