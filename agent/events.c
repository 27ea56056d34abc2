/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/events.h"

struct events {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	char *ring[EVENTS_KEPT]; /* the SSE text of event id, at id % EVENTS_KEPT */
	uint64_t first;		 /* ids of this run are above it */
	uint64_t last;		 /* id of the newest event */
	bool shutdown;
	void (*on_allocation)(void *userdata, const char *id); /* after each allocation event */
	void *on_allocation_data;
};

/*
 * Ids grow across restarts: a run starts at its start time in microseconds,
 * so a client resuming with the Last-Event-ID of the previous run gets
 * this run's events from the first one, none twice.
 */
static uint64_t start_id(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
}

int events_new(struct events **ret)
{
	struct events *e = calloc(1, sizeof(*e));
	pthread_condattr_t attr;

	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&e->changed, &attr);
	pthread_condattr_destroy(&attr);
	e->first = e->last = start_id();
	*ret = e;
	return 0;
}

void events_free(struct events *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < EVENTS_KEPT; i++)
		free(e->ring[i]);
	pthread_cond_destroy(&e->changed);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* Publishes an event of @type with @data (the reference is taken), stamped with the time. */
void events_emit(struct events *e, const char *type, json_t *data)
{
	char *json, *text = NULL;
	uint64_t id;

	if (json_is_object(data))
		json_object_set_new(data, "time", json_integer((json_int_t)time(NULL)));
	json = data ? json_dumps(data, JSON_COMPACT) : NULL;
	json_decref(data);
	pthread_mutex_lock(&e->lock);
	id = e->last + 1;
	if (asprintf(&text, "id: %llu\nevent: %s\ndata: %s\n\n", (unsigned long long)id, type,
		     json ? json : "{}") >= 0) {
		free(e->ring[id % EVENTS_KEPT]);
		e->ring[id % EVENTS_KEPT] = text;
		e->last = id;
		pthread_cond_broadcast(&e->changed);
	}
	pthread_mutex_unlock(&e->lock);
	free(json);
}

/* The typed events the agent's core emits; the bus's wire format (SSE data) is JSON. */
void events_emit_allocation(struct events *e, const char *id, enum vfp_allocation_state state)
{
	events_emit(e, "allocation", json_pack("{s:s, s:s}", "id", id, "state",
					       vfp_allocation_state_to_string(state)));
	if (e->on_allocation)
		e->on_allocation(e->on_allocation_data, id);
}

/* @fn runs after each allocation event, in the emitter's thread, holding none of the bus's locks. */
void events_on_allocation(struct events *e, void (*fn)(void *userdata, const char *id),
			  void *userdata)
{
	e->on_allocation = fn;
	e->on_allocation_data = userdata;
}

void events_emit_inventory(struct events *e, const char *why,
			   const struct vfp_reconcile_report *rep)
{
	events_emit(e, "inventory", json_pack("{s:s, s:i, s:i, s:i}", "reason", why, "added",
					      rep->added, "vanished", rep->vanished, "returned",
					      rep->returned));
}

/* A PF resized: which, from how many VFs to how many. */
void events_emit_numvfs(struct events *e, const struct vfp_numvfs_plan *p)
{
	events_emit(e, "numvfs", json_pack("{s:s, s:i, s:i, s:i}", "pf", p->pf, "from", p->from,
					   "to", p->to, "totalvfs", p->totalvfs));
}

/* A VF changed state outside an allocation: quarantined after a failed reset, repaired. */
void events_emit_vf(struct events *e, const char *pci, enum vfp_vf_state state, const char *reason)
{
	events_emit(e, "vf", json_pack("{s:s, s:s, s:s?}", "pci", pci, "state",
				       vfp_vf_state_to_string(state), "reason", reason));
}

void events_emit_config(struct events *e, size_t pools)
{
	events_emit(e, "config", json_pack("{s:i}", "pools", (int)pools));
}

uint64_t events_last_id(struct events *e)
{
	uint64_t id;

	pthread_mutex_lock(&e->lock);
	id = e->last;
	pthread_mutex_unlock(&e->lock);
	return id;
}

/**
 * events_wait() - the next event after *@cursor, waiting up to @timeout_ms
 *
 * 1 with the event's SSE text in *@ret_text (free it) and the cursor moved
 * on; 0 on timeout; -EPIPE when the agent is stopping. A reader that fell
 * more than EVENTS_KEPT behind skips to the oldest event kept.
 */
int events_wait(struct events *e, uint64_t *cursor, int timeout_ms, char **ret_text)
{
	struct timespec deadline;
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&e->lock);
	if (*cursor < e->first) /* from an earlier run: this run's events are all new to it */
		*cursor = e->first;
	while (!e->shutdown && *cursor >= e->last && r == 0)
		r = pthread_cond_timedwait(&e->changed, &e->lock, &deadline);
	if (e->shutdown) {
		r = -EPIPE;
	} else if (*cursor < e->last) {
		if (e->last - *cursor > EVENTS_KEPT)
			*cursor = e->last - EVENTS_KEPT;
		*cursor += 1;
		*ret_text = strdup(e->ring[*cursor % EVENTS_KEPT]);
		r = *ret_text ? 1 : -ENOMEM;
	} else {
		r = 0;
	}
	pthread_mutex_unlock(&e->lock);
	return r;
}

void events_shutdown(struct events *e)
{
	pthread_mutex_lock(&e->lock);
	e->shutdown = true;
	pthread_cond_broadcast(&e->changed);
	pthread_mutex_unlock(&e->lock);
}
