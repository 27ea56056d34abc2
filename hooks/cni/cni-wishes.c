/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the runtime asks for this container, over what the config says: a
 * MAC, an InfiniBand GUID, addresses, a VF. From lowest to highest, as the
 * spec's CONVENTIONS.md and sriov-cni order them: the config's own key,
 * CNI_ARGS (MAC, IP, GUID; "podman run --mac-address" arrives there), the
 * config's "args": {"cni": {…}} (which the conventions put over CNI_ARGS),
 * runtimeConfig (mac, ips, infinibandGUID, deviceID: the capabilities).
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cni.h"

#define BAD_CONFIG(e, ...) cni_fail(e, CNI_ERR_CONFIG, "invalid network config", __VA_ARGS__)

/*
 * CNI_ARGS's value of @key (case-insensitive: "GUID" and ib-sriov-cni's
 * "guid"), copied into @buf; NULL when absent. Unknown keys are the runtime's
 * (K8S_POD_NAME, IgnoreUnknown) and ignored.
 */
static const char *cni_args_get(const char *args, const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);

	for (const char *p = args; p && *p;) {
		size_t n = strcspn(p, ";");

		if (n > klen && p[klen] == '=' && strncasecmp(p, key, klen) == 0) {
			snprintf(buf, size, "%.*s", (int)(n - klen - 1), p + klen + 1);
			return buf;
		}
		p += n + (p[n] == ';');
	}
	return NULL;
}

/* @key of "args": {"cni": {…}} or of runtimeConfig, which must be a string. */
static int string_of(json_t *o, const char *key, const char *where, const char **ret,
		     struct cni_error *e)
{
	json_t *v = json_object_get(o, key);

	if (v && !json_is_string(v))
		return BAD_CONFIG(e, "%s.%s: must be a string", where, key);
	if (v && json_string_value(v)[0])
		*ret = json_string_value(v);
	return 0;
}

/* The MAC or GUID the runtime asks for, set as @ours in @out. */
static int wish(const struct cni_call *call, json_t *out, const char *ours, const char *env_key,
		const char *args_key, const char *rc_key, struct cni_error *e)
{
	json_t *args = json_object_get(json_object_get(call->conf, "args"), "cni");
	json_t *rc = json_object_get(call->conf, "runtimeConfig");
	const char *v = NULL;
	char buf[64];

	v = cni_args_get(call->args, env_key, buf, sizeof(buf));
	if (v && !v[0]) /* "MAC=": asks for nothing */
		v = NULL;
	if (string_of(args, args_key, "args.cni", &v, e) < 0 ||
	    string_of(rc, rc_key, "runtimeConfig", &v, e) < 0)
		return -1;
	if (v)
		json_object_set_new(out, ours, json_string(v));
	return 0;
}

/**
 * cni_wishes() - the runtime's MAC and GUID over the config's in @out
 */
int cni_wishes(const struct cni_call *call, json_t *out, struct cni_error *e)
{
	json_t *rc = json_object_get(call->conf, "runtimeConfig");
	json_t *args = json_object_get(call->conf, "args");

	if (rc && !json_is_object(rc))
		return BAD_CONFIG(e, "runtimeConfig: must be an object");
	if (args && (!json_is_object(args) ||
		     (json_object_get(args, "cni") && !json_is_object(json_object_get(args, "cni")))))
		return BAD_CONFIG(e, "args: must be an object, its \"cni\" too");
	if (wish(call, out, "mac", "MAC", "mac", "mac", e) < 0 ||
	    wish(call, out, "guid", "GUID", "guid", "infinibandGUID", e) < 0)
		return -1;
	if (json_is_string(json_object_get(out, "mac"))) { /* sriov-cni lowers it too */
		char mac[32];

		snprintf(mac, sizeof(mac), "%s", json_string_value(json_object_get(out, "mac")));
		for (char *p = mac; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		json_object_set_new(out, "mac", json_string(mac));
	}
	return 0;
}

/* A list of addresses with a prefix, each appended to @list; @what names it. */
static int add_ips(json_t *ips, const char *what, json_t *list, struct cni_error *e)
{
	json_t *v;
	size_t i;

	if (!json_is_array(ips))
		return BAD_CONFIG(e, "%s: must be a list of addresses with a prefix", what);
	json_array_foreach(ips, i, v) {
		if (!json_is_string(v) || !strchr(json_string_value(v), '/'))
			return BAD_CONFIG(e, "%s[%zu]: must be an address with a prefix length "
					  "(10.1.0.5/24)", what, i);
		json_array_append_new(list, json_pack("{s:O}", "address", v));
	}
	return 0;
}

/* CNI_ARGS IP: one address or several, comma-separated, each with a prefix. */
static int env_ips(const char *s, json_t *list, struct cni_error *e)
{
	json_t *ips = json_array();
	char *copy = strdup(s), *save = NULL;
	int r;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		json_array_append_new(ips, json_string(t));
	r = add_ips(ips, "CNI_ARGS IP", list, e);
	json_decref(ips);
	free(copy);
	return r;
}

/**
 * cni_wished_ips() - without IPAM, the addresses the runtime asks for, as an
 * IPAM result ({"ips":[{"address":…}]}) in @ret; NULL when it asks for none.
 * With IPAM, the IPAM plugin reads the same wishes itself.
 */
int cni_wished_ips(const struct cni_call *call, json_t **ret, struct cni_error *e)
{
	json_t *rc_ips = json_object_get(json_object_get(call->conf, "runtimeConfig"), "ips");
	json_t *args_ips = json_object_get(json_object_get(json_object_get(call->conf, "args"),
							   "cni"), "ips");
	json_t *list = json_array();
	char buf[1024];
	const char *env = cni_args_get(call->args, "IP", buf, sizeof(buf));
	int r = 0;

	*ret = NULL;
	if (rc_ips)
		r = add_ips(rc_ips, "runtimeConfig.ips", list, e);
	else if (args_ips)
		r = add_ips(args_ips, "args.cni.ips", list, e);
	else if (env)
		r = env_ips(env, list, e);
	if (r < 0 || json_array_size(list) == 0) {
		json_decref(list);
		return r;
	}
	*ret = json_pack("{s:o}", "ips", list);
	return 0;
}
