/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libvfpool/macro.h"
#include "agent/container/netns.h"
#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock.h"

static int get_link(struct nl_conn *c, const char *name, struct nl_link *ret)
{
	char err[256];

	return nl_conn_get_link(c, name, ret, err, sizeof(err));
}

static int set_link(struct nl_conn *c, int ifindex, const struct nl_link_change *ch, char *err,
		    size_t err_size)
{
	char buf[NL_BUF_SIZE];
	size_t len = nl_build_setlink(buf, c->seq++, ifindex, ch);

	return nl_conn_ack(c, buf, len, err, err_size);
}

static int move_back(int netns_fd, const char *ifname, const char *name, const char *fallback,
		     bool *ret_used_fallback, char *err, size_t err_size);

/**
 * netns_open() - a network namespace by /run/netns name, path, or "pid:N"
 *
 * Only /run/netns/NAME, /proc/N/ns/net and /var/run/netns paths are taken:
 * a request does not get to open an arbitrary file. The fd must be a
 * network namespace (NS_GET_NSTYPE).
 */
int netns_open(const char *spec, int *ret_fd, char *err, size_t err_size)
{
	char path[128];
	struct stat st;
	int fd;

	if (strncmp(spec, "pid:", 4) == 0 && strspn(spec + 4, "0123456789") == strlen(spec + 4) &&
	    spec[4] && strlen(spec) < 16)
		snprintf(path, sizeof(path), "/proc/%s/ns/net", spec + 4);
	else if (!strchr(spec, '/') && spec[0] && spec[0] != '.' && strlen(spec) < 64)
		snprintf(path, sizeof(path), "/run/netns/%s", spec);
	else if ((strncmp(spec, "/run/netns/", 11) == 0 || strncmp(spec, "/var/run/netns/", 15) == 0) &&
		 !strstr(spec, "..") && strlen(spec) < sizeof(path) && !strchr(strrchr(spec, '/') + 1, '/'))
		snprintf(path, sizeof(path), "%s", spec);
	else {
		snprintf(err, err_size, "netns: \"%.64s\" is not a /run/netns name or path, or pid:N",
			 spec);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int r = negative_errno(); /* before snprintf can change it */

		snprintf(err, err_size, "netns: %s: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) == S_IFDIR ||
	    ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET) {
		close(fd);
		snprintf(err, err_size, "netns: %s is not a network namespace", path);
		return -EINVAL;
	}
	*ret_fd = fd;
	return 0;
}

int netns_inode(int fd, ino_t *ret)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	*ret = st.st_ino;
	return 0;
}

/* The namespace @spec names, open, if it is still the one with @inode; else -1. */
static int open_if_same(const char *spec, ino_t inode)
{
	char ignored[256];
	ino_t now = 0;
	int fd;

	if (!spec || netns_open(spec, &fd, ignored, sizeof(ignored)) < 0)
		return -1;
	if (netns_inode(fd, &now) < 0 || now != inode) {
		close(fd);
		return -1;
	}
	return fd;
}

/**
 * netns_alive() - @spec still names the namespace whose inode is @inode
 *
 * False when the name is gone (ip netns del, the process exited) or now
 * names another namespace: the one the VF went into is gone for us.
 */
bool netns_alive(const char *spec, ino_t inode)
{
	int fd = open_if_same(spec, inode);

	if (fd >= 0)
		close(fd);
	return fd >= 0;
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

/* Inside the namespace: MAC, MTU, addresses, up, default route. */
static int configure_inside(int netns_fd, const struct netns_config *cfg, char *err,
			    size_t err_size)
{
	struct nl_conn c = { 0 };
	struct nl_link l = { 0 };
	struct nl_link_change link = { .netns_fd = -1, .mtu = cfg->mtu, .up = -1, .mac = cfg->mac };
	struct nl_link_change up = { .netns_fd = -1, .up = 1 };
	int r = nl_conn_open(NETLINK_ROUTE, netns_fd, &c);

	if (r >= 0)
		r = get_link(&c, cfg->ifname, &l);
	if (r >= 0 && (cfg->mtu || cfg->mac))
		r = set_link(&c, l.ifindex, &link, err, err_size);
	if (r >= 0)
		r = add_addresses(&c, l.ifindex, cfg, err, err_size);
	if (r >= 0)
		r = set_link(&c, l.ifindex, &up, err, err_size);
	if (r >= 0 && cfg->gateway)
		r = add_default_route(&c, l.ifindex, cfg->gateway, err, err_size);
	nl_conn_close(&c);
	return r;
}

static int snapshot(const struct nl_link *l, struct vfp_restore_point *rp)
{
	char mac[3 * sizeof(l->mac)] = "";

	for (unsigned i = 0; i < l->mac_len; i++)
		snprintf(mac + 3 * i, sizeof(mac) - 3 * i, i ? ":%02x" : "%02x", l->mac[i]);
	rp->mtu = l->mtu;
	rp->up = (l->flags & IFF_UP) != 0;
	return vfp_restore_point_set(&rp->name, l->name) < 0 ||
			       vfp_restore_point_set(&rp->mac, mac) < 0
		       ? -ENOMEM
		       : 0;
}

/**
 * netns_snapshot() - @netdev's name, MTU, up state and MAC: what a detach restores
 *
 * Taken, and put in the ledger, before netns_attach() moves it: an agent
 * killed in between leaves a restore point that says where it went.
 */
int netns_snapshot(const char *netdev, struct vfp_restore_point *rp, char *err, size_t err_size)
{
	struct nl_conn host = { 0 };
	struct nl_link l = { 0 };
	int r = nl_conn_open(NETLINK_ROUTE, -1, &host);

	if (r >= 0)
		r = get_link(&host, netdev, &l);
	nl_conn_close(&host);
	if (r < 0) {
		snprintf(err, err_size, "netdev %s: %s", netdev, strerror(-r));
		return r;
	}
	return snapshot(&l, rp);
}

/**
 * netns_holds() - 1 when the namespace @spec (still inode @inode) has a link
 * named @ifname, 0 when not (or the namespace is gone)
 */
int netns_holds(const char *spec, ino_t inode, const char *ifname)
{
	struct nl_conn c = { 0 };
	struct nl_link l = { 0 };
	int fd = ifname ? open_if_same(spec, inode) : -1, r;

	if (fd < 0)
		return 0;
	r = nl_conn_open(NETLINK_ROUTE, fd, &c);
	if (r >= 0)
		r = get_link(&c, ifname, &l);
	nl_conn_close(&c);
	close(fd);
	return r >= 0;
}

/*
 * Moves @netdev into @netns_fd as cfg->ifname, configured. On failure it is
 * moved back as @original (its netns_snapshot()) says, and the error says
 * which step failed.
 */
int netns_attach(const char *netdev, int netns_fd, const struct netns_config *cfg,
		 struct vfp_restore_point *original, char *err, size_t err_size)
{
	struct nl_conn host = { 0 };
	struct nl_link l = { 0 };
	struct nl_link_change down = { .netns_fd = -1, .up = 0 };
	struct nl_link_change move = { .name = cfg->ifname, .netns_fd = netns_fd, .up = -1 };
	int r = nl_conn_open(NETLINK_ROUTE, -1, &host);

	if (r >= 0)
		r = get_link(&host, netdev, &l);
	if (r < 0) {
		if (!err[0])
			snprintf(err, err_size, "netdev %s: %s", netdev, strerror(-r));
		nl_conn_close(&host);
		return r;
	}
	r = set_link(&host, l.ifindex, &down, err, err_size);
	if (r >= 0) {
		r = set_link(&host, l.ifindex, &move, err, err_size);
		if (r < 0) {
			char ignored[256];

			/*
			 * The kernel moves first and renames inside the namespace after:
			 * when the rename fails (the name is taken there), the netdev is
			 * in the namespace under its host name. Bring it back.
			 */
			move_back(netns_fd, l.name, l.name, NULL, NULL, ignored, sizeof(ignored));
			if (!err[0])
				snprintf(err, err_size, "moving %s into the namespace as %s: %s",
					 netdev, cfg->ifname, strerror(-r));
		}
	}
	nl_conn_close(&host);
	if (r >= 0) {
		r = configure_inside(netns_fd, cfg, err, err_size);
		if (r < 0) {
			char ignored[256];

			vfp_restore_point_set(&original->ifname, cfg->ifname);
			netns_detach(original, netns_fd, NULL, ignored, sizeof(ignored)); /* roll back */
		}
	}
	return r;
}

/* In the host: the original MTU and up/down state of @name. */
static int restore_in_host(struct nl_conn *host, const char *name,
			   const struct vfp_restore_point *original, char *err, size_t err_size)
{
	struct nl_link l = { 0 };
	const char *mac = original->mac;
	unsigned char addr[6];
	struct nl_link_change ch = { .netns_fd = -1, .mtu = original->mtu, .up = original->up };
	int r = get_link(host, name, &l);

	/* only an Ethernet address that differs: IPoIB addresses are the kernel's */
	if (r >= 0 && mac && l.mac_len == 6 && vfp_mac_parse(mac, addr) == 0 &&
	    memcmp(addr, l.mac, 6) != 0)
		ch.mac = addr;

	return r < 0 ? r : set_link(host, l.ifindex, &ch, err, err_size);
}

static int rename_link(struct nl_conn *c, int ifindex, const char *name, char *err,
		       size_t err_size)
{
	struct nl_link_change ch = { .name = name, .netns_fd = -1, .up = -1 };

	return set_link(c, ifindex, &ch, err, err_size);
}

/*
 * Moves link @ifname of namespace @netns_fd back to the host as @name. It
 * is renamed inside the namespace first and moved without a name, so it
 * appears in the host under its final name (no rename there for udev to
 * race with). When @name is taken in the host it comes back as @fallback
 * (*ret_used_fallback set); without a fallback that is -EEXIST.
 */
static int move_back(int netns_fd, const char *ifname, const char *name, const char *fallback,
		     bool *ret_used_fallback, char *err, size_t err_size)
{
	struct nl_conn c = { 0 };
	struct nl_link l = { 0 };
	_cleanup_close_ int host_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	struct nl_link_change home = { .netns_fd = host_fd, .up = -1 };
	struct nl_link_change down = { .netns_fd = -1, .up = 0 };
	int r = host_fd < 0 ? negative_errno() : nl_conn_open(NETLINK_ROUTE, netns_fd, &c);

	if (r >= 0)
		r = get_link(&c, ifname, &l);
	/* renamed back already, and stopped (killed) before the move home */
	if (r == -ENODEV && strcmp(ifname, name) != 0)
		r = get_link(&c, name, &l);
	if (r == -ENODEV && fallback)
		r = get_link(&c, fallback, &l);
	if (r >= 0)
		r = set_link(&c, l.ifindex, &down, err, err_size);
	if (r >= 0 && strcmp(l.name, name) != 0)
		r = rename_link(&c, l.ifindex, name, err, err_size);
	if (r >= 0)
		r = set_link(&c, l.ifindex, &home, err, err_size);
	if (r == -EEXIST && fallback) {
		r = rename_link(&c, l.ifindex, fallback, err, err_size);
		if (r >= 0)
			r = set_link(&c, l.ifindex, &home, err, err_size);
		if (r >= 0 && ret_used_fallback)
			*ret_used_fallback = true;
	}
	nl_conn_close(&c);
	return r;
}

/* In the host: @current (the name the kernel gave it) renamed back to @name, or the fallback. */
static int rename_in_host(const char *current, const char *name, const char *fallback,
			  bool *ret_used_fallback, char *err, size_t err_size)
{
	struct nl_conn c = { 0 };
	struct nl_link l = { 0 };
	int r = nl_conn_open(NETLINK_ROUTE, -1, &c);

	if (r >= 0)
		r = get_link(&c, current, &l);
	if (r >= 0)
		r = rename_link(&c, l.ifindex, name, err, err_size);
	if (r == -EEXIST) {
		r = rename_link(&c, l.ifindex, fallback, err, err_size);
		*ret_used_fallback = r >= 0;
	}
	nl_conn_close(&c);
	return r;
}

/**
 * netns_detach() - the netdev back to the host, as it was
 * @original: the snapshot netns_attach() made, with netns and ifname
 * @netns_fd: the namespace, or -1 to open @original->netns
 * @found_as: the name the VF's netdev has in the host now (found by its PCI
 *	      address), or NULL
 *
 * A namespace that is gone, or a netdev no longer in it, is not an error:
 * the kernel has returned a real VF to the host, maybe as "devN" (renamed
 * back here), or destroyed a virtual one. When the original name is taken
 * in the host the netdev returns as "vfr<name>" and @err says so.
 */
int netns_detach(const struct vfp_restore_point *original, int netns_fd, const char *found_as,
		 char *err, size_t err_size)
{
	const char *name = original->name, *ifname = original->ifname, *spec = original->netns;
	struct nl_conn host = { 0 };
	char fallback[NL_IFNAMSIZ];
	bool used = false;
	int fd = netns_fd, r = 0;

	err[0] = '\0';
	if (!name || !ifname)
		return 0; /* never attached */
	snprintf(fallback, sizeof(fallback), "vfr%.12s", name);
	if (fd < 0 && spec && netns_open(spec, &fd, err, err_size) < 0)
		fd = -1;
	if (fd >= 0) {
		r = move_back(fd, ifname, name, fallback, &used, err, err_size);
		if (fd != netns_fd)
			close(fd);
	}
	if ((fd < 0 || r == -ENODEV) && found_as && strcmp(found_as, name) != 0 &&
	    strcmp(found_as, fallback) != 0)
		r = rename_in_host(found_as, name, fallback, &used, err, err_size);
	if (r >= 0 && used) {
		snprintf(err, err_size, "%s is taken in the host: returned as %s", name, fallback);
		name = fallback;
	}
	if (r == -ENODEV)
		r = 0; /* not in the namespace (any more) */
	if (r >= 0 && nl_conn_open(NETLINK_ROUTE, -1, &host) >= 0) {
		char msg[256];
		int rr = restore_in_host(&host, name, original, msg, sizeof(msg));

		nl_conn_close(&host);
		r = rr == -ENODEV ? 0 : rr;
		if (r < 0)
			snprintf(err, err_size, "restoring %s: %s", name, msg[0] ? msg : strerror(-r));
	}
	return r;
}
