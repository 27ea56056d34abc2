#!/bin/sh
# Builds the Debian packages (vfagent, vfagent-opennebula) from this tree with
# contrib/debian as debian/, offline, into OUT (default build-deb/), then runs
# lintian on them. The packaging stays in contrib/ so a distribution's own
# debian/ never collides with it. Needs the Build-Depends of
# contrib/debian/control (contrib/deps.sh --tests installs them).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build-deb}
version=$(sed -n '1s/.*(\(.*\)-[^-]*).*/\1/p' "$top/contrib/debian/changelog")
src=$out/vfagent-$version
rm -rf "$out"
mkdir -p "$src"
# the tracked and new files of the working tree, not build output
(cd "$top" && git ls-files -z --cached --others --exclude-standard 2>/dev/null |
	xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' | cpio -0pdm --quiet "$src") ||
	(cd "$top" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$src" -xf -)
rm -rf "$src/debian"
cp -a "$top/contrib/debian" "$src/debian"
cd "$src"
dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1 || {
	tail -40 "$out/build.log" >&2
	echo "deb-build: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
}
ls "$out"/*.deb
if command -v lintian >/dev/null; then
	lintian --pedantic --fail-on error,warning "$out"/*.changes
fi
