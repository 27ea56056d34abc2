#!/bin/sh
# /init of the lab's nested guest (tests/lab/failover.sh boots it inside the
# lab guest): Debian's kernel, busybox, virtio_net (net_failover, failover)
# and igbvf. The kernel command line says what to set up: fo_mac= and fo_ip=
# for the failover NIC (net_failover's master: the netdev of that MAC with
# lower devices), plain_mac= and plain_ip= for a VF without standby,
# configured again whenever a VF of that MAC appears (a replug), as a guest's
# network manager would. Every line goes to the serial console.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p"; }
up() { echo "NESTED $* at $(cut -d' ' -f1 /proc/uptime)s" >/dev/ttyS0; }
fo_mac=$(arg fo_mac) fo_ip=$(arg fo_ip) plain_mac=$(arg plain_mac) plain_ip=$(arg plain_ip)
printf 'plain_mac=%s\nplain_ip=%s\nfo_mac=%s\n' "$plain_mac" "$plain_ip" "$fo_mac" >/plain
cat >/hotplug <<'SH'
#!/bin/sh
[ "$SUBSYSTEM" = net ] || exit 0
. /plain
at() { echo "$(/bin/cut -d' ' -f1 /proc/uptime)s"; }
# the failover NIC's VF coming and going, and its link up (the lab times a swap by them)
[ "$ACTION" = remove ] && echo "NESTED fo remove $INTERFACE at $(at)" >/dev/ttyS0
[ "$ACTION" = add ] || exit 0
if [ "$(/bin/cat "/sys/class/net/$INTERFACE/address")" = "$fo_mac" ] &&
	[ -e "/sys/class/net/$INTERFACE/device" ]; then
	echo "NESTED fo add $INTERFACE at $(at)" >/dev/ttyS0
	carrier() { [ "$(/bin/cat "/sys/class/net/$INTERFACE/carrier" 2>/dev/null)" = 1 ]; }
	(
		for _ in $(/bin/seq 1200); do carrier && break; /bin/sleep 0.05; done
		carrier && echo "NESTED fo carrier $INTERFACE at $(at)" >/dev/ttyS0
	) &
	exit 0
fi
[ -n "$plain_mac" ] && [ "$(/bin/cat "/sys/class/net/$INTERFACE/address")" = "$plain_mac" ] || exit 0
/bin/ip addr add "$plain_ip" dev "$INTERFACE"
/bin/ip link set "$INTERFACE" up
echo "NESTED plain VF $INTERFACE up at $(/bin/cut -d' ' -f1 /proc/uptime)s" >/dev/ttyS0
SH
chmod +x /hotplug
uevent /hotplug & # the kernel's uevents (Debian's kernel has no uevent helper)
for m in virtio_pci virtio_net igbvf; do modprobe "$m"; done
up "modules loaded"
# net_failover's master: the netdev of fo_mac with lower devices (its slaves have a master)
for _ in $(seq 300); do
	master=
	for n in /sys/class/net/*; do
		[ "$(cat "$n/address")" = "$fo_mac" ] && [ ! -e "$n/master" ] &&
			ls -d "$n"/lower_* >/dev/null 2>&1 && master=${n##*/}
	done
	[ -n "$master" ] && break
	sleep 0.1
done
if [ -n "$master" ]; then
	ip addr add "$fo_ip" dev "$master"
	ip link set "$master" up
fi
for n in /sys/class/net/*; do
	[ -n "$plain_mac" ] && [ "$(cat "$n/address")" = "$plain_mac" ] &&
		ACTION=add SUBSYSTEM=net INTERFACE=${n##*/} /hotplug
done
up "READY failover ${master:-none} ($(cd "/sys/class/net/$master" 2>/dev/null && echo lower_*))"
while :; do sleep 3600; done
