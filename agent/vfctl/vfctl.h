/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

struct vfctl_http {
	const char *socket; /* unix socket path, or */
	const char *url;    /* http://host:port for a TCP listener */
	const char *token;  /* bearer token for the URL */
};

int vfctl_request(const struct vfctl_http *h, const char *method, const char *path,
		  json_t *body, const char *idempotency_key, json_t **ret_json);
int vfctl_stream(const struct vfctl_http *h, const char *path);

void vfctl_print_table(FILE *out, json_t *pfs);
void vfctl_print_fields(FILE *out, const char *kind, json_t *o);
void vfctl_print_pools(FILE *out, json_t *pools);
void vfctl_print_allocation(FILE *out, json_t *a);
void vfctl_print_plan(FILE *out, json_t *plan);
