/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Netlink socket I/O, apart from the builders and parsers: a socket opened
 * in a chosen network namespace, one request and its whole reply.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mnl_socket;
struct nl_link;

struct nl_conn {
	struct mnl_socket *nl;
	uint32_t seq;
	bool broken; /* a send or a receive failed: a reply may be left unread */
};

int nl_conn_open(int protocol, int netns_fd, struct nl_conn *c);
void nl_conn_close(struct nl_conn *c);
int nl_conn_send(struct nl_conn *c, const void *buf, size_t len);
int nl_conn_recv(struct nl_conn *c, void **ret_reply, size_t *ret_len);
int nl_conn_get_link(struct nl_conn *c, const char *name, struct nl_link *ret, char *err,
		     size_t err_size);
int nl_conn_get_link_index(struct nl_conn *c, int ifindex, struct nl_link *ret);
int nl_conn_get_link_stats(struct nl_conn *c, int ifindex, struct nl_link *ret);
int nl_conn_find_link(struct nl_conn *c, bool (*match)(const struct nl_link *, const void *),
		      const void *data, struct nl_link *ret);
int nl_conn_each_link(struct nl_conn *c, void (*fn)(const struct nl_link *, void *), void *data);
int nl_conn_get_nsid(struct nl_conn *c, int netns_fd, int *ret_nsid);
int nl_conn_ack(struct nl_conn *c, const void *buf, size_t len, char *err, size_t err_size);
