/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "agent/netlink/nlmsg.h"
#include "agent/netlink/vfinfo.h"

/*
 * RTM_GETLINK of one PF, by name, with its VF list and without statistics:
 * a per-link request, not a dump of every link's VFs, and no lookup of the
 * PF's ifindex before it. @pf_name is shorter than IFNAMSIZ.
 */
size_t vfinfo_build_get(void *buf, uint32_t seq, const char *pf_name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	ifi->ifi_family = AF_UNSPEC;
	nl_attr_put_strz(nlh, IFLA_IFNAME, pf_name);
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS);
	return nlh->nlmsg_len;
}

static void put_vlan(struct nlmsghdr *nlh, const struct vfp_vf_config *s)
{
	struct ifla_vf_vlan_info v = {
		.vf = s->index,
		.vlan = (unsigned)s->vlan,
		.qos = s->qos > 0 ? (unsigned)s->qos : 0,
		.vlan_proto = htons(s->vlan_proto > 0 ? (uint16_t)s->vlan_proto : 0x8100),
	};
	struct nlattr *list = mnl_attr_nest_start(nlh, IFLA_VF_VLAN_LIST);

	nl_attr_put(nlh, IFLA_VF_VLAN_INFO, sizeof(v), &v);
	mnl_attr_nest_end(nlh, list);
}

static void put_u32_pair(struct nlmsghdr *nlh, uint16_t type, unsigned vf, int value)
{
	struct {
		uint32_t vf, value;
	} p = { vf, (uint32_t)value };

	nl_attr_put(nlh, type, sizeof(p), &p);
}

static void put_guid(struct nlmsghdr *nlh, uint16_t type, unsigned vf, uint64_t guid)
{
	struct ifla_vf_guid g = { .vf = vf, .guid = guid };

	nl_attr_put(nlh, type, sizeof(g), &g);
}

/**
 * vfinfo_build_set() - RTM_NEWLINK on the PF setting one VF's fields
 *
 * Only the fields that are set go into the message. Returns its length, or
 * 0 when @size is too small.
 */
size_t vfinfo_build_set(void *buf, size_t size, uint32_t seq, int pf_ifindex,
			const struct vfp_vf_config *s)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nlattr *list, *info;

	if (size < (size_t)MNL_SOCKET_BUFFER_SIZE)
		return 0; /* one VF's attributes are well under a page */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = pf_ifindex;
	list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
	info = mnl_attr_nest_start(nlh, IFLA_VF_INFO);
	if (s->has_mac) {
		struct ifla_vf_mac m = { .vf = s->index };

		memcpy(m.mac, s->mac, sizeof(s->mac));
		nl_attr_put(nlh, IFLA_VF_MAC, sizeof(m), &m);
	}
	if (s->vlan >= 0)
		put_vlan(nlh, s);
	if (s->min_tx_rate >= 0 || s->max_tx_rate >= 0) {
		struct ifla_vf_rate r = {
			.vf = s->index,
			.min_tx_rate = s->min_tx_rate > 0 ? (uint32_t)s->min_tx_rate : 0,
			.max_tx_rate = s->max_tx_rate > 0 ? (uint32_t)s->max_tx_rate : 0,
		};

		nl_attr_put(nlh, IFLA_VF_RATE, sizeof(r), &r);
	}
	if (s->spoofchk >= 0)
		put_u32_pair(nlh, IFLA_VF_SPOOFCHK, s->index, s->spoofchk);
	if (s->trust >= 0)
		put_u32_pair(nlh, IFLA_VF_TRUST, s->index, s->trust);
	if (s->link_state >= 0)
		put_u32_pair(nlh, IFLA_VF_LINK_STATE, s->index, s->link_state);
	if (s->has_node_guid)
		put_guid(nlh, IFLA_VF_IB_NODE_GUID, s->index, s->node_guid);
	if (s->has_port_guid)
		put_guid(nlh, IFLA_VF_IB_PORT_GUID, s->index, s->port_guid);
	mnl_attr_nest_end(nlh, info);
	mnl_attr_nest_end(nlh, list);
	return nlh->nlmsg_len;
}

/* Each IFLA_VF_* payload starts with the VF number; a payload shorter than its struct is bad. */
static const size_t vf_attr_size[IFLA_VF_MAX + 1] = {
	[IFLA_VF_MAC] = sizeof(struct ifla_vf_mac),
	[IFLA_VF_VLAN] = sizeof(struct ifla_vf_vlan),
	[IFLA_VF_TX_RATE] = sizeof(struct ifla_vf_tx_rate),
	[IFLA_VF_SPOOFCHK] = sizeof(struct ifla_vf_spoofchk),
	[IFLA_VF_LINK_STATE] = sizeof(struct ifla_vf_link_state),
	[IFLA_VF_RATE] = sizeof(struct ifla_vf_rate),
	[IFLA_VF_TRUST] = sizeof(struct ifla_vf_trust),
	[IFLA_VF_IB_NODE_GUID] = sizeof(struct ifla_vf_guid),
	[IFLA_VF_IB_PORT_GUID] = sizeof(struct ifla_vf_guid),
};

struct vf_attrs {
	const struct nlattr *tb[IFLA_VF_MAX + 1];
};

static int vf_attr(const struct nlattr *attr, void *data)
{
	struct vf_attrs *a = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (type > IFLA_VF_MAX)
		return MNL_CB_OK; /* newer than this build */
	if (vf_attr_size[type] && mnl_attr_get_payload_len(attr) < vf_attr_size[type])
		return MNL_CB_ERROR;
	if (type == IFLA_VF_VLAN_LIST && mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
		return MNL_CB_ERROR;
	a->tb[type] = attr;
	return MNL_CB_OK;
}

static int vlan_info(const struct nlattr *attr, void *data)
{
	const struct ifla_vf_vlan_info **first = data;

	if (mnl_attr_get_type(attr) != IFLA_VF_VLAN_INFO)
		return MNL_CB_OK;
	if (mnl_attr_get_payload_len(attr) < sizeof(**first))
		return MNL_CB_ERROR;
	if (!*first)
		*first = mnl_attr_get_payload(attr);
	return MNL_CB_OK;
}

static uint32_t u32_at(const struct nlattr *attr, size_t offset)
{
	uint32_t v;

	memcpy(&v, (const char *)mnl_attr_get_payload(attr) + offset, sizeof(v));
	return v;
}

/* The fields of one IFLA_VF_INFO into @s; the VLAN list (with the protocol) wins over IFLA_VF_VLAN. */
static int fill_settings(const struct vf_attrs *a, struct vfp_vf_config *s)
{
	const struct ifla_vf_vlan_info *vi = NULL;

	if (a->tb[IFLA_VF_MAC]) {
		s->has_mac = true;
		memcpy(s->mac, ((const struct ifla_vf_mac *)mnl_attr_get_payload(a->tb[IFLA_VF_MAC]))->mac,
		       sizeof(s->mac));
	}
	if (a->tb[IFLA_VF_VLAN_LIST] &&
	    mnl_attr_parse_nested(a->tb[IFLA_VF_VLAN_LIST], vlan_info, &vi) < 0)
		return -EBADMSG;
	if (vi) {
		s->vlan = (int)vi->vlan;
		s->qos = (int)vi->qos;
		s->vlan_proto = ntohs(vi->vlan_proto);
	} else if (a->tb[IFLA_VF_VLAN]) {
		s->vlan = (int)u32_at(a->tb[IFLA_VF_VLAN], 4);
		s->qos = (int)u32_at(a->tb[IFLA_VF_VLAN], 8);
		s->vlan_proto = 0x8100;
	}
	if (a->tb[IFLA_VF_RATE]) {
		s->min_tx_rate = u32_at(a->tb[IFLA_VF_RATE], 4);
		s->max_tx_rate = u32_at(a->tb[IFLA_VF_RATE], 8);
	} else if (a->tb[IFLA_VF_TX_RATE]) {
		s->min_tx_rate = 0;
		s->max_tx_rate = u32_at(a->tb[IFLA_VF_TX_RATE], 4);
	}
	if (a->tb[IFLA_VF_SPOOFCHK])
		s->spoofchk = (int)u32_at(a->tb[IFLA_VF_SPOOFCHK], 4);
	if (a->tb[IFLA_VF_TRUST])
		s->trust = (int)u32_at(a->tb[IFLA_VF_TRUST], 4);
	if (a->tb[IFLA_VF_LINK_STATE])
		s->link_state = (int)u32_at(a->tb[IFLA_VF_LINK_STATE], 4);
	if (a->tb[IFLA_VF_IB_NODE_GUID]) {
		s->has_node_guid = true;
		memcpy(&s->node_guid, (const char *)mnl_attr_get_payload(a->tb[IFLA_VF_IB_NODE_GUID]) + 4 +
		       4, sizeof(s->node_guid)); /* after vf and the struct's padding */
	}
	if (a->tb[IFLA_VF_IB_PORT_GUID]) {
		s->has_port_guid = true;
		memcpy(&s->port_guid, (const char *)mnl_attr_get_payload(a->tb[IFLA_VF_IB_PORT_GUID]) + 4 +
		       4, sizeof(s->port_guid));
	}
	return 0;
}

struct find_vf {
	unsigned index;
	struct vfp_vf_config *s;
	int found; /* 1 found, <0 error */
};

static int vf_info(const struct nlattr *attr, void *data)
{
	struct find_vf *f = data;
	struct vf_attrs a = { { NULL } };

	if (mnl_attr_get_type(attr) != IFLA_VF_INFO)
		return MNL_CB_OK;
	if (mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0 ||
	    mnl_attr_parse_nested(attr, vf_attr, &a) < 0 || !a.tb[IFLA_VF_MAC])
		return MNL_CB_ERROR; /* every VF entry carries its MAC, which names the VF */
	if (u32_at(a.tb[IFLA_VF_MAC], 0) != f->index)
		return MNL_CB_OK;
	f->found = fill_settings(&a, f->s) < 0 ? -EBADMSG : 1;
	return MNL_CB_STOP;
}

static int link_attr_vflist(const struct nlattr *attr, void *data)
{
	const struct nlattr **list = data;

	if (mnl_attr_get_type(attr) == IFLA_VFINFO_LIST) {
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
			return MNL_CB_ERROR;
		*list = attr;
	}
	return MNL_CB_OK;
}

/**
 * vfinfo_parse() - VF @index's settings from a PF's RTM_NEWLINK reply
 *
 * -EBADMSG for a truncated message or an attribute shorter than its struct,
 * -EPROTO for a message that is not a link, -ENOENT when the PF reports no
 * such VF (or no VF list at all). Attributes newer than this build are
 * skipped. @ret is untouched on failure.
 */
int vfinfo_parse(const void *buf, size_t len, unsigned index, struct vfp_vf_config *ret)
{
	const struct nlmsghdr *nlh = buf;
	const struct nlattr *list = NULL;
	struct vfp_vf_config s;
	struct find_vf f = { .index = index, .s = &s };

	if (!nl_msg_ok(nlh, len) ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct ifinfomsg)))
		return -EBADMSG;
	if (nlh->nlmsg_type != RTM_NEWLINK)
		return -EPROTO;
	if (mnl_attr_parse(nlh, sizeof(struct ifinfomsg), link_attr_vflist, &list) < 0)
		return -EBADMSG;
	if (!list)
		return -ENOENT;
	vfp_vf_config_init(&s, index);
	if (mnl_attr_parse_nested(list, vf_info, &f) < 0 && f.found == 0)
		return -EBADMSG;
	if (f.found <= 0)
		return f.found < 0 ? f.found : -ENOENT;
	*ret = s;
	return 0;
}
