/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The HTTP server (libmicrohttpd): one daemon per listener, a thread per
 * connection that waits with poll(), never select(), so a descriptor past
 * FD_SETSIZE (1,024) is served like any other; admitted by our own accept
 * loop (api/admission.c: a share of connections per client, a total for
 * the process sized by its descriptor limit, a whole request in a bounded
 * time, a bounded number of event streams), bodies capped at 64 KiB, bearer tokens on TCP
 * (a client without one gets its 401 and the connection is closed), one
 * log line per request with no body in it.
 */
#include "config.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent-facts.h"
#include "agent/container/rdma-devices.h"
#include "agent/log.h"
#include "api/admission.h"
#include "api/api.h"

struct listener {
	struct api_server *server;
	struct MHD_Daemon *daemon;
	struct admission *adm;
	bool is_tcp;
};

struct api_server {
	struct agent *agent;
	struct listener listeners[AGENT_MAX_LISTEN];
	int n;
};

struct conn_state {
	char *body;
	size_t len;
	bool too_large;
	bool answered; /* a response is queued already: ignore the rest of the body */
	struct timespec start;
};

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9;
}

static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, json_t *json,
				 const char *extra_header, const char *extra_value)
{
	char *text = json ? json_dumps(json, JSON_COMPACT) : NULL;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (json && !text)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(text ? strlen(text) : 0, text ? text : (char *)"",
					       text ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	if (text) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	}
	if (extra_header)
		MHD_add_response_header(resp, extra_header, extra_value);
	/* nothing but the 401 before a token is shown: the connection ends with it */
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, int r, const char *message,
				  const char *extra_header, const char *extra_value)
{
	json_t *body = api_error_body(r, message);
	enum MHD_Result ret = send_json(conn, api_status_for(r), body, extra_header, extra_value);

	json_decref(body);
	return ret;
}

/* Constant time in the length of the expected token, whatever the caller sent. */
static bool token_ok(const char *expected, const char *auth)
{
	size_t n = strlen(expected), m;
	unsigned char diff = 0;

	if (!auth || strncmp(auth, "Bearer ", 7) != 0)
		return false;
	auth += 7;
	m = strlen(auth);
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)expected[i] ^ (unsigned char)(i < m ? auth[i] : 0);
	return diff == 0 && m == n;
}

/* The first call for a request: authorization and an early 413 by Content-Length. */
static enum MHD_Result first_call(struct listener *l, struct MHD_Connection *conn,
				  void **con_cls)
{
	struct conn_state *st = calloc(1, sizeof(*st));
	const char *cl;

	if (!st)
		return MHD_NO;
	clock_gettime(CLOCK_MONOTONIC, &st->start);
	*con_cls = st;
	if (l->is_tcp &&
	    !token_ok(agent_token(l->server->agent),
		      MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization"))) {
		json_t *body = api_error_body(-EACCES, "a valid bearer token is required");
		enum MHD_Result ret = send_json(conn, MHD_HTTP_UNAUTHORIZED, body,
						MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");

		json_decref(body);
		st->answered = true;
		return ret;
	}
	cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl && strtoull(cl, NULL, 10) > API_BODY_MAX) {
		st->answered = true;
		return send_error(conn, -E2BIG, "body: larger than 64 KiB", NULL, NULL);
	}
	return MHD_YES;
}

static void collect(struct conn_state *st, const char *data, size_t *size)
{
	if (!st->too_large && st->len + *size <= API_BODY_MAX) {
		char *n = realloc(st->body, st->len + *size + 1);

		if (n) {
			memcpy(n + st->len, data, *size);
			st->len += *size;
			n[st->len] = '\0';
			st->body = n;
		} else {
			st->too_large = true;
		}
	} else {
		st->too_large = true;
	}
	*size = 0;
}

static enum MHD_Result send_answer(struct MHD_Connection *conn, struct api_request *req, int r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (r < 0)
		return send_error(conn, r, req->error, req->extra_header, req->extra_value);
	if (req->stream) {
		ret = MHD_queue_response(conn, req->status, req->stream);
		MHD_destroy_response(req->stream);
		return ret;
	}
	if (req->text) {
		resp = MHD_create_response_from_buffer(strlen(req->text), req->text,
						       MHD_RESPMEM_MUST_FREE);
		if (!resp)
			return MHD_NO;
		req->text = NULL;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, req->content_type);
		if (req->extra_header)
			MHD_add_response_header(resp, req->extra_header, req->extra_value);
		ret = MHD_queue_response(conn, req->status, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	return send_json(conn, req->status, req->status == 204 ? NULL : req->json, req->extra_header,
			 req->extra_value);
}

/* The path for a log line: at most 200 characters (agent_log() escapes control bytes). */
static void printable(const char *s, char *out, size_t size)
{
	snprintf(out, size < 201 ? size : 201, "%s", s);
}

struct query_check {
	const struct api_route *route;
	const char *unknown;
};

static enum MHD_Result check_query_key(void *cls, enum MHD_ValueKind kind, const char *key,
				       const char *value)
{
	struct query_check *q = cls;

	if (api_route_takes(q->route, key))
		return MHD_YES;
	q->unknown = key;
	return MHD_NO;
}

/* A query parameter the route does not take is a 400 naming it (a typo filters nothing). */
static int check_query(struct api_request *req, const struct api_route *route)
{
	struct query_check q = { .route = route };
	char takes[128] = "";

	MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, check_query_key, &q);
	if (!q.unknown)
		return 0;
	for (size_t i = 0, len = 0; route->query && route->query[i] && len < sizeof(takes); i++)
		len += (size_t)snprintf(takes + len, sizeof(takes) - len, "%s%s", i ? ", " : "",
					route->query[i]);
	return api_fail(req, -EINVAL, "%.64s: unknown query parameter; %s takes %s",
			q.unknown, route->pattern, takes[0] ? takes : "none");
}

/* 405, with the methods the path takes in Allow. */
static int not_allowed(struct api_request *req, const char *method, const char *url)
{
	req->extra_header = MHD_HTTP_HEADER_ALLOW;
	api_route_allow(url, req->extra_value, sizeof(req->extra_value));
	return api_fail(req, -EBADRQC, "method %s is not allowed on %.200s (allowed: %s)", method,
			url, req->extra_value);
}

static bool is_read(const char *method)
{
	return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
}

/* Routes the request, runs its handler, answers, and logs one line (never the body). */
static enum MHD_Result dispatch(struct listener *l, struct MHD_Connection *conn, const char *url,
				const char *method, struct conn_state *st)
{
	struct api_request req = { .agent = l->server->agent, .conn = conn, .method = method,
				   .path = url, .body = st->body, .body_len = st->len,
				   .status = 200 };
	char params[256], path[208];
	bool known = false;
	const struct api_route *route;
	enum MHD_Result ret;
	int r;

	route = api_route_match(method, url, req.params, params, sizeof(params), &known,
				req.error, sizeof(req.error));
	if (st->too_large)
		r = api_fail(&req, -E2BIG, "body: larger than 64 KiB");
	else if (req.error[0])
		r = -EINVAL;
	else if (!route && known)
		r = not_allowed(&req, method, url);
	else if (!route)
		r = api_fail(&req, -ENOENT, "no such endpoint");
	else if ((r = check_query(&req, route)) < 0)
		;
	else if (route->handler == api_get_events && !admission_open_stream(l->adm, conn))
		r = api_fail(&req, -EAGAIN, "too many event streams: try again later");
	else
		r = route->handler(&req);
	ret = send_answer(conn, &req, r);
	api_metrics_observe(route,
			    r < 0 ? api_status_for(r) : req.status, since(&st->start));
	printable(url, path, sizeof(path));
	/* a read that succeeded changed nothing: a line at debug (probes poll every minute) */
	agent_log(r >= 0 && is_read(method) ? 7 : 6, "%s %s %u%s%s", method, path,
		  r < 0 ? api_status_for(r) : req.status, r < 0 ? " " : "", r < 0 ? req.error : "");
	json_decref(req.json);
	free(req.text);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct listener *l = cls;
	struct conn_state *st = *con_cls;

	if (!st)
		return first_call(l, conn, con_cls);
	if (*upload_data_size) {
		if (st->answered)
			*upload_data_size = 0;
		else
			collect(st, upload_data, upload_data_size);
		return MHD_YES;
	}
	if (st->answered)
		return MHD_YES;
	st->answered = true;
	admission_busy(conn, true);
	return dispatch(l, conn, url, method, st);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn_state *st = *con_cls;

	admission_busy(conn, false);
	if (st) {
		free(st->body);
		free(st);
		*con_cls = NULL;
	}
}

/*
 * libmicrohttpd's warnings. A connection we hand it (MHD_add_connection)
 * is of unknown type to it: on a unix socket it tries TCP_NODELAY and
 * TCP_CORK, fails, and says a client may see delays; no unix socket has
 * either, or delays from them. Those lines are dropped on unix listeners.
 */
static __attribute__((format(printf, 2, 0))) void mhd_log(void *cls, const char *fmt, va_list ap)
{
	const struct listener *l = cls;
	char msg[AGENT_ERR_SIZE];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	if (!l->is_tcp && (strncmp(msg, "Setting TCP_", 12) == 0 ||
			   strncmp(msg, "Failed to push the data from buffers", 36) == 0))
		return;
	log_warning("http: %s", msg);
}

/*
 * Connections the process may hold: half its descriptors, after 256 kept
 * for its own work (the ledger, netlink, namespaces, libvirt, sysfs), and
 * at most 4,096 threads. 384 at the common soft limit of 1,024; 4,096 at
 * the unit's 65,536.
 */
static unsigned connection_cap(void)
{
	struct rlimit rl;
	unsigned long long n = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		n = rl.rlim_cur == RLIM_INFINITY ? 65536 : rl.rlim_cur;
	n = n > 512 ? (n - 256) / 2 : 128;
	return n > 4096 ? 4096 : (unsigned)n;
}

/**
 * api_server_start() - serve the API on listening sockets @fds
 * @is_tcp: per socket, whether it needs a bearer token
 */
int api_server_start(struct agent *a, int *fds, const bool *is_tcp, int n_fds,
		     struct api_server **ret)
{
	struct api_server *s = calloc(1, sizeof(*s));
	struct admission_limits limits = admission_defaults;

	if (!s)
		return -ENOMEM;
	s->agent = a;
	limits.total = connection_cap();
	log_info("http: at most %u connections at once, %u per client", limits.total,
		 limits.per_client);
	for (int i = 0; i < n_fds && i < AGENT_MAX_LISTEN; i++) {
		struct listener *l = &s->listeners[s->n];

		l->server = s;
		l->is_tcp = is_tcp[i];
		if (admission_new(fds[i], is_tcp[i], &limits, &l->adm) < 0) {
			api_server_stop(s, 0);
			return -ENOMEM;
		}
		s->n++;
		l->daemon = MHD_start_daemon(
			MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
				MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG |
				MHD_USE_NO_LISTEN_SOCKET,
			0, NULL, NULL, on_request, l, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l,
			MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
			MHD_OPTION_NOTIFY_CONNECTION, admission_on_connection, l->adm,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_CONNECTION_LIMIT,
			limits.total, MHD_OPTION_END);
		if (!l->daemon || admission_start(l->adm, l->daemon) < 0) {
			api_server_stop(s, 0);
			return -EIO;
		}
	}
	*ret = s;
	return 0;
}

/* Stops accepting, lets requests in flight finish (up to @grace_seconds), then stops. */
void api_server_stop(struct api_server *s, int grace_seconds)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++)
		admission_stop(s->listeners[i].adm);
	for (int waited = 0; waited < grace_seconds * 10; waited++) {
		unsigned busy = 0;

		for (int i = 0; i < s->n; i++) {
			const union MHD_DaemonInfo *info = s->listeners[i].daemon ? MHD_get_daemon_info(
				s->listeners[i].daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS) : NULL;

			busy += info ? info->num_connections : 0;
		}
		if (busy == 0)
			break;
		usleep(100000);
	}
	for (int i = 0; i < s->n; i++) {
		if (s->listeners[i].daemon)
			MHD_stop_daemon(s->listeners[i].daemon);
		admission_free(s->listeners[i].adm);
	}
	api_vf_list_cache_clear();
	rdma_devices_clear();
	free(s);
}
