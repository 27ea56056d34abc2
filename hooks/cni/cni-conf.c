/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The invocation as the CNI spec defines it: CNI_* variables and the config
 * on stdin, each checked with a message naming the variable or field. The
 * config's own keys (the REST API's names) go to the agent, which checks
 * their values; the spec's keys stay here.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cni.h"
#include "libvfpool/ifname.h"

static const char *const versions[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0", NULL };

/* The keys of the spec and its conventions, read here or passed over. */
static const char *const spec_keys[] = { "cniVersion", "name", "type", "ipam", "dns",
					 "capabilities", "runtimeConfig", "args", "prevResult",
					 "socket", "deviceID", "disableCheck", "disableGC",
					 "cni.dev/valid-attachments", NULL };

int cni_fail(struct cni_error *e, int code, const char *msg, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
	va_start(ap, fmt);
	vsnprintf(e->details, sizeof(e->details), fmt, ap);
	va_end(ap);
	return -1;
}

/* <0, 0, >0 as "a.b.c" versions compare; an unparsable one sorts first. */
int cni_version_cmp(const char *a, const char *b)
{
	unsigned x[3] = { 0 }, y[3] = { 0 };

	sscanf(a, "%u.%u.%u", &x[0], &x[1], &x[2]);
	sscanf(b, "%u.%u.%u", &y[0], &y[1], &y[2]);
	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

bool cni_version_supported(const char *v)
{
	for (int i = 0; versions[i]; i++)
		if (strcmp(v, versions[i]) == 0)
			return true;
	return false;
}

static int read_stdin(struct cni_call *call, struct cni_error *e)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	ssize_t got;

	while (buf && (got = read(STDIN_FILENO, buf + n, cap - n - 1)) != 0) {
		if (got < 0)
			break;
		n += (size_t)got;
		if (n + 1 == cap) {
			char *more = cap < (1 << 24) ? realloc(buf, cap *= 2) : NULL;

			if (!more)
				break;
			buf = more;
		}
	}
	if (!buf || got != 0) {
		free(buf);
		return cni_fail(e, CNI_ERR_IO, "I/O failure", "reading the config from stdin failed");
	}
	buf[n] = '\0';
	call->stdin_data = buf;
	call->stdin_len = n;
	return 0;
}

/*
 * The config's cniVersion ("0.1.0" when absent, as libcni reads it), checked
 * against what we speak; its name; the agent's socket; the "ipam" object.
 */
static int read_conf(struct cni_call *call, struct cni_error *e)
{
	json_error_t jerr;
	json_t *v;

	call->conf = json_loadb(call->stdin_data, call->stdin_len, 0, &jerr);
	if (!json_is_object(call->conf))
		return cni_fail(e, CNI_ERR_DECODE, "failed to decode the config",
				"stdin: not a JSON object (line %d, column %d: %s)", jerr.line,
				jerr.column, jerr.text);
	v = json_object_get(call->conf, "cniVersion");
	if (v && !json_is_string(v))
		return cni_fail(e, CNI_ERR_DECODE, "failed to decode the config",
				"cniVersion: must be a string");
	call->version = v ? json_string_value(v) : "0.1.0";
	if (strcmp(call->command, "VERSION") != 0 && !cni_version_supported(call->version))
		return cni_fail(e, CNI_ERR_VERSION, "incompatible CNI versions",
				"cniVersion: \"%.16s\" is not one of 0.3.0, 0.3.1, 0.4.0, 1.0.0, "
				"1.1.0", call->version);
	call->name = json_string_value(json_object_get(call->conf, "name"));
	v = json_object_get(call->conf, "socket");
	if (v && (!json_is_string(v) || json_string_value(v)[0] != '/'))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"socket: must be the path of the agent's CNI socket");
	call->socket = v ? json_string_value(v) : CNI_DEFAULT_SOCKET;
	call->ipam = json_object_get(call->conf, "ipam");
	if (call->ipam && (!json_is_object(call->ipam) ||
			   !json_is_string(json_object_get(call->ipam, "type"))))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"ipam: must be an object with a \"type\" (the IPAM plugin)");
	if (call->ipam && json_object_size(call->ipam) == 0)
		call->ipam = NULL;
	return 0;
}

/**
 * cni_call_load() - the command from the environment and, but for VERSION
 * without input, the config from stdin
 */
int cni_call_load(struct cni_call *call, struct cni_error *e)
{
	call->command = getenv("CNI_COMMAND");
	call->container_id = getenv("CNI_CONTAINERID");
	call->netns = getenv("CNI_NETNS");
	call->ifname = getenv("CNI_IFNAME");
	call->path = getenv("CNI_PATH");
	call->args = getenv("CNI_ARGS");
	if (!call->command || !call->command[0])
		return cni_fail(e, CNI_ERR_ENV, "invalid environment variables",
				"CNI_COMMAND: not set (ADD, DEL, CHECK, GC, STATUS or VERSION)");
	if (read_stdin(call, e) < 0)
		return -1;
	if (strcmp(call->command, "VERSION") == 0 && call->stdin_len == 0)
		return 0;
	if (read_conf(call, e) < 0)
		return -1;
	if (strcmp(call->command, "VERSION") != 0 && (!call->name || !call->name[0]))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"name: required, the network's name");
	return 0;
}

/* FNV-1a: a short, stable tag of a long name (not a secret: the agent checks owners). */
unsigned long long cni_tag(const char *s)
{
	unsigned long long h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* @s, or when longer than @max its head, '~' and the tag of the whole. */
static void key_part(const char *s, size_t max, char *buf, size_t size)
{
	if (strlen(s) <= max)
		snprintf(buf, size, "%s", s);
	else
		snprintf(buf, size, "%.*s~%016llx", (int)(max - 17), s, cni_tag(s));
}

/**
 * cni_key_prefix() - "cni:NETWORK/", the start of every key of network
 * @name; a name over 54 characters is shortened with a tag of the whole
 * (54: the longest whose keys fit with a 64-character container ID, so
 * the keys of names that always fitted stay as they were)
 */
void cni_key_prefix(const char *name, char buf[static CNI_KEY_MAX + 1])
{
	char part[CNI_NAME_PART + 1];

	key_part(name, CNI_NAME_PART, part, sizeof(part));
	snprintf(buf, CNI_KEY_MAX + 1, "cni:%s/", part);
}

/**
 * cni_attachment_key() - "cni:NETWORK/CONTAINERID/IFNAME", at most
 * CNI_KEY_MAX characters: the container ID shortened as the name is when the
 * whole would not fit
 */
void cni_attachment_key(const char *name, const char *container_id, const char *ifname,
			char buf[static CNI_KEY_MAX + 1])
{
	char id[CNI_KEY_MAX + 1];
	size_t room;

	cni_key_prefix(name, buf);
	room = CNI_KEY_MAX - strlen(buf) - 1 - strlen(ifname); /* >= 53: ifname is <= 15 */
	key_part(container_id, room, id, sizeof(id));
	snprintf(buf + strlen(buf), CNI_KEY_MAX + 1 - strlen(buf), "%s/%s", id, ifname);
}

/* The spec's grammar of a container ID: alphanumeric, then [A-Za-z0-9_.-]. */
static bool valid_container_id(const char *s)
{
	if (!s || !isalnum((unsigned char)s[0]))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-')
			return false;
	return true;
}

/**
 * cni_call_need_attachment() - CNI_CONTAINERID and CNI_IFNAME (and
 * CNI_NETNS if @need_netns) checked, and the attachment's key made:
 * "cni:NETWORK/CONTAINERID/IFNAME"
 */
int cni_call_need_attachment(struct cni_call *call, bool need_netns, struct cni_error *e)
{
	if (!valid_container_id(call->container_id))
		return cni_fail(e, CNI_ERR_ENV, "invalid environment variables",
				"CNI_CONTAINERID: \"%.80s\" is not a container ID (alphanumeric, "
				"then letters, digits, '_', '.', '-')",
				call->container_id ? call->container_id : "");
	if (!vfp_ifname_valid(call->ifname))
		return cni_fail(e, CNI_ERR_ENV, "invalid environment variables",
				"CNI_IFNAME: \"%.32s\" is not an interface name",
				call->ifname ? call->ifname : "");
	if (need_netns && (!call->netns || call->netns[0] != '/'))
		return cni_fail(e, CNI_ERR_ENV, "invalid environment variables",
				"CNI_NETNS: \"%.64s\" is not the path of a network namespace",
				call->netns ? call->netns : "");
	if (strchr(call->name, '/'))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"name: \"%.64s\": a network's name has no '/'", call->name);
	cni_attachment_key(call->name, call->container_id, call->ifname, call->key);
	return 0;
}

/* The VF Kubernetes chose: runtimeConfig.deviceID, or "deviceID" as Multus adds it. */
static int device_id(const struct cni_call *call, json_t *rc, const char **ret,
		     struct cni_error *e)
{
	json_t *v = json_object_get(rc, "deviceID");
	const char *field = "runtimeConfig.deviceID";

	if (!v) {
		v = json_object_get(call->conf, "deviceID");
		field = "deviceID";
	}
	if (v && (!json_is_string(v) || !json_string_value(v)[0]))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"%s: must be a VF's PCI address like \"0000:3b:02.1\" or its "
				"InfiniBand GUID", field);
	*ret = v ? json_string_value(v) : NULL;
	return 0;
}

static bool is_spec_key(const char *key)
{
	for (int i = 0; spec_keys[i]; i++)
		if (strcmp(key, spec_keys[i]) == 0)
			return true;
	return strncmp(key, "cni.dev/", 8) == 0;
}

/**
 * cni_agent_config() - the config's keys for the agent (every key the spec
 * does not define: the agent names any it does not know), sriov-cni's and
 * ib-sriov-cni's turned into ours, with the runtime's wishes (MAC, GUID);
 * @ret_pci: the VF asked for by "deviceID" (a PCI address or a GUID), or NULL
 */
int cni_agent_config(struct cni_call *call, json_t **ret, const char **ret_pci,
		     struct cni_error *e)
{
	json_t *out = json_object(), *v, *rc = json_object_get(call->conf, "runtimeConfig");
	const char *key;

	if (!out)
		return cni_fail(e, CNI_ERR_IO, "out of memory", "out of memory");
	json_object_foreach(call->conf, key, v)
		if (!is_spec_key(key))
			json_object_set(out, key, v);
	if (cni_compat_config(out, &call->compat, e) < 0 || cni_wishes(call, out, e) < 0 ||
	    device_id(call, rc, ret_pci, e) < 0) {
		json_decref(out);
		return -1;
	}
	if (call->compat.ib_kubernetes && !json_object_get(out, "guid")) {
		json_decref(out);
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"ibKubernetesEnabled: the runtime gave no GUID (runtimeConfig."
				"infinibandGUID, args.cni.guid or CNI_ARGS GUID)");
	}
	*ret = out;
	return 0;
}
