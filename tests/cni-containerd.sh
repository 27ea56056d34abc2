#!/bin/sh
# A second real runtime: containerd (Debian 12's 1.6, runc) runs a container
# with "ctr run --cni" on a network of the "vfagent" plugin. ctr reads the
# first network of /etc/cni/net.d and the plugins of /opt/cni/bin (go-cni's
# defaults, not settable from ctr), so it runs in a mount namespace of its
# own where tmpfs copies of this test's directories stand there; containerd
# keeps its root, state and socket in this test's directory. The image is
# a static busybox in an OCI archive made here (no registry). The container
# sees the VF netdev (a veth stand-in of the simulated host) with its
# address and route; the attachment is owned by the namespace of the task's
# process (/proc/PID/ns/net, the lease). ctr runs DEL after the task exited,
# when that namespace is gone: a real VF's netdev is back in the host by
# then, a veth stand-in died with it, so the VF ends quarantined here (as in
# tests/netns.sh) and DEL still succeeds.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
for c in containerd ctr runc unshare sha256sum jq ip; do
	command -v "$c" >/dev/null || skip "$c is needed (contrib/deps.sh --tests)"
done
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || skip "a static /bin/busybox is needed (busybox-static)"
cnipath=${CNI_PATH:-/usr/lib/cni}
[ -x "$cnipath/static" ] || skip "no $cnipath/static (containernetworking-plugins)"
links="ens5f0v0"
ctd_pid=
teardown() {
	[ -n "$ctd_pid" ] && kill "$ctd_pid" 2>/dev/null && wait "$ctd_pid" 2>/dev/null
	for l in $links; do ip link del "$l" 2>/dev/null || true; done
	cleanup
}
trap teardown EXIT
for l in $links; do ip link add "$l" type veth peer name "p-$l"; done
printf '%s' '{"pools": [{"name": "c", "selector": {"pci_addresses": ["0000:af:01.0"]}}]}' >"$tmp/config.json"
start_agent --config "$tmp/config.json"

# containerd, all of it here
d=$tmp/ctd
mkdir -p "$d/root" "$d/state"
cat >"$d/config.toml" <<TOML
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$d/ctd.sock"
[ttrpc]
  address = "$d/ctd.sock.ttrpc"
TOML
containerd --config "$d/config.toml" >"$d/log" 2>&1 &
ctd_pid=$!
for _ in $(seq 100); do [ -S "$d/ctd.sock" ] && break; sleep 0.1; done
[ -S "$d/ctd.sock" ] || skip "containerd did not start: $(tail -3 "$d/log")"
c() { ctr -a "$d/ctd.sock" "$@"; }

# the image: an OCI archive of a static busybox
mkdir -p "$tmp/rootfs/bin" "$tmp/oci/blobs/sha256"
cp /bin/busybox "$tmp/rootfs/bin/busybox"
tar -C "$tmp/rootfs" -cf "$tmp/layer.tar" .
blob() { # FILE: into the layout; its digest in $h, its size in $n
	h=$(sha256sum "$1" | cut -d' ' -f1) n=$(stat -c %s "$1")
	cp "$1" "$tmp/oci/blobs/sha256/$h"
}
blob "$tmp/layer.tar"; layer=$h layer_size=$n
printf '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"config":{}}' \
	"$layer" >"$tmp/config-blob.json"
blob "$tmp/config-blob.json"; cfg=$h cfg_size=$n
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
	"$cfg" "$cfg_size" "$layer" "$layer_size" >"$tmp/manifest.json"
blob "$tmp/manifest.json"; man=$h man_size=$n
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"localhost/vfagent-busybox:test","org.opencontainers.image.ref.name":"test"}}]}' \
	"$man" "$man_size" >"$tmp/oci/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$tmp/oci/oci-layout"
tar -C "$tmp/oci" -cf "$tmp/image.tar" .
c images import --snapshotter native "$tmp/image.tar" >"$d/import.log" 2>&1 ||
	skip "ctr cannot import an image here: $(tail -1 "$d/import.log")"

# the network ctr finds first (as sriov-cni configs name their VF: deviceID, no pool), the plugins
# where it looks
mkdir -p "$tmp/netd" "$tmp/opt/cni/bin"
cat >"$tmp/netd/00-vfnet.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "vfnet",
 "plugins": [{"type": "vfagent", "deviceID": "0000:af:01.0", "socket": "$tmp/vfagent-cni.sock", "cacheDir": "$tmp/cache",
              "ipam": {"type": "static", "addresses": [{"address": "10.9.5.5/24", "gateway": "10.9.5.1"}],
                       "routes": [{"dst": "0.0.0.0/0"}]}}]}
JSON
cp "$b/hooks/cni/vfagent" "$cnipath/static" "$tmp/opt/cni/bin/"
run_ctr() { # ARGS...: ctr with /etc/cni/net.d and /opt as this test's, in a mount namespace of its own
	# shellcheck disable=SC2016 # the inner shell expands them
	timeout 120 unshare --mount --propagation private sh -c '
		mount --bind "$1/netd" /etc/cni/net.d && mount --bind "$1/opt" /opt || exit 125
		shift; exec "$@"' sh "$tmp" ctr -a "$d/ctd.sock" "$@"
}
set +e
run_ctr run --rm --cni --snapshotter native localhost/vfagent-busybox:test vfa-ctd \
	/bin/busybox sh -c '/bin/busybox ip -o addr show; /bin/busybox ip route' \
	>"$tmp/inside" 2>"$d/run.log"
rc=$?
set -e
[ "$rc" != 125 ] || skip "no private mount namespace here"
[ "$rc" = 0 ] || fail "ctr run --cni: exit $rc: $(tail -5 "$d/run.log") / containerd: $(tail -3 "$d/log")"
grep -q 'eth0 *inet 10.9.5.5/24' "$tmp/inside" || fail "the container did not see 10.9.5.5/24 on eth0: $(cat "$tmp/inside")"
grep -q 'default via 10.9.5.1 dev eth0' "$tmp/inside" || fail "no default route inside: $(cat "$tmp/inside")"
# the ledger: the attachment ctr made, keyed by its namespace-qualified ID, owned by the task's
# process; released when ctr's DEL ran after the container exited
api GET '/v1/allocations?include_released=true'
[ "$(jget '[.allocations[] | select(.idempotency_key == "cni:vfnet/default-vfa-ctd/eth0")] | length')" = 1 ] ||
	fail "no allocation for ctr's attachment: $body"
[ "$(jget '.allocations[] | select(.idempotency_key == "cni:vfnet/default-vfa-ctd/eth0") | .owner.pid > 0')" = true ] ||
	fail "the attachment's owner is not the task's process: $body"
[ "$(jget '.allocations[] | select(.idempotency_key == "cni:vfnet/default-vfa-ctd/eth0") | .state')" = released ] ||
	fail "ctr's DEL did not release it: $body"
grep -q 'failed to remove network' "$d/run.log" && fail "ctr's DEL failed: $(cat "$d/run.log")"
api GET /v1/vfs/0000:af:01.0; [ "$(jget .state)" = quarantined ] || fail "the VF is $(jget .state) after the container"
grep -q 'VF 0000:af:01.0: the netdev of VF 0000:af:01.0 is not back in the host, and namespace pid:[0-9]* is gone' \
	"$tmp/agent.log" || fail "the stand-in's end is not the reason: $(tail -5 "$tmp/agent.log")"
echo "cni-containerd: ctr $(ctr --version | cut -d' ' -f3) run --cni ran a container on the vfagent plugin's network"
