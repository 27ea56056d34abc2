/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * InfiniBand partition keys as a tenant asks for them: "pkey" as
 * ib-sriov-cni spells it (a string, "0x8001"; an integer is taken too) and a
 * "membership", "full" or "limited". The value kept is the one a port's
 * P_Key table shows: the partition in the low 15 bits, the full-member bit
 * 0x8000 on top. The default partition (0x7fff) is every port's and so no
 * tenant's own; 0x0000 is no partition at all.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libvfpool.h"
#include "private.h"

/* "0x8001" (1-4 hex digits) or a decimal "32769": 0-0xffff, else -1. */
static long parse_text(const char *s)
{
	long v = 0;
	size_t n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (s += 2; n < 5 && s[n]; n++) {
			char c = s[n];
			int d = c >= '0' && c <= '9' ? c - '0' :
				c >= 'a' && c <= 'f' ? c - 'a' + 10 :
				c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

			if (d < 0)
				return -1;
			v = v * 16 + d;
		}
		return n >= 1 && n <= 4 ? v : -1;
	}
	for (; n < 6 && s[n]; n++) {
		if (s[n] < '0' || s[n] > '9')
			return -1;
		v = v * 10 + (s[n] - '0');
	}
	return n >= 1 && n <= 5 && v <= 0xffff ? v : -1;
}

/**
 * vfp_pkey_from_json() - a tenant's partition from its "pkey" and "membership"
 * @pkey: a string ("0x8001", "0x1", "32769") or an integer, or NULL
 * @membership: "full" or "limited", or NULL: full, unless @pkey says limited
 *   (its 0x8000 bit clear is no statement: 0x0001 and 0x8001 are one partition)
 * @ret_pkey: the key as a port's table shows it (0x8000 set for a full member);
 *   VFP_UNSET when @pkey is NULL
 * @ret_why: on -EINVAL, which field and why (a constant string)
 *
 * Refuses the default partition and 0x0000/0x8000, and a full key (0x8000
 * set) asked as "limited". A membership without a key is refused too.
 */
VFP_EXPORT int vfp_pkey_from_json(json_t *pkey, json_t *membership, int *ret_pkey,
				  const char **ret_why)
{
	const char *m = json_string_value(membership);
	long v = -1;

	if (membership && (!m || (strcmp(m, "full") != 0 && strcmp(m, "limited") != 0)))
		return *ret_why = "membership: must be \"full\" or \"limited\"", -EINVAL;
	if (!pkey) {
		if (membership)
			return *ret_why = "membership: needs a \"pkey\"", -EINVAL;
		*ret_pkey = VFP_UNSET;
		return 0;
	}
	if (json_is_string(pkey))
		v = parse_text(json_string_value(pkey));
	else if (json_is_integer(pkey) && json_integer_value(pkey) >= 0 &&
		 json_integer_value(pkey) <= 0xffff)
		v = (long)json_integer_value(pkey);
	if (v < 0)
		return *ret_why = "pkey: must be a P_Key like \"0x8001\" (16 bits)", -EINVAL;
	if ((v & 0x7fff) == 0)
		return *ret_why = "pkey: 0x0000 and 0x8000 are no partition", -EINVAL;
	if ((v & 0x7fff) == 0x7fff)
		return *ret_why = "pkey: the default partition (0x7fff/0xffff) is every port's, "
				  "no tenant's own", -EINVAL;
	if ((v & 0x8000) && m && strcmp(m, "limited") == 0)
		return *ret_why = "membership: \"limited\" contradicts the full member's key "
				  "(0x8000 set) in \"pkey\"", -EINVAL;
	*ret_pkey = (int)(v & 0x7fff) | (m && strcmp(m, "limited") == 0 ? 0 : 0x8000);
	return 0;
}

/* "0x8001": the key as partitions.conf and the diags write it. */
VFP_EXPORT void vfp_pkey_format(int pkey, char buf[static 7])
{
	snprintf(buf, 7, "0x%04x", (unsigned)pkey & 0xffff);
}

/* "full" or "limited": the membership @pkey's top bit says. */
VFP_EXPORT const char *vfp_pkey_membership(int pkey)
{
	return pkey & 0x8000 ? "full" : "limited";
}
