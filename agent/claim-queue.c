/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claim-queue.h"

#define BATCH_MAX 64

struct waiter {
	const struct vfp_config *config;
	const struct vfp_claim *req;
	int result;
	struct vfp_allocation *allocation;
	char *error;
	bool done;
	bool with_next; /* all or none with the next waiter: one caller's claim_queue_claim_many() */
	struct waiter *next;
};

struct claim_queue {
	claim_queue_commit_fn commit;
	void *userdata;
	pthread_mutex_t lock;
	pthread_cond_t queued, finished;
	struct waiter *head, **tail;
	bool stopping;
	pthread_t committer;
};

/* Commits one batch; claims under different configs (a reload between) go one by one. */
static void commit_batch(struct claim_queue *q, struct waiter **w, size_t n)
{
	struct vfp_claim reqs[BATCH_MAX];
	bool together[BATCH_MAX];
	int results[BATCH_MAX];
	struct vfp_allocation *allocs[BATCH_MAX];
	char *errors[BATCH_MAX];
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		memset(allocs, 0, sizeof(allocs));
		memset(errors, 0, sizeof(errors));
		for (; j < n && w[j]->config == w[i]->config; j++) {
			reqs[j - i] = *w[j]->req;
			together[j - i] = w[j]->with_next;
		}
		together[j - i - 1] = false;
		q->commit(q->userdata, w[i]->config, reqs, j - i, together, results, allocs,
			  errors);
		for (size_t k = i; k < j; k++) {
			w[k]->result = results[k - i];
			w[k]->allocation = allocs[k - i];
			w[k]->error = errors[k - i];
		}
		i = j;
	}
}

static void *committer(void *userdata)
{
	struct claim_queue *q = userdata;
	struct waiter *batch[BATCH_MAX];

	pthread_mutex_lock(&q->lock);
	for (;;) {
		size_t n = 0;

		while (!q->head && !q->stopping)
			pthread_cond_wait(&q->queued, &q->lock);
		if (!q->head && q->stopping)
			break;
		while (q->head && n < BATCH_MAX) {
			batch[n++] = q->head;
			q->head = q->head->next;
		}
		while (n > 1 && batch[n - 1]->with_next) { /* a group goes whole, in the next batch */
			batch[n - 1]->next = q->head;
			q->head = batch[--n];
		}
		if (!q->head)
			q->tail = &q->head;
		pthread_mutex_unlock(&q->lock);
		commit_batch(q, batch, n);
		pthread_mutex_lock(&q->lock);
		for (size_t i = 0; i < n; i++)
			batch[i]->done = true;
		pthread_cond_broadcast(&q->finished);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int claim_queue_new(claim_queue_commit_fn commit, void *userdata, struct claim_queue **ret_q)
{
	struct claim_queue *q = calloc(1, sizeof(*q));
	int r;

	if (!q)
		return -ENOMEM;
	q->commit = commit;
	q->userdata = userdata;
	q->tail = &q->head;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->queued, NULL);
	pthread_cond_init(&q->finished, NULL);
	r = pthread_create(&q->committer, NULL, committer, q);
	if (r != 0) {
		pthread_cond_destroy(&q->queued);
		pthread_cond_destroy(&q->finished);
		pthread_mutex_destroy(&q->lock);
		free(q);
		return -r;
	}
	*ret_q = q;
	return 0;
}

/* Waits for the claims in flight, then stops the committer. */
void claim_queue_free(struct claim_queue *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	pthread_cond_signal(&q->queued);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->committer, NULL);
	pthread_cond_destroy(&q->queued);
	pthread_cond_destroy(&q->finished);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* Queues @n waiters at once (one batch, unless more than BATCH_MAX) and waits for them all. */
static void queue_and_wait(struct claim_queue *q, struct waiter *w, size_t n)
{
	bool done;

	pthread_mutex_lock(&q->lock);
	/* @w lives on the caller's stack until the committer marks it done and drops it */
	for (size_t i = 0; i < n; i++) {
		*q->tail = &w[i];
		// cppcheck-suppress autoVariables
		q->tail = &w[i].next;
	}
	pthread_cond_signal(&q->queued);
	do {
		done = true;
		for (size_t i = 0; i < n; i++)
			done = done && w[i].done;
		if (!done)
			pthread_cond_wait(&q->finished, &q->lock);
	} while (!done);
	pthread_mutex_unlock(&q->lock);
}

static int take_result(struct waiter *w, struct vfp_allocation **ret_allocation,
		       char **ret_error)
{
	if (ret_error)
		*ret_error = w->error;
	else
		free(w->error);
	*ret_allocation = NULL;
	if (w->result >= 0)
		*ret_allocation = w->allocation;
	else
		vfp_allocation_unref(w->allocation);
	return w->result;
}

/**
 * claim_queue_claim() - vfp_ledger_claim(), committed together with the
 * claims other threads queued meanwhile
 * @ret_error: the message of a failure, to free(); may be NULL
 */
int claim_queue_claim(struct claim_queue *q, const struct vfp_config *config,
		      const struct vfp_claim *req, struct vfp_allocation **ret_allocation,
		      char **ret_error)
{
	struct waiter w = { .config = config, .req = req };

	queue_and_wait(q, &w, 1);
	return take_result(&w, ret_allocation, ret_error);
}

/**
 * claim_queue_claim_many() - @n claims of one caller in one commit
 * @ret_results, @ret_allocations, @ret_errors: per claim, as claim_queue_claim()
 *
 * All or none (one savepoint, vfp_ledger_claim_groups(); by BATCH_MAX at
 * most): when one fails, the others fail -ECANCELED. Returns how many failed.
 */
size_t claim_queue_claim_many(struct claim_queue *q, const struct vfp_config *config,
			      const struct vfp_claim *reqs, size_t n, int *ret_results,
			      struct vfp_allocation **ret_allocations, char **ret_errors)
{
	struct waiter w[BATCH_MAX];
	size_t failed = 0;

	for (size_t done = 0, k; done < n; done += k) {
		k = n - done < BATCH_MAX ? n - done : BATCH_MAX;
		for (size_t i = 0; i < k; i++)
			w[i] = (struct waiter){ .config = config, .req = &reqs[done + i],
						.with_next = i + 1 < k };
		queue_and_wait(q, w, k);
		for (size_t i = 0; i < k; i++) {
			ret_results[done + i] = take_result(&w[i], &ret_allocations[done + i],
							    &ret_errors[done + i]);
			failed += ret_results[done + i] < 0;
		}
	}
	return failed;
}
