/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/netlink/fdbmsg.h"
#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock-thread.h"
#include "agent/netlink/nlsock.h"
#include "agent/vm/standby-reach.h"
#include "agent/vm/standby-steer.h"
#include "libvfpool/libvfpool.h"

#define MAX_UPLINKS 16

struct uplinks {
	struct vfp_inventory *inv;
	int bridge; /* the standby's bridge */
	int ifindex[MAX_UPLINKS];
	size_t n;
};

/* Whether @name is the netdev of one of the inventory's SR-IOV PFs. */
static bool is_pf(struct vfp_inventory *inv, const char *name)
{
	for (size_t p = 0; p < vfp_inventory_get_pf_count(inv); p++) {
		const char *dev = vfp_pf_get_netdev(vfp_inventory_get_pf(inv, p));

		if (dev && !strcmp(dev, name))
			return true;
	}
	return false;
}

static void collect(const struct nl_link *l, void *data)
{
	struct uplinks *u = data;
	if (l->master == u->bridge && u->n < MAX_UPLINKS && is_pf(u->inv, l->name))
		u->ifindex[u->n++] = l->ifindex;
}

/*
 * The PFs on the standby's path: its bridge's ports that are PFs of the
 * inventory. None for a bridge on a plain NIC, a bond or a VLAN link.
 */
static int find_uplinks(struct nl_conn *c, const struct standby_source *s, struct uplinks *u,
			char *err, size_t err_size)
{
	struct nl_link br;
	int r = nl_conn_get_link(c, s->source, &br, err, err_size);

	u->bridge = r >= 0 ? br.ifindex : 0;
	if (r >= 0)
		r = nl_conn_each_link(c, collect, u);
	return r;
}

/**
 * standby_steer() - the standby's MAC in (@add) or out of the unicast filter
 * of each SR-IOV PF on the standby's path
 *
 * Returns how many PFs took it (@add) or had it taken out, 0 when there is
 * none (no standby, no PF on its bridge), <0 with @err on a refusal. An entry
 * there already (EEXIST: the operator's, or a crashed swap's, which the
 * ledger's row says) is not counted: its owner takes it out; one gone
 * (ENOENT) counts as removed, so a restart may repeat it. Only a Linux bridge's: a
 * macvtap's MAC is in its lower device's filter already (macvlan puts it
 * there; taking it out would be taking macvlan's), OVS has its own FDB.
 */
int standby_steer(struct agent *a, const char *standby_xml, bool add, char *err, size_t err_size)
{
	struct standby_source s;
	struct uplinks u = { 0 };
	struct nl_conn *c = NULL;
	char buf[NL_BUF_SIZE];
	int r, done = 0;

	if (!standby_xml || standby_source_parse(standby_xml, &s) < 0 ||
	    s.kind != VFP_STANDBY_BRIDGE)
		return 0;
	u.inv = agent_get_inventory(a);
	r = u.inv ? nl_conn_thread_route(&c) : -ENOMEM;
	if (r >= 0)
		r = find_uplinks(c, &s, &u, err, err_size);
	for (size_t i = 0; r >= 0 && i < u.n; i++) {
		r = nl_conn_ack(c, buf, nl_build_fdb(buf, c->seq++, add, u.ifindex[i], s.mac,
						      NL_FDB_DEVICE), err, err_size);
		if (add && r == -EEXIST) /* there already: not the agent's to count */
			r = 0;
		else if (r >= 0 || (!add && r == -ENOENT)) /* made, taken out, gone already */
			r = 0, done++;
	}
	if (c)
		nl_conn_thread_done(c);
	vfp_inventory_unref(u.inv);
	if (r == -ENODEV) /* the bridge gone: nothing to steer through */
		r = 0;
	return r < 0 ? r : done;
}
