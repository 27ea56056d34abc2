#!/bin/sh
# The main job: build vfagent, start it on a simulated host, and show the inventory.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/deps.sh"
"$top/contrib/build.sh"
b=$top/build
sim=${VFAGENT_SIM_DIR:-/tmp/vfagent-sim}
rm -rf "$sim"

echo "== vfagentd --simulate $sim --once"
"$b/agent/vfagentd" --simulate "$sim" --once
echo
echo "== vfctl list"
"$b/agent/vfctl" --sysfs-root "$sim" list
echo
echo "== vfctl show 0000:3b:00.2   (a ConnectX-6 VF bound to vfio-pci)"
"$b/agent/vfctl" --sysfs-root "$sim" show 0000:3b:00.2
echo
echo "== vfctl -o json show 0000:af:01.0   (an E810 VF)"
"$b/agent/vfctl" --sysfs-root "$sim" -o json show 0000:af:01.0
