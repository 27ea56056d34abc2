/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vm/failover-xml.h"

static xmlNodePtr child(xmlNodePtr parent, const char *name, const char *attr, const char *value)
{
	xmlNodePtr n = xmlNewChild(parent, NULL, BAD_CAST name, NULL);

	if (attr)
		xmlSetProp(n, BAD_CAST attr, BAD_CAST value);
	return n;
}

void failover_xml_alias(const unsigned char mac[6], char alias[FAILOVER_ALIAS_LEN])
{
	snprintf(alias, FAILOVER_ALIAS_LEN, "ua-failover-%02x%02x%02x%02x%02x%02x", mac[0], mac[1],
		 mac[2], mac[3], mac[4], mac[5]);
}

/**
 * failover_xml_standby() - the standby virtio NIC of a failover pair (a new,
 * unlinked node)
 * @source: the bridge or macvtap device, "{vlan}" already expanded
 * @vlan: the VF's VLAN (> 0), tagged on an Open vSwitch standby; else ignored
 *
 * Its link stays up: the guest's net_failover prefers the VF while it is
 * there, and traffic must find the standby the moment the VF goes.
 */
xmlNodePtr failover_xml_standby(const struct vfp_failover *f, const char *source,
				const unsigned char mac[6], int vlan)
{
	bool macvtap = f->kind == VFP_STANDBY_MACVTAP;
	xmlNodePtr n = xmlNewNode(NULL, BAD_CAST "interface");
	char buf[FAILOVER_ALIAS_LEN];
	xmlNodePtr src;

	xmlSetProp(n, BAD_CAST "type", BAD_CAST(macvtap ? "direct" : "bridge"));
	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		 mac[4], mac[5]);
	child(n, "mac", "address", buf);
	src = child(n, "source", macvtap ? "dev" : "bridge", source);
	if (macvtap)
		xmlSetProp(src, BAD_CAST "mode", BAD_CAST "bridge");
	if (f->kind == VFP_STANDBY_OPENVSWITCH)
		child(n, "virtualport", "type", "openvswitch");
	if (f->kind == VFP_STANDBY_OPENVSWITCH && vlan > 0) {
		snprintf(buf, sizeof(buf), "%d", vlan);
		child(child(n, "vlan", NULL, NULL), "tag", "id", buf);
	}
	child(n, "model", "type", "virtio");
	child(n, "teaming", "type", "persistent");
	failover_xml_alias(mac, buf);
	child(n, "alias", "name", buf);
	return n;
}

/* The standby as a string for virDomainAttachDeviceFlags (free() it). */
char *failover_xml_standby_string(const struct vfp_failover *f, const char *source,
				  const unsigned char mac[6], int vlan)
{
	xmlNodePtr n = failover_xml_standby(f, source, mac, vlan);
	xmlBufferPtr buf = xmlBufferCreate();
	char *out = NULL;

	if (n && buf && xmlNodeDump(buf, NULL, n, 0, 0) >= 0)
		out = strdup((const char *)xmlBufferContent(buf));
	xmlBufferFree(buf);
	xmlFreeNode(n);
	return out;
}
