/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The thread's NETLINK_ROUTE socket against this kernel (loopback is in
 * every namespace): kept after an exchange that read its reply, a refusal
 * included, and replaced after a receive that failed halfway.
 */
#include "config.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "agent/netlink/nlmsg.h"
#include "agent/netlink/nlsock-thread.h"
#include "check-suites.h"

#define MARK 0x5eed0000u

START_TEST(test_kept_after_a_reply)
{
	struct nl_conn *c = NULL;
	struct nl_link l = { 0 };
	char err[256] = "";

	ck_assert_int_eq(nl_conn_thread_route(&c), 0);
	ck_assert_int_eq(nl_conn_get_link(c, "lo", &l, err, sizeof(err)), 0);
	ck_assert_int_gt(l.ifindex, 0);
	ck_assert_int_eq(nl_conn_get_link(c, "vfagent-none0", &l, err, sizeof(err)), -ENODEV);
	c->seq += MARK;
	nl_conn_thread_done(c);
	c = NULL;
	ck_assert_int_eq(nl_conn_thread_route(&c), 0);
	ck_assert_uint_ge(c->seq, MARK); /* the same socket: the refusal was read */
	ck_assert_int_eq(nl_conn_get_link(c, "lo", &l, err, sizeof(err)), 0);
	nl_conn_thread_done(c);
}
END_TEST

START_TEST(test_replaced_after_a_failed_receive)
{
	struct timeval tv = { .tv_usec = 10000 };
	struct nl_conn *c = NULL;
	struct nl_link l = { 0 };
	char err[256] = "";
	void *reply = NULL;
	size_t n;

	ck_assert_int_eq(nl_conn_thread_route(&c), 0);
	c->seq += MARK;
	ck_assert_int_eq(setsockopt(mnl_socket_get_fd(c->nl), SOL_SOCKET, SO_RCVTIMEO, &tv,
				    sizeof(tv)), 0);
	ck_assert_int_eq(nl_conn_recv(c, &reply, &n), -EAGAIN); /* nothing was asked */
	ck_assert(c->broken);
	nl_conn_thread_done(c);
	c = NULL;
	ck_assert_int_eq(nl_conn_thread_route(&c), 0);
	ck_assert_uint_lt(c->seq, MARK);
	ck_assert(!c->broken);
	ck_assert_int_eq(nl_conn_get_link(c, "lo", &l, err, sizeof(err)), 0);
	nl_conn_thread_done(c);
}
END_TEST

Suite *suite_nlsock(void)
{
	Suite *s = suite_create("nlsock");
	TCase *tc = tcase_create("thread");

	tcase_add_test(tc, test_kept_after_a_reply);
	tcase_add_test(tc, test_replaced_after_a_failed_receive);
	suite_add_tcase(s, tc);
	return s;
}
