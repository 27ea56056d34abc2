/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libvfpool — the SR-IOV inventory and VF ledger of vfagent.
 *
 * The library reads sysfs under a configurable root, writes the few sysfs
 * files that size and bind VFs, and owns the ledger. It does no networking,
 * no libvirt and no HTTP. Functions returning int give >= 0 on success and
 * -errno on failure; out-parameters named ret_* are set only on success.
 * Objects are reference counted; every *_unref() accepts NULL.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VFP_PCI_ADDR_LEN 12 /* "dddd:bb:ss.f" without the NUL */

/* ---- context ---------------------------------------------------------- */

struct vfp_ctx;

typedef void (*vfp_log_fn)(void *userdata, int priority, const char *file, int line,
			   const char *fn, const char *format, va_list args);

int vfp_ctx_new(struct vfp_ctx **ret_ctx);
struct vfp_ctx *vfp_ctx_ref(struct vfp_ctx *ctx);
struct vfp_ctx *vfp_ctx_unref(struct vfp_ctx *ctx);
int vfp_ctx_set_sysfs_root(struct vfp_ctx *ctx, const char *root);
const char *vfp_ctx_get_sysfs_root(const struct vfp_ctx *ctx);
void vfp_ctx_set_log_fn(struct vfp_ctx *ctx, vfp_log_fn fn, void *userdata);
void vfp_ctx_set_log_priority(struct vfp_ctx *ctx, int priority);
int vfp_ctx_get_log_priority(const struct vfp_ctx *ctx);

/* ---- PCI addresses ---------------------------------------------------- */

bool vfp_pci_addr_is_valid(const char *s);

/* ---- inventory -------------------------------------------------------- */

enum vfp_link_type {
	VFP_LINK_NONE = 0,
	VFP_LINK_ETHERNET,
	VFP_LINK_INFINIBAND,
};

const char *vfp_link_type_to_string(enum vfp_link_type t);

struct vfp_inventory;
struct vfp_pf;
struct vfp_vf;

int vfp_inventory_scan(struct vfp_ctx *ctx, struct vfp_inventory **ret_inv);
struct vfp_inventory *vfp_inventory_ref(struct vfp_inventory *inv);
struct vfp_inventory *vfp_inventory_unref(struct vfp_inventory *inv);
size_t vfp_inventory_get_pf_count(const struct vfp_inventory *inv);
size_t vfp_inventory_get_vf_count(const struct vfp_inventory *inv);
unsigned vfp_inventory_get_warning_count(const struct vfp_inventory *inv);
struct vfp_pf *vfp_inventory_get_pf(const struct vfp_inventory *inv, size_t i);
struct vfp_pf *vfp_inventory_find_pf(const struct vfp_inventory *inv, const char *pci);
struct vfp_vf *vfp_inventory_find_vf(const struct vfp_inventory *inv, const char *pci);

/* PFs and VFs live as long as the inventory that holds them. */
const char *vfp_pf_get_pci(const struct vfp_pf *pf);
const char *vfp_pf_get_vendor(const struct vfp_pf *pf);
const char *vfp_pf_get_device(const struct vfp_pf *pf);
const char *vfp_pf_get_driver(const struct vfp_pf *pf);
const char *vfp_pf_get_netdev(const struct vfp_pf *pf);
const char *vfp_pf_get_rdma_device(const struct vfp_pf *pf);
enum vfp_link_type vfp_pf_get_link_type(const struct vfp_pf *pf);
int vfp_pf_get_numa_node(const struct vfp_pf *pf, int *ret_node);
int vfp_pf_get_totalvfs(const struct vfp_pf *pf, int *ret_total);
int vfp_pf_get_numvfs(const struct vfp_pf *pf, int *ret_num);
bool vfp_pf_get_numvfs_writable(const struct vfp_pf *pf);
size_t vfp_pf_get_vf_count(const struct vfp_pf *pf);
struct vfp_vf *vfp_pf_get_vf(const struct vfp_pf *pf, size_t i);

const char *vfp_vf_get_pci(const struct vfp_vf *vf);
const char *vfp_vf_get_pf_pci(const struct vfp_vf *vf);
struct vfp_pf *vfp_vf_get_pf(const struct vfp_vf *vf);
unsigned vfp_vf_get_index(const struct vfp_vf *vf);
const char *vfp_vf_get_vendor(const struct vfp_vf *vf);
const char *vfp_vf_get_device(const struct vfp_vf *vf);
const char *vfp_vf_get_driver(const struct vfp_vf *vf);
const char *vfp_vf_get_netdev(const struct vfp_vf *vf);
const char *vfp_vf_get_mac(const struct vfp_vf *vf);
const char *vfp_vf_get_rdma_device(const struct vfp_vf *vf);
enum vfp_link_type vfp_vf_get_link_type(const struct vfp_vf *vf);
int vfp_vf_get_numa_node(const struct vfp_vf *vf, int *ret_node);
int vfp_vf_get_iommu_group(const struct vfp_vf *vf, int *ret_group);

/* JSON views with the field names of DESIGN.md §3; absent facts are null. */
json_t *vfp_pf_to_json(const struct vfp_pf *pf, bool with_vfs);
json_t *vfp_vf_to_json(const struct vfp_vf *vf);
json_t *vfp_inventory_to_json(const struct vfp_inventory *inv);

#ifdef __cplusplus
}
#endif
