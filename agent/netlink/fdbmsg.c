/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "agent/netlink/fdbmsg.h"
#include "agent/netlink/nlmsg.h"

/**
 * nl_build_fdb() - an FDB entry for @mac on link @ifindex, added or deleted
 *
 * A bridge's add replaces an entry there already (NLM_F_CREATE without
 * NLM_F_EXCL): one it learned on another port moves to this one. A device's
 * own (NTF_SELF) add is exclusive: an address in its filter already answers
 * EEXIST (the kernel's ndo_dflt_fdb_add() says 0 without NLM_F_EXCL), so
 * that the caller knows the entry is not its own.
 */
size_t nl_build_fdb(void *buf, uint32_t seq, bool add, int ifindex, const unsigned char mac[6],
		    enum nl_fdb_where where)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm;

	nlh->nlmsg_type = add ? RTM_NEWNEIGH : RTM_DELNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE : 0) |
			   (add && where == NL_FDB_DEVICE ? NLM_F_EXCL : 0);
	nlh->nlmsg_seq = seq;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = PF_BRIDGE;
	ndm->ndm_ifindex = ifindex;
	if (where == NL_FDB_BRIDGE_STATIC) {
		ndm->ndm_flags = NTF_MASTER;
		ndm->ndm_state = NUD_NOARP;
	} else {
		ndm->ndm_flags = NTF_SELF;
		ndm->ndm_state = NUD_NOARP | NUD_PERMANENT;
	}
	nl_attr_put(nlh, NDA_LLADDR, 6, mac);
	return nlh->nlmsg_len;
}
