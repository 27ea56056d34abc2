/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Netlink replies as the kernel might send them, or not: a link (RTM_NEWLINK),
 * an ack, a PF's VF list (IFLA_VFINFO_LIST), the RDMA netns mode and a
 * device dump. The first byte picks the parser and the VF index.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent/netlink/nlmsg.h"
#include "agent/netlink/rdmamsg.h"
#include "agent/netlink/vfinfo.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *buf;
	struct nl_link link;
	struct vfp_vf_config vf;
	char msg[256];
	uint32_t index;
	int mode;

	if (size < 1)
		return 0;
	/* aligned, as a recv() buffer is; a copy of exactly the bytes, so ASan sees overreads */
	buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	switch (data[0] % 5) {
	case 0: nl_parse_link(buf, size - 1, &link); break;
	case 1: nl_parse_ack(buf, size - 1, msg, sizeof(msg)); break;
	case 2: vfinfo_parse(buf, size - 1, data[0] / 5, &vf); break;
	case 3: rdmamsg_parse_netns_mode(buf, size - 1, &mode); break;
	case 4: rdmamsg_find_dev(buf, size - 1, "mlx5_1", &index); break;
	}
	free(buf);
	return 0;
}
