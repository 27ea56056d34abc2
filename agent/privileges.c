/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <cap-ng.h>
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "agent/agent.h"
#include "libvfpool/macro.h"
#include "agent/privileges.h"

/**
 * privileges_drop() - keep CAP_NET_ADMIN, CAP_SYS_ADMIN and CAP_SYS_PTRACE only
 *
 * Called once the sockets are bound and the ledger is open. CAP_NET_ADMIN:
 * links, VF settings on the PF, RDMA devices between namespaces (rtnetlink,
 * nldev). CAP_SYS_ADMIN: setns() into a container's network namespace.
 * CAP_SYS_PTRACE: opening /proc/PID/ns/net of another user's process (the
 * "pid:N" form of a namespace). Sysfs writes need no capability: root owns
 * the files. An agent that is not root has nothing to drop.
 */
int privileges_drop(void)
{
	if (geteuid() != 0)
		return 0;
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
			  CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_SYS_PTRACE, -1) < 0 ||
	    capng_apply(CAPNG_SELECT_BOTH) < 0) {
		log_error("dropping capabilities failed");
		return -EPERM;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		int r = negative_errno(); /* before the log can change it */

		log_error("no_new_privs: %s", strerror(-r));
		return r;
	}
	log_info("capabilities: net_admin, sys_admin, sys_ptrace kept; the rest dropped");
	return 0;
}
