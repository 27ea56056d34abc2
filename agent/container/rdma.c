/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <libmnl/libmnl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libvfpool/macro.h"
#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock.h"
#include "agent/container/rdma.h"
#include "agent/netlink/rdmamsg.h"

/* One request, one reply datagram (the caller frees it). */
static int ask(struct nl_conn *c, void *buf, size_t len, void **ret_reply, size_t *ret_len)
{
	int r = nl_conn_send(c, buf, len);

	return r < 0 ? r : nl_conn_recv(c, ret_reply, ret_len);
}

/**
 * rdma_netns_exclusive() - 1 when RDMA devices are bound to one netns each
 *
 * -EPROTONOSUPPORT when the kernel has no RDMA netlink (no RDMA at all); a
 * kernel that predates the netns modes is shared (0).
 */
int rdma_netns_exclusive(int *ret_exclusive, char *err, size_t err_size)
{
	struct nl_conn c = { 0 };
	_cleanup_free_ void *reply = NULL;
	char buf[NL_BUF_SIZE];
	size_t n;
	int r = nl_conn_open(NETLINK_RDMA, -1, &c);

	if (r >= 0)
		r = ask(&c, buf, rdmamsg_build_sys_get(buf, c.seq++), &reply, &n);
	if (r >= 0)
		r = rdmamsg_parse_netns_mode(reply, n, ret_exclusive);
	nl_conn_close(&c);
	if (r == -ENODATA || r == -EOPNOTSUPP) {
		*ret_exclusive = 0;
		r = 0;
	}
	if (r < 0)
		snprintf(err, err_size, "RDMA netns mode: %s", r == -EPROTONOSUPPORT ?
			 "this kernel has no RDMA" : strerror(-r));
	return r;
}

static int find_dev(struct nl_conn *c, const char *dev, uint32_t *ret_index)
{
	char buf[NL_BUF_SIZE];
	int r = nl_conn_send(c, buf, rdmamsg_build_dev_dump(buf, c->seq++));

	while (r >= 0) {
		_cleanup_free_ void *reply = NULL;
		size_t n;

		r = nl_conn_recv(c, &reply, &n);
		if (r >= 0)
			r = rdmamsg_find_dev(reply, n, dev, ret_index);
		if (r != -EAGAIN)
			break;
		r = 0;
	}
	return r;
}

/**
 * rdma_move() - RDMA device @dev, seen from @from_netns_fd (-1: ours), into @to_netns_fd
 *
 * The kernel's own -errno (EOPNOTSUPP for a device that cannot move, such
 * as rxe) and its words in @err.
 */
int rdma_move(const char *dev, int from_netns_fd, int to_netns_fd, char *err, size_t err_size)
{
	struct nl_conn c = { 0 };
	char buf[NL_BUF_SIZE], msg[256] = "";
	uint32_t index = 0;
	int r = nl_conn_open(NETLINK_RDMA, from_netns_fd, &c);

	if (r >= 0)
		r = find_dev(&c, dev, &index);
	if (r >= 0)
		r = nl_conn_ack(&c, buf, rdmamsg_build_set_netns(buf, c.seq++, index, to_netns_fd),
				msg, sizeof(msg));
	nl_conn_close(&c);
	if (r < 0)
		snprintf(err, err_size, "moving RDMA device %s: %s", dev, msg[0] ? msg : strerror(-r));
	return r;
}

static int open_by_name(const char *dev, char *err, size_t err_size)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0, r = -ENODEV;

	list = ibv_get_device_list(&n);
	if (!list) {
		r = negative_errno(); /* before snprintf can change it */
		snprintf(err, err_size, "RDMA device %s: no RDMA (%s)", dev, strerror(-r));
		return r;
	}
	for (int i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), dev) == 0) {
			ctx = ibv_open_device(list[i]);
			r = ctx ? 0 : negative_errno();
		}
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
	if (r < 0)
		snprintf(err, err_size, "RDMA device %s does not open there: %s", dev, strerror(-r));
	return r;
}

/* After a move: the device opens from inside @netns_fd. */
int rdma_check_open(int netns_fd, const char *dev, char *err, size_t err_size)
{
	_cleanup_close_ int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int r;

	if (self < 0 || setns(netns_fd, CLONE_NEWNET) < 0)
		return negative_errno();
	r = open_by_name(dev, err, err_size);
	if (setns(self, CLONE_NEWNET) < 0)
		abort(); /* a request thread left in a container's namespace is worse than a crash */
	return r;
}

/* For GET /v1/host: how many RDMA devices and the netns mode, or why there is no RDMA. */
void rdma_host_facts(struct rdma_host *ret)
{
	struct ibv_device **list;
	int n = 0, exclusive = 0;

	*ret = (struct rdma_host){ .devices = -1 };
	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(ret->status, sizeof(ret->status), "no RDMA: %s", strerror(errno));
		return;
	}
	ibv_free_device_list(list);
	ret->devices = n;
	if (rdma_netns_exclusive(&exclusive, ret->status, sizeof(ret->status)) >= 0)
		snprintf(ret->netns_mode, sizeof(ret->netns_mode), "%s",
			 exclusive ? "exclusive" : "shared");
}
