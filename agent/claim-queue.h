/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Group commit for claims: request threads queue their claims; one
 * committer thread takes everything queued and makes it durable in a
 * single transaction, so 16 waiting clients cost one fsync, not 16.
 */
#pragma once

#include <pthread.h>
#include <stdbool.h>

#include "libvfpool/libvfpool.h"

struct claim_queue;

/*
 * Commits @n claims in one transaction (claim i all or none with claim i + 1
 * where @together[i]): each claim's result, allocation and error (the
 * caller's to free) in the arrays; a commit that failed fails every claim
 * of the batch. The agent's is ledger_claim_batch().
 */
typedef void (*claim_queue_commit_fn)(void *userdata, const struct vfp_config *config,
				      const struct vfp_claim *reqs, size_t n, const bool *together,
				      int *ret_results, struct vfp_allocation **ret_allocations,
				      char **ret_errors);

int claim_queue_new(claim_queue_commit_fn commit, void *userdata, struct claim_queue **ret_q);
void claim_queue_free(struct claim_queue *q);
int claim_queue_claim(struct claim_queue *q, const struct vfp_config *config,
		      const struct vfp_claim *req, struct vfp_allocation **ret_allocation,
		      char **ret_error);
size_t claim_queue_claim_many(struct claim_queue *q, const struct vfp_config *config,
			      const struct vfp_claim *reqs, size_t n, int *ret_results,
			      struct vfp_allocation **ret_allocations, char **ret_errors);
