/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/give-back.h"
#include "agent/log.h"
#include "agent/release.h"

/* The claims whose release the ledger could not take yet. */
struct agent_give_backs {
	char (*ids)[40];
	size_t n, cap;
};

/* Guards every agent's list: taken only on a failure and on the retries, never for long. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void keep(struct agent *a, const char *id)
{
	struct agent_give_backs *g;

	pthread_mutex_lock(&lock);
	if (!a->give_backs)
		a->give_backs = calloc(1, sizeof(*a->give_backs));
	g = a->give_backs;
	for (size_t i = 0; g && i < g->n; i++)
		if (strcmp(g->ids[i], id) == 0)
			goto out;
	if (g && g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		char(*n)[40] = realloc(g->ids, cap * sizeof(*n));

		if (n)
			g->ids = n, g->cap = cap;
	}
	if (g && g->n < g->cap)
		snprintf(g->ids[g->n++], sizeof(g->ids[0]), "%s", id);
	else
		log_error("allocation %s: no memory to keep the claim to give back: it stays "
			  "reserved until its owner goes", id);
out:
	pthread_mutex_unlock(&lock);
}

static void drop(struct agent *a, const char *id)
{
	struct agent_give_backs *g;

	pthread_mutex_lock(&lock);
	g = a->give_backs;
	for (size_t i = 0; g && i < g->n; i++)
		if (strcmp(g->ids[i], id) == 0) {
			memmove(g->ids[i], g->ids[i + 1], (--g->n - i) * sizeof(g->ids[0]));
			break;
		}
	pthread_mutex_unlock(&lock);
}

/**
 * agent_give_back() - release allocation @id, a claim whose operation failed
 *
 * A release the ledger cannot take now is kept and retried (see the header);
 * its error comes back all the same, for the log. Released already
 * (-ENOENT) is not an error.
 */
int agent_give_back(struct agent *a, const char *id, char *err, size_t err_size)
{
	int r = agent_release_allocation(a, id, err, err_size);

	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		keep(a, id);
		log_warning("allocation %s: giving the claim back: %s: tried again before the next "
			    "claim and each quiet minute", id, err);
	}
	return r;
}

/** agent_give_back_deferred() - the claims kept to give back, given back where the ledger lets */
void agent_give_back_deferred(struct agent *a)
{
	char(*ids)[40] = NULL;
	size_t n = 0;

	pthread_mutex_lock(&lock);
	if (a->give_backs && a->give_backs->n && (ids = malloc(a->give_backs->n * sizeof(*ids)))) {
		n = a->give_backs->n;
		memcpy(ids, a->give_backs->ids, n * sizeof(*ids));
	}
	pthread_mutex_unlock(&lock);
	for (size_t i = 0; i < n; i++) {
		char err[AGENT_ERR_SIZE];
		int r = agent_release_allocation(a, ids[i], err, sizeof(err));

		if (r >= 0 || r == -ENOENT) {
			log_info("allocation %s: the claim is given back now", ids[i]);
			drop(a, ids[i]);
		}
	}
	free(ids);
}

/** agent_give_backs_pending() - how many claims wait to be given back */
size_t agent_give_backs_pending(struct agent *a)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = a->give_backs ? a->give_backs->n : 0;
	pthread_mutex_unlock(&lock);
	return n;
}

/* The agent stops: its list of the claims still to give back is freed. */
static void give_backs_fini(struct agent *a)
{
	if (a->give_backs)
		free(a->give_backs->ids);
	free(a->give_backs);
	a->give_backs = NULL;
}

const struct agent_room give_back_room = {
	.fini = give_backs_fini,
};
