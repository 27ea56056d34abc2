/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PCIe tree's layout, shared by pcie-topo.c (scan, distances) and pcie-topo-json.c. */
#pragma once

#include "private.h"
#include "vpd.h"

/* What a function is in the tree, from its PCIe capability (or its place when config is short). */
enum pcie_role {
	PCIE_ENDPOINT,
	PCIE_ROOT_PORT,
	PCIE_SWITCH_UPSTREAM,
	PCIE_SWITCH_DOWNSTREAM,
	PCIE_BRIDGE, /* a PCI(e)-to-PCI bridge: one more hop, like a switch */
};

/* The devices worth being near, by PCI class. */
enum pcie_kind {
	PCIE_KIND_OTHER,
	PCIE_KIND_GPU,	       /* 0x03xxxx display controllers */
	PCIE_KIND_ACCELERATOR, /* 0x12xxxx processing accelerators */
	PCIE_KIND_NVME,	       /* 0x0108xx non-volatile memory controllers */
};

struct pcie_dev {
	char pci[VFP_PCI_ADDR_LEN + 1];
	char root[24]; /* the root complex as the kernel names its bus: "pci0000:3a" */
	int parent;    /* index of the bridge above it; -1: on the root bus */
	unsigned class;
	char vendor[8], device[8];
	int numa_node; /* -1: none or unknown */
	enum pcie_role role;
	enum pcie_kind kind;
	int acs_ctrl; /* the ACS control register; -1: no ACS or config not readable */
	bool is_vf;
	char vpd_v3[VFP_VPD_VALUE_MAX + 1]; /* ConnectX functions only; "" when none */
	int data_direct; /* a PF's Data Direct DMA function (its data path); -1: none */
};

struct vfp_pcie_topo {
	int refcount;
	struct pcie_dev *devs; /* sorted by address */
	size_t n;
};

/* ACS P2P Request Redirect: peer requests go up to the root complex instead of across. */
#define PCIE_ACS_CTRL_RR 0x0004

const char *pcie_role_to_string(enum pcie_role r);
const char *pcie_kind_to_string(enum pcie_kind k);
const struct pcie_dev *pcie_topo_find(const struct vfp_pcie_topo *t, const char *pci);
const struct pcie_dev *pcie_topo_data_path(const struct vfp_pcie_topo *t,
					    const struct pcie_dev *d);
bool pcie_topo_acs_redirects(const struct vfp_pcie_topo *t, const struct pcie_dev *a,
			     const struct pcie_dev *b);
int pcie_config_parse(const unsigned char *cfg, size_t len, int *ret_port_type, int *ret_acs);
