/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Forwarding database entries (RTM_NEWNEIGH / RTM_DELNEIGH of family
 * AF_BRIDGE), as iproute2's `bridge fdb add|del` sends them, built over a
 * buffer: no socket here.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nl_fdb_where {
	/*
	 * In the bridge the port @ifindex is in (NTF_MASTER), static (NUD_NOARP):
	 * `bridge fdb add MAC dev PORT master static`. The bridge forwards frames
	 * for the address to that port, and puts it into the unicast filter of
	 * any port it keeps out of promiscuous mode.
	 */
	NL_FDB_BRIDGE_STATIC,
	/*
	 * On the device itself (NTF_SELF), permanent: `bridge fdb add MAC dev
	 * DEV`. A driver without its own FDB takes it into the device's unicast
	 * address list (the kernel's ndo_dflt_fdb_add(): it answers EEXIST for
	 * one there already and takes only a permanent entry).
	 */
	NL_FDB_DEVICE,
};

size_t nl_build_fdb(void *buf, uint32_t seq, bool add, int ifindex, const unsigned char mac[6],
		    enum nl_fdb_where where);
