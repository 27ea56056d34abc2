/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulated host's config, handed to the agent by vfagentd --simulate
 * (main.c) when no --config names one: its Mellanox VFs in "ib", its Intel
 * VFs in "eth".
 */
#include <stddef.h>

#include "agent/sim/sim-host.h"

const char *sim_host_config(void)
{
	return "{\"pools\": ["
	       "  {\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"], \"link_types\": "
	       "[\"infiniband\"]}},"
	       "  {\"name\": \"eth\", \"selector\": {\"vendors\": [\"8086\"]}, \"grow\": {\"step\": 2}}],"
	       " \"networks\": [{\"bridge\": \"sriov_ib0\", \"pool\": \"ib\"},"
	       "              {\"bridge\": \"sriov_eth0\", \"pool\": \"eth\"}],"
	       " \"guids\": {\"first\": \"02:c9:03:00:00:00:00:01\", \"count\": 4096}}";
}
