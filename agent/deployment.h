/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A deployment file (a libvirt domain XML, OpenNebula's) in, the same domain
 * with VFs out: each NIC on a configured SR-IOV network becomes a VF from
 * that network's pool; each InfiniBand VF also gets a dummy NIC whose MAC
 * carries its IPv4 address (from the NIC's MAC of OpenNebula's MAC_PREFIX,
 * or the request's list), appended in IB order. One allocation per NIC (of
 * one VF, the NIC's MAC in its settings), owned by the domain (by UUID); the VFs are ready for the domain and their
 * lease waits for it. The same file posted again gets the same VFs. A
 * domain with no SR-IOV NIC comes back byte for byte; any failure gives
 * back every claim made for it.
 */
#pragma once

#include <stddef.h>

#include "agent/agent.h"

struct agent_deployment {
	const char *xml;
	size_t len;
	const char *owner; /* the owner's name, or NULL for the domain's <name> */
	const char *ips;   /* "10.1.0.5,10.1.0.6": IB VFs' addresses in order, or
			      "MAC=10.1.0.5,…" by NIC MAC; or NULL */
	const char *vlans; /* "MAC=120,…": VLANs of NICs with no <vlan>, or NULL */
	const char *pkeys; /* "MAC=0x8001,…": IB partitions (OpenNebula's PKEY), or NULL */
	const char *spoofchks, *trusts; /* "MAC=yes,MAC=no,…" (OpenNebula's YES/NO), or NULL */
	const char *security_groups; /* "MAC=0+101,…": OpenNebula's SECURITY_GROUPS, or NULL */
};

int agent_rewrite_deployment(struct agent *a, const struct agent_deployment *d, char **ret_xml,
			     char *ret_ids, size_t ids_size, char *err, size_t err_size);
