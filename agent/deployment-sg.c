/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/deployment-sg.h"
#include "libvfpool/libvfpool.h"

/* One item of the list, "MAC=IDS", checked; its groups into @out when its MAC is @nic's. */
static int item(const char *s, size_t len, const struct domxml_nic *nic, char *out, size_t size,
		char *err, size_t err_size)
{
	size_t key = strcspn(s, "=");
	char mac_text[32], ids[256], groups[128];
	unsigned char mac[6];
	int r;

	if (key >= len || key >= sizeof(mac_text) || len - key - 1 >= sizeof(ids)) {
		snprintf(err, err_size, "security_groups: \"%.*s\" is not MAC=IDS (a NIC's MAC and its "
			 "security group ids joined with +)", (int)(len < 64 ? len : 64), s);
		return -EINVAL;
	}
	snprintf(mac_text, sizeof(mac_text), "%.*s", (int)key, s);
	snprintf(ids, sizeof(ids), "%.*s", (int)(len - key - 1), s + key + 1);
	if (vfp_mac_parse(mac_text, mac) < 0) {
		snprintf(err, err_size, "security_groups: \"%s\" is not a MAC address", mac_text);
		return -EINVAL;
	}
	r = vfp_security_groups_parse(ids, groups, sizeof(groups));
	if (r < 0) {
		snprintf(err, err_size, "security_groups: \"%.64s\" for NIC %s is not a list of at "
			 "most 32 security group ids (integers in [0, 2147483647] joined with +)", ids,
			 mac_text);
		return r;
	}
	if (nic->has_mac && !memcmp(mac, nic->mac, sizeof(mac)))
		snprintf(out, size, "%s", groups);
	return 0;
}

/**
 * deployment_nic_security_groups() - the security groups @list gives NIC @nic
 * @list: "MAC=0+101,MAC=0" (a query's "+" may come decoded as " "), or NULL
 * @out: its groups, "0,101"; "" when @list names not its MAC
 *
 * The whole list is checked: -EINVAL with @err naming the item that is not
 * a MAC and ids, whichever NIC it names.
 */
int deployment_nic_security_groups(const char *list, const struct domxml_nic *nic, char *out,
				   size_t size, char *err, size_t err_size)
{
	out[0] = '\0';
	for (const char *s = list && *list ? list : NULL; s;) { /* "a," has an empty item */
		size_t len = strcspn(s, ",");
		int r = item(s, len, nic, out, size, err, err_size);

		if (r < 0)
			return r;
		s = s[len] ? s + len + 1 : NULL;
	}
	return 0;
}
