#!/bin/sh
# Configures and builds vfagent in ./build (out of tree). Extra arguments go to configure.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BUILD_DIR:-$top/build}
cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ] ||
	autoreconf -fi >/dev/null 2>&1
mkdir -p "$dir"
cd "$dir"
"$top/configure" -q "$@"
make -s -j"$(nproc)" >/dev/null
