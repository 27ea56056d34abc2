/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PCI addresses as sysfs spells them: "dddd:bb:ss.f", lower-case hex. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "private.h"

static bool is_lower_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool vfp_pci_id_is_valid(const char *s)
{
	return strlen(s) == 4 && strspn(s, "0123456789abcdef") == 4;
}

/**
 * vfp_pci_addr_is_valid() - is @s exactly a PCI address in sysfs form?
 *
 * Domain (4 hex digits), bus (2), slot (2, at most 1f) and function (0-7).
 * Upper case, a missing domain, spaces and any other character are refused,
 * so a string that passes can be put in a path without escaping anything.
 */
VFP_EXPORT bool vfp_pci_addr_is_valid(const char *s)
{
	static const char shape[] = "hhhh:hh:hh.f";
	int slot;

	if (!s || strlen(s) != VFP_PCI_ADDR_LEN)
		return false;
	for (size_t i = 0; i < VFP_PCI_ADDR_LEN; i++) {
		switch (shape[i]) {
		case 'h':
			if (!is_lower_hex(s[i]))
				return false;
			break;
		case 'f':
			if (s[i] < '0' || s[i] > '7')
				return false;
			break;
		default:
			if (s[i] != shape[i])
				return false;
		}
	}
	slot = (s[8] >= 'a' ? s[8] - 'a' + 10 : s[8] - '0') * 16 +
	       (s[9] >= 'a' ? s[9] - 'a' + 10 : s[9] - '0');
	return slot <= 0x1f;
}

/**
 * vfp_pci_addr_normalize() - @s as sysfs spells it, into @out
 *
 * Takes lspci's short form ("3b:00.1", domain 0000) and any case
 * ("0000:3B:00.1"); -EINVAL when the result is not a PCI address.
 */
VFP_EXPORT int vfp_pci_addr_normalize(const char *s, char out[static VFP_PCI_ADDR_LEN + 1])
{
	char buf[VFP_PCI_ADDR_LEN + 1];
	size_t n = s ? strlen(s) : 0;

	if (n == VFP_PCI_ADDR_LEN - 5)
		snprintf(buf, sizeof(buf), "0000:%s", s);
	else if (n == VFP_PCI_ADDR_LEN)
		memcpy(buf, s, sizeof(buf));
	else
		return -EINVAL;
	for (size_t i = 0; buf[i]; i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
	if (!vfp_pci_addr_is_valid(buf))
		return -EINVAL;
	memcpy(out, buf, sizeof(buf));
	return 0;
}
