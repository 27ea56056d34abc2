/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The libvirt device XML that hands a VF to a guest: an Ethernet VF as
 * <interface type='hostdev'> with <mac> and <vlan> (libvirt sets them on the
 * PF), any other VF as <hostdev mode='subsystem' type='pci'>; and the dummy
 * virtio NIC, link down, whose MAC carries an IPoIB address (DESIGN.md §5).
 */
#pragma once

#include <libxml/tree.h>
#include <stdbool.h>
#include <stdint.h>

struct hostdev_spec {
	const char *pci; /* 0000:3b:00.1 */
	bool ethernet;
	bool managed;	 /* libvirt binds vfio-pci itself */
	bool has_mac;
	unsigned char mac[6];
	int vlan;	 /* -1: none */
	const char *teaming; /* the standby's alias: <teaming type='transient'>, and the VF's own
			      * alias with "-vf" appended; NULL: none */
};

xmlNodePtr hostdev_xml_node(const struct hostdev_spec *s);
char *hostdev_xml_string(const struct hostdev_spec *s);
char *hostdev_xml_text(xmlNodePtr n);
char *hostdev_xml_with_source(const char *xml, const char *pci);
xmlNodePtr hostdev_xml_dummy_nic(const unsigned char prefix[2], uint32_t ipv4);
void hostdev_xml_ipoib_mac(const unsigned char prefix[2], uint32_t ipv4, unsigned char mac[6]);
void hostdev_xml_stable_mac(const char *allocation_id, unsigned index, unsigned char mac[6]);
