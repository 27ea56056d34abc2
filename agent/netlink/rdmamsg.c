/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>
#include <string.h>

#include "agent/netlink/nlmsg.h"
#include "agent/netlink/rdmamsg.h"

static struct nlmsghdr *start(void *buf, int cmd, uint16_t flags, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	return nlh;
}

size_t rdmamsg_build_sys_get(void *buf, uint32_t seq)
{
	return start(buf, RDMA_NLDEV_CMD_SYS_GET, 0, seq)->nlmsg_len;
}

size_t rdmamsg_build_dev_dump(void *buf, uint32_t seq)
{
	return start(buf, RDMA_NLDEV_CMD_GET, NLM_F_DUMP, seq)->nlmsg_len;
}

size_t rdmamsg_build_set_netns(void *buf, uint32_t seq, uint32_t dev_index, int netns_fd)
{
	struct nlmsghdr *nlh = start(buf, RDMA_NLDEV_CMD_SET, NLM_F_ACK, seq);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_NET_NS_FD, (uint32_t)netns_fd);
	return nlh->nlmsg_len;
}

struct attrs {
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	struct attrs *a = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (type >= RDMA_NLDEV_ATTR_MAX)
		return MNL_CB_OK;
	if ((type == RDMA_NLDEV_ATTR_DEV_INDEX && mnl_attr_validate(attr, MNL_TYPE_U32) < 0) ||
	    (type == RDMA_NLDEV_ATTR_DEV_NAME && mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0) ||
	    (type == RDMA_NLDEV_SYS_ATTR_NETNS_MODE && mnl_attr_validate(attr, MNL_TYPE_U8) < 0))
		return MNL_CB_ERROR;
	a->tb[type] = attr;
	return MNL_CB_OK;
}

static int parse_one(const struct nlmsghdr *nlh, int cmd, struct attrs *a)
{
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

		if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
			return -EBADMSG;
		return e->error < 0 ? e->error : -EPROTO;
	}
	if (nlh->nlmsg_type != RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd))
		return -EPROTO;
	return mnl_attr_parse(nlh, 0, attr_cb, a) < 0 ? -EBADMSG : 0;
}

/**
 * rdmamsg_parse_netns_mode() - 1 for exclusive, 0 for shared
 *
 * -EBADMSG when truncated, the kernel's -errno for an error reply, -ENODATA
 * for a kernel that predates the attribute (it has only the shared mode).
 */
int rdmamsg_parse_netns_mode(const void *buf, size_t len, int *ret_exclusive)
{
	const struct nlmsghdr *nlh = buf;
	struct attrs a = { { NULL } };
	int r;

	if (!nl_msg_ok(nlh, len))
		return -EBADMSG;
	r = parse_one(nlh, RDMA_NLDEV_CMD_SYS_GET, &a);
	if (r < 0)
		return r;
	if (!a.tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE])
		return -ENODATA;
	*ret_exclusive = mnl_attr_get_u8(a.tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]) == 0;
	return 0;
}

/**
 * rdmamsg_find_dev() - @name's index in one datagram of a device dump
 *
 * 0 and the index when found; -ENOENT when this datagram ends the dump
 * (NLMSG_DONE) without it; -EAGAIN when the dump goes on in the next one.
 */
int rdmamsg_find_dev(const void *buf, size_t len, const char *name, uint32_t *ret_index)
{
	const struct nlmsghdr *nlh = buf;
	int left = len > INT32_MAX ? -1 : (int)len;

	if (left < 0 || !nl_msg_ok(nlh, (size_t)left))
		return -EBADMSG;
	for (; left >= 0 && nl_msg_ok(nlh, (size_t)left); nlh = mnl_nlmsg_next(nlh, &left)) {
		struct attrs a = { { NULL } };
		int r;

		if (nlh->nlmsg_type == NLMSG_DONE)
			return -ENOENT;
		r = parse_one(nlh, RDMA_NLDEV_CMD_GET, &a);
		if (r < 0)
			return r;
		if (!a.tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !a.tb[RDMA_NLDEV_ATTR_DEV_NAME])
			return -EBADMSG;
		if (strcmp(mnl_attr_get_str(a.tb[RDMA_NLDEV_ATTR_DEV_NAME]), name) == 0) {
			*ret_index = mnl_attr_get_u32(a.tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
			return 0;
		}
	}
	return left == 0 ? -EAGAIN : -EBADMSG;
}
