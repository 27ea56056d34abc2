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
so=
for f in "$b"/libvfpool/.libs/libvfpool.so.*.*.*; do [ -f "$f" ] && so=$f && break; done
if [ -n "$so" ]; then
	nm -D --defined-only "$so" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort >"$tmp/so"
	diff -u "$tmp/script" "$tmp/so" || { echo "FAIL: the library exports other symbols" >&2; exit 1; }
fi
echo "symbols: $(wc -l <"$tmp/script") exported, as marked"
