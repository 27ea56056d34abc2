#!/bin/sh
# The test driver's wrapper (LOG_COMPILER) for every test: runs the test in a
# network namespace of its own, loopback up, so its simulated host, its
# stand-in links (ens5f0v0...) and the namespaces it names stay apart from
# the machine's links and from any other test running beside it (make -j).
# Namespaces the test makes with `ip netns add` are its own too: they are
# made from, and their links moved out of, this private one. A simulated
# vfagentd the test starts stays in it (VFAGENT_SIM_NETNS=inherit), with the
# stand-ins the test made; left alone it would make a namespace of its own.
# Without root (no unshare) the test runs as it is: it cannot make links
# there, and skips what needs them.
#   tests/in-netns.sh PROGRAM [ARGS...]
set -eu
export VFAGENT_TEST_WRAPPED=1
# A test that fetches from a registry (the line "# test-needs: network") keeps the machine's
# namespace; it must make no link itself: a simulated agent it starts makes a namespace of its own.
for test in "$@"; do :; done
if [ -f "$test" ] && grep -q '^# test-needs: network$' "$test"; then
	exec "$@"
fi
# A test that names namespaces (ip netns add) or mounts (the line "# test-needs: mounts") gets
# a mount namespace of its own too, with a tmpfs on /run/netns: its names stay its own.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare --net true 2>/dev/null; then
	if [ -f "$test" ] && grep -q '^# test-needs: mounts$' "$test"; then
		VFAGENT_SIM_NETNS=inherit exec unshare --net --mount sh -c \
			'mkdir -p /run/netns && mount -t tmpfs -o mode=755 tmpfs /run/netns &&
			ip link set lo up && exec "$@"' sh "$@"
	fi
	VFAGENT_SIM_NETNS=inherit exec unshare --net sh -c 'ip link set lo up && exec "$@"' sh "$@"
fi
exec "$@"
