#!/bin/sh
# A private libvirtd (qemu driver, TCG) with virtlogd, for tests and bench/vm.
# Both run in their own mount namespace, over private /run/libvirt,
# /var/lib/libvirt, /etc/libvirt, /var/log/libvirt and /var/cache/libvirt,
# so nothing of the host's libvirt is touched. The client socket is
# $LV_DIR/sock/libvirt-sock; $LV_URI names it.
# shellcheck shell=sh

libvirtd_can_run() {
	command -v libvirtd >/dev/null && command -v virtlogd >/dev/null &&
		command -v qemu-system-x86_64 >/dev/null && command -v unshare >/dev/null &&
		[ "$(id -u)" = 0 ]
}

# libvirtd and virtlogd in their mount namespace, in the background.
libvirtd_run() {
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c '
		d=$1
		mount -t tmpfs tmpfs /run/libvirt
		mount --bind "$d/lib" /var/lib/libvirt
		mount --bind "$d/etc" /etc/libvirt
		mount --bind "$d/log" /var/log/libvirt
		mount --bind "$d/cache" /var/cache/libvirt
		if [ -f "$d/passwd" ]; then
			mount --bind "$d/passwd" /etc/passwd && mount --bind "$d/group" /etc/group
		fi
		virtlogd --config /etc/libvirt/virtlogd.conf --pid-file "$d/virtlogd.pid" --daemon
		exec libvirtd --config "$d/libvirtd.conf" --pid-file "$d/libvirtd.pid" \
			>"$d/libvirtd.log" 2>&1' sh "$LV_DIR" &
}

# libvirtd's QEMU driver looks up its compiled-in user, libvirt-qemu, before it
# reads qemu.conf; Debian's libvirt-daemon-system makes it. A machine without it
# gets copies of passwd and group with one in DIR, which the daemon's mount
# namespace binds over /etc's: the host's files are never edited (two suites
# side by side once added and removed the user under each other, and libvirtd
# then failed "to parse user 'libvirt-qemu'").
libvirtd_user_files() { # DIR
	getent passwd libvirt-qemu >/dev/null && return 0
	gid=$(getent group libvirt-qemu | cut -d: -f3)
	cp /etc/group "$1/group"
	[ -n "$gid" ] || { gid=64055 && echo "libvirt-qemu:x:$gid:" >>"$1/group"; }
	cp /etc/passwd "$1/passwd"
	echo "libvirt-qemu:x:64055:$gid::/nonexistent:/usr/sbin/nologin" >>"$1/passwd"
}

libvirtd_start() {
	LV_DIR=$(mktemp -d /tmp/vfagent-libvirtd.XXXXXX)
	mkdir -p "$LV_DIR/sock" "$LV_DIR/run" "$LV_DIR/lib" "$LV_DIR/etc" "$LV_DIR/log" \
		"$LV_DIR/cache"
	libvirtd_user_files "$LV_DIR"
	mkdir -p /run/libvirt /var/lib/libvirt /etc/libvirt /var/log/libvirt /var/cache/libvirt
	cat >"$LV_DIR/libvirtd.conf" <<CONF
unix_sock_dir = "$LV_DIR/sock"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
CONF
	cat >"$LV_DIR/etc/qemu.conf" <<CONF
user = "root"
group = "root"
dynamic_ownership = 0
security_driver = "none"
namespaces = [ ]
CONF
	cat >"$LV_DIR/etc/virtlogd.conf" <<CONF
log_outputs = "3:file:$LV_DIR/virtlogd.log"
CONF
	libvirtd_run
	LV_URI="qemu+unix:///system?socket=$LV_DIR/sock/libvirt-sock"
	libvirtd_wait
}

# libvirtd answers on $LV_URI (within 60 s, however loaded), or its log and
# threads are shown. A libvirtd that has not answered by then is started once more: under
# CI's load a restarted one twice never did (its log ends after the security driver;
# nothing of the agent's is involved), and the threads shown then say where it waits.
libvirtd_wait() {
	libvirtd_answers && return 0
	echo "libvirtd did not answer within 60 s:" >&2
	libvirtd_show
	libvirtd_kill
	rm -f "$LV_DIR/libvirtd.pid" "$LV_DIR/virtlogd.pid"
	echo "libvirtd started once more" >&2
	libvirtd_run
	libvirtd_answers && return 0
	echo "libvirtd did not start:" >&2
	libvirtd_show
	return 1
}

libvirtd_answers() {
	i=0
	until virsh -q -c "$LV_URI" uri >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -le 600 ] || return 1
		sleep 0.1
	done
}

# its log, its threads and where each waits, its children
libvirtd_show() {
	cat "$LV_DIR/libvirtd.log" >&2
	pid=$(cat "$LV_DIR/libvirtd.pid" 2>/dev/null) || return 0
	ps -L -o pid,tid,stat,wchan:32,comm -p "$pid" >&2 || :
	ps --ppid "$pid" -o pid,stat,etime,args >&2 || :
}

# NAME (libvirtd, virtlogd): the pid its pid file in $LV_DIR holds, if that process is still
# the one started from $LV_DIR. A pid file outlives its process (SIGKILL), and pids come round
# again (pid_max 32768 wraps within a suite run): the pid may be another suite's process by now,
# and neither it nor its mount namespace (another suite's libvirtd or OpenNebula host) is ours.
libvirtd_own_pid() {
	pid=$(cat "$LV_DIR/$1.pid" 2>/dev/null) || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$LV_DIR/" || return 1
	echo "$pid"
}

libvirtd_kill() {
	# the mount namespace libvirtd runs in: its qemu processes are in it too (never this
	# shell's own: that would be every process of the machine's)
	mnt=
	lvd=$(libvirtd_own_pid libvirtd) && mnt=$(readlink "/proc/$lvd/ns/mnt" 2>/dev/null || :)
	[ "$mnt" != "$(readlink /proc/$$/ns/mnt)" ] || mnt=
	for f in libvirtd virtlogd; do
		pid=$(libvirtd_own_pid "$f") || continue
		kill "$pid" 2>/dev/null || continue
		# gone within 5 s, or killed
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		! libvirtd_own_pid "$f" >/dev/null || kill -9 "$pid" 2>/dev/null || true
	done
	# qemu processes of domains still running: those in that namespace, none by name
	[ -n "$mnt" ] || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$mnt" ] && kill -9 "${p#/proc/}" 2>/dev/null
	done
	return 0
}

# After libvirtd_kill: the same daemons, the same state, up again.
libvirtd_restart() {
	rm -f "$LV_DIR/libvirtd.pid" "$LV_DIR/virtlogd.pid"
	libvirtd_run
	libvirtd_wait
}

libvirtd_stop() {
	[ -n "${LV_DIR:-}" ] || return 0
	virsh -q -c "$LV_URI" destroy vfagent-test >/dev/null 2>&1 || true
	libvirtd_kill
	rm -rf "$LV_DIR"
}

# A small qemu domain, TCG (this machine has no KVM), defined, not started.
libvirtd_define_domain() {
	cat >"$LV_DIR/domain.xml" <<XML
<domain type='qemu'>
  <name>vfagent-test</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>$(command -v qemu-system-x86_64)</emulator>
    <graphics type='vnc' autoport='yes' listen='127.0.0.1'/>
  </devices>
</domain>
XML
	virsh -q -c "$LV_URI" define "$LV_DIR/domain.xml" >/dev/null && return 0
	# once in a loop of make -j2 check beside a lab (load 5), libvirtd closed the connection
	# on this first define (EOF) before anything of the agent's ran: its log is shown, and the
	# daemon started once more, as libvirtd_wait does
	echo "libvirtd dropped the define of vfagent-test:" >&2
	libvirtd_show
	libvirtd_kill
	libvirtd_restart || return 1
	echo "libvirtd started once more" >&2
	virsh -q -c "$LV_URI" define "$LV_DIR/domain.xml" >/dev/null
}

# A test's opening (after tests/api-lib.sh): skip (77) where libvirtd cannot
# run, libvirtd started with the domain vfagent-test defined, both gone at exit
# with the test's agent; lv ARGS is virsh on that libvirtd, inactive XPATH the
# value of XPATH in vfagent-test's config (the XML left in $tmp/dom.xml).
libvirtd_test_start() {
	libvirtd_can_run || { echo "SKIP: needs root, libvirtd, virtlogd and qemu-system-x86_64"; exit 77; }
	trap 'libvirtd_stop; cleanup' EXIT
	libvirtd_start || fail "libvirtd did not start"
	libvirtd_define_domain || fail "libvirtd did not define vfagent-test"
	# shellcheck disable=SC2317 # called by the test that sources this
	lv() { virsh -q -c "$LV_URI" "$@"; }
	# shellcheck disable=SC2317,SC2154 # called by the test, whose $tmp is api-lib.sh's
	inactive() { lv dumpxml --inactive vfagent-test >"$tmp/dom.xml"; xmllint --xpath "$1" "$tmp/dom.xml"; }
}

# The steering tests' standby bridge, onebr.120, with for uplink a veth named as the simulated
# host's E810 PF (ens5f0), which takes `bridge fdb add MAC dev DEV self` into its own unicast
# list as igb does; skip (77) without bridge(8)
libvirtd_steer_bridge() {
	command -v bridge >/dev/null || { echo "SKIP: bridge (iproute2) is needed"; exit 77; }
	ip link add onebr.120 type bridge || fail "cannot make the standby's bridge"
	ip link show ens5f0 >/dev/null 2>&1 || ip link add ens5f0 type veth peer name ens5f0-wire
	ip link set ens5f0 master onebr.120
}
