/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "agent/vm/domain-xml.h"
#include "agent/vm/one-attrs.h"
#include "agent/netlink/nlmsg.h"
#include "libvfpool/macro.h"

/* No network, no DTD, no entity expansion, no messages on stderr. */
#define PARSE_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

static bool is_element(xmlNodePtr n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static xmlNodePtr first_child(xmlNodePtr parent, const char *name)
{
	for (xmlNodePtr n = parent ? parent->children : NULL; n; n = n->next)
		if (is_element(n, name))
			return n;
	return NULL;
}

static const char *prop(xmlNodePtr n, const char *name)
{
	xmlAttrPtr a = n ? xmlHasProp(n, BAD_CAST name) : NULL;

	return a && a->children && a->children->type == XML_TEXT_NODE
		       ? (const char *)a->children->content
		       : NULL;
}

static xmlNodePtr devices_of(xmlDocPtr doc)
{
	return first_child(xmlDocGetRootElement(doc), "devices");
}

/* The parser's first complaint, "line L, column C: message", not its last. */
struct first_error {
	char *buf;
	size_t size;
};

static void keep_first(void *userdata, xmlErrorPtr e)
{
	struct first_error *f = userdata;
	size_t n;

	if (f->buf[0] || !e)
		return;
	snprintf(f->buf, f->size, "body: line %d, column %d: %s", e->line, e->int2,
		 e->message ? e->message : "not well-formed XML");
	n = strlen(f->buf);
	while (n > 0 && (f->buf[n - 1] == '\n' || f->buf[n - 1] == ' '))
		f->buf[--n] = '\0';
}

/**
 * domxml_parse() - a domain XML from @buf
 *
 * -EINVAL for XML that is not well-formed (@err names line and column), that
 * carries a DTD, or whose root is not <domain>.
 */
int domxml_parse(const char *buf, size_t len, xmlDocPtr *ret, char *err, size_t err_size)
{
	struct first_error first = { .buf = err, .size = err_size };
	xmlDocPtr doc = NULL;
	xmlNodePtr root;

	err[0] = '\0';
	xmlSetStructuredErrorFunc(&first, keep_first); /* per thread */
	if (len > 0 && len < (size_t)1 << 30)
		doc = xmlReadMemory(buf, (int)len, "domain.xml", NULL, PARSE_OPTIONS);
	xmlSetStructuredErrorFunc(NULL, NULL);
	if (!doc && !err[0])
		snprintf(err, err_size, len ? "body: not well-formed XML"
					    : "body: empty; expected a libvirt domain XML");
	if (!doc)
		return -EINVAL;
	root = xmlDocGetRootElement(doc);
	if (doc->intSubset)
		snprintf(err, err_size, "body: a DTD is not accepted in a domain XML");
	else if (!is_element(root, "domain"))
		snprintf(err, err_size, "body: the root element is <%s>, not <domain>",
			 root ? (const char *)root->name : "");
	else
		err[0] = '\0';
	if (err[0]) {
		xmlFreeDoc(doc);
		return -EINVAL;
	}
	*ret = doc;
	return 0;
}

int domxml_parse_ipv4(const char *s, uint32_t *ret)
{
	struct in_addr a;

	if (!s || inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*ret = ntohl(a.s_addr);
	return 0;
}

/*
 * The NIC's outbound average rate (<bandwidth><outbound average=…>, kilobytes
 * a second as libvirt and OpenNebula's OUTBOUND_AVG_BW count) as a VF's
 * max_tx_rate (one_rate). 0 when none.
 */
static int nic_rate(xmlNodePtr nic, struct domxml_nic *f, char *err, size_t err_size)
{
	const char *avg = prop(first_child(first_child(nic, "bandwidth"), "outbound"), "average");
	char *end = NULL;
	long long kbytes = avg ? strtoll(avg, &end, 10) : 0;
	uint32_t mbits = 0;

	if (avg && (end == avg || *end || kbytes == 0 || one_rate(kbytes, &mbits) < 0)) {
		snprintf(err, err_size, "devices/interface[%u]/bandwidth/outbound: average "
			 "\"%.20s\" is not a rate in kilobytes a second", f->position, avg);
		return -EINVAL;
	}
	f->max_tx_rate = mbits;
	return 0;
}

static int nic_facts(xmlNodePtr nic, const unsigned char one_prefix[2], struct domxml_nic *f,
		     char *err, size_t err_size)
{
	const char *mac = prop(first_child(nic, "mac"), "address");
	const char *tag = prop(first_child(first_child(nic, "vlan"), "tag"), "id");
	char *end = NULL;
	long vlan = tag ? strtol(tag, &end, 10) : -1;

	if (mac && vfp_mac_parse_unicast(mac, f->mac) < 0) {
		snprintf(err, err_size, "devices/interface[%u]/mac: \"%.40s\" is not a unicast MAC "
			 "address", f->position, mac);
		return -EINVAL;
	}
	if (tag && (end == tag || *end || vlan < 0 || vlan > 4094)) {
		snprintf(err, err_size, "devices/interface[%u]/vlan/tag: id \"%.20s\" is not a "
			 "VLAN in [0, 4094]", f->position, tag);
		return -EINVAL;
	}
	if (nic_rate(nic, f, err, err_size) < 0)
		return -EINVAL;
	f->has_mac = mac != NULL;
	f->vlan = (int)vlan;
	f->has_ip = f->has_mac && !memcmp(f->mac, one_prefix, 2);
	f->ip = (uint32_t)f->mac[2] << 24 | (uint32_t)f->mac[3] << 16 | (uint32_t)f->mac[4] << 8 |
		f->mac[5];
	return 0;
}

/**
 * domxml_sriov_nics() - the <interface>s on a configured SR-IOV network, in order
 *
 * Matched by <source bridge=…> or <source network=…> against the config's
 * "networks". @ret is NULL when there are none (free() it otherwise).
 */
int domxml_sriov_nics(xmlDocPtr doc, const struct vfp_config *config, struct domxml_nic **ret,
		      size_t *ret_n, char *err, size_t err_size)
{
	struct domxml_nic *nics = NULL;
	unsigned position = 0;
	size_t n = 0;

	for (xmlNodePtr d = devices_of(doc) ? devices_of(doc)->children : NULL; d; d = d->next) {
		xmlNodePtr src = first_child(d, "source");
		const char *pool;
		struct domxml_nic *grown;

		if (!is_element(d, "interface"))
			continue;
		pool = vfp_config_pool_for_network(config, prop(src, "bridge"), prop(src, "network"));
		if (pool && (grown = realloc(nics, (n + 1) * sizeof(*nics)))) {
			nics = grown;
			nics[n] = (struct domxml_nic){
				.node = d, .pool = pool, .position = position,
				.failover = vfp_config_failover_for_network(config, prop(src, "bridge"),
									    prop(src, "network")),
			};
			nics[n].pkey = vfp_config_pkey_for_network(config, prop(src, "bridge"),
								   prop(src, "network"));
			if (nic_facts(d, vfp_config_get_opennebula_mac_prefix(config), &nics[n],
				      err, err_size) < 0) {
				free(nics);
				return -EINVAL;
			}
			n++;
		} else if (pool) {
			free(nics);
			return -ENOMEM;
		}
		position++;
	}
	*ret = nics;
	*ret_n = n;
	return 0;
}

/* The domain's <name> (free() it), or NULL when it has none. */
char *domxml_get_name(xmlDocPtr doc)
{
	xmlChar *s = xmlNodeGetContent(first_child(xmlDocGetRootElement(doc), "name"));
	char *name = s && *s ? strdup((const char *)s) : NULL;

	xmlFree(s);
	return name;
}

/**
 * domxml_ensure_uuid() - the domain's UUID; one is added when it has none
 *
 * Leases follow the domain by UUID, so a domain needs one before it exists.
 */
int domxml_ensure_uuid(xmlDocPtr doc, char uuid[37])
{
	xmlNodePtr root = xmlDocGetRootElement(doc), node = first_child(root, "uuid");
	xmlChar *s = node ? xmlNodeGetContent(node) : NULL;
	unsigned char b[16];

	if (node) {
		bool ok = s && vfp_uuid_is_valid((const char *)s);

		if (ok)
			for (int i = 0; i < 37; i++)
				uuid[i] = (char)((s[i] >= 'A' && s[i] <= 'F') ? s[i] + 32 : s[i]);
		xmlFree(s);
		return ok ? 0 : -EINVAL;
	}
	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return -EIO;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(uuid, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
	node = xmlNewNode(NULL, BAD_CAST "uuid");
	xmlNodeSetContent(node, BAD_CAST uuid);
	if (first_child(root, "name"))
		xmlAddNextSibling(first_child(root, "name"), node);
	else
		xmlAddChild(root, node);
	return 0;
}

/* @device in place of @nic's <interface>, which is freed; its <boot order> kept. */
void domxml_replace_nic(const struct domxml_nic *nic, xmlNodePtr device)
{
	xmlNodePtr boot = first_child(nic->node, "boot");

	if (boot && !first_child(device, "boot")) {
		xmlUnlinkNode(boot);
		xmlAddChild(device, boot);
	}
	xmlReplaceNode(nic->node, device);
	xmlFreeNode(nic->node);
}

/*
 * @device before @nic's <interface>, indented as it is (a failover pair's
 * standby), with the NIC's <target dev> when it has none: the tap keeps the
 * name the manager gave it (OpenNebula's one-<VM>-<NIC>, which its network
 * drivers and monitoring look for).
 */
void domxml_insert_before_nic(const struct domxml_nic *nic, xmlNodePtr device)
{
	xmlNodePtr indent = nic->node->prev, target = first_child(nic->node, "target");

	if (target && prop(target, "dev") && !first_child(device, "target"))
		xmlAddChild(device, xmlCopyNode(target, 1));

	xmlAddPrevSibling(nic->node, device);
	if (indent && indent->type == XML_TEXT_NODE && xmlIsBlankNode(indent))
		xmlAddPrevSibling(nic->node, xmlNewText(indent->content));
}

/* @device after the last device, indented as the one before it. */
void domxml_append_device(xmlDocPtr doc, xmlNodePtr device)
{
	xmlNodePtr devices = devices_of(doc), last = NULL;

	if (!devices) {
		devices = xmlNewChild(xmlDocGetRootElement(doc), NULL, BAD_CAST "devices", NULL);
	}
	for (xmlNodePtr n = devices->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE)
			last = n;
	if (!last) {
		xmlAddChild(devices, device);
		return;
	}
	xmlAddNextSibling(last, device);
	if (last->prev && last->prev->type == XML_TEXT_NODE && xmlIsBlankNode(last->prev))
		xmlAddPrevSibling(device, xmlNewText(last->prev->content));
}

/*
 * Device @xml as a VF's restore point keeps it (a device prepared by an
 * earlier request), as a new, unlinked node of @doc; NULL when it is no XML.
 */
xmlNodePtr domxml_device_node(xmlDocPtr doc, const char *xml)
{
	xmlDocPtr d = xmlReadMemory(xml, (int)strlen(xml), "device.xml", NULL, PARSE_OPTIONS);
	xmlNodePtr n = d ? xmlDocCopyNode(xmlDocGetRootElement(d), doc, 1) : NULL;

	xmlFreeDoc(d);
	return n;
}

/* The document as text, without an XML declaration, whitespace as it came (free() it). */
char *domxml_format(xmlDocPtr doc)
{
	xmlBufferPtr buf = xmlBufferCreate();
	char *out = NULL;

	if (buf && xmlNodeDump(buf, doc, xmlDocGetRootElement(doc), 0, 0) >= 0 &&
	    asprintf(&out, "%s\n", (const char *)xmlBufferContent(buf)) < 0)
		out = NULL;
	xmlBufferFree(buf);
	return out;
}

/*
 * One attribute of a PCI address as libvirt reads it (virXMLPropUInt, base
 * 0): the whole value (xmlGetProp, entities and all), 0 when absent.
 */
static bool address_field(xmlNodePtr a, const char *name, unsigned long max, unsigned long *ret)
{
	xmlChar *v = xmlGetProp(a, BAD_CAST name);
	const char *s = (const char *)v;
	char *end = NULL;
	bool ok;

	if (!v) {
		*ret = 0;
		return true;
	}
	errno = 0;
	*ret = strtoul(s, &end, 0);
	ok = end != s && !*end && !errno && !strchr(s, '-') && *ret <= max;
	xmlFree(v);
	return ok;
}

/*
 * The PCI address of a hostdev's <source>, as libvirt reads it
 * (virPCIDeviceAddressParseXML): its first <address>, a missing domain,
 * bus, slot or function 0, and a <source> with no <address> at all
 * 0000:00:00.0. false when libvirt would refuse it (no <source>).
 */
static bool pci_of(xmlNodePtr source, char out[16])
{
	xmlNodePtr a = first_child(source, "address");
	unsigned long v[4] = { 0, 0, 0, 0 };

	if (!source)
		return false;
	if (a && (!address_field(a, "domain", 0xffff, &v[0]) ||
		  !address_field(a, "bus", 0xff, &v[1]) || !address_field(a, "slot", 0x1f, &v[2]) ||
		  !address_field(a, "function", 7, &v[3])))
		return false;
	snprintf(out, 16, "%04lx:%02lx:%02lx.%lx", v[0], v[1], v[2], v[3]);
	return true;
}

/* Whether @d is a device libvirt passes through by PCI address: <hostdev type='pci'> or
 * <interface type='hostdev'>, whatever its mode or managed (more is checked, never less). */
static bool is_pci_passthrough(xmlNodePtr d)
{
	xmlChar *type = d->type == XML_ELEMENT_NODE ? xmlGetProp(d, BAD_CAST "type") : NULL;
	bool yes = type && ((is_element(d, "hostdev") && !strcmp((char *)type, "pci")) ||
			    (is_element(d, "interface") && !strcmp((char *)type, "hostdev")));

	xmlFree(type);
	return yes;
}

void domxml_strv_free(char **list, size_t n)
{
	for (size_t i = 0; list && i < n; i++)
		free(list[i]);
	free(list);
}

static int strv_append(char ***list, size_t *n, size_t *cap, const char *s)
{
	if (!GREEDY_REALLOC(*list, *cap, *n + 1) || !((*list)[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

/**
 * domxml_doc_pci_hostdevs() - the PCI addresses parsed domain @doc passes
 * through (hostdevs and hostdev interfaces), read as libvirt reads them:
 * in every <devices> of the domain (libvirt's "./devices/hostdev" takes
 * them all), a missing address attribute 0
 * @ret_list: free with domxml_strv_free(*@ret_list, *@ret_n)
 */
int domxml_doc_pci_hostdevs(xmlDocPtr doc, char ***ret_list, size_t *ret_n)
{
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	char **list = NULL, pci[16];
	size_t n = 0, cap = 0;
	int r = 0;

	for (xmlNodePtr devs = root ? root->children : NULL; r >= 0 && devs; devs = devs->next) {
		if (!is_element(devs, "devices"))
			continue;
		for (xmlNodePtr d = devs->children; r >= 0 && d; d = d->next)
			if (is_pci_passthrough(d) && pci_of(first_child(d, "source"), pci))
				r = strv_append(&list, &n, &cap, pci);
	}
	if (r < 0) {
		domxml_strv_free(list, n);
		return r;
	}
	*ret_list = list;
	*ret_n = n;
	return 0;
}

/**
 * domxml_pci_hostdevs() - domxml_doc_pci_hostdevs() of the domain XML
 * string @xml (as libvirt returns it, NUL-terminated)
 *
 * XML that does not parse passes nothing through: not an error.
 */
int domxml_pci_hostdevs(const char *xml, char ***ret_list, size_t *ret_n)
{
	xmlDocPtr doc = xmlReadMemory(xml, (int)strnlen(xml, (size_t)1 << 30), "domain.xml", NULL,
				      PARSE_OPTIONS);
	int r = domxml_doc_pci_hostdevs(doc, ret_list, ret_n);

	xmlFreeDoc(doc);
	return r;
}

/* 1 when domain @xml passes @pci through, 0 when not, -ENOMEM. */
int domxml_has_pci_hostdev(const char *xml, const char *pci)
{
	char **list = NULL;
	size_t n = 0;
	int r = domxml_pci_hostdevs(xml, &list, &n);

	for (size_t i = 0; r >= 0 && i < n; i++)
		if (strcmp(list[i], pci) == 0)
			r = 1;
	domxml_strv_free(list, n);
	return r;
}

/**
 * domxml_replace_pci_hostdev() - @device in place of the <hostdev> of PCI
 * address @pci (oned's PCI = [...] device), which is freed; its guest
 * <address> and <boot order> kept. -ENOENT when @doc has no such hostdev.
 */
int domxml_replace_pci_hostdev(xmlDocPtr doc, const char *pci, xmlNodePtr device)
{
	char at[16];

	for (xmlNodePtr d = devices_of(doc) ? devices_of(doc)->children : NULL; d; d = d->next) {
		const char *type = prop(d, "type");

		if (!is_element(d, "hostdev") || !type || strcmp(type, "pci") ||
		    !pci_of(first_child(d, "source"), at) || strcmp(at, pci))
			continue;
		for (const char *keep = "address"; keep; keep = strcmp(keep, "boot") ? "boot" : NULL) {
			xmlNodePtr n = first_child(d, keep);

			if (n && !first_child(device, keep)) {
				xmlUnlinkNode(n);
				xmlAddChild(device, n);
			}
		}
		xmlReplaceNode(d, device);
		xmlFreeNode(d);
		return 0;
	}
	return -ENOENT;
}

/* The <alias name=…> of device @xml into @buf ("" when it has none). */
void domxml_device_alias(const char *xml, char *buf, size_t size)
{
	xmlDocPtr d = xmlReadMemory(xml, (int)strnlen(xml, (size_t)1 << 20), "device.xml", NULL,
				    PARSE_OPTIONS);
	const char *name = prop(first_child(d ? xmlDocGetRootElement(d) : NULL, "alias"), "name");

	snprintf(buf, size, "%s", name ? name : "");
	xmlFreeDoc(d);
}

/* 1 when a device of domain @xml has the alias @alias, 0 when none has (or @xml is no XML). */
int domxml_has_alias(const char *xml, const char *alias)
{
	xmlDocPtr doc = xmlReadMemory(xml, (int)strnlen(xml, (size_t)1 << 30), "domain.xml", NULL,
				      PARSE_OPTIONS);
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	int found = 0;

	for (xmlNodePtr devs = root ? root->children : NULL; !found && devs; devs = devs->next) {
		if (!is_element(devs, "devices"))
			continue;
		for (xmlNodePtr d = devs->children; !found && d; d = d->next) {
			const char *name = prop(first_child(d, "alias"), "name");

			found = name && strcmp(name, alias) == 0;
		}
	}
	xmlFreeDoc(doc);
	return found;
}
