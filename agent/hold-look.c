/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Each look is a stat() in a thread of its own, waited for a moment
 * (HOLD_LOOK_WAIT_MS) when it starts: a path that answers is known at once,
 * one that hangs is left to its thread and comes back "not known yet"
 * (-EAGAIN, at once) until its stat() returns, so that a hung path delays only its own hold
 * (kept meanwhile: only ENOENT ends a hold). One look per path at a time,
 * and at most HOLD_LOOK_MAX hung at once.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/hold-look.h"

#define HOLD_LOOK_WAIT_MS 50
#define HOLD_LOOK_MAX 64

struct look {
	struct look *next;
	char *path;
	bool done;
	int result; /* 0: exists; -errno */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t answered = PTHREAD_COND_INITIALIZER;
static struct look *looks; /* those under way, and those answered but not yet read */
static unsigned n_looks;

static void *look_thread(void *arg)
{
	struct look *l = arg;
	struct stat st;
	int r = stat(l->path, &st) == 0 ? 0 : -errno;

	pthread_mutex_lock(&lock);
	l->result = r;
	l->done = true;
	pthread_cond_broadcast(&answered);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Under lock: the look at @path, under way or answered; NULL when none. */
static struct look *find(const char *path)
{
	for (struct look *l = looks; l; l = l->next)
		if (strcmp(l->path, path) == 0)
			return l;
	return NULL;
}

/* Under lock: a new look at @path, its thread started; NULL when none can be. */
static struct look *start(const char *path)
{
	struct look *l = n_looks < HOLD_LOOK_MAX ? calloc(1, sizeof(*l)) : NULL;
	pthread_attr_t attr;
	pthread_t t;
	bool ok;

	if (!l || !(l->path = strdup(path))) {
		free(l);
		return NULL;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ok = pthread_create(&t, &attr, look_thread, l) == 0;
	pthread_attr_destroy(&attr);
	if (!ok) {
		free(l->path);
		free(l);
		return NULL;
	}
	l->next = looks, looks = l, n_looks++;
	return l;
}

/* Under lock: an answered look forgotten. */
static void forget(struct look *l)
{
	for (struct look **p = &looks; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	n_looks--;
	free(l->path);
	free(l);
}

/**
 * hold_look() - 0 when @path exists, -ENOENT when it does not, -EAGAIN
 * while its look has not returned (a path that hangs), another -errno when
 * the look failed (or no thread could look)
 */
int hold_look(const char *path)
{
	struct timespec until;
	struct look *l;
	int r = -EAGAIN;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += HOLD_LOOK_WAIT_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&lock);
	l = find(path);
	if (!l && (l = start(path))) /* a new look is waited for a moment; one that hangs is not */
		while (!l->done && pthread_cond_timedwait(&answered, &lock, &until) == 0)
			;
	else if (!l)
		r = -ENOMEM;
	if (l && l->done) {
		r = l->result;
		forget(l);
	}
	pthread_mutex_unlock(&lock);
	return r;
}
