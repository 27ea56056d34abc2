/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* POST/GET/DELETE /v1/allocations: claiming VFs, looking them up, giving them back. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/claim-queue.h"
#include "agent/release.h"
#include "agent/events.h"
#include "api/api.h"
#include "api/validate.h"

/* The VF settings beyond MAC and VLAN: each key, its checker, and what it must be. */
static int parse_vf_knobs(struct api_request *req, json_t *body, json_t *s)
{
	static const struct {
		const char *key, *what;
		long long max; /* integers: [0, max]; 0 for a boolean or a string */
		const char *const choices[4];
	} knobs[] = {
		{ "qos", "an integer in [0, 7]", 7, { NULL } },
		{ "vlan_proto", "\"802.1Q\" or \"802.1ad\"", 0, { "802.1Q", "802.1ad" } },
		{ "spoofchk", "true or false", 0, { NULL } },
		{ "trust", "true or false", 0, { NULL } },
		{ "link_state", "\"auto\", \"enable\" or \"disable\"", 0,
		  { "auto", "enable", "disable" } },
		{ "min_tx_rate", "Mbit/s, an integer in [0, 4294967295]", 4294967295LL, { NULL } },
		{ "max_tx_rate", "Mbit/s, an integer in [0, 4294967295]", 4294967295LL, { NULL } },
	};

	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		json_t *v = json_object_get(body, knobs[i].key);
		bool ok;

		if (!v)
			continue;
		if (knobs[i].max)
			ok = json_is_integer(v) && json_integer_value(v) >= 0 &&
			     json_integer_value(v) <= knobs[i].max;
		else if (knobs[i].choices[0]) {
			ok = false;
			for (size_t c = 0; knobs[i].choices[c]; c++)
				ok = ok || (json_is_string(v) &&
					    strcmp(json_string_value(v), knobs[i].choices[c]) == 0);
		} else
			ok = json_is_boolean(v);
		if (!ok)
			return api_fail(req, -EINVAL, "%s: must be %s", knobs[i].key, knobs[i].what);
		json_object_set(s, knobs[i].key, v);
	}
	if ((json_object_get(s, "qos") || json_object_get(s, "vlan_proto")) &&
	    !json_object_get(s, "vlan"))
		return api_fail(req, -EINVAL, "qos, vlan_proto: need a vlan");
	return 0;
}

/* The requested settings, each checked: {"mac","vlan","guid","ip",…} as given. */
static int parse_settings(struct api_request *req, json_t *body, json_t **ret)
{
	const char *mac = NULL, *guid = NULL, *ip = NULL;
	long long vlan = -1;
	json_t *s;
	int r;

	r = api_get_string(req, body, "mac", false, &mac);
	if (r >= 0 && mac && !valid_mac(mac))
		r = api_fail(req, -EINVAL, "mac: \"%.32s\" is not a unicast MAC address", mac);
	if (r >= 0)
		r = api_get_int(req, body, "vlan", 0, 4094, false, &vlan);
	if (r >= 0)
		r = api_get_string(req, body, "guid", false, &guid);
	if (r >= 0 && guid && !valid_guid(guid))
		r = api_fail(req, -EINVAL, "guid: \"%.32s\" is not a GUID (8 bytes, not all 0 or ff)",
			     guid);
	if (r >= 0)
		r = api_get_string(req, body, "ip", false, &ip);
	if (r >= 0 && ip && !valid_ip_prefix(ip, NULL))
		r = api_fail(req, -EINVAL, "ip: \"%.64s\" is not an address with a prefix length "
					   "(10.1.0.5/16)", ip);
	if (r < 0)
		return r;
	s = json_object();
	if (mac)
		json_object_set_new(s, "mac", json_string(mac));
	if (vlan >= 0)
		json_object_set_new(s, "vlan", json_integer(vlan));
	if (guid)
		json_object_set_new(s, "guid", json_string(guid));
	if (ip)
		json_object_set_new(s, "ip", json_string(ip));
	r = parse_vf_knobs(req, body, s);
	if (r < 0) {
		json_decref(s);
		return r;
	}
	*ret = s;
	return 0;
}

static int parse_claim(struct api_request *req, json_t *body, struct vfp_claim *c)
{
	static const char *const keys[] = { "pool", "count", "owner", "mac", "vlan", "guid", "ip",
					    "qos", "vlan_proto", "spoofchk", "trust", "link_state",
					    "min_tx_rate", "max_tx_rate", "numa_node", "placement",
					    "lease_seconds", "attach", NULL };
	const char *placement = NULL, *key = api_header(req, "Idempotency-Key");
	long long count = 1, numa = -1, lease = 0;
	int r;

	r = api_check_keys(req, body, keys);
	if (r >= 0)
		r = api_get_string(req, body, "pool", true, &c->pool);
	if (r >= 0)
		r = api_get_int(req, body, "count", 1, 64, false, &count);
	if (r >= 0 && !json_is_object(json_object_get(body, "owner")))
		r = api_fail(req, -EINVAL, "owner: required, an object like "
					   "{\"kind\":\"vm\",\"name\":\"one-42\"}");
	if (r >= 0)
		r = api_get_int(req, body, "numa_node", -1, 4095, false, &numa);
	if (r >= 0)
		r = api_get_string(req, body, "placement", false, &placement);
	if (r >= 0 && placement && strcmp(placement, "spread") != 0 && strcmp(placement, "pack") != 0)
		r = api_fail(req, -EINVAL, "placement: must be \"spread\" or \"pack\"");
	if (r >= 0)
		r = api_get_int(req, body, "lease_seconds", 0, 31536000, false, &lease);
	if (r >= 0 && key && !valid_token(key))
		r = api_fail(req, -EINVAL, "Idempotency-Key: 1-128 printable ASCII characters");
	if (r < 0)
		return r;
	c->count = (unsigned)count;
	c->owner = json_object_get(body, "owner");
	c->numa_node = (int)numa;
	c->placement = placement && strcmp(placement, "pack") == 0 ? VFP_PLACE_PACK
								   : VFP_PLACE_SPREAD;
	c->lease_seconds = (unsigned)lease;
	c->idempotency_key = key;
	return 0;
}

/* No free VF: a pool with a "grow" policy resizes an idle PF, once. */
static bool grow_pool(struct agent *a, const char *pool)
{
	struct vfp_inventory *inv = NULL;
	int r;

	pthread_rwlock_wrlock(&a->state_lock);
	pthread_mutex_lock(&a->ledger_lock);
	r = vfp_pool_grow(a->ledger, a->config, a->inv, pool, &inv);
	if (inv)
		agent_replace_inventory(a, inv);
	pthread_mutex_unlock(&a->ledger_lock);
	pthread_rwlock_unlock(&a->state_lock);
	if (r >= 0)
		log_info("pool %s: grew a PF", pool);
	return r >= 0;
}

/* Claims through the group-commit queue, growing the pool once if it ran dry. */
int api_claim(struct api_request *req, const struct vfp_claim *c, json_t **ret)
{
	struct vfp_config *config = agent_get_config(req->agent);
	char *err = NULL;
	int r;

	r = claim_queue_claim(req->agent->claims, config, c, ret, &err);
	if (r == -EBUSY && err && strstr(err, "free VF") && grow_pool(req->agent, c->pool)) {
		free(err);
		err = NULL;
		r = claim_queue_claim(req->agent->claims, config, c, ret, &err);
	}
	vfp_config_unref(config);
	if (r < 0)
		api_fail(req, r, "%s", err ? err : "claim failed");
	free(err);
	return r;
}

/* @alloc as the ledger has it now (the reference passed in is dropped). */
static json_t *reread(struct api_request *req, json_t *alloc)
{
	json_t *now;

	pthread_mutex_lock(&req->agent->ledger_lock);
	now = vfp_ledger_get_allocation(req->agent->ledger,
					json_string_value(json_object_get(alloc, "id")));
	pthread_mutex_unlock(&req->agent->ledger_lock);
	json_decref(alloc);
	return now;
}

/*
 * A new claim with "attach": {"domain":…} goes into the domain at once, and
 * a failed attach gives the claim back: all or nothing.
 */
static int attach_new(struct api_request *req, json_t *alloc, json_t *attach)
{
	const char *id = json_string_value(json_object_get(alloc, "id"));
	char err[256];
	int r;

	if (!json_is_object(attach) || !json_object_get(attach, "domain"))
		r = api_fail(req, -EINVAL, "attach: must be an object like {\"domain\": \"one-42\"}");
	else
		r = api_attach_domain(req, alloc, attach);
	if (r < 0 && agent_release_allocation(req->agent, id, err, sizeof(err)) < 0)
		log_error("allocation %s: giving the claim back: %s", id, err);
	return r;
}

/* → 201 with the allocation; 200 when the Idempotency-Key replays an earlier one. */
int api_post_allocation(struct api_request *req)
{
	struct vfp_claim c = { 0 };
	json_t *body = NULL, *alloc = NULL, *settings = NULL, *attach;
	int r;

	r = api_parse_body(req, &body);
	if (r >= 0)
		r = parse_claim(req, body, &c);
	if (r >= 0)
		r = parse_settings(req, body, &settings);
	c.settings = settings;
	if (r >= 0)
		r = api_claim(req, &c, &alloc);
	attach = json_object_get(body, "attach");
	if (r == 0 && attach)
		r = attach_new(req, alloc, attach);
	if (r == 0 && attach)
		alloc = reread(req, alloc);
	json_decref(settings);
	json_decref(body);
	if (r < 0) {
		json_decref(alloc);
		return r;
	}
	if (r == 0)
		events_emit(req->agent->events, "allocation",
			    json_pack("{s:O, s:s}", "id", json_object_get(alloc, "id"), "state",
				      json_string_value(json_object_get(alloc, "state"))));
	return api_reply(req, r == 1 ? 200 : 201, alloc);
}

int api_list_allocations(struct api_request *req)
{
	const char *owner = api_query(req, "owner"), *all = api_query(req, "include_released");
	json_t *a;

	if (all && strcmp(all, "true") != 0 && strcmp(all, "false") != 0)
		return api_fail(req, -EINVAL, "include_released: must be true or false");
	pthread_mutex_lock(&req->agent->ledger_lock);
	a = vfp_ledger_list_allocations(req->agent->ledger, owner, all && !strcmp(all, "true"));
	pthread_mutex_unlock(&req->agent->ledger_lock);
	return api_reply(req, 200, json_pack("{s:o*}", "allocations", a));
}

int api_get_allocation(struct api_request *req)
{
	json_t *a;

	pthread_mutex_lock(&req->agent->ledger_lock);
	a = vfp_ledger_get_allocation(req->agent->ledger, req->params[0]);
	pthread_mutex_unlock(&req->agent->ledger_lock);
	if (!a)
		return api_fail(req, -ENOENT, "no allocation %s", req->params[0]);
	return api_reply(req, 200, a);
}

/* Restores and frees the VFs → 204 (agent_release_allocation()). */
int api_delete_allocation(struct api_request *req)
{
	char err[256] = "";
	int r = agent_release_allocation(req->agent, req->params[0], err, sizeof(err));

	if (r < 0)
		return api_fail(req, r, "%s", err);
	req->status = 204;
	return 0;
}
