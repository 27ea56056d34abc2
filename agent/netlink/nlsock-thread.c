/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One NETLINK_ROUTE socket per thread, in the namespace the thread was in
 * when it first asked (the agent's own: the callers read PFs), kept for the
 * thread's life and closed when it ends. A keep-alive API connection has
 * its thread, so asking a PF for a VF's settings costs the request and its
 * reply instead of a socket's setup and teardown each time.
 */
#include "config.h"

#include <errno.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <stdlib.h>

#include "agent/netlink/nlsock-thread.h"

static pthread_key_t key;
static int key_error;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void conn_free(void *p)
{
	struct nl_conn *c = p;

	nl_conn_close(c);
	free(c);
}

static void make_key(void)
{
	key_error = pthread_key_create(&key, conn_free);
}

/**
 * nl_conn_thread_route() - the calling thread's NETLINK_ROUTE connection,
 * opened on first use
 *
 * Give it back with nl_conn_thread_done(); the thread owns it, nobody
 * closes it.
 */
int nl_conn_thread_route(struct nl_conn **ret)
{
	struct nl_conn *c;
	int r;

	pthread_once(&key_once, make_key);
	if (key_error)
		return -key_error;
	c = pthread_getspecific(key);
	if (c) { /* nothing unread: a request, its one reply, or closed (below) */
		*ret = c;
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	r = nl_conn_open(NETLINK_ROUTE, -1, c);
	if (r >= 0 && pthread_setspecific(key, c) != 0)
		r = -ENOMEM;
	if (r < 0) {
		conn_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/*
 * Keeps the socket when every exchange on it read the reply it asked for
 * (the kernel's refusal is a reply), so the next user finds nothing of it;
 * closes it when a send or a receive failed halfway (a reply may be
 * unread, the socket may be broken): the next use opens another.
 */
void nl_conn_thread_done(struct nl_conn *c)
{
	if (!c->broken)
		return;
	pthread_setspecific(key, NULL);
	conn_free(c);
}
