/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libvfpool/macro.h"
#include "agent/container/netns.h"
#include "agent/container/vf-link.h"
#include "agent/container/vf-netdev.h"
#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock.h"

static int set_link(struct nl_conn *c, int ifindex, const struct nl_link_change *ch, char *err,
		    size_t err_size)
{
	char buf[NL_BUF_SIZE];
	size_t len = nl_build_setlink(buf, c->seq++, ifindex, ch);

	return nl_conn_ack(c, buf, len, err, err_size);
}

static struct vf_link_id link_id(const char *pci, const struct vfp_restore_point *rp)
{
	return (struct vf_link_id){ .pci = pci, .peer_ifindex = rp->peer_ifindex,
				    .ifindex = rp->ifindex };
}

static int add_addresses(struct nl_conn *c, int ifindex, const struct netns_config *cfg,
			 char *err, size_t err_size)
{
	for (size_t i = 0; i < cfg->n_addresses; i++) {
		unsigned char addr[16];
		char buf[NL_BUF_SIZE];
		unsigned plen;
		int family, r;

		if (nl_parse_prefix(cfg->addresses[i], &family, addr, &plen) < 0) {
			snprintf(err, err_size, "addresses[%zu]: not an address/prefix", i);
			return -EINVAL;
		}
		r = nl_conn_ack(c, buf, nl_build_addr(buf, c->seq++, ifindex, family, addr, plen), err,
				err_size);
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_default_route(struct nl_conn *c, int ifindex, const char *gateway, char *err,
			     size_t err_size)
{
	unsigned char gw[16];
	char buf[NL_BUF_SIZE];
	int family = strchr(gateway, ':') ? AF_INET6 : AF_INET;

	if (inet_pton(family, gateway, gw) != 1) {
		snprintf(err, err_size, "gateway: \"%.64s\" is not an address", gateway);
		return -EINVAL;
	}
	return nl_conn_ack(c, buf, nl_build_default_route(buf, c->seq++, ifindex, family, gw), err,
			   err_size);
}

/* Inside the namespace, on link @ifindex: MAC, MTU, addresses, up, default route. */
static int configure_inside(int netns_fd, int ifindex, const struct netns_config *cfg,
			    char *err, size_t err_size)
{
	struct nl_conn c = { 0 };
	struct nl_link_change link = { .netns_fd = -1, .mtu = cfg->mtu, .up = -1, .mac = cfg->mac };
	struct nl_link_change up = { .netns_fd = -1, .up = 1 };
	int r = nl_conn_open(NETLINK_ROUTE, netns_fd, &c);

	if (r >= 0 && (cfg->mtu || cfg->mac))
		r = set_link(&c, ifindex, &link, err, err_size);
	if (r >= 0)
		r = add_addresses(&c, ifindex, cfg, err, err_size);
	if (r >= 0)
		r = set_link(&c, ifindex, &up, err, err_size);
	if (r >= 0 && cfg->gateway)
		r = add_default_route(&c, ifindex, cfg->gateway, err, err_size);
	nl_conn_close(&c);
	return r;
}

static int snapshot(const struct nl_link *l, struct vfp_restore_point *rp)
{
	char mac[3 * sizeof(l->mac)] = "";

	/* "aa:bb:…": byte i at 3 * i, its ':' before it */
	for (unsigned i = 0; i < l->mac_len; i++)
		snprintf(mac + 3 * i - (i > 0), sizeof(mac) - 3 * i + (i > 0), i ? ":%02x" : "%02x",
			 l->mac[i]);
	rp->mtu = l->mtu;
	rp->up = (l->flags & IFF_UP) != 0;
	return vfp_restore_point_set(&rp->name, l->name) < 0 ||
			       vfp_restore_point_set(&rp->mac, mac) < 0
		       ? -ENOMEM
		       : 0;
}

/**
 * vf_netdev_snapshot() - VF @pci's netdev @netdev as it is in the host, and
 * how it will be known elsewhere: what a detach restores and finds
 *
 * Taken, and put in the ledger, before vf_netdev_attach() moves it: an
 * agent killed in between leaves a restore point that says where it went.
 */
int vf_netdev_snapshot(const char *netdev, const char *pci, struct vfp_restore_point *rp,
		       char *err, size_t err_size)
{
	struct vf_link_id id;
	struct nl_link l;
	int r = vf_link_identify(netdev, pci, &id, &l, err, err_size);

	if (r < 0)
		return r;
	rp->ifindex = l.ifindex;
	rp->peer_ifindex = id.peer_ifindex;
	return snapshot(&l, rp);
}

/* Host link @l, down, into @netns_fd as @ifname: moved and renamed in one message. */
static int move_in(const struct nl_link *l, int netns_fd, const char *ifname, char *err,
		   size_t err_size)
{
	struct nl_conn host = { 0 };
	struct nl_link_change down = { .netns_fd = -1, .up = 0 };
	struct nl_link_change move = { .name = ifname, .netns_fd = netns_fd, .up = -1 };
	int r = nl_conn_open(NETLINK_ROUTE, -1, &host);

	if (r >= 0)
		r = set_link(&host, l->ifindex, &down, err, err_size);
	if (r >= 0 && (r = set_link(&host, l->ifindex, &move, err, err_size)) < 0 && !err[0])
		snprintf(err, err_size, "moving %s into the namespace as %s: %s", l->name, ifname,
			 strerror(-r));
	nl_conn_close(&host);
	return r;
}

/*
 * Link @l of namespace @netns_fd, down, back to the host, named @name there
 * (@fallback when @name is taken). Whatever name it has inside is the
 * tenant's choice and plays no part.
 */
static int move_home(int netns_fd, const struct nl_link *l, const char *name,
		     const char *fallback, char *err, size_t err_size)
{
	struct nl_conn c = { 0 };
	_cleanup_close_ int host_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	struct nl_link_change down = { .netns_fd = -1, .up = 0 };
	struct nl_link_change home = { .name = name, .netns_fd = host_fd, .up = -1 };
	int r = host_fd < 0 ? negative_errno() : nl_conn_open(NETLINK_ROUTE, netns_fd, &c);

	if (r >= 0)
		r = set_link(&c, l->ifindex, &down, err, err_size);
	if (r >= 0 && (r = set_link(&c, l->ifindex, &home, err, err_size)) == -EEXIST) {
		home.name = fallback;
		r = set_link(&c, l->ifindex, &home, err, err_size);
	}
	nl_conn_close(&c);
	return r;
}

/* In the host: link @l named as it was (or @fallback), with its MTU, state and MAC. */
static int settle_in_host(const struct nl_link *l, const struct vfp_restore_point *rp,
			  const char *fallback, char *err, size_t err_size)
{
	struct nl_conn host = { 0 };
	struct nl_link_change name = { .name = rp->name, .netns_fd = -1, .up = -1 };
	struct nl_link_change ch = { .netns_fd = -1, .mtu = rp->mtu, .up = rp->up };
	unsigned char mac[6];
	int r = nl_conn_open(NETLINK_ROUTE, -1, &host);

	if (r >= 0 && strcmp(l->name, rp->name) != 0 &&
	    (r = set_link(&host, l->ifindex, &name, err, err_size)) == -EEXIST) {
		name.name = fallback;
		r = strcmp(l->name, fallback) == 0 ? 0
						   : set_link(&host, l->ifindex, &name, err, err_size);
		if (r >= 0)
			snprintf(err, err_size, "%s is taken in the host: returned as %s", rp->name,
				 fallback);
	}
	/* only an Ethernet address that differs: IPoIB addresses are the kernel's */
	if (rp->mac && l->mac_len == 6 && vfp_mac_parse(rp->mac, mac) == 0 &&
	    memcmp(mac, l->mac, 6) != 0)
		ch.mac = mac;
	if (r >= 0) {
		char msg[256] = "";

		r = set_link(&host, l->ifindex, &ch, msg, sizeof(msg));
		if (r < 0)
			snprintf(err, err_size, "restoring %s: %s", rp->name,
				 msg[0] ? msg : strerror(-r));
	}
	nl_conn_close(&host);
	return r;
}

/* A look that failed, in @err: it says nothing of where the netdev is. */
static int looked(int r, char *err, size_t err_size, const char *what, const char *where)
{
	snprintf(err, err_size, "%s %s failed: %s: where the netdev is is unknown", what,
		 where ? where : "?", strerror(-r));
	return r;
}

/**
 * vf_netdev_detach() - VF @pci's netdev back in the host, as @rp says it was
 * @netns_fd: the namespace, or -1 to open the one @rp names (if it is still
 *	      the same namespace)
 *
 * The netdev is looked for by its device in the namespace and moved home;
 * then it must be found in the host (where the kernel puts a real VF whose
 * namespace died, maybe as "devN"). When it is in neither, it has been
 * moved on or destroyed inside: -ENODEV, and @err says so; it is not back.
 * When its name is taken in the host it returns as "vfr<name>", and @err
 * says so with success. @home (may be NULL) runs once the netdev is in the
 * host, before its own settings are restored: a PF that set the VF's MAC
 * refuses the VF another (igb) until the PF side is restored, which must
 * not happen while the tenant still holds the netdev.
 */
int vf_netdev_detach(const char *pci, const struct vfp_restore_point *rp, int netns_fd,
		     void (*home)(void *arg), void *arg, char *err, size_t err_size)
{
	struct vf_link_id id = link_id(pci, rp);
	char fallback[NL_IFNAMSIZ];
	struct nl_link l;
	int fd = netns_fd, found, r = 0;

	err[0] = '\0';
	if (!rp->name || !rp->ifname)
		return 0; /* never attached */
	snprintf(fallback, sizeof(fallback), "vfr%.12s", rp->name);
	if (fd < 0 && rp->netns)
		r = netns_open_if_same(rp->netns, (ino_t)rp->netns_inode, &fd);
	if (r == -ENOENT)
		r = 0, fd = -1; /* gone: the netdev is in the host, or went with it */
	else if (r < 0) /* the namespace may be there: nothing is known */
		return looked(r, err, err_size, "opening namespace", rp->netns);
	if (fd >= 0 && (r = vf_link_find(&id, fd, &l)) >= 0)
		r = move_home(fd, &l, rp->name, fallback, err, err_size);
	else if (r == -ENODEV)
		r = 0;
	else if (r < 0)
		looked(r, err, err_size, "looking for its netdev in", rp->netns);
	if (fd >= 0 && fd != netns_fd)
		close(fd);
	if (r < 0 && !err[0])
		snprintf(err, err_size, "moving it home: %s", strerror(-r));
	found = vf_link_find(&id, -1, &l);
	if (found < 0 && found != -ENODEV)
		return looked(found, err, err_size, "looking for its netdev in", "the host");
	if (found < 0 && r >= 0) {
		if (fd < 0)
			snprintf(err, err_size, "the netdev of VF %s is not back in the host, and "
				 "namespace %s is gone: destroyed with it", pci,
				 rp->netns ? rp->netns : "?");
		else
			snprintf(err, err_size, "the netdev of VF %s is neither in namespace %s nor "
				 "in the host: moved on or deleted from inside", pci,
				 rp->netns ? rp->netns : "?");
	}
	if (found < 0)
		return r < 0 ? r : -ENODEV;
	if (home)
		home(arg);
	return settle_in_host(&l, rp, fallback, err, err_size);
}

/**
 * vf_netdev_attach() - VF @pci's netdev, as @rp found it in the host, into
 * @netns_fd configured as @cfg says
 *
 * Configured through its ifindex inside, found by its device after the
 * move. On failure @err says which step failed; bringing it back is the
 * caller's (vf_netdev_detach()), which must look at how that went: a tenant
 * may have taken the netdev on the instant it appeared.
 */
int vf_netdev_attach(const char *pci, int netns_fd, const struct netns_config *cfg,
		     struct vfp_restore_point *rp, char *err, size_t err_size)
{
	struct vf_link_id id = link_id(pci, rp);
	struct nl_link l;
	int r = vf_link_find(&id, -1, &l);

	if (r < 0)
		snprintf(err, err_size, "the netdev of VF %s is not in the host", pci);
	if (r >= 0)
		r = move_in(&l, netns_fd, cfg->ifname, err, err_size);
	if (r >= 0 && (r = vf_link_find(&id, netns_fd, &l)) < 0)
		snprintf(err, err_size, "the netdev of VF %s is not in the namespace after the move",
			 pci);
	if (r >= 0) {
		rp->ifindex = l.ifindex;
		r = configure_inside(netns_fd, l.ifindex, cfg, err, err_size);
	}
	return r;
}

/**
 * vf_netdev_in_netns() - 1 when VF @pci's netdev is in the namespace @rp
 * names (still the same one), under whatever name; 0 when not; -errno when
 * a look failed
 */
int vf_netdev_in_netns(const char *pci, const struct vfp_restore_point *rp)
{
	struct vf_link_id id = link_id(pci, rp);
	struct nl_link l;
	int fd = -1, r = netns_open_if_same(rp->netns, (ino_t)rp->netns_inode, &fd);

	if (r >= 0) {
		r = vf_link_find(&id, fd, &l);
		close(fd);
	}
	return r >= 0 ? 1 : r == -ENOENT || r == -ENODEV ? 0 : r;
}
