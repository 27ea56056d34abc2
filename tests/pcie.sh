#!/bin/sh
# Placement by PCIe distance over a real unix socket, on the simulated host's
# tree: the ConnectX-6 (3b:00.0) beside a GPU (39:00.0) on one PCIe switch,
# the ConnectX-3 (5e:00.0) on another switch of the same root complex
# (pci0000:36), the Intel PFs on root complexes of their own. GET /v1/pcie
# and vfctl topo show it; GET /v1/vfs carries DRA's pcieRoot and numaNode;
# claims near the GPU get the closest free VFs, within a bound or refused
# naming the best distance there is; bad input is a 400 naming the field.
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
command -v jq >/dev/null || { echo "jq is needed"; exit 77; }
start_agent

# ---- the tree
api GET /v1/pcie; expect 200
pf() { jget ".pfs[] | select(.pci == \"$1\") | $2"; }
[ "$(pf 0000:3b:00.0 .pcieRoot)" = pci0000:36 ] || fail "pcieRoot of 3b:00.0: $body"
[ "$(pf 0000:3b:00.0 '[.path[].role] | join(",")')" = root_port,switch_upstream,switch_downstream ] ||
	fail "path of 3b:00.0: $body"
[ "$(pf 0000:3b:00.0 '.path[0].acs.p2p_redirect')" = true ] || fail "root port ACS: $body"
[ "$(pf 0000:3b:00.0 '.vfs[0].parent')" = 0000:38:02.0 ] || fail "VF parent: $body"
[ "$(pf 0000:af:00.0 .numaNode)" = 1 ] || fail "numaNode of af:00.0: $body"
[ "$(pf 0000:d8:00.0 'has("numaNode")')" = false ] || fail "d8:00.0 has no NUMA node: $body"
gpu='.devices[] | select(.pci == "0000:39:00.0")'
[ "$(jget "$gpu | .kind")" = gpu ] || fail "GPU: $body"
[ "$(jget "[$gpu | .distances[] | .distance] | join(\",\")")" = PIX,PHB,SYS,SYS ] ||
	fail "GPU distances: $body"
[ "$(jget '[.devices[] | select(.kind == "nvme")] | length')" = 1 ] || fail "NVMe: $body"
vfctl topo >"$tmp/topo"
grep -q '^0000:39:00.0  gpu         pci0000:36   0    PIX           PHB  ' "$tmp/topo" ||
	fail "vfctl topo: $(cat "$tmp/topo")"
vfctl topo --local --sysfs-root "$tmp/sys" >"$tmp/topo-local"
cmp -s "$tmp/topo" "$tmp/topo-local" || fail "vfctl topo --local differs: $(cat "$tmp/topo-local")"

# ---- DRA's attributes on every VF
api GET /v1/vfs; expect 200
[ "$(jget '[.vfs[] | select(.pf == "0000:3b:00.0") | .pcieRoot] | unique | join(",")')" = pci0000:36 ] ||
	fail "pcieRoot on VFs: $body"
[ "$(jget '.vfs[] | select(.pci == "0000:af:01.0") | .numaNode')" = 1 ] || fail "numaNode: $body"
[ "$(jget '.vfs[] | select(.pci == "0000:d8:10.0") | has("numaNode")')" = false ] ||
	fail "a VF without a NUMA node has no numaNode: $body"

# ---- claims near the GPU: pool ib has 4 free VFs beside it (PIX), 4 on the other switch (PHB)
claim() { api POST /v1/allocations -d "{\"pool\":\"ib\",\"owner\":{\"kind\":\"vm\",\"name\":\"g\"},$1}"; }
pfs_of() { jget '[.vfs[].pf] | join(",")'; }
claim '"count":2,"near":"0000:39:00.0"'; expect 201
[ "$(pfs_of)" = 0000:3b:00.0,0000:3b:00.0 ] || fail "near, spread: $body"
claim '"count":3,"near":"39:00.0","max_distance":"PIX"'; expect 409
[ "$(jget .message)" = 'max_distance: no 3 free VFs of pool "ib" within PIX of 39:00.0; the closest free VFs are PIX (2)' ] ||
	fail "refusal: $body"
api GET '/v1/vfs?pool=ib&state=free'; [ "$(jget '.vfs | length')" = 6 ] || fail "a refusal took VFs: $body"
claim '"count":3,"near":"0000:39:00.0","max_distance":"PHB","placement":"pack"'; expect 201
[ "$(pfs_of)" = 0000:3b:00.0,0000:3b:00.0,0000:5e:00.0 ] || fail "near within PHB: $body"
out=$(vfctl alloc ib --owner vm:g2 --near 0000:39:00.0 --max-distance PIX 2>&1) &&
	fail "vfctl alloc beyond the bound: $out"
printf '%s' "$out" | grep -q 'the closest free VFs are PHB (3)' || fail "vfctl alloc: $out"
vfctl -o json alloc ib --owner vm:g2 --near 0000:39:00.0 --max-distance phb >"$tmp/a" ||
	fail "vfctl alloc --near: $(cat "$tmp/a")"
[ "$(jq -r '.vfs[0].pf' "$tmp/a")" = 0000:5e:00.0 ] || fail "vfctl alloc --near: $(cat "$tmp/a")"

# ---- bad input: 400 naming the field; a device that is not here: 404
claim '"near":"gpu0"'; expect 400
[ "$(jget .message)" = 'near: "gpu0" is not a PCI address' ] || fail "bad near: $body"
claim '"near":"0000:39:00.0","max_distance":"NV12"'; expect 400
jget .message | grep -q '^max_distance: must be PIX' || fail "bad max_distance: $body"
claim '"max_distance":"PIX"'; expect 400
jget .message | grep -q '^max_distance: needs "near"' || fail "max_distance alone: $body"
claim '"near":"0000:39:00.0","pci":"0000:5e:00.3"'; expect 400
claim '"near":"0000:99:00.0"'; expect 404
[ "$(jget .message)" = 'near: no PCI device 0000:99:00.0 on this host' ] || fail "unknown near: $body"
echo "pcie: tree, DRA attributes, claims near a GPU, refusals and bad input as expected"
