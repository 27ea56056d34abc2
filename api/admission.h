/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who gets a connection, and for how long. The listener's accept loop is
 * ours: a connection is counted against its client (a unix client by its
 * pid and uid, from SO_PEERCRED; a TCP client on this host by its uid, from
 * sock_diag; a remote one by its address, or its IPv6 /64) and against
 * every connection the process holds, before libmicrohttpd sees it, and
 * refused with a 503 beyond the client's share or the total.
 * A request must arrive whole, headers and body, within a total time from
 * the connection's start (or its previous answer): a slow sender is cut
 * off however steadily it trickles. Event streams are bounded in number, per
 * client and per local user: one user's processes cannot hold them all.
 */
#pragma once

#include <microhttpd.h>
#include <stdbool.h>

struct admission;

struct admission_limits {
	unsigned per_client;	 /* connections per pid (unix) or address (TCP) */
	unsigned per_uid;	 /* connections per uid (unix) */
	unsigned total;		 /* connections of all listeners together */
	unsigned streams;	 /* event streams in all */
	unsigned streams_per_client;
	unsigned streams_per_uid; /* a local user's (unix, loopback TCP), whatever its processes */
	unsigned request_seconds; /* from a connection's start, or its last answer, to a whole request */
};

extern const struct admission_limits admission_defaults;

int admission_new(int listen_fd, bool is_tcp, const struct admission_limits *limits,
		  struct admission **ret);
int admission_start(struct admission *adm, struct MHD_Daemon *daemon);
int admission_stop(struct admission *adm);
void admission_free(struct admission *adm);
void admission_on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			     enum MHD_ConnectionNotificationCode code);
void admission_busy(struct MHD_Connection *conn, bool busy);
bool admission_open_stream(struct admission *adm, struct MHD_Connection *conn);
