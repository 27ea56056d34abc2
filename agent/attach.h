/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Attaching an allocation's VFs and detaching them, as one operation each:
 * the ledger's intent begun before, every VF moved (or none: a failure
 * undoes the VFs already moved), the intent confirmed after. The REST API,
 * the tests and the benchmarks call these alike.
 */
#pragma once

#include <stddef.h>

#include "agent/agent.h"

/* Into a container's network namespace. */
struct agent_netns_request {
	const char *netns;  /* "/run/netns/NAME", a name, or "pid:N" */
	const char *ifname; /* NULL: one VF keeps its name, several are net0, net1… */
	const char *const *addresses; /* "10.0.0.2/24", … for the first VF */
	size_t n_addresses;
	const char *gateway; /* a default route via it, or NULL */
	unsigned mtu;	     /* 0: keep */
	bool userspace;	     /* VFs on a userspace driver (vfio-pci): PF side only, no netdev */
};

/* Into a libvirt domain; live and config are 0, 1, or VFP_UNSET for "as the domain is". */
struct agent_domain_request {
	const char *domain; /* name or UUID */
	int live, config;
};

/* Where a claim's VFs go at once: one of the two. */
struct agent_attach_target {
	const struct agent_domain_request *domain;
	const struct agent_netns_request *netns;
};

int agent_attach_netns(struct agent *a, const char *id, const struct agent_netns_request *q,
		       char *err, size_t err_size);
int agent_attach_domain(struct agent *a, const char *id, const struct agent_domain_request *q,
			char *err, size_t err_size);
int agent_domain_attach_vfs(struct agent *a, const char *id, const struct agent_domain_request *q,
			    char *err, size_t err_size);
int agent_hold(struct agent *a, const char *id, const char *hold_while, char *err,
	       size_t err_size);
int agent_detach(struct agent *a, const char *id, const char *hold_while, bool keep_standby,
		 char *err, size_t err_size);
int agent_detach_all(struct agent *a, const struct vfp_allocation *alloc,
		     struct vfp_restore_point *const *rps, char *err, size_t err_size);
