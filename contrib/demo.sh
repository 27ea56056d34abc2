#!/bin/sh
# The main job: build vfagent, start vfagentd on a simulated host, and drive it
# with vfctl the way an operator would: list, pools, topo, alloc (near a GPU too),
# numvfs, release, and rewrite an OpenNebula deployment file the way the deploy
# hook does.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/deps.sh"
"$top/contrib/build.sh"
b=$top/build
# a directory of its own, so that two demos (or a demo beside a test) never share one; the
# agent makes a network namespace of its own for the simulated host's links
work=$(mktemp -d /tmp/vfagent-demo-XXXXXX)
sim=${VFAGENT_SIM_DIR:-$work/sim}
sock=$sim.sock
rm -rf "$sim" "$sock"
export VFAGENT_SOCKET="$sock"

"$b/agent/vfagentd" --simulate "$sim" --listen "unix:$sock" 2>"$sim.log" &
agent=$!
trap 'kill $agent 2>/dev/null; wait $agent 2>/dev/null; [ -n "${KEEP_TMP:-}" ] || rm -rf "$work"' EXIT
for _ in $(seq 50); do
	"$b/agent/vfctl/vfctl" pools >/dev/null 2>&1 && break
	sleep 0.1
done
run() {
	printf '\n$ vfctl %s\n' "$*"
	"$b/agent/vfctl/vfctl" "$@"
}

echo "vfagentd is serving a simulated host (sysfs in $sim, socket $sock, log $sim.log; removed at exit unless KEEP_TMP=1), its links in a network namespace of its own"
run list
run pools
run topo
echo "(the simulated host's GPU at 0000:39:00.0 shares a PCIe switch with the ConnectX-6: two VFs beside it)"
run alloc ib --owner vm:one-42 -n 2 --ip 10.1.0.5/16 --near 0000:39:00.0 --max-distance PIX
# a container owner must exist: this shell's own process stands in for one
id=$("$b/agent/vfctl/vfctl" -o json alloc eth --owner "pid:$$" --pack | sed -n 's/^  "id": "\(.*\)",$/\1/p')
printf '\n$ vfctl alloc eth --owner pid:%s --pack\nallocation %s\n' "$$" "$id"
run allocations
run numvfs 0000:d8:00.0 6 --dry-run || true
run numvfs 0000:af:00.0 8 --dry-run
run numvfs 0000:af:00.0 8
run pools
run release "$id"
run numvfs 0000:d8:00.0 6
run show 0000:d8:11.0
printf '\n$ curl --unix-socket %s -X POST --data-binary @tests/one/two-ib-one-eth.xml '"'"'http://x/v1/domain-xml?vlan=02:00:c0:a8:02:2a=120'"'"'\n' "$sock"
echo "(an OpenNebula deployment file: its NICs on sriov_ib0 and sriov_eth0 become VFs, with IPoIB dummy NICs; the VLAN from vm.xml, as the deploy hook passes it)"
curl -s --unix-socket "$sock" -X POST --data-binary "@$top/tests/one/two-ib-one-eth.xml" \
	'http://x/v1/domain-xml?vlan=02:00:c0:a8:02:2a=120' | grep -E '<(hostdev|interface|mac|address|link|vlan|tag|uuid)'
run pools
printf '\nThe agent logged:\n'
tail -5 "$sim.log"
