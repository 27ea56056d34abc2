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

#include "agent/log.h"
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

/* Alternative name @name of link @ifindex added (@add) or deleted. */
static int altname(struct nl_conn *c, int ifindex, bool add, const char *name, char *err,
		   size_t err_size)
{
	char buf[NL_BUF_SIZE];

	return nl_conn_ack(c, buf, nl_build_altname(buf, c->seq++, ifindex, add, name), err,
			   err_size);
}

/* The first name of the space-separated @list into @buf; @list after it, or NULL at the end. */
static const char *next_name(const char *list, char *buf, size_t size)
{
	size_t n = strcspn(list, " ");

	if (!n)
		return NULL;
	snprintf(buf, size, "%.*s", (int)n, list);
	return list + n + (list[n] == ' ');
}

/* Whether the space-separated @list has @name. */
static bool has_name(const char *list, const char *name)
{
	char one[128];

	while ((list = next_name(list, one, sizeof(one))))
		if (strcmp(one, name) == 0)
			return true;
	return false;
}

/* Every alternative name of link @l deleted, in the socket's namespace. */
static int drop_altnames(struct nl_conn *c, const struct nl_link *l, char *err, size_t err_size)
{
	struct nl_link now = *l;
	char name[128];
	int r = 0;

	/* read again after each: more than fit in one nl_link may be there */
	for (unsigned n = 0; r >= 0 && now.n_altnames && n < 256; n++) {
		next_name(now.altnames, name, sizeof(name));
		r = altname(c, l->ifindex, false, name, err, err_size);
		if (r >= 0)
			r = nl_conn_get_link_index(c, l->ifindex, &now);
	}
	if (r < 0 && !err[0])
		snprintf(err, err_size, "removing the alternative names of %s: %s", l->name,
			 strerror(-r));
	return r;
}

/* An upper device of link @data's ifindex in the same namespace (a macvlan, ipvlan, VLAN…). */
static bool is_upper(const struct nl_link *l, const void *data)
{
	int lower = *(const int *)data;

	return l->iflink == lower && l->link_netnsid < 0 && l->ifindex != lower;
}

/*
 * Whatever the tenant stacked on the VF's link @l or set on it, undone in
 * its namespace before the link leaves: every upper device deleted (a
 * macvlan stays where it is when its lower device moves, and would keep
 * receiving what the next tenant's VF receives), out of its bridge or
 * bond, no alternative name (one could take a name in the host or the next
 * namespace), no alias.
 */
static int strip_inside(struct nl_conn *c, const struct nl_link *l, char *err, size_t err_size)
{
	struct nl_link_change bare = { .netns_fd = -1, .up = -1, .nomaster = l->master != 0,
				       .alias = l->has_alias ? "" : NULL };
	struct nl_link upper;
	char buf[NL_BUF_SIZE];
	int found, r = 0;

	for (unsigned n = 0; r >= 0 && n < 256; n++) {
		found = nl_conn_find_link(c, is_upper, &l->ifindex, &upper);
		if (found == -ENODEV)
			break;
		r = found < 0 ? found
			      : nl_conn_ack(c, buf, nl_build_dellink(buf, c->seq++, upper.ifindex),
					    err, err_size);
		if (r < 0)
			snprintf(err, err_size, "deleting %s, stacked on the VF's %s: %s",
				 found < 0 ? "the links" : upper.name, l->name, strerror(-r));
	}
	if (r >= 0 && (bare.nomaster || bare.alias))
		r = set_link(c, l->ifindex, &bare, err, err_size);
	if (r >= 0 && l->n_altnames)
		r = drop_altnames(c, l, err, err_size);
	return r;
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

/* Whether link @ifindex carries Ethernet address @mac now. */
static bool has_mac(struct nl_conn *c, int ifindex, const unsigned char *mac)
{
	struct nl_link l;

	return nl_conn_get_link_index(c, ifindex, &l) >= 0 && l.mac_len == 6 &&
	       memcmp(l.mac, mac, 6) == 0;
}

/*
 * Link @ifindex's Ethernet address @mac. A VF driver refuses to set a MAC
 * itself once its PF set one (igbvf, ixgbevf: EADDRNOTAVAIL, "Reload the VF
 * driver"), and learns the PF's only when it resets, which these drivers do
 * when the link goes down. So a refusal is answered by bringing the link up
 * and down (it ends down), and the address checked again: -EADDRNOTAVAIL
 * when it still differs (the PF holds another one).
 */
static int set_mac(struct nl_conn *c, int ifindex, const unsigned char *mac, char *err,
		   size_t err_size)
{
	struct nl_link_change ch = { .netns_fd = -1, .up = -1, .mac = mac };
	struct nl_link_change up = { .netns_fd = -1, .up = 1 }, down = { .netns_fd = -1, .up = 0 };
	int r;

	if (has_mac(c, ifindex, mac))
		return 0;
	r = set_link(c, ifindex, &ch, err, err_size);
	if (r != -EADDRNOTAVAIL)
		return r;
	if (set_link(c, ifindex, &up, err, err_size) >= 0 &&
	    set_link(c, ifindex, &down, err, err_size) >= 0 && has_mac(c, ifindex, mac))
		return 0;
	snprintf(err, err_size, "the VF driver refused the MAC, and a reset did not give it the "
		 "PF's");
	return -EADDRNOTAVAIL;
}

/* Inside the namespace, on link @ifindex: MAC, MTU, addresses, up, default route. */
static int configure_inside(int netns_fd, int ifindex, const struct netns_config *cfg,
			    char *err, size_t err_size)
{
	struct nl_conn c = { 0 };
	struct nl_link_change link = { .netns_fd = -1, .mtu = cfg->mtu, .up = -1 };
	struct nl_link_change up = { .netns_fd = -1, .up = 1 };
	int r = nl_conn_open(NETLINK_ROUTE, netns_fd, &c);

	if (r >= 0 && cfg->mac)
		r = set_mac(&c, ifindex, cfg->mac, err, err_size);
	if (r >= 0 && cfg->mtu)
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
			       vfp_restore_point_set(&rp->mac, mac) < 0 ||
			       vfp_restore_point_set(&rp->altnames,
						     l->n_altnames ? l->altnames : NULL) < 0
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
	/* the host's names for it stay in the host (the restore point has them) */
	if (r >= 0 && l->n_altnames)
		r = drop_altnames(&host, l, err, err_size);
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
	if (r >= 0)
		r = strip_inside(&c, l, err, err_size);
	if (r >= 0 && (r = set_link(&c, l->ifindex, &home, err, err_size)) == -EEXIST) {
		home.name = fallback;
		r = set_link(&c, l->ifindex, &home, err, err_size);
	}
	nl_conn_close(&c);
	return r;
}

/*
 * In the host: the alternative names link @l had there before it left,
 * and no other (one a tenant added went already, see strip_inside()). A
 * name taken meanwhile is not an error: @err says so.
 */
static void restore_altnames(struct nl_conn *host, const struct nl_link *l,
			     const struct vfp_restore_point *rp, char *err, size_t err_size)
{
	const char *list = rp->altnames;
	char name[128], msg[AGENT_ERR_SIZE];

	while (list && (list = next_name(list, name, sizeof(name)))) {
		msg[0] = '\0';
		if (!has_name(l->altnames, name) &&
		    altname(host, l->ifindex, true, name, msg, sizeof(msg)) < 0)
			snprintf(err, err_size, "alternative name %s of %s not restored: %s", name,
				 rp->name, msg[0] ? msg : "taken");
	}
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
	/*
	 * only an Ethernet address that differs: IPoIB addresses are the kernel's. One the
	 * VF driver refuses while its PF holds another is left to the PF side's restore and
	 * the reset that follow it (the driver then takes the PF's).
	 */
	if (r >= 0 && rp->mac && l->mac_len == 6 && vfp_mac_parse(rp->mac, mac) == 0) {
		char msg[AGENT_ERR_SIZE] = "";
		int m = set_mac(&host, l->ifindex, mac, msg, sizeof(msg));

		if (m == -EADDRNOTAVAIL)
			snprintf(err, err_size, "%s: MAC %s refused while the PF holds another: the "
				 "PF side's restore gives it back", rp->name, rp->mac);
		else if (m < 0)
			snprintf(err, err_size, "restoring %s: %s", rp->name,
				 msg[0] ? msg : strerror(-m));
		if (m < 0 && m != -EADDRNOTAVAIL)
			r = m;
	}
	if (r >= 0) {
		char msg[AGENT_ERR_SIZE] = "";

		r = set_link(&host, l->ifindex, &ch, msg, sizeof(msg));
		if (r < 0)
			snprintf(err, err_size, "restoring %s: %s", rp->name,
				 msg[0] ? msg : strerror(-r));
	}
	if (r >= 0)
		restore_altnames(&host, l, rp, err, err_size);
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
		r = netns_open_if_same(rp->netns, (ino_t)rp->netns_inode, rp->netns_cookie,
				       &fd);
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
	int fd = -1, r = netns_open_if_same(rp->netns, (ino_t)rp->netns_inode, rp->netns_cookie,
					    &fd);

	if (r >= 0) {
		r = vf_link_find(&id, fd, &l);
		close(fd);
	}
	return r >= 0 ? 1 : r == -ENOENT || r == -ENODEV ? 0 : r;
}
