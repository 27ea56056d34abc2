/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <string.h>

#include "agent/vm/standby-reach.h"

static xmlNodePtr first(xmlNodePtr parent, const char *name)
{
	for (xmlNodePtr n = parent ? parent->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, BAD_CAST name))
			return n;
	return NULL;
}

/* @n's attribute @name into @buf ("" when it has none). */
static void prop(xmlNodePtr n, const char *name, char *buf, size_t size)
{
	xmlChar *v = n ? xmlGetProp(n, BAD_CAST name) : NULL;

	snprintf(buf, size, "%s", v ? (const char *)v : "");
	xmlFree(v);
}

static int parse_mac(const char *s, unsigned char mac[6])
{
	unsigned b[6];
	char end;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &end) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (unsigned char)b[i];
	return 0;
}

/* The standby's kind, source and MAC from its <interface> (failover-xml.c's form). */
static int from_node(xmlNodePtr root, struct standby_source *ret)
{
	char type[16], mac[32], vport[32];
	xmlNodePtr src = first(root, "source");

	prop(root, "type", type, sizeof(type));
	prop(first(root, "mac"), "address", mac, sizeof(mac));
	prop(first(root, "virtualport"), "type", vport, sizeof(vport));
	if (!strcmp(type, "direct")) {
		ret->kind = VFP_STANDBY_MACVTAP;
		prop(src, "dev", ret->source, sizeof(ret->source));
	} else if (!strcmp(type, "bridge")) {
		ret->kind = strcmp(vport, "openvswitch") ? VFP_STANDBY_BRIDGE
							 : VFP_STANDBY_OPENVSWITCH;
		prop(src, "bridge", ret->source, sizeof(ret->source));
	} else {
		return -EINVAL;
	}
	return ret->source[0] && parse_mac(mac, ret->mac) == 0 ? 0 : -EINVAL;
}

/**
 * standby_source_parse() - what the standby @xml (an <interface>) stands on
 *
 * -EINVAL for XML that is no bridge or direct <interface> with a source and
 * a MAC.
 */
int standby_source_parse(const char *xml, struct standby_source *ret)
{
	xmlDocPtr d = xml ? xmlReadMemory(xml, (int)strlen(xml), "standby.xml", NULL,
					  XML_PARSE_NONET | XML_PARSE_NOERROR |
						  XML_PARSE_NOWARNING)
			  : NULL;
	xmlNodePtr root = d ? xmlDocGetRootElement(d) : NULL;
	struct standby_source s = { .kind = VFP_STANDBY_NONE };
	int r = root && !xmlStrcmp(root->name, BAD_CAST "interface") ? from_node(root, &s)
								      : -EINVAL;

	xmlFreeDoc(d);
	if (r >= 0)
		*ret = s;
	return r;
}

/* The key a config or a claim names the standby's source with. */
static const char *field(enum vfp_standby_kind kind)
{
	return kind == VFP_STANDBY_MACVTAP ? "failover.macvtap" : "failover.bridge";
}

/* A Linux bridge's VLAN: one of its ports a VLAN link of that id; another id is another VLAN. */
static int bridge_vlan(const char *source, int vlan, const struct nl_link *ports, size_t n,
		       char *err, size_t err_size, char *warn, size_t warn_size)
{
	const struct nl_link *other = NULL;

	for (size_t i = 0; i < n; i++) {
		if (ports[i].vlan_id == vlan)
			return 0;
		if (ports[i].vlan_id >= 0 && !other)
			other = &ports[i];
	}
	if (other) {
		snprintf(err, err_size, "failover.bridge: bridge %s is on VLAN %d (its port %s), "
			 "not on the NIC's VLAN %d: the standby would not reach the VF's network",
			 source, other->vlan_id, other->name, vlan);
		return -EINVAL;
	}
	snprintf(warn, warn_size, "failover.bridge: bridge %s has no port on VLAN %d: the "
		 "standby reaches the VF's VLAN only if the bridge's uplink is an access port "
		 "of it", source, vlan);
	return 0;
}

/**
 * standby_reach_verdict() - whether a standby on @source (@dev as read; NULL:
 * no such link) reaches VLAN @vlan (<= 0: none); @ports are @dev's bridge ports
 *
 * -EINVAL with @err naming the field when it cannot: no such
 * device; a "bridge" that is no Linux bridge, an Open vSwitch one that is a
 * Linux bridge; a bridge whose VLAN ports are all of another VLAN; a macvtap
 * lower device that is a VLAN link of another id. @warn (0 returned) when
 * nothing on the host says it does: a bridge without any VLAN port.
 */
int standby_reach_verdict(enum vfp_standby_kind kind, const char *source, int vlan,
			  const struct nl_link *dev, const struct nl_link *ports, size_t n_ports,
			  char *err, size_t err_size, char *warn, size_t warn_size)
{
	const char *what = dev && dev->kind[0] ? dev->kind : "plain";

	warn[0] = '\0';
	if (!dev) {
		snprintf(err, err_size, "%s: no network device %s on this host for the standby",
			 field(kind), source);
		return -EINVAL;
	}
	if (kind == VFP_STANDBY_BRIDGE && strcmp(dev->kind, "bridge") != 0) {
		snprintf(err, err_size, "failover.bridge: %s is a %s device, not a Linux bridge "
			 "(an Open vSwitch one needs \"openvswitch\": true)", source, what);
		return -EINVAL;
	}
	if (kind == VFP_STANDBY_OPENVSWITCH && !strcmp(dev->kind, "bridge")) {
		snprintf(err, err_size, "failover.openvswitch: %s is a Linux bridge, not an Open "
			 "vSwitch one", source);
		return -EINVAL;
	}
	if (kind == VFP_STANDBY_BRIDGE && vlan > 0)
		return bridge_vlan(source, vlan, ports, n_ports, err, err_size, warn, warn_size);
	if (kind == VFP_STANDBY_MACVTAP && vlan > 0 && dev->vlan_id >= 0 && dev->vlan_id != vlan) {
		snprintf(err, err_size, "failover.macvtap: %s is on VLAN %d, not on the NIC's "
			 "VLAN %d", source, dev->vlan_id, vlan);
		return -EINVAL;
	}
	return 0;
}

/* A locally administered unicast MAC of VF @pci's own (FNV-1a of its address). */
static void parked_mac(const char *pci, unsigned char mac[6])
{
	unsigned long long h = 1469598103934665603ULL;

	for (const char *p = pci; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (int i = 0; i < 6; i++)
		mac[i] = (unsigned char)(h >> (8 * i));
	mac[0] = (unsigned char)((mac[0] & 0xfc) | 0x02);
}

/**
 * standby_vf_mac_after() - whether failover VF @pci, out of its guest, must
 * have its admin MAC @now changed, and to what (@ret)
 * @device_xml: the VF's <interface type='hostdev'> (hostdev-xml.c's form),
 *		whose <mac> is the guest's
 * @zero_refused: the PF refused 00:00:00:00:00:00 (older igb)
 *
 * True when @now is still the guest's MAC: @ret is the zero MAC, or when
 * that was refused a locally administered one of the VF's own. False when
 * libvirt put another back, or @device_xml has no MAC.
 */
bool standby_vf_mac_after(const char *device_xml, const unsigned char now[6], bool zero_refused,
			  const char *pci, unsigned char ret[6])
{
	const char *at = device_xml ? strstr(device_xml, "<mac address=") : NULL;
	unsigned char guest[6];
	char mac[18];

	if (!at || sscanf(at + strlen("<mac address="), "%*1[\"']%17[0-9a-fA-F:]", mac) != 1 ||
	    parse_mac(mac, guest) < 0 || memcmp(now, guest, 6) != 0)
		return false;
	if (zero_refused)
		parked_mac(pci, ret);
	else
		memset(ret, 0, 6);
	return true;
}
