/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfagent.json: pools and their selectors, excluded devices, SR-IOV
 * networks, the site's GUID range, the IPoIB dummy-MAC prefix. Parsing is
 * strict: a wrong type, a bad value or an unknown key is an error naming
 * its path ("pools[1].selector.pf_names[0]: bad VF range "ens2f0#5-2"").
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-numvfs.h"
#include "health.h"
#include "private.h"
#include "selector.h"

#define DEFAULT_IPOIB_PREFIX_0 0x02
#define DEFAULT_IPOIB_PREFIX_1 0x1b

struct pool_config {
	char *name;
	struct vfp_selector selector;
	json_t *selector_json; /* as written, for GET /v1/pools */
	unsigned grow_step;    /* 0: the pool never grows its PFs */
	bool no_reset;	       /* "reset": "none": VFs are not reset between tenants */
	bool vms_only, containers_only; /* "owners": ["vm"] or ["container"]: dedicated */
	struct vfp_health_policy health;
};

struct network_config {
	char *bridge, *network, *pool;
	struct vfp_failover failover; /* its NICs' standby; VFP_STANDBY_NONE: none */
	int pkey; /* its IB partition, VFP_UNSET for none */
};

struct vfp_config {
	int refcount;
	struct pool_config *pools;
	size_t n_pools;
	struct vfp_strv exclude;
	struct network_config *networks;
	size_t n_networks;
	bool has_guids;
	unsigned long long guid_first, guid_count;
	long long guid_quarantine; /* a released GUID goes to another owner after this */
	unsigned char ipoib_prefix[2];
	unsigned char one_prefix[2]; /* OpenNebula's MAC_PREFIX */
	char *socket_group;
	char *libvirt_uri;    /* NULL: the agent's default */
	bool libvirt_managed; /* libvirt binds VFs to vfio-pci (managed='yes') */
	int detach_wait;      /* seconds a detach waits for the guest after libvirt's own wait */
	int steer_hold;	      /* seconds a swap's steering outlives its plug */
	bool libvirt_off;     /* "libvirt": false: a host without VMs */
	struct vfp_retention retention;
	long long orphan_seconds; /* a reservation whose owner does not exist lasts this long */
	long long repair_retry;	  /* a quarantined VF is repaired again after this; 0: never */
	struct vfp_numvfs_rules numvfs;
};

static bool is_pool_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32 || *s == '-' || *s == '_')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '_'))
			return false;
	return true;
}

/* @key of @o into *@ret: an integer in [@min, @max]; when absent, an error if @required. */
static int int_field(json_t *o, const char *path, const char *key, bool required, long long min,
		     long long max, long long *ret, char **err)
{
	json_t *v = json_object_get(o, key);

	if (!v && !required)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return vfp_config_error(err, path, "%s: must be an integer in [%lld, %lld]", key, min,
					max);
	*ret = json_integer_value(v);
	return 0;
}

static int parse_grow(json_t *o, const char *path, unsigned *ret, char **err)
{
	static const char *const keys[] = { "step", NULL };
	long long step = 0;
	int r;

	if (!json_is_object(o))
		return vfp_config_error(err, path, "must be an object like {\"step\": 2}");
	r = vfp_json_check_keys(o, path, keys, err);
	if (r >= 0)
		r = int_field(o, path, "step", true, 1, 65535, &step, err);
	*ret = (unsigned)step;
	return r;
}

/* "reset": "flr" (the default: reset between tenants) or "none". */
static int parse_reset(json_t *v, const char *path, bool *ret_none, char **err)
{
	const char *s = json_string_value(v);
	char sub[256];

	*ret_none = false;
	if (!v)
		return 0;
	snprintf(sub, sizeof(sub), "%s.reset", path);
	if (!s || (strcmp(s, "flr") != 0 && strcmp(s, "none") != 0))
		return vfp_config_error(err, sub, "must be \"flr\" or \"none\"");
	*ret_none = strcmp(s, "none") == 0;
	return 0;
}

/* "owners": ["vm"], ["container"] or both (the default): who may claim the pool's VFs. */
static int parse_owners(json_t *v, const char *path, struct pool_config *p, char **err)
{
	char sub[288];
	bool vm = false, container = false;
	size_t i;
	json_t *e;

	snprintf(sub, sizeof(sub), "%s.owners", path);
	if (!json_is_array(v) || json_array_size(v) == 0)
		return vfp_config_error(err, sub, "must be a list of \"vm\" and/or \"container\"");
	json_array_foreach(v, i, e) {
		const char *s = json_string_value(e);

		snprintf(sub, sizeof(sub), "%s.owners[%zu]", path, i);
		if (s && strcmp(s, "vm") == 0)
			vm = true;
		else if (s && strcmp(s, "container") == 0)
			container = true;
		else
			return vfp_config_error(err, sub, "must be \"vm\" or \"container\"");
	}
	p->vms_only = vm && !container;
	p->containers_only = container && !vm;
	return 0;
}

static int parse_pool(struct vfp_config *c, json_t *o, const char *path, char **err)
{
	static const char *const keys[] = { "name", "selector", "grow", "reset", "health", "owners",
					    NULL };
	struct pool_config *p = &c->pools[c->n_pools];
	char sub[256];
	const char *name;
	int r;

	if (!json_is_object(o))
		return vfp_config_error(err, path, "must be an object with a name and a selector");
	r = vfp_json_check_keys(o, path, keys, err);
	if (r < 0)
		return r;
	name = json_string_value(json_object_get(o, "name"));
	snprintf(sub, sizeof(sub), "%s.name", path);
	if (!name)
		return vfp_config_error(err, sub, "missing or not a string");
	if (!is_pool_name(name))
		return vfp_config_error(err, sub, "bad pool name \"%s\" (a-z, 0-9, '-', '_', at most 32)",
					name);
	if (vfp_config_find_pool(c, name) >= 0)
		return vfp_config_error(err, sub, "duplicate pool \"%s\"", name);
	snprintf(sub, sizeof(sub), "%s.selector", path);
	if (!json_object_get(o, "selector"))
		return vfp_config_error(err, sub, "missing");
	r = vfp_selector_parse(json_object_get(o, "selector"), sub, &p->selector, err);
	if (r < 0)
		return r;
	r = parse_reset(json_object_get(o, "reset"), path, &p->no_reset, err);
	if (r >= 0 && json_object_get(o, "owners"))
		r = parse_owners(json_object_get(o, "owners"), path, p, err);
	snprintf(sub, sizeof(sub), "%s.health", path);
	if (r >= 0 && json_object_get(o, "health"))
		r = vfp_health_policy_parse(json_object_get(o, "health"), sub, &p->health, err);
	if (r < 0) {
		vfp_health_policy_clear(&p->health);
		vfp_selector_clear(&p->selector);
		return r;
	}
	p->selector_json = json_incref(json_object_get(o, "selector"));
	p->name = strdup(name);
	c->n_pools++; /* from here on, vfp_config_unref() frees it */
	if (!p->name)
		return -ENOMEM;
	snprintf(sub, sizeof(sub), "%s.grow", path);
	if (json_object_get(o, "grow"))
		return parse_grow(json_object_get(o, "grow"), sub, &p->grow_step, err);
	return 0;
}

static int parse_pools(struct vfp_config *c, json_t *a, char **err)
{
	char path[64];
	size_t i;
	json_t *o;
	int r = 0;

	if (!json_is_array(a))
		return vfp_config_error(err, "pools", "must be a list");
	c->pools = calloc(json_array_size(a) + 1, sizeof(*c->pools));
	if (!c->pools)
		return -ENOMEM;
	json_array_foreach(a, i, o) { /* every pool's errors, in one pass */
		char *e = NULL;
		int rp;


		snprintf(path, sizeof(path), "pools[%zu]", i);
		rp = parse_pool(c, o, path, err ? &e : NULL);
		r = vfp_config_errors_add(err, r, rp, e);
	}
	return r;
}

static int parse_exclude(struct vfp_config *c, json_t *a, char **err)
{
	char path[64];
	size_t i;
	json_t *v;

	if (!json_is_array(a))
		return vfp_config_error(err, "exclude", "must be a list of PCI addresses");
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);
		char **n;

		snprintf(path, sizeof(path), "exclude[%zu]", i);
		if (!s || !vfp_pci_addr_is_valid(s))
			return vfp_config_error(err, path, "bad PCI address %s%s%s (dddd:bb:ss.f)",
						s ? "\"" : "", s ? s : "(not a string)", s ? "\"" : "");
		n = realloc(c->exclude.v, (c->exclude.n + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->exclude.v = n;
		c->exclude.v[c->exclude.n] = strdup(s);
		if (!c->exclude.v[c->exclude.n])
			return -ENOMEM;
		c->exclude.n++;
	}
	return 0;
}

static int parse_network(struct vfp_config *c, json_t *o, const char *path, char **err)
{
	static const char *const keys[] = { "bridge", "network", "pool", "failover", "pkey",
					    "membership", NULL };
	struct network_config *n = &c->networks[c->n_networks];
	json_t *failover = json_object_get(o, "failover");
	const char *bridge, *network, *pool, *why;
	char sub[128];
	int r;

	if (!json_is_object(o))
		return vfp_config_error(err, path, "must be an object like "
						   "{\"bridge\": \"sriov_ib0\", \"pool\": \"ib\"}");
	r = vfp_json_check_keys(o, path, keys, err);
	if (r < 0)
		return r;
	bridge = json_string_value(json_object_get(o, "bridge"));
	network = json_string_value(json_object_get(o, "network"));
	pool = json_string_value(json_object_get(o, "pool"));
	if (!!bridge == !!network || (json_object_get(o, "bridge") && !bridge) ||
	    (json_object_get(o, "network") && !network))
		return vfp_config_error(err, path, "needs exactly one of \"bridge\" or \"network\" (a string)");
	snprintf(sub, sizeof(sub), "%s.pool", path);
	if (!pool)
		return vfp_config_error(err, sub, "missing or not a string");
	if (vfp_config_find_pool(c, pool) < 0)
		return vfp_config_error(err, sub, "no pool named \"%s\"", pool);
	snprintf(sub, sizeof(sub), "%s.failover", path);
	if (failover && (r = vfp_failover_from_json(failover, sub, &n->failover, err)) < 0)
		return r;
	if (vfp_pkey_from_json(json_object_get(o, "pkey"), json_object_get(o, "membership"),
			       &n->pkey, &why) < 0) {
		snprintf(sub, sizeof(sub), "%s.%.*s", path, (int)strcspn(why, ":"), why);
		return vfp_config_error(err, sub, "%s", why + strcspn(why, ":") + 2);
	}
	n->bridge = bridge ? strdup(bridge) : NULL;
	n->network = network ? strdup(network) : NULL;
	n->pool = strdup(pool);
	c->n_networks++;
	if (!n->pool || (bridge && !n->bridge) || (network && !n->network))
		return -ENOMEM;
	return 0;
}

static int parse_networks(struct vfp_config *c, json_t *a, char **err)
{
	char path[64];
	size_t i;
	json_t *o;
	int r = 0;

	if (!json_is_array(a))
		return vfp_config_error(err, "networks", "must be a list");
	c->networks = calloc(json_array_size(a) + 1, sizeof(*c->networks));
	if (!c->networks)
		return -ENOMEM;
	json_array_foreach(a, i, o) {
		char *e = NULL;
		int rn;


		snprintf(path, sizeof(path), "networks[%zu]", i);
		rn = parse_network(c, o, path, err ? &e : NULL);
		r = vfp_config_errors_add(err, r, rn, e);
	}
	return r;
}

/* "02:c9:03:00:00:00:00:01": eight lower- or upper-case hex bytes. */
VFP_EXPORT int vfp_guid_parse(const char *s, unsigned long long *ret)
{
	unsigned long long v = 0;

	if (!s || strlen(s) != 23)
		return -EINVAL;
	for (int i = 0; i < 8; i++) {
		const char *b = s + 3 * i;
		int hi = vfp_hex_digit(b[0]), lo = vfp_hex_digit(b[1]);

		if (hi < 0 || lo < 0 || (i < 7 && b[2] != ':'))
			return -EINVAL;
		v = v << 8 | (unsigned)(hi << 4 | lo);
	}
	*ret = v;
	return 0;
}

/* "02:aa:bb:cc:dd:01", exactly: six two-digit hex bytes; @mac is untouched on failure. */
VFP_EXPORT int vfp_mac_parse(const char *s, unsigned char mac[6])
{
	unsigned char m[6];

	for (int i = 0; i < 6; i++) {
		const char *b = s + 3 * i;
		int hi = vfp_hex_digit(b[0]), lo = hi < 0 ? -1 : vfp_hex_digit(b[1]);

		if (lo < 0 || b[2] != (i < 5 ? ':' : '\0'))
			return -EINVAL;
		m[i] = (unsigned char)(hi << 4 | lo);
	}
	memcpy(mac, m, sizeof(m));
	return 0;
}

/**
 * vfp_mac_parse_unicast() - a MAC a VF or a NIC may carry as its own
 *
 * The one check every way in uses (REST, deployment files, the hooks
 * through them): -EINVAL when @s is not a MAC, -EADDRNOTAVAIL when it is
 * multicast, broadcast or all zeros.
 */
VFP_EXPORT int vfp_mac_parse_unicast(const char *s, unsigned char mac[6])
{
	unsigned char m[6];

	if (vfp_mac_parse(s, m) < 0)
		return -EINVAL;
	if ((m[0] & 1) || !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]))
		return -EADDRNOTAVAIL;
	memcpy(mac, m, sizeof(m));
	return 0;
}

VFP_EXPORT void vfp_guid_format(unsigned long long g, char buf[static 24])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 8; i++) { /* "%02llx:" per byte, most significant first */
		unsigned byte = (unsigned)(g >> (56 - 8 * i)) & 0xff;

		buf[3 * i] = hex[byte >> 4];
		buf[3 * i + 1] = hex[byte & 0xf];
		buf[3 * i + 2] = i < 7 ? ':' : '\0';
	}
}

static int parse_guids(struct vfp_config *c, json_t *o, char **err)
{
	static const char *const keys[] = { "first", "count", "quarantine_seconds", NULL };
	json_t *count = json_object_get(o, "count"), *q = json_object_get(o, "quarantine_seconds");
	unsigned long long first, n, last;
	int r;

	if (!json_is_object(o))
		return vfp_config_error(err, "guids", "must be an object like "
						      "{\"first\": \"02:c9:03:00:00:00:00:01\", \"count\": 4096}");
	r = vfp_json_check_keys(o, "guids", keys, err);
	if (r < 0)
		return r;
	if (vfp_guid_parse(json_string_value(json_object_get(o, "first")), &first) < 0)
		return vfp_config_error(err, "guids.first", "must be a GUID like \"02:c9:03:00:00:00:00:01\"");
	if (!json_is_integer(count) || json_integer_value(count) < 1 ||
	    json_integer_value(count) > (1 << 24))
		return vfp_config_error(err, "guids.count", "must be an integer in [1, 16777216]");
	n = (unsigned long long)json_integer_value(count);
	last = first + n - 1;
	if (last < first)
		return vfp_config_error(err, "guids.count", "range from %s of %llu GUIDs overflows",
					json_string_value(json_object_get(o, "first")), n);
	if (first == 0)
		return vfp_config_error(err, "guids.first", "the range holds the all-zero GUID");
	if (last == ~0ULL)
		return vfp_config_error(err, "guids.count", "the range holds the all-F GUID");
	if (q && (!json_is_integer(q) || json_integer_value(q) < 0 ||
		  json_integer_value(q) > 7 * 86400))
		return vfp_config_error(err, "guids.quarantine_seconds",
					"must be an integer in [0, 604800]");
	c->guid_quarantine = q ? json_integer_value(q) : 3600;
	c->has_guids = true;
	c->guid_first = first;
	c->guid_count = n;
	return 0;
}

/* Two MAC bytes like "02:1b" from @v into @out; not multicast. */
static int parse_mac_prefix(json_t *v, const char *field, unsigned char out[2], char **err)
{
	const char *s = json_string_value(v);
	int b[4];

	if (!s || strlen(s) != 5 || s[2] != ':' || (b[0] = vfp_hex_digit(s[0])) < 0 ||
	    (b[1] = vfp_hex_digit(s[1])) < 0 || (b[2] = vfp_hex_digit(s[3])) < 0 ||
	    (b[3] = vfp_hex_digit(s[4])) < 0)
		return vfp_config_error(err, field, "must be two MAC bytes like \"02:1b\"");
	out[0] = (unsigned char)(b[0] << 4 | b[1]);
	out[1] = (unsigned char)(b[2] << 4 | b[3]);
	if (out[0] & 1)
		return vfp_config_error(err, field,
					"\"%s\" is a multicast MAC prefix; a NIC cannot carry it", s);
	return 0;
}

static int parse_one_prefix(struct vfp_config *c, json_t *v, char **err)
{
	return parse_mac_prefix(v, "opennebula_mac_prefix", c->one_prefix, err);
}

/* Parsed after opennebula_mac_prefix: the two must differ. */
static int parse_ipoib_prefix(struct vfp_config *c, json_t *v, char **err)
{
	int r = parse_mac_prefix(v, "ipoib_mac_prefix", c->ipoib_prefix, err);

	if (r >= 0 && !memcmp(c->ipoib_prefix, c->one_prefix, 2))
		return vfp_config_error(err, "ipoib_mac_prefix",
					"\"%s\" is OpenNebula's NIC MAC prefix "
					"(opennebula_mac_prefix); the guest would take real NICs "
					"for dummies", json_string_value(v));
	return r;
}

/* The group that may use the agent's unix socket: a POSIX group name. */
static int parse_socket_group(struct vfp_config *c, json_t *v, char **err)
{
	const char *s = json_string_value(v);
	size_t n = s ? strlen(s) : 0;

	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_' ||
		      (i > 0 && ((s[i] >= '0' && s[i] <= '9') || s[i] == '-'))))
			n = 0;
	if (n == 0 || n > 32)
		return vfp_config_error(err, "socket_group", "must be a group name like \"vfagent\"");
	c->socket_group = strdup(s);
	return c->socket_group ? 0 : -ENOMEM;
}

/*
 * {"uri": "qemu:///system", "managed": true, "detach_wait": 3}: where VMs live,
 * who binds vfio-pci, how long a detach waits for the guest to let a device
 * go; or false: a host without VMs, where the agent never loads libvirt.
 */
static int parse_libvirt(struct vfp_config *c, json_t *o, char **err)
{
	static const char *const keys[] = { "uri", "managed", "detach_wait", "steer_hold", NULL };
	json_t *uri = json_object_get(o, "uri"), *managed = json_object_get(o, "managed");
	json_t *wait = json_object_get(o, "detach_wait"), *hold = json_object_get(o, "steer_hold");
	const char *s = json_string_value(uri);
	int r;

	c->libvirt_off = json_is_false(o);
	if (c->libvirt_off)
		return 0;
	if (!json_is_object(o))
		return vfp_config_error(err, "libvirt", "must be false (no VMs on this host) or an "
				       "object like {\"uri\": \"qemu:///system\"}");
	r = vfp_json_check_keys(o, "libvirt", keys, err);
	if (r < 0)
		return r;
	if (uri && (!s || !strstr(s, "://") || strlen(s) > 256 || strpbrk(s, " \t\n'\"")))
		return vfp_config_error(err, "libvirt.uri", "must be a libvirt URI like \"qemu:///system\"");
	if (managed && !json_is_boolean(managed))
		return vfp_config_error(err, "libvirt.managed", "must be true or false");
	if (wait && (!json_is_integer(wait) || json_integer_value(wait) < 1 ||
		     json_integer_value(wait) > 600))
		return vfp_config_error(err, "libvirt.detach_wait", "must be an integer in [1, 600]");
	if (hold && (!json_is_integer(hold) || json_integer_value(hold) < 0 ||
		     json_integer_value(hold) > 600))
		return vfp_config_error(err, "libvirt.steer_hold", "must be an integer in [0, 600]");
	if (hold)
		c->steer_hold = (int)json_integer_value(hold);
	c->libvirt_managed = managed ? json_is_true(managed) : true;
	if (wait)
		c->detach_wait = (int)json_integer_value(wait);
	c->libvirt_uri = s ? strdup(s) : NULL;
	return s && !c->libvirt_uri ? -ENOMEM : 0;
}

/* {"released_seconds": 604800, "released_max": 10000, "audit_max": 100000} */
static int parse_retention(struct vfp_config *c, json_t *o, char **err)
{
	static const char *const keys[] = { "released_seconds", "released_max", "audit_max", NULL };
	long long allocations = c->retention.allocations, audit = c->retention.audit;
	int r;

	if (!json_is_object(o))
		return vfp_config_error(err, "retention", "must be an object like "
					"{\"released_seconds\": 604800}");
	r = vfp_json_check_keys(o, "retention", keys, err);
	if (r >= 0)
		r = int_field(o, "retention", "released_seconds", false, 0, 10LL * 365 * 86400,
			      &c->retention.seconds, err);
	if (r >= 0)
		r = int_field(o, "retention", "released_max", false, 0, 10000000, &allocations, err);
	if (r >= 0)
		r = int_field(o, "retention", "audit_max", false, 100, 100000000, &audit, err);
	c->retention.allocations = (unsigned)allocations;
	c->retention.audit = (unsigned)audit;
	return r;
}

/* {"orphan_seconds": 300}: how long a reservation outlives an owner that does not exist. */
/* {"KEY": N}, N optional in [0, @max]: an object of one integer, e.g. "reservations". */
static int one_int_object(json_t *o, const char *path, const char *key, long long example,
			  long long max, long long *ret, char **err)
{
	const char *const keys[] = { key, NULL };
	int r;

	if (!json_is_object(o))
		return vfp_config_error(err, path, "must be an object like {\"%s\": %lld}", key,
					example);
	r = vfp_json_check_keys(o, path, keys, err);
	return r < 0 ? r : int_field(o, path, key, false, 0, max, ret, err);
}

static int parse_reservations(struct vfp_config *c, json_t *o, char **err)
{
	return one_int_object(o, "reservations", "orphan_seconds", 300, 365 * 86400,
			      &c->orphan_seconds, err);
}

static int parse_repair(struct vfp_config *c, json_t *o, char **err)
{
	return one_int_object(o, "repair", "retry_seconds", 600, 86400, &c->repair_retry, err);
}

static int parse_numvfs(struct vfp_config *c, json_t *a, char **err)
{
	return vfp_numvfs_rules_parse(a, &c->numvfs, err);
}

static const struct {
	const char *key;
	int (*parse)(struct vfp_config *c, json_t *v, char **err);
} top_fields[] = {
	/* pools first: networks refer to them */
	{ "pools", parse_pools },	    { "exclude", parse_exclude },
	{ "networks", parse_networks },	    { "guids", parse_guids },
	{ "opennebula_mac_prefix", parse_one_prefix },
	{ "ipoib_mac_prefix", parse_ipoib_prefix }, { "socket_group", parse_socket_group },
	{ "libvirt", parse_libvirt }, { "retention", parse_retention },
	{ "reservations", parse_reservations }, { "numvfs", parse_numvfs },
	{ "repair", parse_repair },
};

/**
 * vfp_config_load_json() - a configuration from parsed JSON
 * @ret_error: on -EINVAL, every error found, "path: message" a line (free()
 * it); may be NULL
 *
 * A missing "pools" is an empty list: no VF is handed out.
 */
VFP_EXPORT int vfp_config_load_json(json_t *root, struct vfp_config **ret_config,
				    char **ret_error)
{
	static const char *const keys[] = { "pools",	       "exclude",      "networks",
					    "guids",	       "ipoib_mac_prefix", "socket_group",
					    "libvirt",	       "retention",    "reservations",
					    "numvfs",	       "repair",       "opennebula_mac_prefix",
					    NULL };
	struct vfp_config *c;
	int r;

	if (!json_is_object(root))
		return vfp_config_error(ret_error, "(top level)", "must be a JSON object");
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->refcount = 1;
	c->ipoib_prefix[0] = DEFAULT_IPOIB_PREFIX_0;
	c->ipoib_prefix[1] = DEFAULT_IPOIB_PREFIX_1;
	c->one_prefix[0] = 0x02;
	c->one_prefix[1] = 0x00;
	c->libvirt_managed = true;
	c->detach_wait = 3;
	c->steer_hold = 5;
	c->retention = (struct vfp_retention){ .seconds = 7 * 86400, .allocations = 10000,
					       .audit = 100000 };
	c->orphan_seconds = 300;
	/* every error in one pass: the unknown keys, then each known one's */
	r = vfp_json_check_keys(root, "", keys, ret_error);
	for (size_t i = 0; r != -ENOMEM && i < ELEMENTSOF(top_fields); i++) {
		json_t *v = json_object_get(root, top_fields[i].key);
		char *e = NULL;

		int rf = v ? top_fields[i].parse(c, v, ret_error ? &e : NULL) : 0;

		r = vfp_config_errors_add(ret_error, r, rf, e);
	}
	if (r < 0) {
		vfp_config_unref(c);
		return r;
	}
	*ret_config = c;
	return 0;
}

/* As vfp_config_load_json(), from a file; a JSON syntax error names line and column. */
VFP_EXPORT int vfp_config_load_file(const char *path, struct vfp_config **ret_config,
				    char **ret_error)
{
	json_error_t jerr;
	json_t *root;
	int r;

	errno = 0;
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root && jerr.line == -1) { /* not opened: say why as the kernel did */
		r = errno > 0 ? -errno : -ENOENT;
		if (ret_error && asprintf(ret_error, "%s: %s", path, strerror(-r)) < 0)
			*ret_error = NULL;
		return r;
	}
	if (!root) {
		if (ret_error && asprintf(ret_error, "%s:%d:%d: %s", path, jerr.line, jerr.column,
					  jerr.text) < 0)
			*ret_error = NULL;
		return -EINVAL;
	}
	r = vfp_config_load_json(root, ret_config, ret_error);
	json_decref(root);
	return r;
}

VFP_EXPORT struct vfp_config *vfp_config_ref(struct vfp_config *c)
{
	if (c)
		vfp_ref_inc(&c->refcount);
	return c;
}

VFP_EXPORT struct vfp_config *vfp_config_unref(struct vfp_config *c)
{
	if (!c || vfp_ref_dec(&c->refcount) > 0)
		return NULL;
	for (size_t i = 0; i < c->n_pools; i++) {
		free(c->pools[i].name);
		vfp_selector_clear(&c->pools[i].selector);
		vfp_health_policy_clear(&c->pools[i].health);
		json_decref(c->pools[i].selector_json);
	}
	free(c->pools);
	for (size_t i = 0; i < c->n_networks; i++) {
		free(c->networks[i].bridge);
		free(c->networks[i].network);
		free(c->networks[i].pool);
	}
	free(c->networks);
	vfp_strv_clear(&c->exclude);
	vfp_numvfs_rules_clear(&c->numvfs);
	free(c->socket_group);
	free(c->libvirt_uri);
	free(c);
	return NULL;
}

/*
 * How many VFs @pf should have: its persisted count (vfctl numvfs --persist,
 * the operator's latest word), else the config's rules; -ENOENT for none.
 */
VFP_EXPORT int vfp_config_get_desired_numvfs(const struct vfp_config *c, const struct vfp_pf *pf)
{
	return vfp_numvfs_rules_desired(&c->numvfs, pf);
}

/**
 * vfp_config_add_persisted_numvfs() - PF @pf (its PCI address) should have
 * @numvfs VFs, before whatever the file's rules say
 *
 * For the agent, which keeps persisted counts in its state and adds them to
 * a config it has just loaded, before anyone else sees that config.
 */
VFP_EXPORT int vfp_config_add_persisted_numvfs(struct vfp_config *c, const char *pf, int numvfs)
{
	if (!vfp_pci_addr_is_valid(pf) || numvfs < 0 || numvfs > 65535)
		return -EINVAL;
	return vfp_numvfs_rules_put_first(&c->numvfs, pf, numvfs);
}

VFP_EXPORT size_t vfp_config_get_pool_count(const struct vfp_config *c)
{
	return c->n_pools;
}

VFP_EXPORT const char *vfp_config_get_pool_name(const struct vfp_config *c, size_t i)
{
	return i < c->n_pools ? c->pools[i].name : NULL;
}

VFP_EXPORT unsigned vfp_config_get_pool_grow_step(const struct vfp_config *c, size_t i)
{
	return i < c->n_pools ? c->pools[i].grow_step : 0;
}

/**
 * vfp_config_pool_takes_owner() - whether an owner of @kind may claim VFs of
 * pool @name (a pool dedicated to VMs or to containers takes only those);
 * false for an unknown pool
 */
VFP_EXPORT bool vfp_config_pool_takes_owner(const struct vfp_config *c, const char *name,
					    enum vfp_owner_kind kind)
{
	int i = vfp_config_find_pool(c, name);

	if (i < 0)
		return false;
	return kind == VFP_OWNER_VM ? !c->pools[i].containers_only : !c->pools[i].vms_only;
}

/* Whether VFs of pool @name are reset between tenants (true for an unknown pool). */
VFP_EXPORT bool vfp_config_pool_resets(const struct vfp_config *c, const char *name)
{
	int i = name ? vfp_config_find_pool(c, name) : -1;

	return i < 0 || !c->pools[i].no_reset;
}

/* The pool's index, or -ENOENT. */
VFP_EXPORT int vfp_config_find_pool(const struct vfp_config *c, const char *name)
{
	for (size_t i = 0; i < c->n_pools; i++)
		if (c->pools[i].name && strcmp(c->pools[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

/* The first pool whose selector takes @vf, or NULL: a VF in no pool is never handed out. */
VFP_EXPORT const char *vfp_config_pool_for_vf(const struct vfp_config *c, const struct vfp_vf *vf)
{
	for (size_t i = 0; i < c->n_pools; i++)
		if (vfp_selector_match(&c->pools[i].selector, vf))
			return c->pools[i].name;
	return NULL;
}

/* How long a quarantined VF waits for its first automatic repair; 0: none is tried. */
VFP_EXPORT long long vfp_config_get_repair_retry_seconds(const struct vfp_config *c)
{
	return c->repair_retry;
}

/* Whether a pool's health policy asks about its PFs' links (link events matter then). */
VFP_EXPORT bool vfp_config_watches_pf_links(const struct vfp_config *c)
{
	for (size_t i = 0; i < c->n_pools; i++)
		if (c->pools[i].health.pf_link_up)
			return true;
	return false;
}

/* Why VF @vf of @pool (its pool, known already; NULL: none) may not be offered; NULL if it may. */
const char *vfp_config_pool_health(const struct vfp_config *c, const char *pool,
				   const struct vfp_vf *vf, char *buf, size_t size)
{
	int i = pool ? vfp_config_find_pool(c, pool) : -1;

	return i < 0 ? NULL : vfp_health_check(&c->pools[i].health, c, pool, vf, buf, size);
}

/**
 * vfp_config_vf_unhealthy() - why VF @vf may not be offered by its pool's
 * health policy ("unhealthy: …" in @buf), or NULL when it may (or is in no pool)
 */
VFP_EXPORT const char *vfp_config_vf_unhealthy(const struct vfp_config *c, const struct vfp_vf *vf,
					       char *buf, size_t size)
{
	return vfp_config_pool_health(c, vfp_config_pool_for_vf(c, vf), vf, buf, size);
}

/* Excluded VFs stay with the host: listed themselves, or their PF is. */
VFP_EXPORT bool vfp_config_is_excluded(const struct vfp_config *c, const struct vfp_vf *vf)
{
	return vfp_strv_contains(&c->exclude, vfp_vf_get_pci(vf)) ||
	       vfp_strv_contains(&c->exclude, vfp_vf_get_pf_pci(vf));
}

VFP_EXPORT const char *vfp_config_pool_for_network(const struct vfp_config *c,
						   const char *bridge, const char *network)
{
	for (size_t i = 0; i < c->n_networks; i++) {
		const struct network_config *n = &c->networks[i];

		if ((bridge && n->bridge && strcmp(bridge, n->bridge) == 0) ||
		    (network && n->network && strcmp(network, n->network) == 0))
			return n->pool;
	}
	return NULL;
}

/* The standby the config gives NICs on that bridge or network; NULL for none. */
VFP_EXPORT const struct vfp_failover *vfp_config_failover_for_network(const struct vfp_config *c,
								      const char *bridge,
								      const char *network)
{
	for (size_t i = 0; i < c->n_networks; i++) {
		const struct network_config *n = &c->networks[i];

		if ((bridge && n->bridge && strcmp(bridge, n->bridge) == 0) ||
		    (network && n->network && strcmp(network, n->network) == 0))
			return n->failover.kind != VFP_STANDBY_NONE ? &n->failover : NULL;
	}
	return NULL;
}

/* The IB partition of that bridge or libvirt network; VFP_UNSET for none (or no such network). */
VFP_EXPORT int vfp_config_pkey_for_network(const struct vfp_config *c, const char *bridge,
					   const char *network)
{
	for (size_t i = 0; i < c->n_networks; i++) {
		const struct network_config *n = &c->networks[i];

		if ((bridge && n->bridge && strcmp(bridge, n->bridge) == 0) ||
		    (network && n->network && strcmp(network, n->network) == 0))
			return n->pkey;
	}
	return VFP_UNSET;
}

VFP_EXPORT const unsigned char *vfp_config_get_ipoib_mac_prefix(const struct vfp_config *c)
{
	return c->ipoib_prefix;
}

/* OpenNebula's MAC_PREFIX: a NIC MAC of it carries the NIC's IPv4 address. */
VFP_EXPORT const unsigned char *vfp_config_get_opennebula_mac_prefix(const struct vfp_config *c)
{
	return c->one_prefix;
}

VFP_EXPORT bool vfp_config_get_guid_range(const struct vfp_config *c,
					  unsigned long long *ret_first,
					  unsigned long long *ret_count)
{
	if (!c->has_guids)
		return false;
	*ret_first = c->guid_first;
	*ret_count = c->guid_count;
	return true;
}

/* How long a released GUID waits before another owner may get it (ledger-guid.c). */
long long vfp_config_get_guid_quarantine(const struct vfp_config *c)
{
	return c->guid_quarantine;
}

/* [{"name":…,"selector":{…},"grow_step":N,"reset":"flr"|"none"}] in config order. */
/* [{"bridge": …} or {"network": …}, with its "failover" and "pkey"]: the networks of @pool. */
static json_t *pool_networks_json(const struct vfp_config *c, const char *pool)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < c->n_networks; i++) {
		const struct network_config *n = &c->networks[i];
		json_t *o;

		if (strcmp(n->pool, pool) != 0)
			continue;
		o = n->bridge ? json_pack("{s:s}", "bridge", n->bridge)
			      : json_pack("{s:s}", "network", n->network);
		if (o && n->failover.kind != VFP_STANDBY_NONE)
			json_object_set_new(o, "failover", vfp_failover_to_json(&n->failover));
		if (o && n->pkey >= 0) {
			char key[7];

			vfp_pkey_format(n->pkey, key);
			json_object_set_new(o, "pkey", json_string(key));
			json_object_set_new(o, "membership", json_string(vfp_pkey_membership(n->pkey)));
		}
		json_array_append_new(a, o);
	}
	return a;
}

VFP_EXPORT json_t *vfp_config_pools_to_json(const struct vfp_config *c)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < c->n_pools; i++) {
		const struct pool_config *p = &c->pools[i];

		json_t *owners = p->vms_only	    ? json_pack("[s]", "vm")
				 : p->containers_only ? json_pack("[s]", "container")
						      : json_pack("[s, s]", "vm", "container");

		if (json_array_append_new(a, json_pack("{s:s, s:O, s:I, s:s, s:o, s:o, s:o}", "name",
						       p->name, "selector", p->selector_json,
						       "grow_step", (json_int_t)p->grow_step, "reset",
						       p->no_reset ? "none" : "flr", "health",
						       vfp_health_policy_to_json(&p->health),
						       "networks", pool_networks_json(c, p->name),
						       "owners", owners)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The group of the agent's unix socket, or NULL for the agent's own. */
VFP_EXPORT const char *vfp_config_get_socket_group(const struct vfp_config *c)
{
	return c->socket_group;
}

/* The libvirt URI the config names, or NULL when it names none. */
VFP_EXPORT const char *vfp_config_get_libvirt_uri(const struct vfp_config *c)
{
	return c->libvirt_uri;
}

/* False when the config says "libvirt": false (a host without VMs). */
VFP_EXPORT bool vfp_config_get_libvirt_enabled(const struct vfp_config *c)
{
	return !c->libvirt_off;
}

/* Whether libvirt binds VFs to vfio-pci itself (managed='yes', the default). */
VFP_EXPORT bool vfp_config_get_libvirt_managed(const struct vfp_config *c)
{
	return c->libvirt_managed;
}

/* Seconds a detach waits for the guest to let a device go, after libvirt's own 5 s. */
VFP_EXPORT int vfp_config_get_detach_wait(const struct vfp_config *c)
{
	return c->detach_wait;
}

/* Seconds a swap's guest MAC stays steered onto its standby's PFs once the new VF is in. */
VFP_EXPORT int vfp_config_get_steer_hold(const struct vfp_config *c)
{
	return c->steer_hold;
}

/* How long, and how many, released allocations and audit rows the ledger keeps. */
VFP_EXPORT void vfp_config_get_retention(const struct vfp_config *c, struct vfp_retention *ret)
{
	*ret = c->retention;
}

/* How long a reservation outlives an owner that does not exist (seconds). */
VFP_EXPORT long long vfp_config_get_orphan_seconds(const struct vfp_config *c)
{
	return c->orphan_seconds;
}
