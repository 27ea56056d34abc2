/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulated host: a fake sysfs tree in a directory, shaped like the
 * kernel's (bus/pci/devices/X -> ../../../devices/.../X, relative driver,
 * iommu_group, virtfnN and physfn links), with recorded shapes of real
 * cards. Tests, benchmarks and `vfagentd --simulate` build on it.
 */
#pragma once

#include <stdbool.h>

struct sim_pci_dev {
	const char *addr;     /* "0000:3b:00.0" */
	const char *parent;   /* "pci0000:3a/0000:3a:00.0"; NULL: the root complex */
	const char *vendor;   /* "15b3" */
	const char *device;   /* "101b" */
	unsigned class;       /* 0x020700 */
	const char *driver;   /* NULL: unbound */
	int numa_node;        /* as the kernel prints it; -1 for none */
	int iommu_group;      /* < 0: no group */
};

/* A function of the PCIe tree that is not an SR-IOV PF: a bridge, a GPU, an NVMe drive. */
struct sim_pcie_fn {
	const char *addr;
	const char *parent; /* its place under devices/; NULL: on the root bus pci0000:00 */
	const char *vendor, *device;
	unsigned class;
	int numa_node;
	int port_type;	    /* PCIe capability: 4 root port, 5 upstream, 6 downstream, 0 endpoint;
			     * -1: no config file (as a tree read without root shows less) */
	int acs_ctrl;	    /* ACS control register; -1: no ACS capability */
	const char *driver; /* NULL: unbound */
};

int sim_add_pcie_fn(const char *root, const struct sim_pcie_fn *f);
int sim_add_pcie_tree(const char *root, const struct sim_pcie_fn *fns, size_t n);
int sim_write_vpd(const char *root, const char *addr, const char *name, const char *sn,
		  const char *v3);

/* Kinds of SR-IOV card whose sysfs shape the simulated host reproduces. */
enum sim_card {
	SIM_CX6_IB,   /* ConnectX-6, InfiniBand, mlx5_core, 15b3:101b / VF 101c */
	SIM_CX3_IB,   /* ConnectX-3, InfiniBand, mlx4_core, 15b3:1003 / VF 1004 */
	SIM_E810,     /* Intel E810, Ethernet, ice / iavf, 8086:159b / 1889 */
	SIM_X520,     /* Intel 82599, Ethernet, ixgbe / ixgbevf, 8086:10fb / 10ed */
	SIM_IGB,      /* Intel 82576 (QEMU igb), Ethernet, igb / igbvf, 8086:10c9 / 10ca */
	SIM_CX8,      /* ConnectX-8, Ethernet, mlx5_core, 15b3:1023 / VF 101e */
};

struct sim_pf_spec {
	enum sim_card card;
	const char *addr;   /* the PF's PCI address; its bus must leave room for the VFs */
	const char *netdev; /* PF netdev name, NULL for none; VF n gets "<netdev>v<n>" */
	int rdma_index;     /* PF RDMA device <prefix>_<rdma_index>, VF n <prefix>_<rdma_index+1+n> */
	int numa_node;
	int iommu_group;    /* the PF's; VF n gets iommu_group + 1 + n */
	unsigned totalvfs;
	unsigned numvfs;
	const char *const *vf_drivers; /* per VF, NULL entries unbound; NULL: the card's VF driver */
	const char *parent; /* its place under devices/ ("pci0000:00/0000:00:02.0/…"); NULL:
			     * behind a root port of its own on the bus before it */
};

void sim_pathf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sim_mkdir_p(const char *root, const char *rel);
int sim_write(const char *root, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int sim_symlink(const char *root, const char *link_rel, const char *target_rel);
int sim_device_dir(const char *root, const char *addr, char *buf, size_t size);

int sim_add_pci_device(const char *root, const struct sim_pci_dev *d);
int sim_add_netdev(const char *root, const char *addr, const char *ifname, int type,
		   const char *mac);
int sim_add_rdma_device(const char *root, const char *addr, const char *name,
			const char *link_layer);
int sim_bind_driver(const char *root, const char *addr, const char *driver);

struct sim_pf_read {
	struct sim_pf_spec spec;
	char addr[16], netdev[256];
};

int sim_add_pf(const char *root, const struct sim_pf_spec *spec);
int sim_pf_spec_read(const char *root, const char *addr, struct sim_pf_read *ret);
int sim_kernel_write(void *userdata, const char *root, const char *rel, const char *value,
		     int *ret_result);
int sim_host_build_default(const char *root);
int sim_host_create(const char *dir);
int sim_add_vf(const char *root, const struct sim_pf_spec *spec, unsigned index,
	       const char *driver);
int sim_add_vf_functions(const char *root, const struct sim_pf_spec *spec, const char *vf_addr);
int sim_vf_addr(const struct sim_pf_spec *spec, unsigned index, char *buf, size_t size);
const char *sim_card_vf_driver(enum sim_card card);
int sim_netns_isolate(void);
