#!/bin/sh
# bench/udev: runs bench/udev under umockdev-wrapper (its preload must be there from the start),
# with the agent's real binary rather than the build tree's libtool wrapper.
b=${top_builddir:-$(dirname "$0")/..}
command -v umockdev-wrapper >/dev/null || { echo "bench/udev: umockdev-wrapper is missing"; exit 77; }
[ -x "$b/bench/udev" ] || { echo "bench/udev: not built (no libumockdev-dev at configure time)"; exit 77; }
VFAGENTD=$(cd "$b" && pwd)/agent/vfagentd
[ -x "$b/agent/.libs/vfagentd" ] && VFAGENTD=$(cd "$b" && pwd)/agent/.libs/vfagentd
LD_LIBRARY_PATH="$(cd "$b" && pwd)/libvfpool/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export VFAGENTD LD_LIBRARY_PATH
exec umockdev-wrapper "$b/bench/udev"
