/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/admission.h"
#include "api/api.h"
#include "api/loopback-peer.h"

const struct admission_limits admission_defaults = {
	.per_client = 64, .per_uid = 256, .total = 1024, .streams = 64, .streams_per_client = 8,
	.streams_per_uid = 16,
	.request_seconds = 10,
};

/* Connections of every listener, against admission_limits.total: descriptors are the process's. */
static unsigned open_total;

/* One connection, from its accept to its close. */
struct client_conn {
	struct admission *adm;
	int fd;
	char client[64]; /* "pid:123" or an address */
	unsigned uid;	 /* unix only */
	struct timespec since; /* start of the request being read */
	bool started;	 /* libmicrohttpd has it */
	bool busy;	 /* a whole request is being answered */
	bool stream;	 /* an event stream */
	bool cut;	 /* shut down for taking too long */
	struct client_conn *next;
};

struct admission {
	int listen_fd, wake[2];
	bool is_tcp, running;
	struct admission_limits limits;
	struct MHD_Daemon *daemon;
	pthread_t thread;
	pthread_mutex_t lock;
	struct client_conn *conns;
	unsigned streams;
	time_t logged; /* the last refusal or cut logged: at most one line a second */
	struct timespec swept; /* the last look for connections to cut (cut_slow()) */
};

/* The accept loop looks every POLL_MS; a look later than STARVED_SECONDS says the agent was held up. */
#define POLL_MS 250
#define STARVED_SECONDS 1.0

static double elapsed(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* @t moved @seconds later. */
static void timespec_later(struct timespec *t, double seconds)
{
	long long ns = t->tv_nsec + (long long)(seconds * 1e9);

	t->tv_sec += (time_t)(ns / 1000000000);
	t->tv_nsec = (long)(ns % 1000000000);
}

/*
 * A look at the connections that comes late means the agent did not run
 * (a starved process, a loaded host): a client's request may then sit
 * whole in libmicrohttpd's buffer, read and not yet answered, which
 * unread() cannot see. The time the agent lost is not the client's: each
 * connection's clock is moved on by the part of it the connection lived.
 */
static void forgive_own_delay(struct admission *adm)
{
	double gap = adm->swept.tv_sec ? elapsed(&adm->swept) : 0;

	clock_gettime(CLOCK_MONOTONIC, &adm->swept);
	if (gap <= STARVED_SECONDS)
		return;
	for (struct client_conn *c = adm->conns; c; c = c->next) {
		double lived = elapsed(&c->since); /* its clock started in the gap, or before it */
		double lost = (lived < gap ? lived : gap) - POLL_MS / 1000.0;

		if (lost > 0)
			timespec_later(&c->since, lost);
	}
}

int admission_new(int listen_fd, bool is_tcp, const struct admission_limits *limits,
		  struct admission **ret)
{
	struct admission *adm = calloc(1, sizeof(*adm));

	if (!adm)
		return -ENOMEM;
	if (pipe2(adm->wake, O_CLOEXEC) < 0) {
		int r = -errno;

		free(adm);
		return r;
	}
	adm->listen_fd = listen_fd;
	adm->is_tcp = is_tcp;
	adm->limits = *limits;
	pthread_mutex_init(&adm->lock, NULL);
	*ret = adm;
	return 0;
}

/* A remote TCP peer: its IPv4 address, or its IPv6 /64 (one host may hold a whole /64). */
static void remote_client(const struct sockaddr_storage *ss, char *out, size_t size)
{
	char addr[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, addr, sizeof(addr));
	} else if (ss->ss_family == AF_INET6) {
		struct in6_addr a = ((const struct sockaddr_in6 *)ss)->sin6_addr;

		if (!IN6_IS_ADDR_V4MAPPED(&a)) {
			memset(&a.s6_addr[8], 0, 8);
			inet_ntop(AF_INET6, &a, addr, sizeof(addr));
			snprintf(out, size, "%s/64", addr);
			return;
		}
		inet_ntop(AF_INET, &a.s6_addr[12], addr, sizeof(addr));
	}
	snprintf(out, size, "%s", addr);
}

/*
 * Who is at the other end: a unix peer's pid and uid; a TCP peer on this
 * host by its uid (any local user may take any address of 127.0.0.0/8),
 * all local users as one when the kernel cannot say; a remote one by its
 * address.
 */
static void identify(struct admission *adm, int fd, const struct sockaddr_storage *ss,
		     struct client_conn *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	c->uid = (unsigned)-1;
	if (!adm->is_tcp && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		snprintf(c->client, sizeof(c->client), "pid:%d", (int)cred.pid);
		c->uid = cred.uid;
	} else if (adm->is_tcp && loopback_peer_is_local(ss)) {
		if (loopback_peer_uid(fd, &c->uid) == 0)
			snprintf(c->client, sizeof(c->client), "uid:%u", c->uid);
		else
			snprintf(c->client, sizeof(c->client), "loopback");
	} else {
		remote_client(ss, c->client, sizeof(c->client));
	}
}

/* Under the lock: whether @c's client (and uid) may have one more connection. */
static bool within_share(struct admission *adm, const struct client_conn *c)
{
	unsigned same_client = 0, same_uid = 0;

	for (const struct client_conn *o = adm->conns; o; o = o->next) {
		same_client += strcmp(o->client, c->client) == 0;
		same_uid += !adm->is_tcp && o->uid == c->uid;
	}
	return same_client < adm->limits.per_client &&
	       (adm->is_tcp || same_uid < adm->limits.per_uid);
}

/* Under the lock: one line a second at most, whatever the flood. */
static bool may_log(struct admission *adm)
{
	time_t now = time(NULL);

	if (now == adm->logged)
		return false;
	adm->logged = now;
	return true;
}

static void refuse(int fd, const char *why)
{
	char body[128], answer[384];
	int n = snprintf(body, sizeof(body), "{\"error\":\"EBUSY\",\"message\":\"%s\"}\n", why);
	int m = snprintf(answer, sizeof(answer),
			 "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
			 "Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
			 n, body);

	(void)!send(fd, answer, (size_t)m, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

/* Under the lock: @c's record gone, and its place among all the process's connections. */
static void drop(struct client_conn *c)
{
	__atomic_sub_fetch(&open_total, 1, __ATOMIC_RELAXED);
	free(c);
}

/* Under the lock: one more of the process's connections, unless it has all it may. */
static bool within_total(struct admission *adm)
{
	if (__atomic_add_fetch(&open_total, 1, __ATOMIC_RELAXED) <= adm->limits.total)
		return true;
	__atomic_sub_fetch(&open_total, 1, __ATOMIC_RELAXED);
	return false;
}

/*
 * A new connection: counted against its client and against all, then
 * libmicrohttpd's; or refused with a 503.
 */
static void admit(struct admission *adm, int fd, const struct sockaddr_storage *ss,
		  socklen_t len)
{
	struct client_conn *c = calloc(1, sizeof(*c));
	bool share = false, total = false;

	if (!c) {
		refuse(fd, "out of memory");
		return;
	}
	*c = (struct client_conn){ .adm = adm, .fd = fd };
	identify(adm, fd, ss, c);
	clock_gettime(CLOCK_MONOTONIC, &c->since);
	pthread_mutex_lock(&adm->lock);
	share = within_share(adm, c);
	total = share && within_total(adm);
	if (total) {
		c->next = adm->conns;
		adm->conns = c;
	} else if (may_log(adm)) {
		if (!share)
			log_warning("http: refusing connections from %s: it holds its share (%u)",
				    c->client, adm->limits.per_client);
		else
			log_warning("http: refusing a connection from %s: the agent holds as many "
				    "as it may (%u)", c->client, adm->limits.total);
	}
	pthread_mutex_unlock(&adm->lock);
	if (!total) {
		free(c);
		refuse(fd, share ? "too many connections: try again later"
				 : "too many connections from this client");
		return;
	}
	/* on failure libmicrohttpd closes the socket, and never reports it started */
	if (MHD_add_connection(adm->daemon, fd, (const struct sockaddr *)ss, len) != MHD_YES)
		admission_on_connection(adm, NULL, (void **)&c, MHD_CONNECTION_NOTIFY_CLOSED);
}

/*
 * Whether bytes the client sent wait unread on @fd: then the agent is late
 * (a starved process, a loaded host), not the client, and is no judge of it.
 * A slow client's trickle is read as it comes and never waits there.
 */
static bool unread(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/*
 * Connections that have not sent a whole request in time are shut down
 * (libmicrohttpd then closes them). A record libmicrohttpd never started
 * (it refused the connection at its own limit, without a word) is dropped,
 * so that it does not count against its client for ever.
 */
static void cut_slow(struct admission *adm)
{
	unsigned n = 0;

	pthread_mutex_lock(&adm->lock);
	forgive_own_delay(adm);
	for (struct client_conn **p = &adm->conns; *p;) {
		struct client_conn *c = *p;
		bool late = elapsed(&c->since) > adm->limits.request_seconds;

		if (!c->started && late) {
			*p = c->next;
			drop(c);
			continue;
		}
		if (c->started && !c->busy && !c->stream && !c->cut && late && !unread(c->fd)) {
			shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
			n++;
		}
		p = &c->next;
	}
	if (n && may_log(adm))
		log_warning("http: cut %u connections that sent no whole request in %u s", n,
			    adm->limits.request_seconds);
	pthread_mutex_unlock(&adm->lock);
}

static void *accept_loop(void *userdata)
{
	struct admission *adm = userdata;
	struct pollfd p[2] = { { .fd = adm->listen_fd, .events = POLLIN },
			       { .fd = adm->wake[0], .events = POLLIN } };

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int n = poll(p, 2, POLL_MS), fd;

		if (n > 0 && p[1].revents)
			break;
		if (n > 0 && (p[0].revents & POLLIN) &&
		    (fd = accept4(adm->listen_fd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC)) >= 0)
			admit(adm, fd, &ss, len);
		cut_slow(adm);
	}
	return NULL;
}

/* Accepting begins, into @daemon (started with MHD_USE_NO_LISTEN_SOCKET). */
int admission_start(struct admission *adm, struct MHD_Daemon *daemon)
{
	int r;

	adm->daemon = daemon;
	r = -pthread_create(&adm->thread, NULL, accept_loop, adm);
	adm->running = r == 0;
	return r;
}

/* Accepting ends, and the listening socket is closed; connections already in go on. */
int admission_stop(struct admission *adm)
{
	if (!adm || !adm->running)
		return 0;
	(void)!write(adm->wake[1], "x", 1);
	pthread_join(adm->thread, NULL);
	adm->running = false;
	close(adm->listen_fd);
	adm->listen_fd = -1;
	return 0;
}

/* After the daemon stopped: every connection is closed, so none is left. */
void admission_free(struct admission *adm)
{
	if (!adm)
		return;
	admission_stop(adm);
	while (adm->conns) {
		struct client_conn *c = adm->conns;

		adm->conns = c->next;
		drop(c);
	}
	close(adm->wake[0]);
	close(adm->wake[1]);
	pthread_mutex_destroy(&adm->lock);
	free(adm);
}

/* Under the lock: @c out of the list. */
static void unlink_conn(struct admission *adm, struct client_conn *c)
{
	for (struct client_conn **p = &adm->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (c->stream)
		adm->streams--;
}

/* Under the lock: the record of the connection on @fd that libmicrohttpd has not yet. */
static struct client_conn *find_new(struct admission *adm, int fd)
{
	for (struct client_conn *c = adm->conns; c; c = c->next)
		if (c->fd == fd && !c->started)
			return c;
	return NULL;
}

/**
 * admission_on_connection() - libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION
 *
 * A connection that starts gets its record as the socket context; one that
 * closes gives its share back.
 */
void admission_on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			     enum MHD_ConnectionNotificationCode code)
{
	struct admission *adm = cls;
	struct client_conn *c = *socket_context;

	pthread_mutex_lock(&adm->lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *info =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = info ? find_new(adm, info->connect_fd) : NULL;
		if (c)
			c->started = true;
		*socket_context = c;
	} else if (c) {
		unlink_conn(adm, c);
		drop(c);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&adm->lock);
}

static struct client_conn *record_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/**
 * admission_busy() - the request on @conn is whole and being answered
 * (@busy), or answered: its connection's clock starts again
 */
void admission_busy(struct MHD_Connection *conn, bool busy)
{
	struct client_conn *c = record_of(conn);

	if (!c)
		return;
	pthread_mutex_lock(&c->adm->lock);
	c->busy = busy;
	if (!busy)
		clock_gettime(CLOCK_MONOTONIC, &c->since);
	pthread_mutex_unlock(&c->adm->lock);
}

/**
 * admission_open_stream() - @conn may become an event stream: false when
 * the listener, its client, or its client's local user (a uid's processes
 * together) has as many as it may
 */
bool admission_open_stream(struct admission *adm, struct MHD_Connection *conn)
{
	struct client_conn *c = record_of(conn);
	unsigned mine = 0, my_uid = 0;
	bool ok;

	if (!c)
		return false;
	pthread_mutex_lock(&adm->lock);
	for (const struct client_conn *o = adm->conns; o; o = o->next) {
		mine += o->stream && strcmp(o->client, c->client) == 0;
		my_uid += o->stream && c->uid != (unsigned)-1 && o->uid == c->uid;
	}
	ok = adm->streams < adm->limits.streams && mine < adm->limits.streams_per_client &&
	     my_uid < adm->limits.streams_per_uid;
	if (ok) {
		c->stream = true;
		adm->streams++;
	}
	pthread_mutex_unlock(&adm->lock);
	return ok;
}
