#!/bin/sh
# A real runtime: podman (Debian 12's 4.3, its CNI backend, runc) runs a
# container of a local image (a static busybox, imported from a rootfs tar:
# no registry) on a network of the "vfagent" plugin, with static IPAM. The
# container sees the VF netdev (a veth stand-in of the simulated host) with
# its address; the agent's ledger holds it under the attachment's key while
# the container runs; when it exits podman's DEL brings the netdev home and
# frees the VF. Networks written as sriov-cni's and ib-sriov-cni's
# documentation writes them (single .conf files, deviceID, host-local IPAM),
# only "type" changed, run containers too; podman's --mac-address reaches the
# agent as the VF's MAC (the simulated PF answers no VF settings, so that
# ADD fails with the kernel's reason, and the ledger shows what was asked).
# Podman keeps everything in this test's directory (its storage, its run
# state, the networks' configs, a containers.conf).
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (podman's CNI backend runs as root)"
command -v podman >/dev/null && command -v runc >/dev/null || skip "podman and runc are needed (contrib/deps.sh --tests)"
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	skip "a static /bin/busybox is needed (busybox-static)"
command -v ip >/dev/null && command -v jq >/dev/null || skip "ip and jq are needed"
links="ens5f0v0 ib0v0"
teardown() {
	[ -n "${P:-}" ] && "$P" rm -af >/dev/null 2>&1
	[ -n "${P:-}" ] && "$P" system reset -f >/dev/null 2>&1
	for l in $links; do ip link del "$l" 2>/dev/null || true; done
	cleanup
}
trap teardown EXIT
for l in $links; do ip link add "$l" type veth peer name "p-$l"; done
printf '%s' '{"pools": [{"name": "c", "selector": {"pci_addresses": ["0000:af:01.0"]}},
 {"name": "ib", "selector": {"pci_addresses": ["0000:3b:00.1"]}}]}' >"$tmp/config.json"
start_agent --config "$tmp/config.json"

# the plugin where podman looks for it; the network's conflist; podman's settings
mkdir -p "$tmp/cnibin" "$tmp/cni" "$tmp/rootfs/bin"
cp "$b/hooks/cni/vfagent" "$tmp/cnibin/vfagent"
cat >"$tmp/cni/vfnet.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "vfnet",
 "plugins": [{"type": "vfagent", "pool": "c", "socket": "$tmp/vfagent-cni.sock",
              "ipam": {"type": "static", "addresses": [{"address": "10.9.0.5/24", "gateway": "10.9.0.1"}],
                       "routes": [{"dst": "0.0.0.0/0"}]}}]}
JSON
cat >"$tmp/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[network]
network_backend = "cni"
cni_plugin_dirs = ["$tmp/cnibin", "/usr/lib/cni"]
network_config_dir = "$tmp/cni"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF="$tmp/containers.conf"
# podman with its state in this test's directory, as a command timeout can run
printf '#!/bin/sh\nexec podman --root "%s/storage" --runroot "%s/run" --storage-driver vfs --tmpdir "%s/podman-tmp" "$@"\n' \
	"$tmp" "$tmp" "$tmp" >"$tmp/pm"
chmod +x "$tmp/pm"
P=$tmp/pm

# the image: a static busybox, no registry
cp /bin/busybox "$tmp/rootfs/bin/busybox"
tar -C "$tmp/rootfs" -cf "$tmp/rootfs.tar" .
"$P" import "$tmp/rootfs.tar" localhost/vfagent-busybox:test >"$tmp/podman.log" 2>&1 ||
	skip "podman cannot import an image here: $(tail -1 "$tmp/podman.log")"
if ! timeout 120 "$P" run --rm --network none localhost/vfagent-busybox:test /bin/busybox true >>"$tmp/podman.log" 2>&1; then
	skip "podman cannot run a container here: $(tail -1 "$tmp/podman.log")"
fi

# the container on the plugin's network: it sees the VF netdev with its address
"$P" network ls --format '{{.Name}}' | grep -qx vfnet || fail "podman does not list vfnet: $("$P" network ls 2>&1)"
timeout 120 "$P" run --name vfa-ctr --network vfnet localhost/vfagent-busybox:test \
	/bin/busybox sh -c '/bin/busybox ip -o addr show; /bin/busybox ip route; /bin/busybox cat /sys/class/net/eth0/address' \
	>"$tmp/inside" 2>>"$tmp/podman.log" || fail "podman run on vfnet: $(tail -5 "$tmp/podman.log")"
grep -q 'eth0 *inet 10.9.0.5/24' "$tmp/inside" || fail "the container did not see 10.9.0.5/24 on eth0: $(cat "$tmp/inside")"
grep -q 'default via 10.9.0.1 dev eth0' "$tmp/inside" || fail "no default route inside: $(cat "$tmp/inside")"
ctr=$("$P" inspect vfa-ctr --format '{{.Id}}')
# the ledger: the attachment podman made, keyed by its container ID and interface
api GET '/v1/allocations?include_released=true'
[ "$(jget "[.allocations[] | select(.idempotency_key == \"cni:vfnet/$ctr/eth0\")] | length")" = 1 ] ||
	fail "no allocation for podman's attachment $ctr: $body"
# the container exited; podman's cleanup ran DEL: the VF is home and free
"$P" rm vfa-ctr >>"$tmp/podman.log" 2>&1 || fail "podman rm: $(tail -3 "$tmp/podman.log")"
for _ in $(seq 300); do ip link show ens5f0v0 >/dev/null 2>&1 && break; sleep 0.1; done
ip link show ens5f0v0 >/dev/null 2>&1 || fail "ens5f0v0 did not come home after the container"
api GET /v1/vfs/0000:af:01.0; [ "$(jget .state)" = free ] || fail "the VF is $(jget .state) after the container"

# sriov-cni's "kernel driver config" and ib-sriov-cni's usage example, each the one plugin of
# a conflist (podman reads conflists only); deviceID, which Multus adds, written in
cat >"$tmp/cni/20-sriov-network.conflist" <<JSON
{"cniVersion": "0.3.1", "name": "sriov-network", "plugins": [
{
  "type": "vfagent",
  "cniVersion": "0.3.1",
  "name": "sriov-network",
  "deviceID": "0000:af:01.0",
  "socket": "$tmp/vfagent-cni.sock",
  "ipam": {
    "type": "host-local",
    "subnet": "10.56.217.0/24",
    "routes": [{
      "dst": "0.0.0.0/0"
    }],
    "gateway": "10.56.217.1",
    "dataDir": "$tmp/ipam"
  }
}]}
JSON
cat >"$tmp/cni/10-ib-sriov.conflist" <<JSON
{"cniVersion": "0.3.1", "name": "mynet", "plugins": [
{
    "cniVersion": "0.3.1",
    "name": "mynet",
    "type": "vfagent",
    "deviceID": "0000:3b:00.1",
    "rdmaIsolation": true,
    "ibKubernetesEnabled": false,
    "socket": "$tmp/vfagent-cni.sock",
    "ipam": {
                "type": "host-local",
                "subnet": "10.56.218.0/24",
                "rangeStart": "10.56.218.171",
                "rangeEnd": "10.56.218.181",
                "routes": [
                        { "dst": "0.0.0.0/0" }
                ],
                "gateway": "10.56.218.1",
                "dataDir": "$tmp/ipam"
        }
}]}
JSON
for net in sriov-network:10.56.217.2/24:ens5f0v0:0000:af:01.0 mynet:10.56.218.171/24:ib0v0:0000:3b:00.1; do
	name=${net%%:*} rest=${net#*:}; addr=${rest%%:*} rest=${rest#*:}; link=${rest%%:*} vf=${rest#*:}
	timeout 120 "$P" run --rm --network "$name" localhost/vfagent-busybox:test \
		/bin/busybox sh -c '/bin/busybox ip -o addr show; /bin/busybox ip route' \
		>"$tmp/inside" 2>>"$tmp/podman.log" || fail "podman run on $name: $(tail -5 "$tmp/podman.log")"
	grep -q "eth0 *inet $addr" "$tmp/inside" || fail "$name: no $addr on eth0: $(cat "$tmp/inside")"
	grep -q "default via ${addr%.*}.1 dev eth0" "$tmp/inside" || fail "$name: no default route: $(cat "$tmp/inside")"
	for _ in $(seq 300); do ip link show "$link" >/dev/null 2>&1 && break; sleep 0.1; done
	api GET "/v1/vfs/$vf"; [ "$(jget .state)" = free ] || fail "$name: the VF is $(jget .state) after the container"
done

# podman run --mac-address on sriov-cni's network: the MAC reaches the agent's claim for the VF
set +e
timeout 120 "$P" run --rm --network sriov-network --mac-address 02:00:c0:ff:ee:01 \
	localhost/vfagent-busybox:test /bin/busybox true >>"$tmp/podman.log" 2>&1
rc=$?
set -e
[ "$rc" != 0 ] || fail "--mac-address on the simulated PF succeeded"
tail -3 "$tmp/podman.log" | grep -q 'PF ens5f0' || fail "--mac-address: not the PF's refusal: $(tail -3 "$tmp/podman.log")"
api GET '/v1/allocations?include_released=true'
[ "$(jget '[.allocations[] | select(.settings.mac == "02:00:c0:ff:ee:01" and .pool == "c")] | length')" -ge 1 ] ||
	fail "podman's --mac-address did not reach the agent: $body"
api GET /v1/vfs/0000:af:01.0; [ "$(jget .state)" = free ] || fail "the refused ADD left the VF $(jget .state)"
echo "cni-podman: podman $("$P" --version | cut -d' ' -f3) ran containers on the vfagent plugin's networks, ours, sriov-cni's and ib-sriov-cni's"
