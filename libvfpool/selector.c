/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pool selectors: parsing from the config, and matching a VF of the inventory. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"
#include "selector.h"
#include "sysfs.h"

void vfp_strv_clear(struct vfp_strv *v)
{
	vfp_strv_free(v->v, v->n);
	v->v = NULL;
	v->n = 0;
}

bool vfp_strv_contains(const struct vfp_strv *v, const char *s)
{
	if (!s)
		return false;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return true;
	return false;
}

static bool is_driver_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
	return true;
}

/* Parses "N" or "N-M" (N <= M <= 65535) at *s, advancing it. */
static int parse_range(const char **s, struct vfp_vf_range *ret)
{
	char *end;
	unsigned long lo, hi;

	if (**s < '0' || **s > '9')
		return -EINVAL;
	lo = strtoul(*s, &end, 10);
	hi = lo;
	if (*end == '-') {
		if (end[1] < '0' || end[1] > '9')
			return -EINVAL;
		hi = strtoul(end + 1, &end, 10);
	}
	if (lo > hi || hi > 65535)
		return -EINVAL;
	ret->lo = (unsigned)lo;
	ret->hi = (unsigned)hi;
	*s = end;
	return 0;
}

/**
 * vfp_pf_name_parse() - "ens2f0" or "ens2f0#0-3,6"
 *
 * The name must be a valid netdev name (1-15 characters, no '/', ':' or
 * blank); ranges are comma-separated, each N or N-M with N <= M.
 */
int vfp_pf_name_parse(const char *s, struct vfp_pf_name *ret)
{
	const char *hash = strchr(s, '#');
	size_t len = hash ? (size_t)(hash - s) : strlen(s);
	struct vfp_pf_name p = { 0 };

	if (len == 0 || len > 15)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '/' || s[i] == ':')
			return -EINVAL;
	if (hash) {
		const char *q = hash + 1;

		do {
			struct vfp_vf_range *n = realloc(p.ranges, (p.n_ranges + 1) * sizeof(*n));

			if (!n) {
				free(p.ranges);
				return -ENOMEM;
			}
			p.ranges = n;
			if (parse_range(&q, &p.ranges[p.n_ranges++]) < 0 || (*q && *q != ',')) {
				free(p.ranges);
				return -EINVAL;
			}
		} while (*q++ == ',');
	}
	p.name = strndup(s, len);
	if (!p.name) {
		free(p.ranges);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

typedef int (*item_parser)(json_t *item, const char *path, struct vfp_selector *s,
			   char **ret_error);

static int add_string(struct vfp_strv *v, const char *s)
{
	char **n = realloc(v->v, (v->n + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	v->v = n;
	v->v[v->n] = strdup(s);
	if (!v->v[v->n])
		return -ENOMEM;
	v->n++;
	return 0;
}

static int string_item(json_t *item, const char *path, bool (*valid)(const char *),
		       const char *what, struct vfp_strv *out, char **ret_error)
{
	const char *s = json_string_value(item);

	if (!s)
		return vfp_config_error(ret_error, path, "must be a string (%s)", what);
	if (!valid(s))
		return vfp_config_error(ret_error, path, "bad %s \"%s\"", what, s);
	return add_string(out, s);
}

static int vendor_item(json_t *item, const char *path, struct vfp_selector *s, char **err)
{
	return string_item(item, path, vfp_pci_id_is_valid, "PCI vendor id (4 lower-case hex digits)",
			   &s->vendors, err);
}

static int device_item(json_t *item, const char *path, struct vfp_selector *s, char **err)
{
	return string_item(item, path, vfp_pci_id_is_valid, "PCI device id (4 lower-case hex digits)",
			   &s->devices, err);
}

static int driver_item(json_t *item, const char *path, struct vfp_selector *s, char **err)
{
	return string_item(item, path, is_driver_name, "driver name", &s->drivers, err);
}

static int pci_item(json_t *item, const char *path, struct vfp_selector *s, char **err)
{
	return string_item(item, path, vfp_pci_addr_is_valid, "PCI address (dddd:bb:ss.f)",
			   &s->pci_addresses, err);
}

static int pf_name_item(json_t *item, const char *path, struct vfp_selector *s, char **err)
{
	const char *str = json_string_value(item);
	struct vfp_pf_name *n;
	int r;

	if (!str)
		return vfp_config_error(err, path, "must be a string (PF netdev[#VF ranges])");
	n = realloc(s->pf_names, (s->n_pf_names + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->pf_names = n;
	r = vfp_pf_name_parse(str, &s->pf_names[s->n_pf_names]);
	if (r == -EINVAL)
		return vfp_config_error(err, path, "bad VF range \"%s\"", str);
	if (r < 0)
		return r;
	s->n_pf_names++;
	return 0;
}

static int link_type_item(json_t *item, const char *path, struct vfp_selector *s, char **err)
{
	const char *str = json_string_value(item);
	int t, *n;

	if (str && strcmp(str, "ethernet") == 0)
		t = VFP_LINK_ETHERNET;
	else if (str && strcmp(str, "infiniband") == 0)
		t = VFP_LINK_INFINIBAND;
	else
		return vfp_config_error(err, path, "must be \"ethernet\" or \"infiniband\"");
	n = realloc(s->link_types, (s->n_link_types + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->link_types = n;
	s->link_types[s->n_link_types++] = t;
	return 0;
}

static int numa_item(json_t *item, const char *path, struct vfp_selector *s, char **err)
{
	json_int_t v;
	int *n;

	if (!json_is_integer(item))
		return vfp_config_error(err, path, "must be an integer NUMA node");
	v = json_integer_value(item);
	if (v < -1 || v > 4095)
		return vfp_config_error(err, path, "NUMA node %" JSON_INTEGER_FORMAT
					" out of range [-1, 4095]", v);
	n = realloc(s->numa_nodes, (s->n_numa_nodes + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->numa_nodes = n;
	s->numa_nodes[s->n_numa_nodes++] = (int)v;
	return 0;
}

static const struct {
	const char *key;
	item_parser parse;
} list_fields[] = {
	{ "vendors", vendor_item },	    { "devices", device_item },
	{ "drivers", driver_item },	    { "pf_names", pf_name_item },
	{ "pci_addresses", pci_item },	    { "link_types", link_type_item },
	{ "numa_nodes", numa_item },
};

static int parse_list(json_t *a, const char *path, item_parser parse, struct vfp_selector *s,
		      char **ret_error)
{
	char ipath[300];
	size_t i;
	json_t *item;
	int r;

	if (!json_is_array(a))
		return vfp_config_error(ret_error, path, "must be a list");
	if (json_array_size(a) == 0)
		return vfp_config_error(ret_error, path, "empty list matches nothing");
	json_array_foreach(a, i, item) {
		snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
		r = parse(item, ipath, s, ret_error);
		if (r < 0)
			return r;
	}
	return 0;
}

/**
 * vfp_selector_parse() - a selector object at config path @path
 *
 * Every key is checked; an empty selector is refused (it would take every
 * VF of the host, the host's own among them).
 */
int vfp_selector_parse(json_t *o, const char *path, struct vfp_selector *ret, char **ret_error)
{
	static const char *const keys[] = { "vendors",	  "devices",	   "drivers",
					    "pf_names",	  "pci_addresses", "link_types",
					    "numa_nodes", "is_rdma",	   NULL };
	struct vfp_selector s = { .is_rdma = -1 };
	char fpath[256];
	json_t *v;
	int r;

	if (!json_is_object(o))
		return vfp_config_error(ret_error, path, "must be an object");
	r = vfp_json_check_keys(o, path, keys, ret_error);
	if (r < 0)
		return r;
	if (json_object_size(o) == 0)
		return vfp_config_error(ret_error, path, "empty selector would take every VF");
	for (size_t i = 0; i < ELEMENTSOF(list_fields); i++) {
		v = json_object_get(o, list_fields[i].key);
		if (!v)
			continue;
		snprintf(fpath, sizeof(fpath), "%s.%s", path, list_fields[i].key);
		r = parse_list(v, fpath, list_fields[i].parse, &s, ret_error);
		if (r < 0) {
			vfp_selector_clear(&s);
			return r;
		}
	}
	v = json_object_get(o, "is_rdma");
	if (v && !json_is_boolean(v)) {
		vfp_selector_clear(&s);
		return vfp_config_error(ret_error, path, "is_rdma: must be true or false");
	}
	if (v)
		s.is_rdma = json_is_true(v);
	*ret = s;
	return 0;
}

void vfp_selector_clear(struct vfp_selector *s)
{
	vfp_strv_clear(&s->vendors);
	vfp_strv_clear(&s->devices);
	vfp_strv_clear(&s->drivers);
	vfp_strv_clear(&s->pci_addresses);
	for (size_t i = 0; i < s->n_pf_names; i++) {
		free(s->pf_names[i].name);
		free(s->pf_names[i].ranges);
	}
	free(s->pf_names);
	free(s->link_types);
	free(s->numa_nodes);
	memset(s, 0, sizeof(*s));
	s->is_rdma = -1;
}

static bool pf_name_match(const struct vfp_selector *s, const struct vfp_vf *vf)
{
	const char *pf_netdev = vfp_pf_get_netdev(vfp_vf_get_pf(vf));
	unsigned idx = vfp_vf_get_index(vf);

	if (!pf_netdev)
		return false;
	for (size_t i = 0; i < s->n_pf_names; i++) {
		const struct vfp_pf_name *p = &s->pf_names[i];

		if (strcmp(p->name, pf_netdev) != 0)
			continue;
		if (!p->ranges)
			return true;
		for (size_t j = 0; j < p->n_ranges; j++)
			if (idx >= p->ranges[j].lo && idx <= p->ranges[j].hi)
				return true;
	}
	return false;
}

static bool int_in(const int *v, size_t n, int x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/*
 * Does @vf match? A VF counts as RDMA when it has an RDMA device or its PF
 * does: a VF bound to vfio-pci has none on the host but brings one to the guest.
 */
bool vfp_selector_match(const struct vfp_selector *s, const struct vfp_vf *vf)
{
	const struct vfp_pf *pf = vfp_vf_get_pf(vf);
	int node;

	if (s->vendors.n && !vfp_strv_contains(&s->vendors, vfp_vf_get_vendor(vf)))
		return false;
	if (s->devices.n && !vfp_strv_contains(&s->devices, vfp_vf_get_device(vf)))
		return false;
	if (s->drivers.n && !vfp_strv_contains(&s->drivers, vfp_vf_get_driver(vf)))
		return false;
	if (s->pci_addresses.n && !vfp_strv_contains(&s->pci_addresses, vfp_vf_get_pci(vf)))
		return false;
	if (s->n_pf_names && !pf_name_match(s, vf))
		return false;
	if (s->n_link_types &&
	    !int_in(s->link_types, s->n_link_types, (int)vfp_vf_get_link_type(vf)))
		return false;
	if (s->n_numa_nodes &&
	    (vfp_vf_get_numa_node(vf, &node) < 0 || !int_in(s->numa_nodes, s->n_numa_nodes, node)))
		return false;
	if (s->is_rdma >= 0 &&
	    (s->is_rdma == 1) != (vfp_vf_get_rdma_device(vf) || vfp_pf_get_rdma_device(pf)))
		return false;
	return true;
}
