#!/bin/sh
# Every shell script that ships (hooks, contrib, tests) is shellcheck clean.
top=${top_srcdir:-.}
command -v shellcheck >/dev/null || { echo "SKIP: shellcheck is not installed"; exit 77; }
cd "$top" || exit 1
shellcheck -x hooks/guest/vfagent-ipoib hooks/one/im/vfagent-pci.sh \
	hooks/one/vmm/kvm-sriov/deploy hooks/one/vmm/kvm-sriov/shutdown \
	hooks/one/vmm/kvm-sriov/cancel hooks/one/vmm/kvm-sriov/reset hooks/one/vmm/kvm-sriov/save \
	hooks/one/vmm/kvm-sriov/restore hooks/one/vmm/kvm-sriov/migrate \
	hooks/one/vmm/kvm-sriov/vfagent-common.sh tests/libvirtd-lib.sh tests/lab/run.sh \
	tests/lab/fetch.sh tests/lab/build-initramfs.sh tests/lab/init.sh tests/lab/scenario.sh \
	bench/vm.sh tests/layout.sh
