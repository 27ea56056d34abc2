#!/bin/sh
# The version script exports exactly the functions marked VFP_EXPORT, and the
# installed library exports exactly the version script's symbols.
set -eu
src=${top_srcdir:-.}
b=${top_builddir:-.}
tmp=$(mktemp -d /tmp/vfagent-syms-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
grep -ho 'VFP_EXPORT [^(]*(' "$src"/libvfpool/*.c | sed 's/.*[ *]\([a-z_0-9]*\)($/\1/' | sort >"$tmp/marked"
grep -o 'vfp_[a-z_0-9]*;' "$src/libvfpool/libvfpool.sym" | tr -d ';' | sort >"$tmp/script"
diff -u "$tmp/marked" "$tmp/script" || { echo "FAIL: VFP_EXPORT and libvfpool.sym differ" >&2; exit 1; }
so= # the one the link names: a build dir keeps an older soname's file after a bump
[ -e "$b/libvfpool/.libs/libvfpool.so" ] && so=$(readlink -f "$b/libvfpool/.libs/libvfpool.so")
if [ -n "$so" ]; then
	nm -D --defined-only "$so" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort >"$tmp/so"
	diff -u "$tmp/script" "$tmp/so" || { echo "FAIL: the library exports other symbols" >&2; exit 1; }
fi
# The public structs (and the VFP_ constants their arrays use) are the ABI as much as the
# symbols: the caller allocates them. Their text, without comments and blanks, is recorded in
# libvfpool.abi with libtool's current of configure.ac; a change with the same current fails.
perl -0777 -pe 's{/\*.*?\*/}{}gs' "$src/libvfpool/libvfpool.h" |
	awk '/^#define VFP_/ || /^struct vfp_[a-z_0-9]* \{/, /^(#define VFP_.*|\};)$/' |
	tr -d ' \t\n' | sha256sum | cut -d' ' -f1 >"$tmp/structs"
lt=$(sed -n 's/^AC_SUBST(\[LIBVFPOOL_LT_VERSION\], \[\([0-9:]*\)\])$/\1/p' "$src/configure.ac")
[ -n "$lt" ] || { echo "FAIL: no LIBVFPOOL_LT_VERSION in configure.ac" >&2; exit 1; }
rec_current=$(sed -n 's/^current //p' "$src/libvfpool/libvfpool.abi")
rec_structs=$(sed -n 's/^structs //p' "$src/libvfpool/libvfpool.abi")
[ "${lt%%:*}" = "$rec_current" ] || {
	echo "FAIL: configure.ac's libtool version $lt, libvfpool.abi records current $rec_current" >&2
	exit 1
}
[ "$(cat "$tmp/structs")" = "$rec_structs" ] || {
	echo "FAIL: libvfpool.h's public structs changed at libtool current $rec_current: an ABI" \
		"break; bump configure.ac's LIBVFPOOL_LT_VERSION to $((rec_current + 1)):0:0 and record" \
		"\"current $((rec_current + 1))\" and \"structs $(cat "$tmp/structs")\" in libvfpool.abi" >&2
	exit 1
}
if [ -n "$so" ]; then
	soname=$(objdump -p "$so" | awk '$1 == "SONAME" {print $2}')
	want=libvfpool.so.$((${lt%%:*} - ${lt##*:}))
	[ "$soname" = "$want" ] || { echo "FAIL: $so has SONAME $soname, $lt makes $want" >&2; exit 1; }
fi
echo "symbols: $(wc -l <"$tmp/script") exported, as marked; structs as recorded for libtool $lt"
