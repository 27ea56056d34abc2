/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/log.h"
#include "agent/swap-hold.h"

/* Holds at once at most; one more is ended at once (the request still returns first). */
#define MAX_HOLDS 64

struct hold {
	struct agent *agent;
	swap_hold_fn end;
	char id[37];
	struct timespec until; /* CLOCK_MONOTONIC */
	bool busy;	       /* being ended, outside the lock */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* CLOCK_MONOTONIC */
	pthread_once_t once;
	pthread_t thread;
	bool running, stop;
	struct hold holds[MAX_HOLDS];
	size_t n;
} h = { .lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT };

static void init_cond(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&h.changed, &attr);
	pthread_condattr_destroy(&attr);
}

static bool due(const struct timespec *t, const struct timespec *now)
{
	return t->tv_sec < now->tv_sec || (t->tv_sec == now->tv_sec && t->tv_nsec <= now->tv_nsec);
}

/* The hold of allocation @id, or -1. Under h.lock. */
static int find(const char *id)
{
	for (size_t i = 0; i < h.n; i++)
		if (!strcmp(h.holds[i].id, id))
			return (int)i;
	return -1;
}

/* Hold @i ended, outside the lock, then dropped. Under h.lock, which it lets go meanwhile. */
static void end_one(size_t i)
{
	struct agent *a = h.holds[i].agent;
	swap_hold_fn end = h.holds[i].end;
	char id[sizeof(h.holds[i].id)];

	snprintf(id, sizeof(id), "%s", h.holds[i].id);
	h.holds[i].busy = true;
	pthread_mutex_unlock(&h.lock);
	end(a, id);
	pthread_mutex_lock(&h.lock);
	i = (size_t)find(id);
	h.holds[i] = h.holds[--h.n];
	pthread_cond_broadcast(&h.changed);
}

/* The first hold due, or -1; @next: when the first one not due is. Under h.lock. */
static int first_due(const struct timespec *now, struct timespec *next, bool *any)
{
	*any = false;
	for (size_t i = 0; i < h.n; i++) {
		if (h.holds[i].busy)
			continue;
		if (due(&h.holds[i].until, now))
			return (int)i;
		if (!*any || !due(next, &h.holds[i].until))
			*next = h.holds[i].until;
		*any = true;
	}
	return -1;
}

static void *run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&h.lock);
	while (!h.stop) {
		struct timespec now, next = { 0 };
		bool any;
		int i;

		clock_gettime(CLOCK_MONOTONIC, &now);
		i = first_due(&now, &next, &any);
		if (i >= 0)
			end_one((size_t)i);
		else if (any)
			pthread_cond_timedwait(&h.changed, &h.lock, &next);
		else
			pthread_cond_wait(&h.changed, &h.lock);
	}
	pthread_mutex_unlock(&h.lock);
	return NULL;
}

/**
 * swap_hold_start() - allocation @id's swap ended by @end (agent/swap.c's
 * agent_swap_unhold()) in @ms, from the hold's thread (started with the first)
 *
 * When the thread cannot start or too many holds wait, ended now.
 */
void swap_hold_start(struct agent *a, const char *id, int ms, swap_hold_fn end)
{
	struct timespec until;
	bool now = false;

	pthread_once(&h.once, init_cond);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&h.lock);
	if (!h.running && !h.stop && pthread_create(&h.thread, NULL, run, NULL) == 0)
		h.running = true;
	if (!h.running || h.n == MAX_HOLDS || find(id) >= 0) {
		now = true;
	} else {
		h.holds[h.n] = (struct hold){ .agent = a, .end = end, .until = until };
		snprintf(h.holds[h.n].id, sizeof(h.holds[h.n].id), "%s", id);
		h.n++;
		pthread_cond_broadcast(&h.changed);
	}
	pthread_mutex_unlock(&h.lock);
	if (now)
		end(a, id);
}

/*
 * swap_hold_end() - allocation @id's hold, if it has one, ended now (a
 * detach, a release or another swap of it cannot wait for its end: the
 * swap's row would make it busy); returns once it has ended
 */
void swap_hold_end(struct agent *a, const char *id)
{
	int i;

	(void)a;
	pthread_once(&h.once, init_cond);
	pthread_mutex_lock(&h.lock);
	while ((i = find(id)) >= 0 && h.holds[i].busy)
		pthread_cond_wait(&h.changed, &h.lock);
	if (i >= 0)
		end_one((size_t)i);
	pthread_mutex_unlock(&h.lock);
}

/*
 * swap_hold_stop() - the hold thread stopped, at the agent's stop: the holds
 * not ended yet stay in the ledger, ended at the next start
 */
void swap_hold_stop(void)
{
	bool joined;

	pthread_once(&h.once, init_cond);
	pthread_mutex_lock(&h.lock);
	h.stop = true;
	joined = h.running;
	pthread_cond_broadcast(&h.changed);
	pthread_mutex_unlock(&h.lock);
	if (joined)
		pthread_join(h.thread, NULL);
	if (h.n)
		log_info("swap: %zu steering hold(s) left for the next start", h.n);
}
