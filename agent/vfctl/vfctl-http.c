/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vfctl's client of the agent's API: libcurl over the unix socket (or a TCP URL). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vfctl/vfctl-curl.h"
#include "agent/vfctl/vfctl-error.h"
#include "agent/vfctl/vfctl.h"

#define RESPONSE_MAX (64u << 20)

struct buffer {
	char *data;
	size_t len;
};

static size_t on_data(char *ptr, size_t size, size_t n, void *userdata)
{
	struct buffer *b = userdata;
	size_t add = size * n;
	char *d;

	if (b->len + add > RESPONSE_MAX)
		return 0;
	d = realloc(b->data, b->len + add + 1);
	if (!d)
		return 0;
	memcpy(d + b->len, ptr, add);
	b->len += add;
	d[b->len] = '\0';
	b->data = d;
	return add;
}

static CURL *open_handle(const struct vfctl_curl *cu, const struct vfctl_http *h, const char *path,
			 char *url, size_t size, struct curl_slist **headers)
{
	CURL *c = cu->easy_init();

	if (!c)
		return NULL;
	snprintf(url, size, "%s%s", h->url ? h->url : "http://localhost", path);
	cu->easy_setopt(c, CURLOPT_URL, url);
	if (!h->url)
		cu->easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, h->socket);
	if (h->token) {
		char auth[600];

		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", h->token);
		*headers = cu->slist_append(*headers, auth);
	}
	return c;
}

/* One line for the operator: the agent's message, or why it could not be reached. */
static int report(const struct vfctl_curl *cu, const struct vfctl_http *h, CURLcode rc, long status,
		  const char *body)
{
	json_t *o;

	if (rc != CURLE_OK && h->quiet)
		return -EIO;
	if (rc != CURLE_OK) {
		if (rc == CURLE_COULDNT_CONNECT) {
			vfctl_print_unreachable(h);
			return -ECONNREFUSED;
		}
		if (rc == CURLE_OPERATION_TIMEDOUT)
			vfctl_error("no answer from the agent within %ld s (--timeout)",
				    h->timeout);
		else
			vfctl_error("talking to the agent: %s", cu->easy_strerror(rc));
		return -EIO;
	}
	if (h->quiet)
		return status == 404 ? -ENOENT : status == 409 ? -EBUSY : -EIO;
	o = body ? json_loads(body, 0, NULL) : NULL;
	if (json_is_string(json_object_get(o, "message")))
		vfctl_error("%s (HTTP %ld %s)",
			    json_string_value(json_object_get(o, "message")), status,
			    json_string_value(json_object_get(o, "error")) ?: "");
	else
		vfctl_error("the agent answered HTTP %ld", status);
	json_decref(o);
	return status == 404 ? -ENOENT : status == 409 ? -EBUSY : -EIO;
}

/**
 * vfctl_request() - one API call
 * @ret_json: the parsed answer (also for a 409 that carries a plan); may be NULL
 *
 * 0 on 2xx; otherwise the error is printed (one line) and -errno returned.
 */
int vfctl_request(const struct vfctl_http *h, const char *method, const char *path,
		  json_t *body, const char *idempotency_key, json_t **ret_json)
{
	struct curl_slist *headers = NULL;
	struct buffer b = { 0 };
	char url[1024], key[256], *text = NULL;
	long status = 0;
	CURLcode rc;
	const struct vfctl_curl *cu = vfctl_curl();
	static bool probed; /* the first request of the run: does anyone serve the socket? */
	CURL *c;
	int r;

	if (!probed) {
		probed = true;
		r = vfctl_probe(h, h->timeout);
		if (r < 0)
			return r;
	}
	c = cu ? open_handle(cu, h, path, url, sizeof(url), &headers) : NULL;
	if (!c)
		return cu ? -ENOMEM : -ENOPKG;
	cu->easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	cu->easy_setopt(c, CURLOPT_WRITEDATA, &b);
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		cu->easy_setopt(c, CURLOPT_POSTFIELDS, text ? text : "");
		headers = cu->slist_append(headers, "Content-Type: application/json");
	}
	if (idempotency_key) {
		snprintf(key, sizeof(key), "Idempotency-Key: %s", idempotency_key);
		headers = cu->slist_append(headers, key);
	}
	cu->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	if (h->timeout > 0) /* an agent (or a libvirt under it) that never answers ends here */
		cu->easy_setopt(c, CURLOPT_TIMEOUT, h->timeout);
	rc = cu->easy_perform(c);
	cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_OK && status >= 200 && status < 300)
		r = 0;
	else
		r = report(cu, h, rc, status, b.data);
	if (ret_json && b.data && (r == 0 || status == 409))
		*ret_json = json_loads(b.data, 0, NULL);
	cu->slist_free_all(headers);
	cu->easy_cleanup(c);
	free(text);
	free(b.data);
	return r;
}

/**
 * vfctl_stream() - GET @path and hand the body to @on_chunk as it comes,
 * until the agent ends it; @last_event_id (or NULL) goes as Last-Event-ID
 *
 * 0 when a 200 stream ended; -ECONNREFUSED when the agent could not be
 * reached (quietly: the caller may try again); else the error, printed.
 */
int vfctl_stream(const struct vfctl_http *h, const char *path, const char *last_event_id,
		 size_t (*on_chunk)(char *, size_t, size_t, void *), void *userdata)
{
	struct curl_slist *headers = NULL;
	char url[1024], last[96];
	long status = 0;
	CURLcode rc;
	const struct vfctl_curl *cu = vfctl_curl();
	CURL *c = cu ? open_handle(cu, h, path, url, sizeof(url), &headers) : NULL;

	if (!c)
		return cu ? -ENOMEM : -ENOPKG;
	if (last_event_id) {
		snprintf(last, sizeof(last), "Last-Event-ID: %.64s", last_event_id);
		headers = cu->slist_append(headers, last);
	}
	cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_chunk);
	cu->easy_setopt(c, CURLOPT_WRITEDATA, userdata);
	cu->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	rc = cu->easy_perform(c);
	cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	cu->slist_free_all(headers);
	cu->easy_cleanup(c);
	if (rc == CURLE_COULDNT_CONNECT)
		return -ECONNREFUSED;
	if ((rc == CURLE_OK || rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR) && status == 200)
		return 0;
	return report(cu, h, rc, status, NULL);
}
