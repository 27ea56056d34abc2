#!/bin/sh
# A PATCH beside a release cannot land on the next tenant's VF: tests/patch-race.c makes the
# interleaving in one process on a simulated host (its comment says how). In a network
# namespace of its own (tests/in-netns.sh).
set -eu
[ -n "${VFAGENT_TEST_WRAPPED:-}" ] || exec sh "${top_srcdir:-.}/tests/in-netns.sh" sh "$0" "$@"
b=${top_builddir:-.}
tmp=$(mktemp -d /tmp/vfagent-patch-race-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$b/tests/patch-race" "$tmp/host"
