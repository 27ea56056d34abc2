/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A NIC's security groups, as OpenNebula names them (the NIC's
 * SECURITY_GROUPS: ids joined with ","). Their rules are a host firewall's
 * on the NIC's host-side port, which a VF's traffic never passes: the agent
 * keeps the ids in the claim's settings only to say so (GET
 * /v1/host/checks, `vfctl doctor`), never to filter. Kept as text, sorted,
 * without repeats ("0,101"); an array of integers in JSON.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"

#define MAX_GROUPS 32

static int compare_ids(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* @ids (@n of them) sorted, without repeats, joined with "," into @out. */
static int format_ids(long *ids, size_t n, char *out, size_t size)
{
	size_t len = 0;

	qsort(ids, n, sizeof(*ids), compare_ids);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i && ids[i] == ids[i - 1])
			continue;
		len += (size_t)snprintf(out + len, size - len, "%s%ld", len ? "," : "", ids[i]);
		if (len >= size)
			return -E2BIG;
	}
	return 0;
}

/* An id: a decimal number in [0, INT32_MAX], as OpenNebula's object ids are. */
static int parse_id(const char *s, size_t len, long *ret)
{
	char buf[16], *end;

	if (len == 0 || len >= sizeof(buf) || strspn(s, "0123456789") < len)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*ret = strtol(buf, &end, 10);
	return *end || *ret > 0x7fffffff ? -EINVAL : 0;
}

/**
 * vfp_security_groups_parse() - a NIC's security group ids from text
 * @text: ids separated by ",", "+" or " " (OpenNebula's "0,101"; a query's "0+101")
 * @out: the ids sorted, without repeats, joined with "," ("" for an empty @text)
 *
 * -EINVAL for anything but ids (decimal numbers in [0, 2^31 - 1]), -E2BIG
 * for more than 32 or more than @out holds.
 */
VFP_EXPORT int vfp_security_groups_parse(const char *text, char *out, size_t size)
{
	long ids[MAX_GROUPS] = { 0 };
	size_t n = 0;

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, ",+ ");

		if (n == MAX_GROUPS)
			return -E2BIG;
		if (parse_id(p, len, &ids[n++]) < 0)
			return -EINVAL;
		p += len;
		if (*p && !*++p)
			return -EINVAL; /* a trailing separator */
	}
	return format_ids(ids, n, out, size);
}

/* @groups ("0,101") as JSON, [0, 101]; NULL for none. */
VFP_EXPORT json_t *vfp_security_groups_to_json(const char *groups)
{
	json_t *a;

	if (!groups[0] || !(a = json_array()))
		return NULL;
	for (const char *p = groups; *p; p += strcspn(p, ","), p += *p == ',')
		json_array_append_new(a, json_integer(strtol(p, NULL, 10)));
	return a;
}

/**
 * vfp_security_groups_from_json() - @v, an array of ids, as text into @out
 *
 * NULL is none (""); -EINVAL for anything but an array of integers in
 * [0, 2^31 - 1], -E2BIG for more than 32.
 */
VFP_EXPORT int vfp_security_groups_from_json(json_t *v, char *out, size_t size)
{
	long ids[MAX_GROUPS] = { 0 };
	json_t *id;
	size_t i;

	out[0] = '\0';
	if (!v)
		return 0;
	if (!json_is_array(v))
		return -EINVAL;
	if (json_array_size(v) > MAX_GROUPS)
		return -E2BIG;
	json_array_foreach(v, i, id) {
		if (!json_is_integer(id) || json_integer_value(id) < 0 ||
		    json_integer_value(id) > 0x7fffffff)
			return -EINVAL;
		ids[i] = (long)json_integer_value(id);
	}
	return format_ids(ids, json_array_size(v), out, size);
}
