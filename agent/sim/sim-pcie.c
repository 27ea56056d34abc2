/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PCIe functions that are not SR-IOV PFs, with the config space a bridge
 * shows root: a PCIe capability naming its port type (root port, switch
 * upstream or downstream port) and, where the port has it, ACS with its
 * control register. Trees of real machines are built from tables of them.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "libvfpool/macro.h"
#include "agent/sim/sim-host.h"

#define CFG_CAP_PCIE 0x40
#define CFG_EXT_ACS 0x100

/* Config space as the kernel's config file gives it to root (4 KiB with ACS, else 256 B). */
static int write_config(const char *root, const char *dev, const struct sim_pcie_fn *f)
{
	unsigned char cfg[4096] = { 0 };
	size_t len = f->acs_ctrl >= 0 ? sizeof(cfg) : 256;
	unsigned vendor = 0, device = 0;
	char path[PATH_MAX];
	FILE *out;
	size_t n;

	sscanf(f->vendor, "%4x", &vendor);
	sscanf(f->device, "%4x", &device);
	cfg[0] = vendor & 0xff, cfg[1] = vendor >> 8, cfg[2] = device & 0xff, cfg[3] = device >> 8;
	cfg[0x06] = 0x10; /* status: capabilities list */
	cfg[0x09] = f->class & 0xff, cfg[0x0a] = (f->class >> 8) & 0xff, cfg[0x0b] = f->class >> 16;
	cfg[0x0e] = (f->class >> 8) == 0x0604 ? 0x01 : 0x00; /* header type */
	cfg[0x34] = CFG_CAP_PCIE;
	cfg[CFG_CAP_PCIE] = 0x10; /* PCI Express, version 2, the port type in bits 7:4 */
	cfg[CFG_CAP_PCIE + 2] = (unsigned char)(((unsigned)f->port_type << 4) | 0x2);
	if (f->acs_ctrl >= 0) {
		cfg[CFG_EXT_ACS] = 0x0d; /* ACS, version 1, last in the list */
		cfg[CFG_EXT_ACS + 2] = 0x01;
		cfg[CFG_EXT_ACS + 4] = 0x5f; /* capability: SV TB RR CR UF DT */
		cfg[CFG_EXT_ACS + 6] = f->acs_ctrl & 0xff;
		cfg[CFG_EXT_ACS + 7] = (unsigned)f->acs_ctrl >> 8;
	}
	sim_pathf(path, sizeof(path), "%s/%s/config", root, dev);
	out = fopen(path, "we");
	if (!out)
		return negative_errno();
	n = fwrite(cfg, 1, len, out);
	if (fclose(out) != 0 || n != len)
		return -EIO;
	return 0;
}

/**
 * sim_add_pcie_fn() - a function of the PCIe tree (a bridge, a GPU, an NVMe
 * drive) with its ids, class, NUMA node and, when @f->port_type >= 0, its
 * config space
 */
int sim_add_pcie_fn(const char *root, const struct sim_pcie_fn *f)
{
	struct sim_pci_dev d = { .addr = f->addr, .parent = f->parent, .vendor = f->vendor,
				 .device = f->device, .class = f->class, .driver = f->driver,
				 .numa_node = f->numa_node, .iommu_group = -1 };
	char dev[PATH_MAX];
	int r = sim_add_pci_device(root, &d);

	if (r >= 0 && f->port_type >= 0)
		r = sim_device_dir(root, f->addr, dev, sizeof(dev));
	if (r >= 0 && f->port_type >= 0)
		r = write_config(root, dev, f);
	return r;
}

/* Every function of @fns, in order (bridges before what hangs off them). */
int sim_add_pcie_tree(const char *root, const struct sim_pcie_fn *fns, size_t n)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++)
		r = sim_add_pcie_fn(root, &fns[i]);
	return r;
}
