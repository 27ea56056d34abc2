/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * This host's members of InfiniBand partitions, for the subnet manager's
 * side (GET /v1/partitions, `vfctl partitions write`): one member per VF
 * of a live allocation that asked for a P_Key, named by the port GUID the
 * attach gives the VF (the claim's "guid" for its first VF, else the GUID
 * pool's). A reserved allocation is listed too: its GUIDs are known from
 * the claim, and a partition in place before the guest boots is one it
 * never waits for.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/events.h"
#include "agent/ledger.h"
#include "agent/log.h"
#include "agent/partitions.h"
#include "agent/pf/pf-side.h"

/* The port GUID VF @i of @a carries once attached; "" for none. */
static const char *member_guid(const struct vfp_allocation *a, size_t i)
{
	const struct vfp_settings *s = vfp_allocation_get_settings(a);

	return i == 0 && s->guid[0] ? s->guid : vfp_allocation_get_vf(a, i)->guid;
}

static int add_members(json_t *members, const struct vfp_allocation *a)
{
	const struct vfp_settings *s = vfp_allocation_get_settings(a);
	enum vfp_allocation_state st = vfp_allocation_get_state(a);
	char key[7];

	if (s->pkey < 0 || (st != VFP_ALLOCATION_RESERVED && st != VFP_ALLOCATION_ATTACHED))
		return 0;
	vfp_pkey_format(s->pkey, key);
	for (size_t i = 0; i < vfp_allocation_get_vf_count(a); i++) {
		const char *guid = member_guid(a, i);

		if (!guid[0])
			continue;
		if (json_array_append_new(
			    members,
			    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "pkey", key, "membership",
				      vfp_pkey_membership(s->pkey), "guid", guid, "allocation",
				      vfp_allocation_get_id(a), "pci", vfp_allocation_get_vf(a, i)->pci,
				      "state", vfp_allocation_state_to_string(st))) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int by_key_and_guid(const void *x, const void *y)
{
	json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	int r = strcmp(json_string_value(json_object_get(a, "pkey")),
		       json_string_value(json_object_get(b, "pkey")));

	return r ? r : strcmp(json_string_value(json_object_get(a, "guid")),
			      json_string_value(json_object_get(b, "guid")));
}

/* @members by P_Key, then GUID: one order whatever the ledger's, so a change is a change. */
static json_t *sorted(json_t *members)
{
	size_t n = json_array_size(members);
	json_t **v = calloc(n + 1, sizeof(*v)), *out = json_array();

	for (size_t i = 0; v && i < n; i++)
		v[i] = json_array_get(members, i);
	if (v)
		qsort(v, n, sizeof(*v), by_key_and_guid);
	for (size_t i = 0; v && out && i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	json_decref(members);
	if (!v)
		json_decref(out);
	return v ? out : NULL;
}

static json_t *guid_range_json(struct agent *agent)
{
	struct vfp_config *config = agent_get_config(agent);
	unsigned long long first, count;
	char buf[24];
	json_t *o = NULL;

	if (vfp_config_get_guid_range(config, &first, &count)) {
		vfp_guid_format(first, buf);
		o = json_pack("{s:s, s:I}", "first", buf, "count", (json_int_t)count);
	}
	vfp_config_unref(config);
	return o ? o : json_null();
}

/**
 * agent_partitions_json() - {"host","guid_range":{"first","count"}|null,
 *   "members":[{"pkey","membership","guid","allocation","pci","state"}]}
 *
 * Members by P_Key, then GUID. An allocation without a
 * P_Key, or a VF without a GUID (no GUID pool, an Ethernet VF), is no member.
 */
int agent_partitions_json(struct agent *agent, json_t **ret)
{
	struct vfp_allocation **list = NULL;
	char host[256] = "";
	json_t *members = json_array();
	size_t n = 0;
	int r;

	if (!members)
		return -ENOMEM;
	r = ledger_list_allocations(agent, NULL, false, &list, &n, NULL, 0);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = add_members(members, list[i]);
	vfp_allocation_list_free(list, n);
	if (r < 0) {
		json_decref(members);
		return r;
	}
	gethostname(host, sizeof(host) - 1);
	members = sorted(members);
	*ret = json_pack("{s:s, s:o, s:o}", "host", host, "guid_range", guid_range_json(agent),
			 "members", members);
	return *ret ? 0 : -ENOMEM;
}

/* The members at the last look, as compact JSON: one agent per process, so one of these. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static char *watch_last;

/* Whether allocation @id asked for a P_Key: only then can its events change the members. */
static bool has_pkey(struct agent *agent, const char *id)
{
	struct vfp_allocation *a = NULL;
	bool yes;
	int r;

	r = agent_get_allocation(agent, id, &a, NULL, 0);
	yes = r < 0 || vfp_allocation_get_settings(a)->pkey >= 0; /* not known: look */
	vfp_allocation_unref(a);
	return yes;
}

/*
 * After an allocation event: a "partitions" event when the members are not
 * what they were ({"members": N}), so a gatherer following the events writes
 * partitions.conf again only then. An allocation without a key costs one
 * look at its row, not the list.
 */
static void members_changed(void *userdata, const char *id)
{
	struct agent *agent = userdata;
	json_t *o = NULL;
	char *text;
	bool changed;

	if (!has_pkey(agent, id))
		return;
	if (agent_partitions_json(agent, &o) < 0) {
		log_warning("partitions: cannot list the members");
		return;
	}
	text = json_dumps(json_object_get(o, "members"), JSON_COMPACT);
	pthread_mutex_lock(&watch_lock);
	changed = text && (!watch_last || strcmp(text, watch_last) != 0);
	if (changed) {
		free(watch_last);
		watch_last = text;
		text = NULL;
	}
	pthread_mutex_unlock(&watch_lock);
	if (changed)
		events_emit(agent->events, "partitions",
			    json_pack("{s:I}", "members",
				      (json_int_t)json_array_size(json_object_get(o, "members"))));
	free(text);
	json_decref(o);
}

/* Events when this host's members change; the members at start are the first look. */
void agent_partitions_watch(struct agent *agent)
{
	json_t *o = NULL;

	if (agent_partitions_json(agent, &o) >= 0) {
		pthread_mutex_lock(&watch_lock);
		free(watch_last);
		watch_last = json_dumps(json_object_get(o, "members"), JSON_COMPACT);
		pthread_mutex_unlock(&watch_lock);
		json_decref(o);
	}
	events_on_allocation(agent->events, members_changed, agent);
}

/* VF @v of @a (attached, with a P_Key) mapped now if its mapping was pending. */
static void retry_vf(struct agent *agent, const struct vfp_allocation *a,
		     const struct vfp_allocation_vf *v)
{
	int pkey = vfp_allocation_get_settings(a)->pkey;
	struct vfp_restore_point *rp;
	struct vf_facts f;
	char err[AGENT_ERR_SIZE] = "";

	if (v->state != VFP_VF_ATTACHED || vf_facts_read(agent, v->pci, &f) < 0 ||
	    strcmp(f.pf_driver, "mlx4_core") != 0 ||
	    strcmp(pf_side_partition_state(agent, v->pci, pkey), "pending") != 0)
		return;
	pthread_mutex_lock(pf_side_lock(v));
	rp = restore_point_load(agent, v->pci);
	if (rp && pf_side_map_partition(agent, &f, pkey, rp, err, sizeof(err)) < 0)
		log_error("allocation %s: %s", vfp_allocation_get_id(a), err);
	else if (rp && strcmp(pf_side_partition_state(agent, v->pci, pkey), "applied") == 0)
		log_info("allocation %s: VF %s on partition 0x%04x now", vfp_allocation_get_id(a),
			 v->pci, (unsigned)pkey);
	pthread_mutex_unlock(pf_side_lock(v));
	vfp_restore_point_free(rp);
}

/**
 * agent_partitions_retry() - mlx4 VFs attached before the subnet manager put
 * their tenant's key on the port: mapped now if it is there (each minute and
 * on SIGHUP)
 */
void agent_partitions_retry(struct agent *agent)
{
	struct vfp_allocation **list = NULL;
	size_t n = 0;
	int r;

	r = ledger_list_allocations(agent, NULL, false, &list, &n, NULL, 0);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (vfp_allocation_get_settings(list[i])->pkey < 0 ||
		    vfp_allocation_get_state(list[i]) != VFP_ALLOCATION_ATTACHED)
			continue;
		for (size_t k = 0; k < vfp_allocation_get_vf_count(list[i]); k++)
			retry_vf(agent, list[i], vfp_allocation_get_vf(list[i], k));
	}
	vfp_allocation_list_free(list, n);
}
