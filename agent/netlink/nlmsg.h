/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtnetlink messages, built and parsed as pure functions over buffers (no
 * socket here), so they are tested on synthesized replies.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;

#define NL_BUF_SIZE 8192
#define NL_IFNAMSIZ 16

struct nl_link {
	int ifindex;
	char name[NL_IFNAMSIZ];
	unsigned mtu;
	unsigned flags; /* IFF_* */
	unsigned char mac[32];
	unsigned mac_len;
	int iflink;	     /* IFLA_LINK: a veth's peer, a VLAN's lower link; 0: none */
	int link_netnsid;    /* IFLA_LINK_NETNSID: the namespace @iflink is in; -1: this one */
	char parent_bus[16]; /* IFLA_PARENT_DEV_BUS_NAME: "pci"; "" for a virtual link */
	char parent_dev[64]; /* IFLA_PARENT_DEV_NAME: "0000:3b:00.1" */
	int master;	     /* IFLA_MASTER: the bridge or bond it is in; 0: none */
	unsigned n_altnames; /* IFLA_PROP_LIST's IFLA_ALT_IFNAMEs */
	char altnames[256];  /* as many as fit, separated by spaces */
	bool has_alias;	     /* IFLA_IFALIAS, not empty */
	char kind[16];	     /* IFLA_INFO_KIND: "bridge", "vlan", "macvtap"; "" for none */
	int vlan_id;	     /* a "vlan" link's IFLA_VLAN_ID; -1 for any other */
	bool has_stats;	     /* IFLA_STATS64 came (nl_build_getlink_stats()) */
	uint64_t rx_packets; /* its first two counters */
	uint64_t tx_packets;
};

/* What to change on a link; unset fields are left alone. */
struct nl_link_change {
	const char *name;
	int netns_fd; /* -1: stay */
	unsigned mtu; /* 0: keep */
	int up;	      /* -1 keep, 0 down, 1 up */
	const unsigned char *mac; /* 6 bytes, or NULL: keep */
	bool nomaster;		  /* out of its bridge or bond */
	const char *alias;	  /* NULL: keep; "": none */
};

void nl_attr_put(struct nlmsghdr *nlh, uint16_t type, size_t len, const void *data);
void nl_attr_put_strz(struct nlmsghdr *nlh, uint16_t type, const char *s);
size_t nl_build_getlink(void *buf, uint32_t seq, int ifindex, const char *name);
size_t nl_build_getlink_stats(void *buf, uint32_t seq, int ifindex);
size_t nl_build_dumplinks(void *buf, uint32_t seq);
size_t nl_build_getnsid(void *buf, uint32_t seq, int netns_fd);
size_t nl_build_setlink(void *buf, uint32_t seq, int ifindex, const struct nl_link_change *c);
size_t nl_build_dellink(void *buf, uint32_t seq, int ifindex);
size_t nl_build_altname(void *buf, uint32_t seq, int ifindex, bool add, const char *altname);
size_t nl_build_addr(void *buf, uint32_t seq, int ifindex, int family, const void *addr,
		     unsigned prefixlen);
size_t nl_build_default_route(void *buf, uint32_t seq, int ifindex, int family,
			      const void *gateway);
int nl_parse_link(const void *buf, size_t len, struct nl_link *ret);
int nl_parse_nsid(const void *buf, size_t len, int *ret_nsid);
int nl_parse_ack(const void *buf, size_t len, char *msg, size_t msg_size);
bool nl_msg_ok(const struct nlmsghdr *nlh, size_t len);
int nl_parse_prefix(const char *s, int *ret_family, unsigned char addr[16], unsigned *ret_len);
