/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GET /v1/events: server-sent events. Each event is "id: N / event: type /
 * data: {json}"; a comment line every 15 s keeps idle proxies from closing
 * the stream; Last-Event-ID resumes after the given event.
 */
#include "config.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent-facts.h"
#include "agent/events.h"
#include "api/api.h"

struct stream {
	struct events *events;
	uint64_t cursor;
	char *pending; /* text not yet handed to MHD */
	size_t off;
};

static ssize_t next_chunk(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	size_t n;

	if (!s->pending) {
		int r = events_wait(s->events, &s->cursor, 15000, &s->pending);

		if (r < 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (r == 0)
			s->pending = strdup(": keepalive\n\n");
		s->off = 0;
		if (!s->pending)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = strlen(s->pending + s->off);
	if (n > max)
		n = max;
	memcpy(buf, s->pending + s->off, n);
	s->off += n;
	if (!s->pending[s->off]) {
		free(s->pending);
		s->pending = NULL;
	}
	return (ssize_t)n;
}

static void free_stream(void *cls)
{
	struct stream *s = cls;

	free(s->pending);
	free(s);
}

int api_get_events(struct api_request *req)
{
	const char *last = api_header(req, "Last-Event-ID");
	struct stream *s = calloc(1, sizeof(*s));
	char *end;

	if (!s)
		return api_fail(req, -ENOMEM, "out of memory");
	s->events = agent_events(req->agent);
	s->cursor = events_last_id(s->events);
	if (last) {
		unsigned long long id = strtoull(last, &end, 10);

		if (!*last || *end || id > s->cursor) {
			free(s);
			return api_fail(req, -EINVAL, "Last-Event-ID: not an event id");
		}
		s->cursor = id;
	}
	req->stream = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, next_chunk, s,
							free_stream);
	if (!req->stream) {
		free(s);
		return api_fail(req, -ENOMEM, "out of memory");
	}
	MHD_add_response_header(req->stream, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(req->stream, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	return 0;
}

/* Ends every event stream, so a stopping server is not held open by them. */
void api_server_stop_streams(struct agent *a)
{
	events_shutdown(agent_events(a));
}
