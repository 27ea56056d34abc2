/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulated host's guests: one that never acknowledges an unplug.
 * libvirt's test driver removes a device at once; <simulate dir>/sim-unplug-ignored
 * lists the VFs (one PCI address a line) whose detach libvirt is not asked,
 * as if it had returned after its own wait with the device still in the
 * domain, and what follows sees the domain as a real host's. vfagentd
 * --simulate hands sim_guest_unplug_ignored() to its libvirt connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sim/sim-host.h"

/* Attribute @name of the tag at @tag, base 0; a missing one 0, as libvirt reads it. */
static long attr(const char *tag, const char *name)
{
	const char *end = strchr(tag, '>');
	size_t n = strlen(name);

	for (const char *p = strstr(tag, name); p && (!end || p < end); p = strstr(p + 1, name))
		if ((p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n') && p[n] == '=' &&
		    (p[n + 1] == '\'' || p[n + 1] == '"'))
			return strtol(p + n + 2, NULL, 0);
	return 0;
}

/* The PCI address of device @xml's <source><address>, "" when it has none. */
static void source_pci(const char *xml, char *buf, size_t size)
{
	const char *s = strstr(xml, "<source");
	const char *a = s ? strstr(s, "<address") : NULL;

	buf[0] = '\0';
	if (a)
		snprintf(buf, size, "%04lx:%02lx:%02lx.%lx", attr(a, "domain"), attr(a, "bus"),
			 attr(a, "slot"), attr(a, "function"));
}

/* 1 when @xml is a VF <dir>/sim-unplug-ignored lists (its detach not asked), else 0. */
int sim_guest_unplug_ignored(void *dir, const char *uuid, const char *xml)
{
	char path[4200], line[64], pci[32];
	int listed = 0;
	FILE *f;

	(void)uuid;
	source_pci(xml, pci, sizeof(pci));
	if (!pci[0])
		return 0;
	snprintf(path, sizeof(path), "%s/sim-unplug-ignored", (const char *)dir);
	f = fopen(path, "re");
	while (f && !listed && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		listed = strcmp(line, pci) == 0;
	}
	if (f)
		fclose(f);
	return listed;
}
