#!/bin/sh
# Runs the hotplug test under umockdev-wrapper (it needs the preload from the start).
b=${top_builddir:-.}
command -v umockdev-wrapper >/dev/null || { echo "umockdev-wrapper is missing"; exit 77; }
command -v jq >/dev/null || exit 77
# umockdev's preload must come first, ASan's too: they cannot share a process
ldd "$b/tests/udev-hotplug" "$b/agent/.libs/vfagentd" 2>/dev/null | grep -q libasan &&
	{ echo "skipped under AddressSanitizer"; exit 77; }
VFAGENTD=$(cd "$b" && pwd)/agent/vfagentd
# vfagentd is a libtool wrapper script in the build tree: run the real binary
[ -x "$b/agent/.libs/vfagentd" ] && VFAGENTD=$(cd "$b" && pwd)/agent/.libs/vfagentd
LD_LIBRARY_PATH="$(cd "$b" && pwd)/libvfpool/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export VFAGENTD LD_LIBRARY_PATH
exec umockdev-wrapper "$b/tests/udev-hotplug"
