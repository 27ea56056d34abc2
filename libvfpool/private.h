/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers and object layouts shared by the files of libvfpool only. */
#pragma once

#include <pthread.h>
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

long long vfp_config_get_guid_quarantine(const struct vfp_config *c);

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
	char pcie_root[24];	/* "pci0000:3a"; "" when the tree does not say */
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
	pthread_mutex_t groups_lock; /* IOMMU groups listed on first use (inventory-iommu.c) */
	struct vfp_iommu_group *groups;
	size_t n_groups;
};

void vfp_inventory_forget_iommu_groups(struct vfp_inventory *inv);

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
void vfp_vf_set_facts(struct vfp_vf *vf, struct vfp_devfacts *f);
void vfp_pf_clear(struct vfp_pf *pf);
int vfp_pcie_root_read(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size);
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


/* An allocation as read from the ledger (ledger-query.c fills it). */
struct vfp_allocation {
	int refcount;
	char id[37];
	char *pool;
	enum vfp_allocation_state state;
	struct vfp_owner owner; /* its strings are the owner_* below */
	char *owner_name, *owner_uuid, *owner_netns;
	struct vfp_settings settings;
	char *idempotency_key, *flag;
	char *hold_path; /* reserved, and held while this file exists */
	bool has_lease;
	long long lease_expires, created, updated;
	size_t n_vfs;
	struct vfp_allocation_vf *vfs;
};

struct vfp_allocation *vfp_allocation_new(void);
int vfp_allocation_set_owner(struct vfp_allocation *a, const struct vfp_owner *o);

/* The ledger's stored forms of owners, settings, VF configs and restore points (JSON text). */
json_t *vfp_owner_to_json(const struct vfp_owner *o);
int vfp_owner_from_json(json_t *j, struct vfp_owner *o);
json_t *vfp_settings_to_json(const struct vfp_settings *s);
int vfp_settings_from_json(json_t *o, struct vfp_settings *s);
json_t *vfp_vf_config_to_json(const struct vfp_vf_config *c);
int vfp_vf_config_from_json(json_t *o, unsigned index, struct vfp_vf_config *c);
char *vfp_restore_point_to_text(const struct vfp_restore_point *rp);
int vfp_restore_point_from_text(const char *text, struct vfp_restore_point **ret);

/* A PCI vendor or device id as sysfs and configs write it: 4 lower-case hex digits. */
bool vfp_pci_id_is_valid(const char *s);
/* A kernel driver's name as sysfs binds it: 1-63 of a-z, 0-9, '_', '-'. */
bool vfp_driver_name_is_valid(const char *s);
