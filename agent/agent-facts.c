/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the REST layer reads of the agent's state (agent-facts.h). */
#include "config.h"

#include "agent/agent-facts.h"

/* The library's context: the sysfs root, the host checks. */
struct vfp_ctx *agent_ctx(const struct agent *a)
{
	return a->ctx;
}

/* The event stream's source; NULL before agent_init() made it. */
struct events *agent_events(const struct agent *a)
{
	return a->events;
}

/* The libvirt connection; NULL when libvirt is off or not installed. */
struct libvirt_conn *agent_libvirt(const struct agent *a)
{
	return a->libvirt;
}

/* Which ledger the agent has open, to key a cache on (never dereferenced outside ledger.c). */
const struct agent_ledger *agent_ledger(const struct agent *a)
{
	return a->ledger;
}

/* The bearer token TCP listeners ask for; NULL without one. Never logged. */
const char *agent_token(const struct agent *a)
{
	return a->token;
}

/* The unix socket served on, for the host checks; NULL when none. */
const char *agent_socket_path(const struct agent *a)
{
	return a->socket_path[0] ? a->socket_path : NULL;
}

/* Whether the host is the simulated one (--simulate): its RDMA devices are not libibverbs'. */
bool agent_simulated(const struct agent *a)
{
	return a->opt.simulate_dir != NULL;
}

/* How long the last inventory scan took. */
double agent_scan_seconds(const struct agent *a)
{
	return a->scan_seconds;
}

void agent_get_counters(const struct agent *a, struct agent_counters *ret)
{
	*ret = (struct agent_counters){
		.resets_ok = __atomic_load_n(&a->resets[1], __ATOMIC_RELAXED),
		.resets_failed = __atomic_load_n(&a->resets[0], __ATOMIC_RELAXED),
		.repairs_ok = __atomic_load_n(&a->repairs[1], __ATOMIC_RELAXED),
		.repairs_failed = __atomic_load_n(&a->repairs[0], __ATOMIC_RELAXED),
		.lease_errors = __atomic_load_n(&a->lease_errors, __ATOMIC_RELAXED),
	};
}
