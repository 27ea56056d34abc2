#!/bin/sh
# Builds the Debian packages (vfagent, vfagent-opennebula, vfagent-opennebula-node)
# from this tree with contrib/debian as debian/, offline, into OUT (default build-deb/),
# checks that their programs are hardened (PIE, BIND_NOW, linked dynamically), and runs
# lintian --pedantic on them, printing its counts. The packaging stays in contrib/ so a distribution's own
# debian/ never collides with it. Needs the Build-Depends of
# contrib/debian/control (contrib/deps.sh --tests installs them).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build-deb}
version=$(sed -n '1s/.*(\(.*\)-[^-]*).*/\1/p' "$top/contrib/debian/changelog")
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd) # the build below runs in another directory
src=$out/vfagent-$version
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

# Every ELF program the packages ship is PIE and bound now (the CNI plugin was static: neither)
x=$out/extract
for d in "$out"/*.deb; do dpkg-deb -x "$d" "$x"; done
find "$x" -type f -perm -u+x | while read -r f; do
	readelf -h "$f" >/dev/null 2>&1 || continue # not ELF
	readelf -h "$f" | grep -q 'Type:.*DYN' || { echo "deb-build: ${f#"$x"} is not PIE" >&2; exit 1; }
	readelf -d "$f" | grep -q 'BIND_NOW\|FLAGS_1.*NOW' ||
		{ echo "deb-build: ${f#"$x"} is not linked with BIND_NOW" >&2; exit 1; }
	readelf -d "$f" | grep -q NEEDED || { echo "deb-build: ${f#"$x"} is static" >&2; exit 1; }
	echo "deb-build: ${f#"$x"}: PIE, BIND_NOW, $(readelf -d "$f" | grep -c NEEDED) shared libraries"
done
rm -rf "$x"

# lintian, pedantic: no error, warning, info or pedantic tag but those overridden (each with
# its reason in debian/*.lintian-overrides); the counts per kind for CI's log
if command -v lintian >/dev/null; then
	lintian --pedantic --display-info --show-overrides "$out"/*.changes >"$out/lintian.txt" 2>&1 || true
	count() { grep -c "^$1: " "$out/lintian.txt" || true; }
	echo "deb-build: lintian --pedantic: E $(count E) W $(count W) I $(count I) P $(count P)" \
		"X $(count X), overridden $(count O)"
	grep '^O: ' "$out/lintian.txt" | sed 's/^/deb-build: lintian overridden: /' || true
	if grep -q '^[EWIP]: ' "$out/lintian.txt"; then
		grep '^[EWIP]: ' "$out/lintian.txt" >&2
		echo "deb-build: lintian tags above are not explained (debian/*.lintian-overrides)" >&2
		exit 1
	fi
fi
