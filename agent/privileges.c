/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <cap-ng.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "agent/log.h"
#include "libvfpool/macro.h"
#include "agent/privileges.h"

/*
 * CAP_NET_ADMIN: links, VF settings on the PF, RDMA devices between
 * namespaces (rtnetlink, nldev). CAP_SYS_ADMIN: setns() into a container's
 * network namespace. CAP_SYS_PTRACE: opening /proc/PID/ns/net of another
 * user's process (the "pid:N" form of a namespace).
 */
static const struct {
	int cap;
	const char *why;
} kept[] = {
	{ CAP_NET_ADMIN, "to move netdevs and set VFs over netlink" },
	{ CAP_SYS_ADMIN, "to enter containers' network namespaces" },
	{ CAP_SYS_PTRACE, "to open the namespaces of pid:N owners" },
};

static bool is_kept(int cap)
{
	for (size_t i = 0; i < ELEMENTSOF(kept); i++)
		if (kept[i].cap == cap)
			return true;
	return false;
}

/* Each kept capability must be permitted now: a missing one is named, with what it is for. */
static int check_permitted(void)
{
	for (size_t i = 0; i < ELEMENTSOF(kept); i++) {
		if (capng_have_capability(CAPNG_PERMITTED, (unsigned)kept[i].cap))
			continue;
		log_error("capability %s is not permitted to vfagentd, which needs it %s (a "
			  "CapabilityBoundingSet= without it, or a container that lacks it)",
			  capng_capability_to_name((unsigned)kept[i].cap), kept[i].why);
		return -EPERM;
	}
	return 0;
}

/*
 * The bounding set: the rest dropped here when this process may
 * (CAP_SETPCAP). Without it the bound is whoever started the agent's
 * (the unit's CapabilityBoundingSet=); 1 is returned when it holds more.
 */
static int drop_bounding_set(void)
{
	bool may = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	int more = 0;

	for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++) {
		if (is_kept(cap) || prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 0)
			continue;
		if (!may) {
			more = 1;
			continue;
		}
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			int r = negative_errno();

			log_error("dropping %s from the bounding set: %s",
				  capng_capability_to_name((unsigned)cap), strerror(-r));
			return r;
		}
	}
	return more;
}

/**
 * privileges_drop() - keep CAP_NET_ADMIN, CAP_SYS_ADMIN and CAP_SYS_PTRACE only
 *
 * Called once the sockets are bound and the ledger is open. Sysfs writes
 * need no capability: root owns the files. An agent that is not root has
 * nothing to drop.
 */
int privileges_drop(void)
{
	int r, more;

	if (geteuid() != 0)
		return 0;
	if (capng_get_caps_process() < 0) {
		log_error("reading this process's capabilities failed");
		return -EPERM;
	}
	r = check_permitted();
	if (r < 0)
		return r;
	more = drop_bounding_set();
	if (more < 0)
		return more;
	capng_clear(CAPNG_SELECT_CAPS);
	if (capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_NET_ADMIN,
			  CAP_SYS_ADMIN, CAP_SYS_PTRACE, -1) < 0 ||
	    capng_apply(CAPNG_SELECT_CAPS) < 0) {
		log_error("dropping capabilities failed");
		return -EPERM;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		r = negative_errno(); /* before the log can change it */
		log_error("no_new_privs: %s", strerror(-r));
		return r;
	}
	if (more)
		log_warning("the bounding set keeps more than net_admin, sys_admin, sys_ptrace and "
			    "vfagentd cannot drop it (no CAP_SETPCAP): set CapabilityBoundingSet=");
	log_info("capabilities: net_admin, sys_admin, sys_ptrace kept; the rest dropped");
	return 0;
}
