#!/bin/sh
# Which tests of a build ran and which skipped; with CI=true, a skip not named for that build
# in tests/skips-allowed fails. Usage: skip-policy.sh BUILD BUILDDIR, or skip-policy.sh BUILD -
# TEST RC for a test run outside make (the lab). Tests are named without their extension.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$1 dir=$2
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if [ "$dir" = - ]; then
	result=PASS
	[ "$4" = 77 ] && result=SKIP
	echo "$3 $result" >"$tmp"
else
	find "$dir/tests" -name '*.trs' | sort | while read -r trs; do
		name=${trs#"$dir"/}
		echo "${name%.trs} $(sed -n 's/^:test-result: //p' "$trs" | sort -u | tr '\n' ' ')"
	done >"$tmp"
fi
ran=$(grep -c ' PASS' "$tmp" || true)
skipped=$(grep ' SKIP' "$tmp" | cut -d' ' -f1 | tr '\n' ' ')
echo "$build: $ran ran${skipped:+, skipped: $skipped}"
bad=0
for t in $skipped; do
	if grep -q "^$build $t " "$top/tests/skips-allowed"; then
		echo "  $t skipped, as tests/skips-allowed allows for $build"
	elif [ "${CI:-}" = true ]; then
		echo "FAIL: $t skipped in $build, and tests/skips-allowed does not allow it" >&2
		bad=1
	fi
done
exit $bad
