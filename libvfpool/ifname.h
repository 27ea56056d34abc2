/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Network interface names as the kernel takes them, shared by the agent's
 * API and the CNI plugin (header only: the plugin links no libvfpool).
 */
#pragma once

#include <stdbool.h>
#include <string.h>

/*
 * A name the kernel takes as it is: 1 to 15 bytes, not "." or "..", and no
 * whitespace, '/', ':' or '%' (which the kernel would expand: "eth%d" names a
 * link no one asked for). NULL is not a name.
 */
static inline bool vfp_ifname_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n >= 16 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s == '/' || *s == ':' || *s == '%' || *s > '~')
			return false;
	return true;
}
