#!/bin/sh
# The live agent against api/openapi.yaml, checked by validators from the npm
# registry (tests/openapi/package.json, versions pinned in its lock file).
# test-needs: network
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
src=$(cd "${top_srcdir:-.}" && pwd)
command -v node >/dev/null && command -v npm >/dev/null || { echo "node/npm missing"; exit 77; }
cp "$src/tests/openapi/package.json" "$src/tests/openapi/package-lock.json" "$src/tests/openapi/check.mjs" "$tmp/"
(cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1) ||
	{ echo "npm registry unreachable: skipped"; exit 77; }
start_agent
node "$tmp/check.mjs" "$src/api/openapi.yaml" "$src/api/router.c" "$sock"
