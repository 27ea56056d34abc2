/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Recorded shapes of real SR-IOV cards (DESIGN.md §7) and the default
 * simulated host that `vfagentd --simulate` and the demo start from.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "libvfpool/macro.h"
#include "agent/sim/sim-host.h"

struct card_shape {
	const char *vendor, *pf_device, *vf_device;
	unsigned class;
	const char *pf_driver, *vf_driver;
	int arphrd;             /* 1 Ethernet, 32 InfiniBand */
	const char *rdma_prefix; /* NULL: no RDMA device */
	unsigned offset, stride; /* sriov_offset, sriov_stride */
};

static const struct card_shape cards[] = {
	[SIM_CX6_IB] = { "15b3", "101b", "101c", 0x020700, "mlx5_core", "mlx5_core", 32, "mlx5", 1,
			 1 },
	[SIM_CX3_IB] = { "15b3", "1003", "1004", 0x028000, "mlx4_core", "mlx4_core", 32, "mlx4", 1,
			 1 },
	[SIM_E810] = { "8086", "159b", "1889", 0x020000, "ice", "iavf", 1, NULL, 8, 1 },
	[SIM_X520] = { "8086", "10fb", "10ed", 0x020000, "ixgbe", "ixgbevf", 1, NULL, 128, 2 },
	[SIM_IGB] = { "8086", "10c9", "10ca", 0x020000, "igb", "igbvf", 1, NULL, 128, 2 },
	[SIM_CX8] = { "15b3", "1023", "101e", 0x020000, "mlx5_core", "mlx5_core", 1, "mlx5", 1, 1 },
};

const char *sim_card_vf_driver(enum sim_card card)
{
	return cards[card].vf_driver;
}

/* VF n sits at routing id PF + offset + n * stride, as the SR-IOV capability says. */
int sim_vf_addr(const struct sim_pf_spec *spec, unsigned index, char *buf, size_t size)
{
	const struct card_shape *c = &cards[spec->card];
	unsigned dom, bus, slot, fn, rid;

	if (sscanf(spec->addr, "%4x:%2x:%2x.%1x", &dom, &bus, &slot, &fn) != 4)
		return -EINVAL;
	rid = (bus << 8 | slot << 3 | fn) + c->offset + index * c->stride;
	if (rid > 0xffff)
		return -ERANGE;
	snprintf(buf, size, "%04x:%02x:%02x.%x", dom, rid >> 8, (rid >> 3) & 0x1f, rid & 7);
	return 0;
}

static void hw_address(const struct card_shape *c, unsigned seed, char *buf, size_t size)
{
	if (c->arphrd == 32)
		snprintf(buf, size,
			 "00:00:10:87:fe:80:00:00:00:00:00:00:02:c9:03:00:00:%02x:%02x:%02x",
			 (seed >> 16) & 0xff, (seed >> 8) & 0xff, seed & 0xff);
	else
		snprintf(buf, size, "fa:16:3e:%02x:%02x:%02x", (seed >> 16) & 0xff,
			 (seed >> 8) & 0xff, seed & 0xff);
}

/* The netdev and RDMA device a bound function has; @n is -1 for the PF. */
static int add_functions(const char *root, const struct sim_pf_spec *spec, const char *addr,
			 int n)
{
	const struct card_shape *c = &cards[spec->card];
	char ifname[32], mac[64], rdma[32];
	unsigned seed = (unsigned)(spec->iommu_group + 1 + n) * 0x101u;
	int r = 0;

	if (spec->netdev) {
		if (n < 0)
			sim_pathf(ifname, sizeof(ifname), "%s", spec->netdev);
		else
			sim_pathf(ifname, sizeof(ifname), "%sv%d", spec->netdev, n);
		hw_address(c, seed, mac, sizeof(mac));
		r = sim_add_netdev(root, addr, ifname, c->arphrd, mac);
	}
	if (r >= 0 && c->rdma_prefix) {
		sim_pathf(rdma, sizeof(rdma), "%s_%d", c->rdma_prefix, spec->rdma_index + 1 + n);
		r = sim_add_rdma_device(root, addr, rdma, c->arphrd == 32 ? "InfiniBand" : "Ethernet");
	}
	return r;
}

/* VF @index of the PF in @spec, bound to @driver (NULL: unbound). */
int sim_add_vf(const char *root, const struct sim_pf_spec *spec, unsigned index,
	       const char *driver)
{
	const struct card_shape *c = &cards[spec->card];
	char addr[16], pf_dev[PATH_MAX], vf_dev[PATH_MAX], parent[PATH_MAX], rel[PATH_MAX];
	struct sim_pci_dev d = { .addr = addr, .parent = parent, .vendor = c->vendor,
				 .device = c->vf_device, .class = c->class, .driver = driver,
				 .numa_node = spec->numa_node,
				 .iommu_group = spec->iommu_group + 1 + (int)index };
	int r;

	r = sim_vf_addr(spec, index, addr, sizeof(addr));
	if (r >= 0)
		r = sim_device_dir(root, spec->addr, pf_dev, sizeof(pf_dev));
	if (r < 0)
		return r;
	/* the VF is the PF's sibling: same parent bridge under devices/ */
	sim_pathf(parent, sizeof(parent), "%s", pf_dev + strlen("devices/"));
	*strrchr(parent, '/') = '\0';
	r = sim_add_pci_device(root, &d);
	if (r >= 0)
		r = sim_device_dir(root, addr, vf_dev, sizeof(vf_dev));
	sim_pathf(rel, sizeof(rel), "%s/driver_override", vf_dev);
	if (r >= 0)
		r = sim_write(root, rel, "(null)\n");
	/* a VF resets by FLR (SR-IOV requires it); writes to reset go to the simulated kernel */
	sim_pathf(rel, sizeof(rel), "%s/reset_method", vf_dev);
	if (r >= 0)
		r = sim_write(root, rel, "flr\n");
	sim_pathf(rel, sizeof(rel), "%s/reset", vf_dev);
	if (r >= 0)
		r = sim_write(root, rel, "%s", "");
	sim_pathf(rel, sizeof(rel), "%s/physfn", vf_dev);
	if (r >= 0)
		r = sim_symlink(root, rel, pf_dev);
	sim_pathf(rel, sizeof(rel), "%s/virtfn%u", pf_dev, index);
	if (r >= 0)
		r = sim_symlink(root, rel, vf_dev);
	if (r >= 0 && driver && strcmp(driver, c->vf_driver) == 0)
		r = add_functions(root, spec, addr, (int)index);
	return r;
}

/* The netdev and RDMA device of a VF that its driver has just bound. */
int sim_add_vf_functions(const char *root, const struct sim_pf_spec *spec, const char *vf_addr)
{
	char addr[16];

	for (unsigned i = 0; i < spec->totalvfs; i++)
		if (sim_vf_addr(spec, i, addr, sizeof(addr)) >= 0 && strcmp(addr, vf_addr) == 0)
			return add_functions(root, spec, vf_addr, (int)i);
	return -ENODEV;
}

/*
 * mlx4's P_Key tables: the port's physical one (iov/ports/1/pkeys/J, the
 * default partition at 0, as a subnet manager leaves it) and each VF's
 * mapping onto it (iov/<vf>/ports/1/pkey_idx/I: index 0 on 0, the rest on
 * none, as the kernel starts a VF).
 */
static int add_mlx4_pkey_files(const char *root, const struct sim_pf_spec *spec, const char *pf_dev)
{
	char rel[PATH_MAX], vf[16];
	int r = 0;

	for (unsigned j = 0; r >= 0 && j < 16; j++) {
		sim_pathf(rel, sizeof(rel), "%s/infiniband/mlx4_%d/iov/ports/1/pkeys/%u", pf_dev,
			  spec->rdma_index, j);
		r = sim_write(root, rel, "%s\n", j == 0 ? "0xffff" : "0x0000");
	}
	for (unsigned i = 0; r >= 0 && i < spec->numvfs; i++) {
		r = sim_vf_addr(spec, i, vf, sizeof(vf));
		for (unsigned k = 0; r >= 0 && k < 16; k++) {
			sim_pathf(rel, sizeof(rel), "%s/infiniband/mlx4_%d/iov/%s/ports/1/pkey_idx/%u",
				  pf_dev, spec->rdma_index, vf, k);
			r = sim_write(root, rel, "%s\n", k == 0 ? "0" : "none");
		}
	}
	return r;
}

/*
 * GUID files of IB VFs: mlx5's device/sriov/N for VF N, mlx4's
 * iov/ports/1/admin_guids/S for slave S (0 is the PF, VF N is slave N+1).
 */
static int add_guid_files(const char *root, const struct sim_pf_spec *spec, const char *pf_dev)
{
	char rel[PATH_MAX];
	int r = 0;

	for (unsigned i = 0; r >= 0 && i < spec->numvfs; i++) {
		if (spec->card == SIM_CX6_IB) {
			sim_pathf(rel, sizeof(rel), "%s/sriov/%u/node", pf_dev, i);
			r = sim_write(root, rel, "00:00:00:00:00:00:00:00\n");
			sim_pathf(rel, sizeof(rel), "%s/sriov/%u/port", pf_dev, i);
			if (r >= 0)
				r = sim_write(root, rel, "00:00:00:00:00:00:00:00\n");
			sim_pathf(rel, sizeof(rel), "%s/sriov/%u/policy", pf_dev, i);
			if (r >= 0)
				r = sim_write(root, rel, "Follow\n");
		} else if (spec->card == SIM_CX3_IB) {
			for (unsigned s = i == 0 ? 0 : i + 1; r >= 0 && s <= i + 1; s++) {
				sim_pathf(rel, sizeof(rel),
					  "%s/infiniband/mlx4_%d/iov/ports/1/admin_guids/%u", pf_dev,
					  spec->rdma_index, s);
				r = sim_write(root, rel, "0x0000000000000000\n");
			}
		}
	}
	return r;
}

static int add_sriov_files(const char *root, const struct sim_pf_spec *spec, const char *pf_dev)
{
	const struct card_shape *c = &cards[spec->card];
	static const char *const attrs[] = { "sriov_totalvfs", "sriov_numvfs", "sriov_offset",
					     "sriov_stride", "sriov_vf_device",
					     "sriov_drivers_autoprobe" };
	unsigned values[] = { spec->totalvfs, spec->numvfs, c->offset, c->stride, 0, 1 };
	char rel[PATH_MAX];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(attrs); i++) {
		sim_pathf(rel, sizeof(rel), "%s/%s", pf_dev, attrs[i]);
		if (i == 4)
			r = sim_write(root, rel, "%s\n", c->vf_device);
		else
			r = sim_write(root, rel, "%u\n", values[i]);
	}
	return r;
}

/**
 * sim_add_pf() - an SR-IOV PF of a known card with spec->numvfs VFs
 *
 * The PF sits behind its own root port. VFs are bound as spec->vf_drivers
 * says, else to the card's VF driver; bound VFs get a netdev and, on
 * Mellanox cards, an RDMA device.
 */
int sim_add_pf(const char *root, const struct sim_pf_spec *spec)
{
	const struct card_shape *c = &cards[spec->card];
	char parent[64], pf_dev[PATH_MAX];
	unsigned dom, bus;
	struct sim_pci_dev d = { .addr = spec->addr, .parent = parent, .vendor = c->vendor,
				 .device = c->pf_device, .class = c->class, .driver = c->pf_driver,
				 .numa_node = spec->numa_node, .iommu_group = spec->iommu_group };
	int r;

	/* behind a root port on the bus before it, as 0000:3b:00.0 sits behind 0000:3a:00.0 */
	if (sscanf(spec->addr, "%4x:%2x", &dom, &bus) != 2)
		return -EINVAL;
	bus = bus ? bus - 1 : 0;
	sim_pathf(parent, sizeof(parent), "pci%04x:%02x/%04x:%02x:00.0", dom, bus, dom, bus);
	if (spec->parent)
		d.parent = spec->parent;
	r = sim_add_pci_device(root, &d);
	if (r >= 0)
		r = sim_device_dir(root, spec->addr, pf_dev, sizeof(pf_dev));
	if (r >= 0)
		r = add_sriov_files(root, spec, pf_dev);
	if (r >= 0)
		r = add_functions(root, spec, spec->addr, -1);
	for (unsigned i = 0; r >= 0 && i < spec->numvfs; i++)
		r = sim_add_vf(root, spec, i, spec->vf_drivers ? spec->vf_drivers[i] : c->vf_driver);
	if (r >= 0)
		r = add_guid_files(root, spec, pf_dev);
	if (r >= 0 && spec->card == SIM_CX3_IB)
		r = add_mlx4_pkey_files(root, spec, pf_dev);
	return r;
}

/*
 * Devices every host has that are not SR-IOV PFs: a host bridge, an NVMe
 * drive, and a NIC whose VFs are not enabled in firmware (no sriov_* files).
 */
static int add_plain_devices(const char *root)
{
	static const struct sim_pci_dev plain[] = {
		{ "0000:00:00.0", NULL, "8086", "2020", 0x060000, NULL, -1, 0 },
		{ "0000:01:00.0", "pci0000:00/0000:00:01.0", "144d", "a808", 0x010802, "nvme", 0, 1 },
		{ "0000:02:00.0", "pci0000:00/0000:00:02.0", "14e4", "165f", 0x020000, "tg3", 0, 2 },
	};
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(plain); i++)
		r = sim_add_pci_device(root, &plain[i]);
	if (r >= 0)
		r = sim_add_netdev(root, "0000:02:00.0", "eno1", 1, "b8:ca:3a:00:00:01");
	return r;
}

#define SWITCH_A "pci0000:36/0000:36:00.0/0000:37:00.0/"
#define SWITCH_B "pci0000:36/0000:36:02.0/0000:5c:00.0/"

/*
 * The PCIe tree of socket 0's first stack, as a GPU server has it: two
 * PCIe switches (Broadcom PEX 8747) under two root ports of root complex
 * pci0000:36, a GPU (an A100, class 0x0302) beside the ConnectX-6 on the
 * first, the ConnectX-3 alone on the second. ACS as Linux sets it with an
 * IOMMU on the root ports; off on the switches' downstream ports, as
 * GPUDirect set-ups want it.
 */
static int add_gpu_switches(const char *root)
{
	static const struct sim_pcie_fn tree[] = {
		{ "0000:36:00.0", "pci0000:36", "8086", "2030", 0x060400, 0, 4, 0x001d, "pcieport" },
		{ "0000:37:00.0", "pci0000:36/0000:36:00.0", "10b5", "8747", 0x060400, 0, 5, -1,
		  "pcieport" },
		{ "0000:38:00.0", SWITCH_A, "10b5", "8747", 0x060400, 0, 6, 0, "pcieport" },
		{ "0000:38:02.0", SWITCH_A, "10b5", "8747", 0x060400, 0, 6, 0, "pcieport" },
		{ "0000:39:00.0", SWITCH_A "0000:38:00.0", "10de", "20b5", 0x030200, 0, 0, -1, NULL },
		{ "0000:36:02.0", "pci0000:36", "8086", "2032", 0x060400, 0, 4, 0x001d, "pcieport" },
		{ "0000:5c:00.0", "pci0000:36/0000:36:02.0", "10b5", "8747", 0x060400, 0, 5, -1,
		  "pcieport" },
		{ "0000:5d:00.0", SWITCH_B, "10b5", "8747", 0x060400, 0, 6, 0, "pcieport" },
	};

	return sim_add_pcie_tree(root, tree, ELEMENTSOF(tree));
}

/**
 * sim_host_build_default() - the simulated host of the demo
 *
 * A ConnectX-6 InfiniBand PF (VFs on mlx5_core, vfio-pci and none) beside a
 * GPU on one PCIe switch, a ConnectX-3 (mlx4_core, VFs sized by module
 * parameter) on another switch of the same root complex, an Intel E810 and
 * an 82599 Ethernet PF behind root ports of their own, and three devices
 * that are not SR-IOV PFs.
 */
int sim_host_build_default(const char *root)
{
	static const char *const cx6_drivers[] = { "mlx5_core", "vfio-pci", NULL, "mlx5_core" };
	const struct sim_pf_spec pfs[] = {
		{ SIM_CX6_IB, "0000:3b:00.0", "ib0", 0, 0, 40, 16, 4, cx6_drivers,
		  SWITCH_A "0000:38:02.0" },
		{ SIM_CX3_IB, "0000:5e:00.0", "ib1", 10, 0, 60, 4, 4, NULL, SWITCH_B "0000:5d:00.0" },
		{ SIM_E810, "0000:af:00.0", "ens5f0", 0, 1, 80, 128, 4, NULL },
		{ SIM_X520, "0000:d8:00.0", "enp216s0f0", 0, -1, 100, 63, 2, NULL },
	};
	int r;

	r = add_plain_devices(root);
	if (r >= 0)
		r = add_gpu_switches(root);
	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(pfs); i++)
		r = sim_add_pf(root, &pfs[i]);
	/* the module parameters a well-kept host has: mlx4's VF count, RDMA netns exclusive */
	if (r >= 0)
		r = sim_write(root, "module/mlx4_core/parameters/num_vfs", "4\n");
	if (r >= 0)
		r = sim_write(root, "module/ib_core/parameters/netns_mode", "N\n");
	return r;
}

/* Reads back the spec a PF was built from: its card, netdev, RDMA index, NUMA node, group. */
int sim_pf_spec_read(const char *root, const char *addr, struct sim_pf_read *ret)
{
	char dev[PATH_MAX], path[2 * PATH_MAX], buf[64], target[PATH_MAX];
	struct dirent *de;
	ssize_t n;
	DIR *d;
	FILE *f;

	memset(ret, 0, sizeof(*ret));
	snprintf(ret->addr, sizeof(ret->addr), "%s", addr);
	ret->spec.addr = ret->addr;
	if (sim_device_dir(root, addr, dev, sizeof(dev)) < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s/device", root, dev);
	f = fopen(path, "re");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return -ENOENT;
	}
	fclose(f);
	ret->spec.card = ELEMENTSOF(cards);
	for (size_t i = 0; i < ELEMENTSOF(cards); i++)
		if (strncmp(buf + 2, cards[i].pf_device, 4) == 0)
			ret->spec.card = (enum sim_card)i;
	if (ret->spec.card == ELEMENTSOF(cards))
		return -EOPNOTSUPP;
	snprintf(path, sizeof(path), "%s/%s/numa_node", root, dev);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f))
		ret->spec.numa_node = atoi(buf);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/%s/sriov_totalvfs", root, dev);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f))
		ret->spec.totalvfs = (unsigned)atoi(buf);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/%s/iommu_group", root, dev);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		ret->spec.iommu_group = atoi(strrchr(target, '/') + 1);
	}
	snprintf(path, sizeof(path), "%s/%s/net", root, dev);
	d = opendir(path);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			snprintf(ret->netdev, sizeof(ret->netdev), "%s", de->d_name);
	if (d)
		closedir(d);
	ret->spec.netdev = ret->netdev[0] ? ret->netdev : NULL;
	snprintf(path, sizeof(path), "%s/%s/infiniband", root, dev);
	d = opendir(path);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && strchr(de->d_name, '_'))
			ret->spec.rdma_index = atoi(strchr(de->d_name, '_') + 1);
	if (d)
		closedir(d);
	return 0;
}

/* Builds the default simulated host in @dir, unless it already holds one. */
int sim_host_create(const char *dir)
{
	char probe[PATH_MAX];
	struct stat st;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(probe, sizeof(probe), "%.4000s/bus/pci/devices", dir);
	if (stat(probe, &st) == 0)
		return 0;
	return sim_host_build_default(dir);
}
