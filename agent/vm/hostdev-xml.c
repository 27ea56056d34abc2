/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "agent/vm/hostdev-xml.h"
#include "libvfpool/macro.h"

static void set_prop(xmlNodePtr n, const char *name, const char *value)
{
	xmlSetProp(n, BAD_CAST name, BAD_CAST value);
}

static xmlNodePtr child(xmlNodePtr parent, const char *name)
{
	return xmlNewChild(parent, NULL, BAD_CAST name, NULL);
}

static void set_mac(xmlNodePtr parent, const unsigned char mac[6])
{
	char buf[18];

	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		 mac[4], mac[5]);
	set_prop(child(parent, "mac"), "address", buf);
}

/*
 * The four fields of PCI address @pci ("0000:3b:00.1") as libvirt's <address> has them,
 * "0x0000", "0x3b", "0x00", "0x1": the address's own digits, lower-case, when it is in the
 * canonical form (the ledger's are); else as sscanf() reads them.
 */
static void address_fields(const char *pci, char dom[8], char bus[8], char slot[8], char fn[8])
{
	static const struct {
		size_t at, len;
	} f[] = { { 0, 4 }, { 5, 2 }, { 8, 2 }, { 11, 1 } };
	char *out[] = { dom, bus, slot, fn };
	unsigned d = 0, b = 0, s = 0, fun = 0;
	bool canonical = strlen(pci) == 12 && pci[4] == ':' && pci[7] == ':' && pci[10] == '.';

	for (size_t i = 0; canonical && i < ELEMENTSOF(f); i++)
		for (size_t k = 0; k < f[i].len; k++)
			canonical &= isxdigit((unsigned char)pci[f[i].at + k]) != 0;
	if (!canonical) {
		sscanf(pci, "%4x:%2x:%2x.%1x", &d, &b, &s, &fun);
		snprintf(dom, 8, "0x%04x", d);
		snprintf(bus, 8, "0x%02x", b);
		snprintf(slot, 8, "0x%02x", s);
		snprintf(fn, 8, "0x%x", fun);
		return;
	}
	for (size_t i = 0; i < ELEMENTSOF(f); i++) {
		out[i][0] = '0';
		out[i][1] = 'x';
		for (size_t k = 0; k < f[i].len; k++)
			out[i][2 + k] = (char)tolower((unsigned char)pci[f[i].at + k]);
		out[i][2 + f[i].len] = '\0';
	}
}

/*
 * <source><address [type='pci'] domain='0x0000' bus='0x3b' slot='0x00' function='0x1'/></source>;
 * libvirt's schema wants the type in an <interface>'s source and not in a <hostdev>'s.
 */
static void set_source(xmlNodePtr parent, const char *pci, bool with_type)
{
	xmlNodePtr a = child(child(parent, "source"), "address");
	char dom[8], bus[8], slot[8], fn[8];

	address_fields(pci, dom, bus, slot, fn);
	if (with_type)
		set_prop(a, "type", "pci");
	set_prop(a, "domain", dom);
	set_prop(a, "bus", bus);
	set_prop(a, "slot", slot);
	set_prop(a, "function", fn);
}

/**
 * hostdev_xml_node() - the device element for VF @s->pci (a new, unlinked node)
 *
 * @s->pci must be a valid PCI address (the ledger's VFs are).
 */
xmlNodePtr hostdev_xml_node(const struct hostdev_spec *s)
{
	xmlNodePtr n = xmlNewNode(NULL, BAD_CAST(s->ethernet ? "interface" : "hostdev"));

	if (s->ethernet) {
		set_prop(n, "type", "hostdev");
	} else {
		set_prop(n, "mode", "subsystem");
		set_prop(n, "type", "pci");
	}
	set_prop(n, "managed", s->managed ? "yes" : "no");
	if (s->ethernet && s->has_mac)
		set_mac(n, s->mac);
	set_source(n, s->pci, s->ethernet);
	if (s->ethernet && s->vlan >= 0) {
		char id[16];

		snprintf(id, sizeof(id), "%d", s->vlan);
		set_prop(child(child(n, "vlan"), "tag"), "id", id);
	}
	if (s->teaming) {
		xmlNodePtr t = child(n, "teaming");
		char alias[64];

		set_prop(t, "type", "transient");
		set_prop(t, "persistent", s->teaming);
		/* libvirt finds an <interface> to detach by MAC, which the standby shares: by alias */
		snprintf(alias, sizeof(alias), "%s-vf", s->teaming);
		set_prop(child(n, "alias"), "name", alias);
	}
	return n;
}

/*
 * Element @n as text, for virDomainAttachDeviceFlags and the VF's restore
 * point (free() it); NULL when @n is, or out of memory.
 */
char *hostdev_xml_text(xmlNodePtr n)
{
	xmlBufferPtr buf = n ? xmlBufferCreate() : NULL;
	char *out = NULL;

	if (buf && xmlNodeDump(buf, NULL, n, 0, 0) >= 0)
		out = strdup((const char *)xmlBufferContent(buf));
	xmlBufferFree(buf);
	return out;
}

/* Node @n as a string for virDomainAttachDeviceFlags (free() it); @n freed. */
static char *node_string(xmlNodePtr n)
{
	char *out = hostdev_xml_text(n);

	xmlFreeNode(n);
	return out;
}

/* The device element as a string for virDomainAttachDeviceFlags (free() it). */
char *hostdev_xml_string(const struct hostdev_spec *s)
{
	return node_string(hostdev_xml_node(s));
}

/* @prefix's two bytes, then @ipv4's four, most significant first: 10.1.0.5 → 02:1b:0a:01:00:05. */
void hostdev_xml_ipoib_mac(const unsigned char prefix[2], uint32_t ipv4, unsigned char mac[6])
{
	mac[0] = prefix[0];
	mac[1] = prefix[1];
	for (int i = 0; i < 4; i++)
		mac[2 + i] = (unsigned char)(ipv4 >> (24 - 8 * i));
}

/*
 * The dummy NIC: virtio, link down, its MAC the IPoIB address. It is type
 * 'ethernet' with no target, a tap that goes nowhere: the guest reads its
 * MAC and never sends on it.
 */
xmlNodePtr hostdev_xml_dummy_nic(const unsigned char prefix[2], uint32_t ipv4)
{
	xmlNodePtr n = xmlNewNode(NULL, BAD_CAST "interface");
	unsigned char mac[6];

	set_prop(n, "type", "ethernet");
	hostdev_xml_ipoib_mac(prefix, ipv4, mac);
	set_mac(n, mac);
	set_prop(child(n, "model"), "type", "virtio");
	set_prop(child(n, "link"), "state", "down");
	return n;
}

/*
 * A MAC for an Ethernet VF the request gave none: the same for the same
 * allocation and VF every time (libvirt would pick a random one on each
 * attach), locally administered, unicast.
 */
void hostdev_xml_stable_mac(const char *allocation_id, unsigned index, unsigned char mac[6])
{
	unsigned long long h = 1469598103934665603ULL; /* FNV-1a */

	for (const char *p = allocation_id; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ index) * 1099511628211ULL;
	mac[0] = 0x52;
	mac[1] = 0x54;
	mac[2] = 0x00;
	for (int i = 3; i < 6; i++)
		mac[i] = (unsigned char)(h >> (8 * i));
}

/**
 * hostdev_xml_with_source() - device @xml (as hostdev_xml_string() made it)
 * for VF @pci instead: everything else (MAC, VLAN, teaming, alias, managed)
 * as it was; NULL when @xml has no <source><address> (free() it)
 */
char *hostdev_xml_with_source(const char *xml, const char *pci)
{
	xmlDocPtr d = xmlReadMemory(xml, (int)strlen(xml), "device.xml", NULL,
				    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNodePtr n = d ? xmlDocGetRootElement(d) : NULL, src = NULL, addr = NULL;
	char *out = NULL;

	for (xmlNodePtr c = n ? n->children : NULL; c && !src; c = c->next)
		if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, "source"))
			src = c;
	for (xmlNodePtr c = src ? src->children : NULL; c && !addr; c = c->next)
		if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, "address"))
			addr = c;
	if (addr) {
		bool typed = xmlHasProp(addr, BAD_CAST "type") != NULL;

		xmlUnlinkNode(src);
		xmlFreeNode(src);
		set_source(n, pci, typed); /* last: libvirt reads an interface's children in any order */
		out = node_string(xmlCopyNode(n, 1));
	}
	xmlFreeDoc(d);
	return out;
}
