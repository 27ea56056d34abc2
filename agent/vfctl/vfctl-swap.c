/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfctl swap ID [--vf PCI] [--pf PF]: a running guest's failover NIC moved
 * to another VF; vfctl drain PF: every failover NIC off a PF, and the
 * allocations that cannot move, each with why (exit 1 when there is one).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vfctl/vfctl.h"

/* POST …/swap; the answer (the allocation) into *@ret; a 409's message into @why. */
static int post_swap(const struct vfctl_http *h, const char *id, const char *vf, const char *pf,
		     json_t **ret, char *why, size_t why_size)
{
	json_t *body = json_object(), *answer = NULL;
	char path[128];
	int r;

	if (vf)
		json_object_set_new(body, "vf", json_string(vf));
	if (pf)
		json_object_set_new(body, "pf", json_string(pf));
	snprintf(path, sizeof(path), "/v1/allocations/%s/swap", id);
	r = vfctl_request(h, "POST", path, body, NULL, &answer);
	json_decref(body);
	if (r < 0)
		snprintf(why, why_size, "%s",
			 json_string_value(json_object_get(answer, "message")) ?: "refused (above)");
	if (r < 0)
		json_decref(answer);
	else
		*ret = answer;
	return r;
}

/* The allocation's VF in position of @old's: the new one. */
static const char *vf_in_place(json_t *alloc, size_t i)
{
	return json_string_value(json_object_get(json_array_get(json_object_get(alloc, "vfs"), i),
						 "pci"));
}

int vfctl_swap(const struct vfctl_http *h, const char *id, const char *vf, const char *pf,
	       bool json)
{
	json_t *a = NULL;
	char why[512];

	if (post_swap(h, id, vf, pf, &a, why, sizeof(why)) < 0)
		return -EIO;
	if (json) {
		char *s = json_dumps(a, JSON_INDENT(2));

		printf("%s\n", s ? s : "");
		free(s);
	} else {
		vfctl_print_allocation(stdout, a);
	}
	json_decref(a);
	return 0;
}

/* One VF of an allocation on the drained PF: moved, or why not. */
static bool drain_one(const struct vfctl_http *h, json_t *alloc, size_t i, json_t *out)
{
	const char *id = json_string_value(json_object_get(alloc, "id"));
	const char *pci = vf_in_place(alloc, i);
	const char *state = json_string_value(json_object_get(alloc, "state"));
	json_t *moved = NULL;
	char why[512] = "";

	if (!json_is_string(json_object_get(json_object_get(alloc, "owner"), "name")))
		snprintf(why, sizeof(why), "a container's: a namespace has no standby");
	else if (!state || strcmp(state, "attached") != 0)
		snprintf(why, sizeof(why), "%s, not in a guest: release it or let it be",
			 state ? state : "?");
	else if (post_swap(h, id, pci, NULL, &moved, why, sizeof(why)) >= 0)
		json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "allocation", id, "from",
						     pci, "to", vf_in_place(moved, i) ?: "?"));
	if (why[0])
		json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "allocation", id, "vf", pci,
						     "cannot_move", why));
	json_decref(moved);
	return !why[0];
}

/* Every allocation's VF on @pf moved off it; the report into @out, false when one stays. */
static bool drain(const struct vfctl_http *h, json_t *list, const char *pf, json_t *out)
{
	bool all = true;
	size_t i, j;
	json_t *a, *vf;

	json_array_foreach(list, i, a) {
		json_array_foreach(json_object_get(a, "vfs"), j, vf) {
			const char *on = json_string_value(json_object_get(vf, "pf"));

			if (on && strcmp(on, pf) == 0 && !drain_one(h, a, j, out))
				all = false;
		}
	}
	return all;
}

int vfctl_drain(const struct vfctl_http *h, const char *pf, bool json)
{
	json_t *list = NULL, *out = json_array();
	bool all;
	size_t i;
	json_t *e;

	if (vfctl_get_allocations(h, NULL, NULL, NULL, &list) < 0) {
		json_decref(out);
		return -EIO;
	}
	all = drain(h, json_object_get(list, "allocations"), pf, out);
	if (json) {
		char *s = json_dumps(out, JSON_INDENT(2));

		printf("%s\n", s ? s : "[]");
		free(s);
	}
	json_array_foreach(out, i, e) {
		if (json)
			break;
		if (json_object_get(e, "to"))
			printf("%s %s -> %s\n", json_string_value(json_object_get(e, "allocation")),
			       json_string_value(json_object_get(e, "from")),
			       json_string_value(json_object_get(e, "to")));
		else
			printf("%s %s cannot move: %s\n",
			       json_string_value(json_object_get(e, "allocation")),
			       json_string_value(json_object_get(e, "vf")),
			       json_string_value(json_object_get(e, "cannot_move")));
	}
	if (!json && json_array_size(out) == 0)
		printf("no allocation holds a VF of %s\n", pf);
	json_decref(list);
	json_decref(out);
	return all ? 0 : -EBUSY;
}
