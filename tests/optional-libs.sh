#!/bin/sh
# test-needs: mounts
# libvirt's client library is optional: with libvirt.so.0 unloadable (an
# empty file bound over it in this test's mount namespace, as dlopen() meets
# a host without the package), vfagentd starts on a config that asks for
# libvirt, says once in its log that VMs get no VFs and which package to
# install, serves containers (a VF into a network namespace and back), refuses
# a domain attach naming the package, and GET /v1/host and vfctl doctor say
# the same. (It exited 1 on that config, and systemd restarted it forever.)
# With the library and no daemon, doctor's fix names what is installed. A libibverbs that
# lists none of the PFs' RDMA devices (no ibverbs-providers) is said the same way.
set -eu
b=${top_builddir:-.}
. "${top_srcdir:-.}/tests/api-lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: binding a file over libvirt.so.0 needs root"; exit 77; }
lib=$(ldconfig -p | sed -n 's/^[[:space:]]*libvirt\.so\.0 .*=> //p' | head -n 1)
[ -n "$lib" ] || { echo "SKIP: libvirt.so.0 is not installed here"; exit 77; }
real=$(readlink -f "$lib")
: >"$tmp/empty"
mount --bind "$tmp/empty" "$real" 2>/dev/null ||
	{ echo "SKIP: cannot bind a file over $real (no mount namespace of the test's own)"; exit 77; }
undo() { umount "$real" 2>/dev/null || :; umount /etc/systemd/system 2>/dev/null || :; cleanup; }
trap undo EXIT

tenant_and_stand_in vfa-optlibs
cat >"$tmp/vfagent.json" <<'JSON'
{ "pools": [ { "name": "eth", "selector": { "vendors": ["8086"] } } ],
  "libvirt": { "uri": "test:///default" } }
JSON
start_agent --config "$tmp/vfagent.json"
kill -HUP "$agent_pid" # a reload does not say it again
api GET /v1/host
expect 200
n=$(grep -c "cannot load libvirt" "$tmp/agent.log" || true)
[ "$n" = 1 ] || fail "the log says $n times that libvirt is missing, wanted once: $(cat "$tmp/agent.log")"
grep "cannot load libvirt" "$tmp/agent.log" | grep -q "apt-get install libvirt0" ||
	fail "the log does not name the package: $(grep libvirt "$tmp/agent.log")"
echo "ok: started without libvirt, said once: $(grep "cannot load libvirt" "$tmp/agent.log")"

[ "$(jget .libvirt.connected)" = false ] || fail "GET /v1/host: $body"
jget .libvirt.status | grep -q "VMs get no VFs, containers do (install libvirt0)" ||
	fail "GET /v1/host's libvirt has no status naming the package: $body"
echo "ok: GET /v1/host: $(jget .libvirt.status)"

set +e; vfctl doctor >"$tmp/doctor" 2>&1; set -e
grep -E '^WARN  libvirt ' "$tmp/doctor" | grep -q "VMs cannot get VFs" ||
	fail "doctor has no WARN libvirt line: $(cat "$tmp/doctor")"
grep -A3 -E '^WARN  libvirt ' "$tmp/doctor" | grep -q "apt-get install libvirt0" ||
	fail "doctor's fix does not name the package: $(cat "$tmp/doctor")"
echo "ok: vfctl doctor: $(grep -E '^WARN  libvirt ' "$tmp/doctor")"

# containers get VFs
vfctl -o json alloc eth --owner netns:vfa-optlibs --netns vfa-optlibs --ifname opt0 >"$tmp/alloc" ||
	fail "alloc into a netns without libvirt: $(cat "$tmp/alloc")"
id=$(jq -r .id "$tmp/alloc")
ip -n vfa-optlibs link show opt0 >/dev/null || fail "no opt0 in vfa-optlibs"
vfctl release "$id" >/dev/null || fail "release $id"
ip link show ens5f0v0 >/dev/null || fail "ens5f0v0 did not come back"
echo "ok: a VF into vfa-optlibs and back"

# VMs do not, and the refusal names the package
set +e; vfctl alloc eth --owner vm:guest --domain guest >"$tmp/vm" 2>&1; rc=$?; set -e
[ "$rc" != 0 ] && grep -q "install libvirt0" "$tmp/vm" ||
	fail "a domain attach without libvirt: exit $rc: $(cat "$tmp/vm")"
echo "ok: a domain attach refused: $(cat "$tmp/vm")"
kill -0 "$agent_pid" || fail "vfagentd died"
stop_agent
ip netns del vfa-optlibs

# libvirt's library back, its daemon not installed: doctor's fix names the package, not a unit
# that is not there; with a unit installed (a file in a tmpfs on /etc/systemd/system), that unit
umount "$real"
units=$(ls /lib/systemd/system/libvirtd.service /lib/systemd/system/virtqemud.socket \
	/usr/lib/systemd/system/libvirtd.service /usr/lib/systemd/system/virtqemud.socket 2>/dev/null || true)
mount -t tmpfs tmpfs /etc/systemd/system
printf '{ "pools": [ { "name": "eth", "selector": { "vendors": ["8086"] } } ],\n' >"$tmp/vfagent.json"
printf '  "libvirt": { "uri": "qemu:///system?socket=%s/none.sock" } }\n' "$tmp" >>"$tmp/vfagent.json"
start_agent --config "$tmp/vfagent.json"
fix() {
	set +e; vfctl -o json doctor >"$tmp/doctor" 2>&1; set -e
	jq -r '.checks[] | select(.check == "libvirt") | .fix' "$tmp/doctor"
}
if [ -z "$units" ]; then
	fix | grep -q "no libvirt daemon is installed: apt-get install libvirt-daemon-system" ||
		fail "doctor's fix without a libvirt daemon: $(cat "$tmp/doctor")"
	echo "ok: no libvirt daemon installed: $(fix)"
fi
: >/etc/systemd/system/virtqemud.socket
fix | grep -q "^systemctl start virtqemud.socket" || fail "doctor's fix with virtqemud: $(cat "$tmp/doctor")"
: >/etc/systemd/system/libvirtd.service
fix | grep -q "^systemctl start libvirtd.service" || fail "doctor's fix with libvirtd: $(cat "$tmp/doctor")"
echo "ok: doctor names the unit installed: $(fix)"
umount /etc/systemd/system
stop_agent

# libibverbs' drivers: a host whose PFs have RDMA devices (the simulated tree, read as a real
# one with --sysfs-root) and a libibverbs that lists none (this machine's: no RDMA hardware,
# as a host without ibverbs-providers sees its own) says so once at start, in GET /v1/host
# and in doctor, naming the package
if [ -n "$(ls /sys/class/infiniband_verbs 2>/dev/null)" ]; then
	echo "SKIP (part): this machine has RDMA devices that libibverbs lists"
else
	: >"$tmp/agent.log"
	printf '{ "pools": [ { "name": "ib", "selector": { "vendors": ["15b3"] } } ], "libvirt": false }' \
		>"$tmp/real.json"
	"$b/agent/vfagentd" --sysfs-root "$tmp/sys" --config "$tmp/real.json" --state-dir "$tmp/real" \
		--listen "unix:$sock" >>"$tmp/agent.log" 2>&1 &
	agent_pid=$!
	for _ in $(seq 100); do vfctl pools >/dev/null 2>&1 && break; sleep 0.1; done
	vfctl pools >/dev/null 2>&1 || fail "vfagentd on $tmp/sys did not answer in 10 s"
	n=$(grep -c "libibverbs lists none of the" "$tmp/agent.log" || true)
	[ "$n" = 1 ] && grep "libibverbs lists none" "$tmp/agent.log" | grep -q "install ibverbs-providers" ||
		fail "the log says $n times that libibverbs lists no device: $(cat "$tmp/agent.log")"
	api GET /v1/host
	jget .rdma.status | grep -q "libibverbs lists none of the .* RDMA devices of the host's PFs (mlx5_0" ||
		fail "GET /v1/host's rdma: $body"
	set +e; vfctl doctor >"$tmp/doctor" 2>&1; set -e
	grep -A2 -E '^WARN  rdma-verbs ' "$tmp/doctor" | grep -q "apt-get install ibverbs-providers" ||
		fail "doctor has no rdma-verbs WARN naming the package: $(cat "$tmp/doctor")"
	echo "ok: libibverbs without devices: $(grep -E '^WARN  rdma-verbs' "$tmp/doctor")"
fi
echo "optional-libs: all checks passed"
