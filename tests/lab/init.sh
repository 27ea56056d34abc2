#!/bin/sh
# /init of the lab guest: the kernel's filesystems, the drivers, udevd, then
# the scenario; every line the scenario prints goes to the serial console.
export PATH=/usr/bin:/bin LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /run/netns /run/udev /var/lib /etc/vfagent
ln -s /run /var/run
for m in virtio_pci virtio_net nvme igb igbvf veth; do modprobe "$m"; done
modprobe vfio-pci
modprobe vfio_iommu_type1 # the IOMMU model a VFIO container (QEMU) asks for
# RDMA in exclusive netns mode (settable only while no other namespace exists)
modprobe crc32_generic
modprobe rdma_rxe
modprobe ib_uverbs
rdma system set netns exclusive
/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1
udevadm trigger --action=add >/dev/null 2>&1
udevadm settle --timeout=20
echo "LAB BOOTED at $(cut -d' ' -f1 /proc/uptime)s"
# a step that hangs says where before QEMU is killed (tests/lab/watchdog.sh)
deadline=$(sed -n 's/.*vfagent_lab_deadline=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -z "$deadline" ] || sh /lab/watchdog.sh "$deadline" &
sh /lab/scenario.sh
echo "LAB END at $(cut -d' ' -f1 /proc/uptime)s"
poweroff -f
