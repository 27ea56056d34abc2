/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The routing table: every endpoint of the API, one line each. Path
 * parameters are validated here, before any handler (or path) sees them:
 * {pci} must be a PCI address in sysfs form, {id} an allocation id.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "api/api.h"

static const char *const vfs_query[] = { "pool", "state", "pf", NULL };
static const char *const allocations_query[] = { "pool", "state", "owner", "include_released",
						 NULL };
static const char *const domain_xml_query[] = { "owner", "ip", "vlan", "spoofchk", "trust", "pkey",
						 "security_groups", NULL };

const struct api_route api_routes[] = {
	{ "GET", "/v1/host", api_get_host, NULL },
	{ "GET", "/v1/host/checks", api_get_host_checks, NULL },
	{ "GET", "/v1/health", api_get_health, NULL },
	{ "GET", "/metrics", api_get_metrics, NULL },
	{ "GET", "/v1/pfs", api_list_pfs, NULL },
	{ "GET", "/v1/pfs/{pci}", api_get_pf, NULL },
	{ "PUT", "/v1/pfs/{pci}/numvfs", api_put_numvfs, NULL },
	{ "DELETE", "/v1/pfs/{pci}/numvfs", api_forget_numvfs, NULL },
	{ "GET", "/v1/vfs", api_list_vfs, vfs_query },
	{ "GET", "/v1/vfs/{pci}", api_get_vf, NULL },
	{ "POST", "/v1/vfs/{pci}/repair", api_repair_vf, NULL },
	{ "GET", "/v1/pools", api_list_pools, NULL },
	{ "GET", "/v1/pcie", api_get_pcie, NULL },
	{ "POST", "/v1/allocations", api_post_allocation, NULL },
	{ "GET", "/v1/allocations", api_list_allocations, allocations_query },
	{ "GET", "/v1/allocations/{id}", api_get_allocation, NULL },
	{ "DELETE", "/v1/allocations/{id}", api_delete_allocation, NULL },
	{ "PATCH", "/v1/allocations/{id}", api_patch_allocation, NULL },
	{ "POST", "/v1/allocations/{id}/attach", api_attach, NULL },
	{ "POST", "/v1/allocations/{id}/detach", api_detach, NULL },
	{ "POST", "/v1/allocations/{id}/swap", api_swap, NULL },
	{ "POST", "/v1/allocations/{id}/hold", api_hold, NULL },
	{ "GET", "/v1/partitions", api_list_partitions, NULL },
	{ "POST", "/v1/domain-xml", api_domain_xml, domain_xml_query },
	{ "GET", "/v1/events", api_get_events, NULL },
};
const size_t api_n_routes = sizeof(api_routes) / sizeof(api_routes[0]);

/* Allocation ids are what the ledger makes: a UUID in lower-case hex. */
static bool is_allocation_id(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

/*
 * Matches @path against @pattern segment by segment; parameters are copied
 * into @buf and pointed to from @params. 1: match; 0: no match; -1: the
 * shape matches but a parameter is invalid (the message is in @error).
 */
static int match(const char *pattern, const char *path, const char **params, char *buf,
		 size_t size, char *error, size_t error_size)
{
	size_t used = 0, np = 0;

	while (*pattern && *path) {
		size_t pl = strcspn(pattern + 1, "/") + 1, sl = strcspn(path + 1, "/") + 1;

		if (pattern[0] != '/' || path[0] != '/')
			return 0;
		if (pattern[1] == '{') {
			char *value = buf + used;

			if (sl == 1 || used + sl > size || np == API_MAX_PARAMS)
				return 0;
			memcpy(value, path + 1, sl - 1);
			value[sl - 1] = '\0';
			used += sl;
			if (strncmp(pattern, "/{pci}", pl) == 0 && !vfp_pci_addr_is_valid(value)) {
				snprintf(error, error_size, "pci: \"%.64s\" is not a PCI address "
							    "(dddd:bb:ss.f, lower-case hex)", value);
				return -1;
			}
			if (strncmp(pattern, "/{id}", pl) == 0 && !is_allocation_id(value)) {
				snprintf(error, error_size, "id: \"%.64s\" is not an allocation id",
					 value);
				return -1;
			}
			params[np++] = value;
		} else if (pl != sl || strncmp(pattern, path, pl) != 0) {
			return 0;
		}
		pattern += pl;
		path += sl;
	}
	return *pattern == '\0' && *path == '\0';
}

/**
 * api_route_match() - the route for @method and @path
 * @ret_path_known: set when some route has this path (so a miss is 405, not 404)
 *
 * NULL with @error set when a path parameter is invalid (400).
 */
const struct api_route *api_route_match(const char *method, const char *path,
					const char **params, char *buf, size_t size,
					bool *ret_path_known, char *error, size_t error_size)
{
	*ret_path_known = false;
	error[0] = '\0';
	for (size_t i = 0; i < api_n_routes; i++) {
		int m = match(api_routes[i].pattern, path, params, buf, size, error, error_size);

		if (m < 0)
			return NULL;
		if (m == 0)
			continue;
		*ret_path_known = true;
		if (strcmp(api_routes[i].method, method) == 0)
			return &api_routes[i];
	}
	return NULL;
}

/* The methods some route takes on @path, for a 405's Allow header: "GET, DELETE". */
void api_route_allow(const char *path, char *buf, size_t size)
{
	const char *params[API_MAX_PARAMS];
	char values[256], error[128];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < api_n_routes && len < size; i++)
		if (match(api_routes[i].pattern, path, params, values, sizeof(values), error,
			  sizeof(error)) > 0)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
						api_routes[i].method);
}

/* Whether @route takes the query parameter @key. */
bool api_route_takes(const struct api_route *route, const char *key)
{
	for (size_t i = 0; route->query && route->query[i]; i++)
		if (strcmp(route->query[i], key) == 0)
			return true;
	return false;
}
