/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A simulated host's links live in a network namespace of its own.
 *
 * The simulated sysfs names netdevs (ens5f0v0, ib0v1...) that an agent acts
 * on by name: in the machine's own namespace it would move, rename and
 * configure whatever link of the machine carries such a name, and two
 * simulated agents side by side would take each other's stand-ins. So a
 * simulated agent makes a fresh namespace for itself before any thread
 * starts, unless its caller made one for it (VFAGENT_SIM_NETNS=inherit, as
 * the test driver does, with the stand-in links already in it). Whether a
 * namespace is the machine's cannot be told reliably (init's may be
 * unreadable even to root in a container), so the safe side is the default.
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/sim/sim-host.h"

static int loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		r = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (r == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		r = -errno;
	close(fd);
	return r;
}

/**
 * sim_netns_isolate() - move this process into a new network namespace
 *
 * Must run before the process starts a thread: unshare() moves only the
 * calling thread. Loopback is brought up. -EPERM: no CAP_SYS_ADMIN.
 */
int sim_netns_isolate(void)
{
	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	return loopback_up();
}
