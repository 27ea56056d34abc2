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
#include <linux/rtnetlink.h>
#include <sched.h>

#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock.h"
#include "agent/sim/sim-host.h"

/* Loopback (ifindex 1 in a new namespace) up, over rtnetlink: a unit's
 * RestrictAddressFamilies= leaves AF_NETLINK, not the AF_INET of an ioctl. */
static int loopback_up(void)
{
	struct nl_link_change up = { .netns_fd = -1, .up = 1 };
	struct nl_conn c;
	char buf[NL_BUF_SIZE], err[128];
	int r = nl_conn_open(NETLINK_ROUTE, -1, &c);

	if (r < 0)
		return r;
	r = nl_conn_ack(&c, buf, nl_build_setlink(buf, c.seq++, 1, &up), err, sizeof(err));
	nl_conn_close(&c);
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
