/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libvfpool/macro.h"
#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock.h"

/*
 * A netlink socket of @protocol in the namespace @netns_fd (-1: ours). The
 * calling thread enters the namespace only to create the socket, which
 * stays bound to it, and comes back before returning.
 */
int nl_conn_open(int protocol, int netns_fd, struct nl_conn *c)
{
	_cleanup_close_ int self = -1;
	int r = 0;

	c->seq = 1;
	c->nl = NULL;
	if (netns_fd >= 0) {
		self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0 || setns(netns_fd, CLONE_NEWNET) < 0)
			return negative_errno();
	}
	c->nl = mnl_socket_open2(protocol, SOCK_CLOEXEC);
	if (!c->nl || mnl_socket_bind(c->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		r = negative_errno();
	if (self >= 0 && setns(self, CLONE_NEWNET) < 0)
		r = r < 0 ? r : negative_errno();
	if (r < 0 && c->nl) {
		mnl_socket_close(c->nl);
		c->nl = NULL;
	}
	return r;
}

void nl_conn_close(struct nl_conn *c)
{
	if (c->nl)
		mnl_socket_close(c->nl);
	c->nl = NULL;
}

int nl_conn_send(struct nl_conn *c, const void *buf, size_t len)
{
	if (mnl_socket_sendto(c->nl, buf, len) >= 0)
		return 0;
	c->broken = true;
	return negative_errno();
}

/**
 * nl_conn_recv() - the next datagram, whole, in a buffer the caller frees
 *
 * The datagram's size is peeked first: a PF with 128 VFs answers a link
 * request with tens of KiB, more than any fixed buffer is sure to hold.
 */
int nl_conn_recv(struct nl_conn *c, void **ret_reply, size_t *ret_len)
{
	int fd = mnl_socket_get_fd(c->nl);
	ssize_t size, n;
	void *buf;

	do
		size = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
	while (size < 0 && errno == EINTR);
	c->broken = size < 0;
	if (size < 0)
		return negative_errno();
	buf = malloc(size > 0 ? (size_t)size : 1);
	c->broken = !buf;
	if (!buf)
		return -ENOMEM;
	do
		n = recv(fd, buf, (size_t)size, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int r = negative_errno();

		c->broken = true;
		free(buf);
		return r;
	}
	*ret_reply = buf;
	*ret_len = (size_t)n;
	return 0;
}

/* Sends a request and reads its ack: the kernel's -errno as it came, and its text in @err. */
int nl_conn_ack(struct nl_conn *c, const void *buf, size_t len, char *err, size_t err_size)
{
	_cleanup_free_ void *reply = NULL;
	size_t n;
	int r = nl_conn_send(c, buf, len);

	if (r >= 0)
		r = nl_conn_recv(c, &reply, &n);
	return r < 0 ? r : nl_parse_ack(reply, n, err, err_size);
}

/* The reply to a single-message request: @parse's result, or the kernel's -errno. */
static int get_one(struct nl_conn *c, const void *req, size_t len, uint16_t type,
		   int (*parse)(const void *, size_t, void *), void *ret, char *err, size_t err_size)
{
	_cleanup_free_ void *reply = NULL;
	size_t n;
	int r = nl_conn_send(c, req, len);

	if (r >= 0)
		r = nl_conn_recv(c, &reply, &n);
	if (r < 0)
		return r;
	if (n >= sizeof(struct nlmsghdr) && ((struct nlmsghdr *)reply)->nlmsg_type == type)
		return parse(reply, n, ret);
	r = nl_parse_ack(reply, n, err, err_size);
	return r < 0 ? r : -EPROTO; /* an ack without the answer */
}

static int parse_link(const void *buf, size_t len, void *ret)
{
	return nl_parse_link(buf, len, ret);
}

static int parse_nsid(const void *buf, size_t len, void *ret)
{
	return nl_parse_nsid(buf, len, ret);
}

/* Link @ifindex of the socket's namespace: -ENODEV when there is none. */
int nl_conn_get_link_index(struct nl_conn *c, int ifindex, struct nl_link *ret)
{
	char buf[NL_BUF_SIZE], err[256];

	if (ifindex <= 0)
		return -ENODEV;
	return get_one(c, buf, nl_build_getlink(buf, c->seq++, ifindex, NULL), RTM_NEWLINK,
		       parse_link, ret, err, sizeof(err));
}

/* Link @ifindex with its counters (@ret->has_stats): -ENODEV when there is none. */
int nl_conn_get_link_stats(struct nl_conn *c, int ifindex, struct nl_link *ret)
{
	char buf[NL_BUF_SIZE], err[256];

	if (ifindex <= 0)
		return -ENODEV;
	return get_one(c, buf, nl_build_getlink_stats(buf, c->seq++, ifindex), RTM_NEWLINK,
		       parse_link, ret, err, sizeof(err));
}

/* The id the socket's namespace gives the namespace @netns_fd; -1 when it has none. */
int nl_conn_get_nsid(struct nl_conn *c, int netns_fd, int *ret_nsid)
{
	char buf[NL_BUF_SIZE], err[256];

	return get_one(c, buf, nl_build_getnsid(buf, c->seq++, netns_fd), RTM_NEWNSID, parse_nsid,
		       ret_nsid, err, sizeof(err));
}

/* One datagram of a link dump: 1 at NLMSG_DONE, 0 for more, or -errno. */
static int dump_datagram(const void *buf, size_t len,
			 bool (*match)(const struct nl_link *, const void *), const void *data,
			 struct nl_link *ret, bool *found)
{
	const char *p = buf;
	char msg[256];

	if (!nl_msg_ok(buf, len))
		return -EBADMSG;
	for (size_t left = len; nl_msg_ok((const void *)p, left);) {
		const struct nlmsghdr *nlh = (const void *)p;
		size_t step = MNL_ALIGN(nlh->nlmsg_len);
		struct nl_link l;

		if (nlh->nlmsg_type == NLMSG_DONE)
			return 1;
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			int r = nl_parse_ack(nlh, left, msg, sizeof(msg));

			return r < 0 ? r : 1;
		}
		if (!*found && nl_parse_link(nlh, left, &l) >= 0 && match(&l, data)) {
			*ret = l;
			*found = true;
		}
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
	return 0;
}

/**
 * nl_conn_find_link() - the first link of the socket's namespace that @match
 * accepts; -ENODEV when none does
 *
 * The whole dump is read either way: the socket is left ready for the next
 * request.
 */
int nl_conn_find_link(struct nl_conn *c, bool (*match)(const struct nl_link *, const void *),
		      const void *data, struct nl_link *ret)
{
	char buf[NL_BUF_SIZE];
	bool found = false;
	int r = nl_conn_send(c, buf, nl_build_dumplinks(buf, c->seq++));

	while (r == 0) {
		_cleanup_free_ void *reply = NULL;
		size_t n;

		r = nl_conn_recv(c, &reply, &n);
		if (r >= 0)
			r = dump_datagram(reply, n, match, data, ret, &found);
	}
	if (r < 0)
		return r;
	return found ? 0 : -ENODEV;
}

struct each {
	void (*fn)(const struct nl_link *, void *);
	void *data;
};

static bool call_each(const struct nl_link *l, const void *data)
{
	const struct each *e = data;

	e->fn(l, e->data);
	return false;
}

/* @fn called on every link of the socket's namespace, in the kernel's order. */
int nl_conn_each_link(struct nl_conn *c, void (*fn)(const struct nl_link *, void *), void *data)
{
	const struct each e = { fn, data };
	struct nl_link unused;
	int r = nl_conn_find_link(c, call_each, &e, &unused);

	return r == -ENODEV ? 0 : r;
}

/* Link @name of the socket's namespace: -ENODEV when there is none, the kernel's words in @err. */
int nl_conn_get_link(struct nl_conn *c, const char *name, struct nl_link *ret, char *err,
		     size_t err_size)
{
	char buf[NL_BUF_SIZE];
	_cleanup_free_ void *reply = NULL;
	size_t n;
	int r = nl_conn_send(c, buf, nl_build_getlink(buf, c->seq++, 0, name));

	if (r >= 0)
		r = nl_conn_recv(c, &reply, &n);
	if (r < 0)
		return r;
	if (((struct nlmsghdr *)reply)->nlmsg_type == RTM_NEWLINK)
		return nl_parse_link(reply, n, ret);
	r = nl_parse_ack(reply, n, err, err_size);
	return r < 0 ? r : -EPROTO; /* an ack without the link */
}
