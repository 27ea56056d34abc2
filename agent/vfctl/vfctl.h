/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "libvfpool/libvfpool.h"

struct vfctl_http {
	const char *socket; /* unix socket path, or */
	const char *url;    /* http://host:port for a TCP listener */
	const char *token;  /* bearer token for the URL */
	bool quiet;	    /* errors are returned, not printed */
	long timeout;	    /* seconds a request may take in all; 0: no limit */
};

int vfctl_request(const struct vfctl_http *h, const char *method, const char *path,
		  json_t *body, const char *idempotency_key, json_t **ret_json);
int vfctl_stream(const struct vfctl_http *h, const char *path, const char *last_event_id,
		 size_t (*on_chunk)(char *, size_t, size_t, void *), void *userdata);
int vfctl_follow_events(const struct vfctl_http *h, bool json);
void vfctl_print_unreachable(const struct vfctl_http *h);
int vfctl_probe(const struct vfctl_http *h, long timeout);

void vfctl_print_table(FILE *out, json_t *pfs, json_t *holders);
void vfctl_owner_text(json_t *owner, char *buf, size_t size);
void vfctl_where_text(json_t *where, char *buf, size_t size);
int vfctl_get_allocations(const struct vfctl_http *h, const char *pool, const char *state,
			  const char *owner, json_t **ret);
void vfctl_print_allocations(FILE *out, json_t *list);
json_t *vfctl_holders(const struct vfctl_http *h);
void vfctl_print_fields(FILE *out, const char *kind, json_t *o);
void vfctl_print_pools(FILE *out, json_t *pools);
void vfctl_print_topo(FILE *out, json_t *tree);
void vfctl_print_allocation(FILE *out, json_t *a);
void vfctl_print_plan(FILE *out, json_t *plan);
int vfctl_doctor_local(struct vfp_ctx *ctx, const struct vfp_host_env *env, json_t **ret);
void vfctl_print_checks(FILE *out, json_t *report);
int vfctl_doctor_exit_status(json_t *report);
int vfctl_swap(const struct vfctl_http *h, const char *id, const char *vf, const char *pf,
	       bool json);
int vfctl_drain(const struct vfctl_http *h, const char *pf, bool json);

#define VFCTL_MAX_SOURCES 64

/* `vfctl partitions write`'s options (vfctl-partitions.c). */
struct vfctl_partitions {
	const char *file;	/* OpenSM's partitions.conf */
	const char *opensm_pid; /* a file with OpenSM's pid, to signal; NULL: none */
	bool follow;
	struct vfctl_http sources[VFCTL_MAX_SOURCES]; /* the agents, as --socket/--url named them */
	size_t n_sources;
};

int vfctl_partitions_write(const struct vfctl_partitions *o);
