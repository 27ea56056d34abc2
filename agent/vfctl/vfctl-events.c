/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `vfctl events`: the agent's server-sent events, one readable line each
 * (or one JSON object each with -o json), followed through agent restarts:
 * when the stream ends the agent is asked again every second, resuming
 * after the last event seen (Last-Event-ID).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/vfctl/vfctl-error.h"
#include "agent/vfctl/vfctl.h"

struct sse {
	const struct vfctl_http *h;
	bool json;
	char line[16384];
	size_t len;
	char id[32], event[32], last_id[32];
	char *data;
};

/* An allocation event gets its owner and VFs from the agent (quietly: it may be gone). */
static void add_allocation(const struct sse *s, json_t *data)
{
	struct vfctl_http quiet = *s->h;
	const char *id = json_string_value(json_object_get(data, "id"));
	char path[128], owner[96];
	json_t *a = NULL, *vfs = json_array(), *vf;
	size_t i;

	quiet.quiet = true;
	snprintf(path, sizeof(path), "/v1/allocations/%s", id ? id : "");
	if (!id || vfctl_request(&quiet, "GET", path, NULL, NULL, &a) < 0) {
		json_decref(vfs);
		return;
	}
	vfctl_owner_text(json_object_get(a, "owner"), owner, sizeof(owner));
	json_array_foreach(json_object_get(a, "vfs"), i, vf)
		json_array_append(vfs, json_object_get(vf, "pci"));
	json_object_set_new(data, "owner", json_string(owner));
	json_object_set_new(data, "vfs", vfs);
	json_object_set(data, "pool", json_object_get(a, "pool"));
	json_decref(a);
}

static void print_line(const char *event, json_t *d)
{
	time_t t = (time_t)json_integer_value(json_object_get(d, "time"));
	char when[32], vfs[512] = "";
	size_t i, len = 0;
	json_t *v;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	json_array_foreach(json_object_get(d, "vfs"), i, v)
		if (len < sizeof(vfs))
			len += (size_t)snprintf(vfs + len, sizeof(vfs) - len, "%s%s", i ? "," : "",
						json_string_value(v));
#define S(k) (json_string_value(json_object_get(d, k)) ?: "-")
#define I(k) json_integer_value(json_object_get(d, k))
	if (strcmp(event, "allocation") == 0)
		printf("%s allocation %s %s %s %s %s\n", when, S("id"), S("state"), S("owner"),
		       S("pool"), vfs[0] ? vfs : "-");
	else if (strcmp(event, "inventory") == 0)
		printf("%s inventory %s: %" JSON_INTEGER_FORMAT " new, %" JSON_INTEGER_FORMAT
		       " vanished, %" JSON_INTEGER_FORMAT " returned\n",
		       when, S("reason"), I("added"), I("vanished"), I("returned"));
	else if (strcmp(event, "numvfs") == 0)
		printf("%s numvfs %s %" JSON_INTEGER_FORMAT " -> %" JSON_INTEGER_FORMAT
		       " (of %" JSON_INTEGER_FORMAT ")\n",
		       when, S("pf"), I("from"), I("to"), I("totalvfs"));
	else if (strcmp(event, "config") == 0)
		printf("%s config %" JSON_INTEGER_FORMAT " pools\n", when, I("pools"));
	else if (strcmp(event, "vf") == 0)
		printf("%s vf %s %s%s%s\n", when, S("pci"), S("state"),
		       json_object_get(d, "reason") ? ": " : "", json_string_value(json_object_get(d, "reason")) ?: "");
	else
		printf("%s %s\n", when, event);
#undef S
#undef I
	fflush(stdout);
}

/* A whole event (its blank line came): printed, and its id kept for a resume. */
static void dispatch(struct sse *s)
{
	json_t *data = s->data ? json_loads(s->data, 0, NULL) : NULL;

	if (json_is_object(data) && s->event[0]) {
		if (strcmp(s->event, "allocation") == 0)
			add_allocation(s, data);
		if (s->json) {
			json_object_set_new(data, "event", json_string(s->event));
			json_object_set_new(data, "event_id", json_string(s->id));
			json_dumpf(data, stdout, JSON_COMPACT | JSON_SORT_KEYS);
			putchar('\n');
			fflush(stdout);
		} else {
			print_line(s->event, data);
		}
	}
	if (s->id[0])
		snprintf(s->last_id, sizeof(s->last_id), "%s", s->id);
	json_decref(data);
	free(s->data);
	s->data = NULL;
	s->id[0] = s->event[0] = '\0';
}

static void field(struct sse *s, const char *line)
{
	if (strncmp(line, "id: ", 4) == 0)
		snprintf(s->id, sizeof(s->id), "%s", line + 4);
	else if (strncmp(line, "event: ", 7) == 0)
		snprintf(s->event, sizeof(s->event), "%s", line + 7);
	else if (strncmp(line, "data: ", 6) == 0 && !s->data)
		s->data = strdup(line + 6);
	/* ": keepalive" and anything else: nothing to do */
}

static size_t on_data(char *ptr, size_t size, size_t n, void *userdata)
{
	struct sse *s = userdata;

	for (size_t i = 0; i < size * n; i++) {
		if (ptr[i] != '\n') {
			if (s->len + 1 < sizeof(s->line))
				s->line[s->len++] = ptr[i];
			continue;
		}
		s->line[s->len] = '\0';
		if (s->len == 0)
			dispatch(s);
		else
			field(s, s->line);
		s->len = 0;
	}
	return size * n;
}

/**
 * vfctl_follow_events() - print the agent's events until interrupted
 *
 * -errno when the agent cannot be reached at all at first, or refuses the
 * stream; after that, an agent that stops is waited for.
 */
int vfctl_follow_events(const struct vfctl_http *h, bool json)
{
	struct sse *s = calloc(1, sizeof(*s));
	bool connected = false;
	int r;

	if (!s)
		return -ENOMEM;
	s->h = h;
	s->json = json;
	for (;;) {
		r = vfctl_stream(h, "/v1/events", s->last_id[0] ? s->last_id : NULL, on_data, s);
		if (r == -ECONNREFUSED && !connected) {
			vfctl_print_unreachable(h);
			break;
		}
		if (r < 0 && r != -ECONNREFUSED)
			break;
		if (r == 0 && !connected)
			connected = true;
		if (r == 0)
			vfctl_error("events: the agent closed the stream; waiting for it");
		s->len = 0;
		sleep(1);
	}
	free(s->data);
	free(s);
	return r;
}
