/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who holds what: allocations listed and shown with their owner and where
 * each VF is, and the owner/place of every held VF for `vfctl list`.
 */
#include "config.h"

#include <stdio.h>
#include <errno.h>
#include <string.h>

#include "agent/vfctl/vfctl-curl.h"
#include "agent/vfctl/vfctl.h"

/* "vm:one-42", "netns:c1", "pid:1234": the owner as `--owner` takes it. */
void vfctl_owner_text(json_t *owner, char *buf, size_t size)
{
	json_t *name = json_object_get(owner, "name"), *netns = json_object_get(owner, "netns");

	if (json_is_string(name))
		snprintf(buf, size, "vm:%s", json_string_value(name));
	else if (json_is_string(netns))
		snprintf(buf, size, "netns:%s", json_string_value(netns));
	else if (json_is_integer(json_object_get(owner, "pid")))
		snprintf(buf, size, "pid:%" JSON_INTEGER_FORMAT,
			 json_integer_value(json_object_get(owner, "pid")));
	else
		snprintf(buf, size, "-");
}

/* "one-42" for a domain, "c1:net1" for a namespace, "-" when not attached. */
void vfctl_where_text(json_t *where, char *buf, size_t size)
{
	json_t *netns = json_object_get(where, "netns"), *ifname = json_object_get(where, "ifname");
	json_t *domain = json_object_get(where, "domain"), *uuid = json_object_get(where, "uuid");

	if (json_is_string(netns))
		snprintf(buf, size, "%s:%s", json_string_value(netns),
			 json_is_string(ifname) ? json_string_value(ifname) : "?");
	else if (json_is_string(domain) || json_is_string(uuid))
		snprintf(buf, size, "%s",
			 json_string_value(json_is_string(domain) ? domain : uuid));
	else
		snprintf(buf, size, "-");
}

/* The query string of `vfctl allocations`, each value escaped. */
static void query(const struct vfctl_curl *cu, char *buf, size_t size, const char *pool,
		  const char *state, const char *owner)
{
	const char *keys[] = { "pool", "state", "owner" }, *values[] = { pool, state, owner };
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < 3 && len < size; i++) {
		char *v = values[i] ? cu->easy_escape(NULL, values[i], 0) : NULL;

		if (v)
			len += (size_t)snprintf(buf + len, size - len, "%c%s=%s", len ? '&' : '?',
						keys[i], v);
		cu->free(v);
	}
}

/**
 * vfctl_get_allocations() - GET /v1/allocations with these filters (NULL:
 * any); the answer in *@ret
 */
int vfctl_get_allocations(const struct vfctl_http *h, const char *pool, const char *state,
			  const char *owner, json_t **ret)
{
	const struct vfctl_curl *cu = vfctl_curl();
	char path[512], q[400];

	if (!cu)
		return -ENOPKG;
	query(cu, q, sizeof(q), pool, state, owner);
	snprintf(path, sizeof(path), "/v1/allocations%s", q);
	return vfctl_request(h, "GET", path, NULL, NULL, ret);
}

/* One line per allocation: id, pool, state, owner, and its VFs with where each is. */
void vfctl_print_allocations(FILE *out, json_t *list)
{
	size_t i, j;
	json_t *a, *vf;

	fprintf(out, "%-36s %-8s %-9s %-20s %s\n", "ID", "POOL", "STATE", "OWNER", "VFS");
	json_array_foreach(list, i, a) {
		char owner[96], vfs[512] = "";
		size_t len = 0;

		vfctl_owner_text(json_object_get(a, "owner"), owner, sizeof(owner));
		json_array_foreach(json_object_get(a, "vfs"), j, vf) {
			char where[96];

			vfctl_where_text(json_object_get(vf, "where"), where, sizeof(where));
			if (len < sizeof(vfs))
				len += (size_t)snprintf(vfs + len, sizeof(vfs) - len, "%s%s%s%s",
							j ? " " : "",
							json_string_value(json_object_get(vf, "pci")),
							strcmp(where, "-") ? "@" : "",
							strcmp(where, "-") ? where : "");
		}
		fprintf(out, "%-36s %-8s %-9s %-20s %s\n",
			json_string_value(json_object_get(a, "id")),
			json_string_value(json_object_get(a, "pool")),
			json_string_value(json_object_get(a, "state")), owner, vfs);
	}
	if (json_array_size(list) == 0)
		fprintf(out, "(no allocations)\n");
}

/**
 * vfctl_holders() - {PCI: {"owner": "vm:one-42", "where": "one-42"}} for
 * every VF a live allocation holds; NULL when the agent cannot say
 */
json_t *vfctl_holders(const struct vfctl_http *h)
{
	json_t *o = NULL, *map = json_object(), *a, *vf;
	size_t i, j;

	if (!map || vfctl_get_allocations(h, NULL, NULL, NULL, &o) < 0) {
		json_decref(map);
		return NULL;
	}
	json_array_foreach(json_object_get(o, "allocations"), i, a) {
		char owner[96], where[96];

		vfctl_owner_text(json_object_get(a, "owner"), owner, sizeof(owner));
		json_array_foreach(json_object_get(a, "vfs"), j, vf) {
			vfctl_where_text(json_object_get(vf, "where"), where, sizeof(where));
			json_object_set_new(map, json_string_value(json_object_get(vf, "pci")),
					    json_pack("{s:s, s:s}", "owner", owner, "where", where));
		}
	}
	json_decref(o);
	return map;
}
