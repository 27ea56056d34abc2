/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers and object layouts shared by the files of libvfpool only. */
#pragma once

#include <syslog.h>

#include "libvfpool.h"
#include "macro.h"

#define VFP_EXPORT __attribute__((visibility("default")))

/* Longest sysfs attribute the inventory reads (a GUID, a MAC, a driver name). */
#define VFP_ATTR_MAX 256

struct vfp_ctx {
	int refcount;
	char *sysfs_root;
	vfp_log_fn log_fn;
	void *log_data;
	int log_priority;
	vfp_sysfs_write_fn write_fn;
	void *write_data;
};

void vfp_log(struct vfp_ctx *ctx, int priority, const char *file, int line, const char *fn,
	     const char *format, ...) _printf_(6, 7);

#define vfp_log_cond(ctx, prio, ...)                                                               \
	do {                                                                                       \
		if ((ctx)->log_fn && vfp_ctx_get_log_priority(ctx) >= (prio))                      \
			vfp_log(ctx, prio, __FILE__, __LINE__, __func__, __VA_ARGS__);              \
	} while (0)

#define vfp_dbg(ctx, ...) vfp_log_cond(ctx, LOG_DEBUG, __VA_ARGS__)
#define vfp_info(ctx, ...) vfp_log_cond(ctx, LOG_INFO, __VA_ARGS__)
#define vfp_warn(ctx, ...) vfp_log_cond(ctx, LOG_WARNING, __VA_ARGS__)
#define vfp_err(ctx, ...) vfp_log_cond(ctx, LOG_ERR, __VA_ARGS__)

/* An int fact that sysfs may not give: valid is false when absent or garbled. */
struct vfp_opt_int {
	bool valid;
	int value;
};

static inline int vfp_opt_int_get(struct vfp_opt_int v, int *ret)
{
	if (!v.valid)
		return -ENODATA;
	*ret = v.value;
	return 0;
}

struct vfp_pf {
	struct vfp_inventory *inv;
	char pci[VFP_PCI_ADDR_LEN + 1];
	char *vendor, *device, *driver, *netdev, *rdma_device;
	enum vfp_link_type link_type;
	struct vfp_opt_int numa_node, totalvfs, numvfs;
	bool numvfs_writable;
	size_t first_vf, n_vfs; /* a slice of inv->vfs */
};

struct vfp_vf {
	struct vfp_inventory *inv;
	size_t pf_index;
	char pci[VFP_PCI_ADDR_LEN + 1];
	unsigned index;
	char *vendor, *device, *driver, *netdev, *mac, *rdma_device;
	enum vfp_link_type link_type;
	struct vfp_opt_int numa_node, iommu_group;
};

struct vfp_inventory {
	int refcount;
	struct vfp_ctx *ctx;
	struct vfp_pf *pfs;
	size_t n_pfs, cap_pfs;
	struct vfp_vf *vfs;
	size_t n_vfs, cap_vfs;
	unsigned warnings;
};

/* Facts a PF and a VF read the same way from their PCI device directory. */
struct vfp_devfacts {
	char *vendor, *device, *driver, *netdev, *mac, *rdma_device;
	int netdev_type; /* ARPHRD_* from net/<if>/type, -1 when unknown */
	struct vfp_opt_int numa_node;
};

void vfp_inventory_warn(struct vfp_inventory *inv, const char *pci, const char *attr,
			const char *format, ...) _printf_(4, 5);

int vfp_device_read_id(struct vfp_inventory *inv, const char *pci, const char *attr,
		       char **ret_id);
int vfp_device_read_opt_int(struct vfp_inventory *inv, const char *pci, const char *attr,
			    int base, int min, int max, struct vfp_opt_int *ret);
int vfp_device_read_link_name(struct vfp_inventory *inv, const char *pci, const char *link,
			      char **ret_name);
void vfp_devfacts_clear(struct vfp_devfacts *f);
int vfp_device_read_facts(struct vfp_inventory *inv, const char *pci, struct vfp_devfacts *f);
int vfp_device_read_rdma_link_layer(struct vfp_inventory *inv, const char *pci,
				    const char *rdma_device, enum vfp_link_type *ret);
enum vfp_link_type vfp_link_type_from_arphrd(int type);

int vfp_pf_read(struct vfp_inventory *inv, const char *pci, const char *totalvfs);
int vfp_vf_read(struct vfp_inventory *inv, size_t pf_index, unsigned index, const char *pci);
void vfp_pf_clear(struct vfp_pf *pf);
void vfp_vf_clear(struct vfp_vf *vf);

static inline int vfp_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int vfp_guid_parse(const char *s, unsigned long long *ret);
void vfp_guid_format(unsigned long long g, char buf[static 24]);
