#!/bin/sh
# make check-lab: fetches (or reuses) the lab's kernel and QEMU 10, takes
# vfagent from the build tree in $VFAGENT_LAB_BUILD (make check-lab and CI pass
# theirs; alone, it builds one in build-lab/), builds the initramfs, boots a
# q35 guest under TCG with an emulated IOMMU, an NVMe PF (sriov_max_vfs=4)
# and an igb PF behind root ports, a second igb PF and a display controller (a
# GPU's class) behind a PCIe switch (x3130-upstream, xio3130-downstream), runs
# tests/lab/scenario.sh in it, and prints one line per step and the wall
# time. Exit 77 when the downloads cannot be reached; 1 when a step fails or
# the guest does not finish. QEMU's intel-iommu gives the guest IOMMU groups,
# which vfio-pci needs (Debian's kernel has no VFIO no-IOMMU mode).
# The nested domains (tests/lab/vm-attach.sh, one-hooks.sh: VFs through
# vfio-pci into libvirt's QEMU driver, OpenNebula's actions) run unless
# VFAGENT_LAB_VFIO=0, when their steps skip saying so. The failover tier
# (tests/lab/failover.sh: a nested guest that runs, pinged every 20 ms while
# its VFs move) runs with VFAGENT_LAB_FAILOVER=1 after the other steps, or
# with =only alone, and ends with a live migration of that guest to a second
# libvirtd in the lab guest (tests/lab/migrate.sh); its figures are printed
# as "FIGURE name value" lines.
# The two igb PFs' uplinks are one QEMU hub: the second PF is the failover
# steps' peer on the wire. VFAGENT_LAB_DRAIN=1 (with the failover tier) adds
# tests/lab/drain.sh's step: a second nested guest booted beside the first and
# `vfctl drain` of the igb PF onto a third igb PF, on a root port of its own
# (vfio-pci takes its VFs), its uplink on the same hub, 512 MiB more memory.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${VFAGENT_LAB_CACHE:-/var/cache/vfagent-lab}
export VFAGENT_LAB_CACHE="$cache"
t0=$(date +%s)
[ "$(id -u)" = 0 ] || { echo "lab: needs root (apt-get download, depmod)"; exit 77; }
for tool in cpio depmod modprobe; do
	command -v "$tool" >/dev/null || { echo "lab: $tool is missing (apt-get install cpio kmod)"; exit 1; }
done
rc=0
sh "$top/tests/lab/fetch.sh" || rc=$?
[ $rc = 0 ] || exit $rc
build=${VFAGENT_LAB_BUILD:-}
if [ -z "$build" ]; then
	build=$top/build-lab
	BUILD_DIR="$build" "$top/contrib/build.sh"
fi
sh "$top/tests/lab/build-initramfs.sh" "$build"
q=$cache/bpo/root/usr
log=$cache/console.log
tq=$(date +%s)
fo=${VFAGENT_LAB_FAILOVER:-0}
limit=900
[ "$fo" = 0 ] || limit=1800 # a nested guest that boots under TCG inside TCG
dr=${VFAGENT_LAB_DRAIN:-0} mem=1024 igb3=
[ "$fo" = 0 ] && dr=0
# the third igb PF before the switch: the switch's PF stays the last igb in the guest's bus order
[ "$dr" = 0 ] || { limit=2400 mem=1536 igb3="-device pcie-root-port,id=rp4,bus=pcie.0,chassis=6
	-netdev hubport,id=n3,hubid=1 -device igb,netdev=n3,bus=rp4,romfile="; }
# the guest's watchdog prints what still runs a minute before the timeout (tests/lab/watchdog.sh);
# its clock is the guest's uptime, which starts a few seconds after QEMU
# shellcheck disable=SC2086 # $igb3: words
timeout "$limit" "$q/bin/qemu-system-x86_64" -machine q35 -accel tcg -cpu max -smp 2 -m "$mem" \
	-L "$q/share/seabios" -bios "$q/share/seabios/bios-256k.bin" -L "$q/share/qemu" \
	-device intel-iommu \
	-kernel "$cache/vmlinuz" -initrd "$cache/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1 intel_iommu=on vfagent_lab_vfio=${VFAGENT_LAB_VFIO:-1} vfagent_lab_failover=$fo vfagent_lab_drain=$dr vfagent_lab_deadline=$((limit - 60))" \
	-display none -vga none -serial "file:$log" -monitor none -no-reboot \
	-netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0 \
	-device pcie-root-port,id=rp1,bus=pcie.0,chassis=1 \
	-device nvme-subsys,id=subsys0 \
	-device nvme,serial=vfagentlab,subsys=subsys0,bus=rp1,sriov_max_vfs=4,sriov_vq_flexible=8,sriov_vi_flexible=4 \
	-device pcie-root-port,id=rp2,bus=pcie.0,chassis=2 \
	-netdev hubport,id=n1,hubid=1 -device igb,netdev=n1,bus=rp2,romfile= \
	$igb3 \
	-device pcie-root-port,id=rp3,bus=pcie.0,chassis=3 \
	-device x3130-upstream,id=up1,bus=rp3 \
	-device xio3130-downstream,id=dn1,bus=up1,chassis=4,slot=0 \
	-device xio3130-downstream,id=dn2,bus=up1,chassis=5,slot=1 \
	-netdev hubport,id=n2,hubid=1 -device igb,netdev=n2,bus=dn1,romfile= \
	-device bochs-display,bus=dn2 \
	>"$cache/qemu.log" 2>&1 || true
t1=$(date +%s)
grep '^LAB ' "$log" | tr -d '\r' | sed 's/^LAB //'
passed=$(grep -c '^LAB PASS' "$log" || true)
failed=$(grep -c '^LAB FAIL' "$log" || true)
skipped=$(grep -c '^LAB SKIP' "$log" || true)
echo "lab: $passed passed, $failed failed, $skipped skipped; $((t1 - t0)) s wall: $((tq - t0)) s fetch and build, $((t1 - tq)) s in the guest (console: $log)"
if ! grep -q '^LAB END' "$log"; then
	echo "lab: the guest did not finish; the console's end:"
	tail -20 "$log"
	exit 1
fi
# every step, not only no failure: a step that did not run proved nothing; a
# step may skip only where it says what this machine refused
steps=40
[ "$fo" = only ] && steps=7
[ "$dr" = 0 ] || steps=$((steps + 2))
[ $((passed + skipped)) = "$steps" ] || echo "lab: $passed of the $steps steps passed, $skipped skipped"
[ "$failed" = 0 ] && [ $((passed + skipped)) = "$steps" ]
