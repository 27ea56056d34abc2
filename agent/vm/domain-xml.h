/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A libvirt domain XML (OpenNebula's deployment file) read and rewritten:
 * the NICs on configured SR-IOV networks found, each replaced by its VF's
 * device, the IPoIB dummy NICs appended; and the PCI hostdevs a domain holds.
 * Pure: no libvirt, no ledger. The parser loads no DTD and expands no entity.
 */
#pragma once

#include <libxml/tree.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libvfpool/libvfpool.h"

struct domxml_nic {
	xmlNodePtr node;
	const char *pool; /* the config's pool name */
	const struct vfp_failover *failover; /* the network's standby, or NULL */
	unsigned position; /* among the domain's <interface>s, from 0 */
	bool has_mac;
	unsigned char mac[6];
	int vlan; /* -1: none */
	long long max_tx_rate; /* Mbit/s from <bandwidth><outbound average>; 0: none */
	bool has_ip;
	uint32_t ip; /* from a MAC of OpenNebula's MAC_PREFIX */
	int pkey; /* its network's IB partition in the config; VFP_UNSET: none */
};

int domxml_parse(const char *buf, size_t len, xmlDocPtr *ret, char *err, size_t err_size);
int domxml_sriov_nics(xmlDocPtr doc, const struct vfp_config *config, struct domxml_nic **ret,
		      size_t *ret_n, char *err, size_t err_size);
char *domxml_get_name(xmlDocPtr doc);
int domxml_ensure_uuid(xmlDocPtr doc, char uuid[37]);
void domxml_replace_nic(const struct domxml_nic *nic, xmlNodePtr device);
void domxml_insert_before_nic(const struct domxml_nic *nic, xmlNodePtr device);
void domxml_append_device(xmlDocPtr doc, xmlNodePtr device);
int domxml_replace_pci_hostdev(xmlDocPtr doc, const char *pci, xmlNodePtr device);
xmlNodePtr domxml_device_node(xmlDocPtr doc, const char *xml);
char *domxml_format(xmlDocPtr doc);
int domxml_doc_pci_hostdevs(xmlDocPtr doc, char ***ret_list, size_t *ret_n);
int domxml_pci_hostdevs(const char *xml, char ***ret_list, size_t *ret_n);
int domxml_has_pci_hostdev(const char *xml, const char *pci);
void domxml_strv_free(char **list, size_t n);
int domxml_parse_ipv4(const char *s, uint32_t *ret);
void domxml_device_alias(const char *xml, char *buf, size_t size);
int domxml_has_alias(const char *xml, const char *alias);
