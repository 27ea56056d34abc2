#!/bin/sh
# Configures and builds vfagent in ./build (out of tree). Extra arguments go to configure.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BUILD_DIR:-$top/build}
cd "$top"
# shellcheck disable=SC3013 # -nt: dash and every sh on Debian have it
[ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ] ||
	autoreconf -fi >/dev/null 2>&1
mkdir -p "$dir"
cd "$dir"
"$top/configure" -q "$@"
make -s -j"$(nproc)" >/dev/null
