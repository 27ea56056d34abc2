/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host's PCIe tree, for placement near a device and GET /v1/pcie. */
#pragma once

#include "agent/agent.h"

struct vfp_pcie_topo *agent_get_pcie_topo(struct agent *a);
