/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The REST layer: routing table, JSON in and out, errors mapped to HTTP in one place. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"
#include "agent/attach.h"

#define API_BODY_MAX (64 * 1024)
#define API_MAX_PARAMS 2

struct MHD_Connection;
struct MHD_Response;

struct api_request {
	struct agent *agent;
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	const char *params[API_MAX_PARAMS]; /* {pci}, {id}: checked before the handler runs */
	const char *body;
	size_t body_len;
	const char *field_prefix; /* "owner." while a nested object is read: errors name it */
	/* what the handler answers */
	unsigned status;
	json_t *json;		     /* a JSON body, or */
	char *text;		     /* a text body (metrics, XML) */
	const char *content_type;    /* for text */
	const char *extra_header;    /* one more response header, or NULL */
	char extra_value[256];
	struct MHD_Response *stream; /* or a streamed response (events) */
	char error[512];
};

typedef int (*api_handler)(struct api_request *req);

struct api_route {
	const char *method;
	const char *pattern; /* "/v1/vfs/{pci}" */
	api_handler handler;
	const char *const *query; /* the query parameters it takes (NULL-ended), or NULL: none */
};

extern const struct api_route api_routes[];
extern const size_t api_n_routes;

const struct api_route *api_route_match(const char *method, const char *path,
					const char **params, char *buf, size_t size,
					bool *ret_path_known, char *error, size_t error_size);
void api_route_allow(const char *path, char *buf, size_t size);
bool api_route_takes(const struct api_route *route, const char *key);

int api_fail(struct api_request *req, int r, const char *format, ...)
	__attribute__((format(printf, 3, 4)));
int api_reply(struct api_request *req, unsigned status, json_t *json);
unsigned api_status_for(int r);
const char *api_errno_name(int r);
json_t *api_error_body(int r, const char *message);

/* Strict JSON bodies: unknown keys and wrong types are 400s that name the key. */
int api_parse_body(struct api_request *req, json_t **ret);
int api_check_keys(struct api_request *req, json_t *o, const char *const *allowed);
int api_get_string(struct api_request *req, json_t *o, const char *key, bool required,
		   const char **ret);
int api_get_int(struct api_request *req, json_t *o, const char *key, long long min,
		long long max, bool required, long long *ret);
int api_get_bool(struct api_request *req, json_t *o, const char *key, bool *ret);
const char *api_query(struct api_request *req, const char *key);
const char *api_header(struct api_request *req, const char *key);

int api_vf_list_reply(struct api_request *req, struct vfp_inventory *inv);
void api_vf_list_cache_clear(void);
json_t *api_vf_json(const struct vfp_vf *vf, const struct ledger_vf_view *v);
json_t *api_owner_json(const struct vfp_owner *o);
json_t *api_settings_json(const struct vfp_settings *s);
json_t *api_allocation_json(const struct vfp_allocation *a);
json_t *api_allocation_add_where(struct agent *agent, json_t *j);
json_t *api_state_counts_json(const unsigned vfs[_VFP_VF_STATE_MAX]);
int api_reply_allocation(struct api_request *req, const char *id);

struct api_server;
int api_server_start(struct agent *a, int *fds, const bool *is_tcp, int n_fds,
		     struct api_server **ret);
void api_server_stop(struct api_server *s, int grace_seconds);
void api_server_stop_streams(struct agent *a);

void api_metrics_observe(const struct api_route *route, unsigned status, double seconds);
int api_metrics_render(struct agent *a, char **ret_text);

/* handlers */
int api_get_host(struct api_request *req);
json_t *api_host_pending_json(struct agent *a);
int api_get_host_checks(struct api_request *req);
void api_check_security_groups(struct agent *a, struct vfp_host_checks *c);
int api_get_health(struct api_request *req);
int api_get_metrics(struct api_request *req);
int api_list_pfs(struct api_request *req);
int api_get_pf(struct api_request *req);
int api_put_numvfs(struct api_request *req);
int api_forget_numvfs(struct api_request *req);
int api_list_vfs(struct api_request *req);
int api_get_vf(struct api_request *req);
int api_repair_vf(struct api_request *req);
int api_list_pools(struct api_request *req);
int api_get_pcie(struct api_request *req);
int api_post_allocation(struct api_request *req);
int api_list_allocations(struct api_request *req);
int api_get_allocation(struct api_request *req);
int api_delete_allocation(struct api_request *req);
int api_attach(struct api_request *req);
int api_detach(struct api_request *req);
int api_swap(struct api_request *req);
int api_hold(struct api_request *req);
int api_domain_xml(struct api_request *req);
int api_list_partitions(struct api_request *req);
int api_get_events(struct api_request *req);
int api_parse_domain_request(struct api_request *req, json_t *o, struct agent_domain_request *q);

#define API_MAX_ADDRESSES 64

/* A parsed netns attach: the request, and the addresses it points into. */
struct api_netns_body {
	struct agent_netns_request q;
	const char *addresses[API_MAX_ADDRESSES];
};

int api_parse_netns_request(struct api_request *req, json_t *body, struct api_netns_body *b);

/* A parsed claim: the claim, and the settings, owner and pool name it points into. */
struct api_claim_body {
	struct vfp_claim c;
	struct vfp_settings settings;
	struct vfp_owner owner;
	char pool[128];
};

int api_parse_claim(struct api_request *req, json_t *body, const char *key,
		    struct api_claim_body *b);
int api_parse_vf_knobs(struct api_request *req, json_t *body, struct vfp_settings *s);
int api_parse_pkey(struct api_request *req, json_t *body, int *ret);
int api_patch_allocation(struct api_request *req);

/* The CNI plugin's channel: one JSON request per datagram, one answer (api/cni.c). */
#define API_CNI_MSG_MAX (64 * 1024)
json_t *api_cni_handle(struct agent *a, json_t *msg);
struct api_cni_server;
int api_cni_server_start(struct agent *a, int fd, struct api_cni_server **ret);
void api_cni_server_stop(struct api_cni_server *s);
