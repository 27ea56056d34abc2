/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The config's "numvfs": the VF count each PF should have, so VFs come back
 * after a reboot (the kernel starts every PF at 0). A list of rules, the
 * first that matches a PF wins:
 *   "numvfs": [ { "pf": "0000:3b:00.0", "numvfs": 8 },
 *               { "pf": "ens2f0", "numvfs": "max" },
 *               { "vendor": "15b3", "device": "101b", "numvfs": 16 } ]
 * The file is the operator's: it is read, never written. `vfctl numvfs PF N
 * --persist` keeps its count in the agent's state (the ledger), and the
 * agent puts those first (vfp_config_add_persisted_numvfs()).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-numvfs.h"
#include "private.h"

static bool is_ifname(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 16 && !strpbrk(s, "/: \t\n") && strcmp(s, ".") && strcmp(s, "..");
}

static int rule_string(json_t *o, const char *path, const char *key, bool (*valid)(const char *),
		       const char *what, char **ret, char **err)
{
	json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);

	if (!v)
		return 0;
	if (!s || !valid(s))
		return vfp_config_error(err, path, "%s: must be %s", key, what);
	*ret = strdup(s);
	return *ret ? 1 : -ENOMEM;
}

static bool is_pf_name(const char *s)
{
	return vfp_pci_addr_is_valid(s) || is_ifname(s);
}

/* as before: a driver name no longer than a netdev name */
static bool is_driver(const char *s)
{
	return is_ifname(s) && vfp_driver_name_is_valid(s);
}

static int rule_count(json_t *o, const char *path, int *ret, char **err)
{
	json_t *v = json_object_get(o, "numvfs");

	if (json_is_string(v) && strcmp(json_string_value(v), "max") == 0) {
		*ret = VFP_NUMVFS_MAX;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 65535)
		return vfp_config_error(err, path, "numvfs: %s", v ? "must be 0-65535 or \"max\""
								 : "missing");
	*ret = (int)json_integer_value(v);
	return 0;
}

static int parse_rule(json_t *o, const char *path, struct vfp_numvfs_rule *r, char **err)
{
	static const char *const keys[] = { "pf", "vendor", "device", "driver", "numvfs", NULL };
	int given = 0, k;

	if (!json_is_object(o))
		return vfp_config_error(err, path, "must be an object like {\"pf\": \"0000:3b:00.0\", "
					"\"numvfs\": 8}");
	k = vfp_json_check_keys(o, path, keys, err);
	if (k >= 0 && (k = rule_string(o, path, "pf", is_pf_name,
				       "a PCI address or a netdev name", &r->pf, err)) > 0)
		given++;
	if (k >= 0 && (k = rule_string(o, path, "vendor", vfp_pci_id_is_valid, "4 lower-case hex digits",
				       &r->vendor, err)) > 0)
		given++;
	if (k >= 0 && (k = rule_string(o, path, "device", vfp_pci_id_is_valid, "4 lower-case hex digits",
				       &r->device, err)) > 0)
		given++;
	if (k >= 0 && (k = rule_string(o, path, "driver", is_driver, "a driver name", &r->driver,
				       err)) > 0)
		given++;
	if (k < 0)
		return k;
	if (!given)
		return vfp_config_error(err, path, "names no PF: give pf, vendor, device or driver");
	return rule_count(o, path, &r->numvfs, err);
}

int vfp_numvfs_rules_parse(json_t *a, struct vfp_numvfs_rules *ret, char **err)
{
	char path[64];
	size_t i;
	json_t *o;
	int r;

	if (!json_is_array(a))
		return vfp_config_error(err, "numvfs", "must be a list of {\"pf\": …, \"numvfs\": N}");
	ret->v = calloc(json_array_size(a) + 1, sizeof(*ret->v));
	if (!ret->v)
		return -ENOMEM;
	json_array_foreach(a, i, o) {
		snprintf(path, sizeof(path), "numvfs[%zu]", i);
		r = parse_rule(o, path, &ret->v[ret->n++], err);
		if (r < 0)
			return r;
	}
	return 0;
}

void vfp_numvfs_rules_clear(struct vfp_numvfs_rules *rules)
{
	for (size_t i = 0; i < rules->n; i++) {
		free(rules->v[i].pf);
		free(rules->v[i].vendor);
		free(rules->v[i].device);
		free(rules->v[i].driver);
	}
	free(rules->v);
	*rules = (struct vfp_numvfs_rules){ 0 };
}

static bool field_matches(const char *want, const char *have)
{
	return !want || (have && strcmp(want, have) == 0);
}

static bool rule_matches(const struct vfp_numvfs_rule *r, const struct vfp_pf *pf)
{
	const char *netdev = vfp_pf_get_netdev(pf);

	if (r->pf && strcmp(r->pf, vfp_pf_get_pci(pf)) != 0 &&
	    !(netdev && strcmp(r->pf, netdev) == 0))
		return false;
	return field_matches(r->vendor, vfp_pf_get_vendor(pf)) &&
	       field_matches(r->device, vfp_pf_get_device(pf)) &&
	       field_matches(r->driver, vfp_pf_get_driver(pf));
}

/* The count the first matching rule wants ("max" is the PF's totalvfs); -ENOENT for none. */
int vfp_numvfs_rules_desired(const struct vfp_numvfs_rules *rules, const struct vfp_pf *pf)
{
	int total = 0;

	for (size_t i = 0; i < rules->n; i++) {
		if (!rule_matches(&rules->v[i], pf))
			continue;
		if (rules->v[i].numvfs != VFP_NUMVFS_MAX)
			return rules->v[i].numvfs;
		return vfp_pf_get_totalvfs(pf, &total) < 0 ? -ENOENT : total;
	}
	return -ENOENT;
}

/* {"pf": @pf, "numvfs": @numvfs} first in @rules, replacing a rule of @pf alone. */
int vfp_numvfs_rules_put_first(struct vfp_numvfs_rules *rules, const char *pf, int numvfs)
{
	struct vfp_numvfs_rule *v;
	char *name = strdup(pf);
	size_t keep = 0;

	v = name ? calloc(rules->n + 2, sizeof(*v)) : NULL;
	if (!v) {
		free(name);
		return -ENOMEM;
	}
	v[keep++] = (struct vfp_numvfs_rule){ .pf = name, .numvfs = numvfs };
	for (size_t i = 0; i < rules->n; i++) {
		struct vfp_numvfs_rule *r = &rules->v[i];

		if (r->pf && !r->vendor && !r->device && !r->driver && strcmp(r->pf, pf) == 0)
			free(r->pf);
		else
			v[keep++] = *r;
	}
	free(rules->v);
	rules->v = v;
	rules->n = keep;
	return 0;
}
