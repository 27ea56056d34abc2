/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/log.h"
#include "agent/swap-hold.h"

/* Holds at once at most; one more is ended at once (the request still returns first). */
#define MAX_HOLDS 64
/* How often a hold whose guest still sends over its standby is looked at again, and until when. */
#define LOOK_AGAIN_S 1
#define AT_MOST_MORE_S 60

struct hold {
	struct agent *agent;
	const struct swap_hold_ops *ops;
	char id[37];
	struct timespec until; /* CLOCK_MONOTONIC */
	struct timespec cap;   /* no longer than this, whatever the standby does */
	uint64_t mark;	       /* the standby's count at the last look (ops->busy) */
	bool extended;	       /* looked at again at least once */
	bool busy;	       /* being looked at or ended, outside the lock */
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

static struct timespec after_ms(const struct timespec *t, long ms)
{
	struct timespec r = { .tv_sec = t->tv_sec + ms / 1000,
			      .tv_nsec = t->tv_nsec + (ms % 1000) * 1000000L };

	if (r.tv_nsec >= 1000000000L)
		r.tv_sec++, r.tv_nsec -= 1000000000L;
	return r;
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
	const struct swap_hold_ops *ops = h.holds[i].ops;
	char id[sizeof(h.holds[i].id)];

	snprintf(id, sizeof(id), "%s", h.holds[i].id);
	h.holds[i].busy = true;
	pthread_mutex_unlock(&h.lock);
	ops->end(a, id);
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

/*
 * Hold @i, due at @now: looked at again in a second while its guest still
 * sends over its standby (before its cap), else ended. Under h.lock, which
 * it lets go meanwhile.
 */
static void due_one(size_t i, const struct timespec *now)
{
	struct hold *o = &h.holds[i];
	struct agent *a = o->agent;
	const struct swap_hold_ops *ops = o->ops; /* @o may move while the lock is let go */
	uint64_t mark = o->mark;
	char id[sizeof(o->id)];
	bool again;

	if (due(&o->cap, now)) {
		if (o->extended)
			log_warning("swap of allocation %s: its guest still sends over its standby %d s "
				    "past the hold: the steering goes", o->id, AT_MOST_MORE_S);
		end_one(i);
		return;
	}
	snprintf(id, sizeof(id), "%s", o->id);
	o->busy = true;
	pthread_mutex_unlock(&h.lock);
	again = ops->busy(a, id, &mark);
	pthread_mutex_lock(&h.lock);
	o = &h.holds[find(id)];
	o->busy = false;
	o->mark = mark;
	pthread_cond_broadcast(&h.changed); /* swap_hold_end() may wait for it */
	if (!again) {
		end_one((size_t)(o - h.holds));
		return;
	}
	if (!o->extended)
		log_info("swap of allocation %s: its guest still sends over its standby: the "
			 "steering stays while it does", id);
	o->extended = true;
	o->until = after_ms(now, LOOK_AGAIN_S * 1000);
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
			due_one((size_t)i, &now);
		else if (any)
			pthread_cond_timedwait(&h.changed, &h.lock, &next);
		else
			pthread_cond_wait(&h.changed, &h.lock);
	}
	pthread_mutex_unlock(&h.lock);
	return NULL;
}

/**
 * swap_hold_start() - allocation @id's swap ended by @ops->end (agent/swap.c's
 * agent_swap_unhold()) in @ms or, while @ops->busy says its guest still
 * sends over its standby, later (a minute more at most), from the hold's
 * thread (started with the first)
 *
 * When the thread cannot start or too many holds wait, ended now.
 */
void swap_hold_start(struct agent *a, const char *id, int ms, const struct swap_hold_ops *ops)
{
	struct timespec now;
	uint64_t mark = 0;
	bool at_once = false;

	pthread_once(&h.once, init_cond);
	ops->busy(a, id, &mark); /* the count the first look compares with */
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&h.lock);
	if (!h.running && !h.stop && pthread_create(&h.thread, NULL, run, NULL) == 0)
		h.running = true;
	if (!h.running || h.n == MAX_HOLDS || find(id) >= 0) {
		at_once = true;
	} else {
		h.holds[h.n] = (struct hold){ .agent = a, .ops = ops, .mark = mark,
					      .until = after_ms(&now, ms),
					      .cap = after_ms(&now, ms + AT_MOST_MORE_S * 1000L) };
		snprintf(h.holds[h.n].id, sizeof(h.holds[h.n].id), "%s", id);
		h.n++;
		pthread_cond_broadcast(&h.changed);
	}
	pthread_mutex_unlock(&h.lock);
	if (at_once)
		ops->end(a, id);
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
