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

/* One VPD-R keyword at @p: two letters, a length byte, the value. */
static size_t put_keyword(unsigned char *p, const char *kw, const char *value)
{
	size_t n = strlen(value);

	memcpy(p, kw, 2);
	p[2] = (unsigned char)n;
	memcpy(p + 3, value, n);
	return 3 + n;
}

/**
 * sim_write_vpd() - @addr's vpd file as a ConnectX card's reads: the
 * Identifier String @name, then VPD-R with PN, SN @sn, V3 @v3 and the RV
 * checksum, then the End tag (values under 64 bytes)
 */
int sim_write_vpd(const char *root, const char *addr, const char *name, const char *sn,
		  const char *v3)
{
	unsigned char vpd[512] = { 0 }, sum = 0;
	size_t pos = 0, ro, n = strlen(name);
	char dev[PATH_MAX], path[PATH_MAX];
	FILE *out;
	int r;

	vpd[pos++] = 0x82, vpd[pos++] = (unsigned char)n, vpd[pos++] = 0;
	memcpy(vpd + pos, name, n);
	pos += n;
	ro = pos;
	pos += 3;
	pos += put_keyword(vpd + pos, "PN", "900-9X81E-00EX-ST0");
	pos += put_keyword(vpd + pos, "SN", sn);
	pos += put_keyword(vpd + pos, "V3", v3);
	memcpy(vpd + pos, "RV\x01", 3);
	pos += 4;
	vpd[ro] = 0x90, vpd[ro + 1] = (unsigned char)(pos - ro - 3);
	for (size_t i = 0; i < pos - 1; i++)
		sum = (unsigned char)(sum + vpd[i]);
	vpd[pos - 1] = (unsigned char)-sum; /* the bytes up to RV's sum to zero */
	vpd[pos++] = 0x78;
	r = sim_device_dir(root, addr, dev, sizeof(dev));
	if (r < 0)
		return r;
	sim_pathf(path, sizeof(path), "%s/%s/vpd", root, dev);
	out = fopen(path, "we");
	if (!out)
		return negative_errno();
	n = fwrite(vpd, 1, pos, out);
	return fclose(out) != 0 || n != pos ? -EIO : 0;
}
