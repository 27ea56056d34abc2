/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/log.h"
#include "agent/netlink/fdbmsg.h"
#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock-thread.h"
#include "agent/netlink/nlsock.h"
#include "agent/pf/vfconfig.h"
#include "agent/vm/standby-host.h"
#include "agent/vm/standby-reach.h"

#define MAX_PORTS 64

struct ports {
	int master;
	struct nl_link *list;
	size_t n;
};

static void collect_port(const struct nl_link *l, void *data)
{
	struct ports *p = data;

	if (l->master == p->master && p->n < MAX_PORTS)
		p->list[p->n++] = *l;
}

/**
 * standby_host_check() - whether a standby of @kind on @source can reach VLAN
 * @vlan (<= 0: none) on this host; standby_reach_verdict() says what is
 * refused, with @err naming the field, and what is only logged
 *
 * A host whose netlink cannot be asked refuses nothing (logged).
 */
int standby_host_check(enum vfp_standby_kind kind, const char *source, int vlan, char *err,
		       size_t err_size)
{
	struct nl_link dev, *list = calloc(MAX_PORTS, sizeof(*list));
	struct ports ports = { .list = list };
	struct nl_conn *c = NULL;
	char msg[AGENT_ERR_SIZE] = "", warn[AGENT_ERR_SIZE];
	int r = list ? nl_conn_thread_route(&c) : -ENOMEM;
	bool found = false;

	if (r >= 0) {
		r = nl_conn_get_link(c, source, &dev, msg, sizeof(msg));
		found = r >= 0;
		if (r == -ENODEV)
			r = 0;
	}
	if (r >= 0 && found && kind == VFP_STANDBY_BRIDGE) {
		ports.master = dev.ifindex;
		r = nl_conn_each_link(c, collect_port, &ports);
	}
	if (c)
		nl_conn_thread_done(c);
	if (r < 0) {
		log_warning("failover: the standby's %s cannot be looked at: %s", source,
			    msg[0] ? msg : strerror(-r));
		free(list);
		return 0;
	}
	r = standby_reach_verdict(kind, source, vlan, found ? &dev : NULL, ports.list, ports.n,
				  err, err_size, warn, sizeof(warn));
	if (r >= 0 && warn[0])
		log_warning("%s", warn);
	free(list);
	return r;
}

/* The bridge port libvirt made for the standby: its tap, whose MAC is the guest's with 0xfe first. */
struct tap_wanted {
	int bridge;
	unsigned char mac[6];
};

static bool is_tap(const struct nl_link *l, const void *data)
{
	const struct tap_wanted *w = data;

	return l->master == w->bridge && l->mac_len == 6 && l->mac[0] == 0xfe &&
	       !memcmp(l->mac + 1, w->mac + 1, 5);
}

/*
 * The standby's tap in its Linux bridge (libvirt gives it the guest's MAC
 * with fe first), on @c; -ENODEV when there is none (no Linux bridge standby,
 * the guest not running here), @s parsed meanwhile.
 */
static int find_tap(struct nl_conn *c, const char *standby_xml, struct standby_source *s,
		    struct nl_link *tap, char *err, size_t err_size)
{
	struct tap_wanted w = { 0 };
	struct nl_link br;
	int r;

	if (!standby_xml || standby_source_parse(standby_xml, s) < 0 ||
	    s->kind != VFP_STANDBY_BRIDGE)
		return -ENODEV; /* a macvtap's MAC is in its lower device's filter; OVS learns */
	r = nl_conn_get_link(c, s->source, &br, err, err_size);
	memcpy(w.mac, s->mac, sizeof(w.mac));
	w.bridge = r >= 0 ? br.ifindex : 0;
	if (r >= 0)
		r = nl_conn_find_link(c, is_tap, &w, tap);
	return r;
}

/*
 * The static entry for the standby's MAC on its tap in its bridge, added or
 * deleted; 0 when there is nothing to do: no Linux bridge standby, no tap
 * (the guest is not running here), an entry already gone.
 */
static int tap_entry(const char *standby_xml, bool add, char *err, size_t err_size)
{
	struct standby_source s = { 0 };
	struct nl_link tap = { 0 };
	struct nl_conn *c = NULL;
	char buf[NL_BUF_SIZE];
	int r = nl_conn_thread_route(&c);

	if (r >= 0)
		r = find_tap(c, standby_xml, &s, &tap, err, err_size);
	if (r >= 0)
		r = nl_conn_ack(c, buf, nl_build_fdb(buf, c->seq++, add, tap.ifindex, s.mac,
						      NL_FDB_BRIDGE_STATIC), err, err_size);
	if (c)
		nl_conn_thread_done(c);
	if (r == -ENODEV || (!add && r == -ENOENT))
		r = 0;
	return r;
}

/**
 * standby_host_sent() - how many frames the guest has sent through its
 * standby: its tap's received packets (the guest sends there only while its
 * VF is away or has no link: net_failover's transmit)
 *
 * -ENODEV when there is no tap to count on (no Linux bridge standby, the
 * guest not running here, no counters); another -errno when netlink did not answer.
 */
int standby_host_sent(const char *standby_xml, uint64_t *ret_packets)
{
	struct standby_source s = { 0 };
	struct nl_link tap = { 0 };
	struct nl_conn *c = NULL;
	char err[AGENT_ERR_SIZE];
	int r = nl_conn_thread_route(&c);

	if (r >= 0)
		r = find_tap(c, standby_xml, &s, &tap, err, sizeof(err));
	if (r >= 0)
		r = nl_conn_get_link_stats(c, tap.ifindex, &tap);
	if (r >= 0 && !tap.has_stats) /* a kernel without IFLA_STATS64: nothing counts them */
		r = -ENODEV;
	if (r >= 0)
		*ret_packets = tap.rx_packets;
	if (c)
		nl_conn_thread_done(c);
	return r;
}

/**
 * standby_host_to_standby() - frames for the failover NIC's MAC that reach
 * its standby's Linux bridge go to the standby's tap, while its VF is away
 *
 * A static FDB entry (`bridge fdb add MAC dev TAP master static`), in place
 * of the one the bridge may have learned on its uplink. The bridge itself
 * puts it into the unicast filter of an uplink it keeps out of promiscuous
 * mode (a VLAN-filtering bridge). The tap leaves the bridge with the guest
 * (a live migration), and the entry with it. Logged when refused.
 */
void standby_host_to_standby(const char *standby_xml)
{
	char err[AGENT_ERR_SIZE] = "";

	if (tap_entry(standby_xml, true, err, sizeof(err)) < 0)
		log_warning("failover: the standby's static FDB entry: %s", err);
}

/* Its VF in the guest again: the entry out, the bridge learns where the MAC is. */
void standby_host_to_vf(const char *standby_xml)
{
	char err[AGENT_ERR_SIZE] = "";

	if (tap_entry(standby_xml, false, err, sizeof(err)) < 0)
		log_warning("failover: removing the standby's static FDB entry: %s", err);
}

static int set_mac(const struct vf_target *t, const unsigned char mac[6], char *err,
		   size_t err_size)
{
	struct vfp_vf_config s;

	vfp_vf_config_init(&s, t->index);
	s.has_mac = true;
	memcpy(s.mac, mac, sizeof(s.mac));
	return vfconfig_apply(t, &s, err, err_size);
}

/**
 * standby_host_vf_gone() - failover VF @t, out of its guest, no longer
 * given the guest's MAC by its PF's embedded switch
 * @device_xml: the VF's <interface type='hostdev'> (a failover pair's, with
 *		its <teaming>); any other VF is left as it is
 *
 * Under the VF's PF lock. libvirt gives the VF back the MAC it had before the
 * guest, when it saved one; a VF that still has the guest's (none saved, or
 * the PF refused it) has it cleared: 00:00:00:00:00:00 (igb clears the VF's
 * receive address entry and its "set by the PF" flag; mlx5 the vport's MAC),
 * else, for a driver that refuses a zero MAC (older igb took only a valid
 * unicast one), a locally administered one of the VF's own. Until then the
 * switch sends the guest's frames to a VF nobody reads, not up to the PF and
 * the standby's bridge or macvtap.
 */
void standby_host_vf_gone(const struct vf_target *t, const char *device_xml)
{
	struct vfp_vf_config now;
	unsigned char mac[6];
	char err[AGENT_ERR_SIZE] = "";
	int r;

	if (!device_xml || !strstr(device_xml, "<teaming"))
		return;
	r = vfconfig_read(t, &now, err, sizeof(err));
	if (r >= 0 && now.has_mac && standby_vf_mac_after(device_xml, now.mac, false, t->pci, mac)) {
		r = set_mac(t, mac, err, sizeof(err));
		if (r == -EINVAL) {
			standby_vf_mac_after(device_xml, now.mac, true, t->pci, mac);
			r = set_mac(t, mac, err, sizeof(err));
		}
		if (r >= 0)
			log_info("failover: VF %s out of its guest: its MAC on the PF cleared",
				 t->pci);
	}
	if (r < 0)
		log_warning("failover: VF %s out of its guest keeps the guest's MAC on its PF, "
			    "whose switch may still send the guest's frames to it: %s", t->pci, err);
}
