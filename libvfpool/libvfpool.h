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

/* ---- configuration (vfagent.json) -------------------------------------- */

struct vfp_config;

int vfp_config_load_file(const char *path, struct vfp_config **ret_config, char **ret_error);
int vfp_config_load_json(json_t *root, struct vfp_config **ret_config, char **ret_error);
struct vfp_config *vfp_config_ref(struct vfp_config *config);
struct vfp_config *vfp_config_unref(struct vfp_config *config);
size_t vfp_config_get_pool_count(const struct vfp_config *config);
const char *vfp_config_get_pool_name(const struct vfp_config *config, size_t i);
unsigned vfp_config_get_pool_grow_step(const struct vfp_config *config, size_t i);
int vfp_config_find_pool(const struct vfp_config *config, const char *name);
const char *vfp_config_pool_for_vf(const struct vfp_config *config, const struct vfp_vf *vf);
bool vfp_config_is_excluded(const struct vfp_config *config, const struct vfp_vf *vf);
const char *vfp_config_pool_for_network(const struct vfp_config *config, const char *bridge,
					const char *network);
const unsigned char *vfp_config_get_ipoib_mac_prefix(const struct vfp_config *config);
bool vfp_config_get_guid_range(const struct vfp_config *config, unsigned long long *ret_first,
			       unsigned long long *ret_count);
json_t *vfp_config_pools_to_json(const struct vfp_config *config);
const char *vfp_config_get_socket_group(const struct vfp_config *config);
const char *vfp_config_get_libvirt_uri(const struct vfp_config *config);
bool vfp_config_get_libvirt_managed(const struct vfp_config *config);

/* ---- the ledger ---------------------------------------------------------- */

struct vfp_ledger;

enum vfp_placement {
	VFP_PLACE_SPREAD = 0, /* one VF per PF in turn */
	VFP_PLACE_PACK,	      /* as few PFs as possible */
};

enum vfp_op {
	VFP_OP_ATTACH,
	VFP_OP_DETACH,
	VFP_OP_RELEASE,
};

struct vfp_claim {
	const char *pool;
	unsigned count;
	json_t *owner;		     /* {"kind":"vm","name":…} or {"kind":"container",…} */
	json_t *settings;	     /* requested MAC, VLAN, GUID, IP…; stored as given; may be NULL */
	const char *idempotency_key; /* may be NULL */
	int numa_node;		     /* preferred NUMA node, -1 for none */
	enum vfp_placement placement;
	unsigned lease_seconds; /* 0: a reservation never expires */
};

/* How reconcile asks the host about an allocation and acts on it; any may be NULL. */
struct vfp_reconcile_ops {
	int (*is_attached)(void *userdata, json_t *allocation); /* 1 yes, 0 no, <0 unknown */
	int (*detach)(void *userdata, json_t *allocation);	/* idempotent undo of attach */
	int (*restore)(void *userdata, json_t *allocation);	/* back to the snapshot */
};

struct vfp_reconcile_report {
	unsigned added, vanished, returned, expired, quarantined;
	unsigned intents_rolled_back, intents_rolled_forward;
};

int vfp_ledger_open(struct vfp_ctx *ctx, const char *state_dir, struct vfp_ledger **ret_ledger);
struct vfp_ledger *vfp_ledger_ref(struct vfp_ledger *l);
struct vfp_ledger *vfp_ledger_unref(struct vfp_ledger *l);
const char *vfp_ledger_get_error(const struct vfp_ledger *l);
const char *vfp_ledger_get_path(const struct vfp_ledger *l);
int vfp_owner_key(json_t *owner, char **ret_key, char **ret_error);
int vfp_ledger_claim(struct vfp_ledger *l, const struct vfp_config *config,
		     const struct vfp_claim *req, json_t **ret_allocation);
int vfp_ledger_claim_batch(struct vfp_ledger *l, const struct vfp_config *config,
			   const struct vfp_claim *reqs, size_t n, int *ret_results,
			   json_t **ret_allocations, char **ret_errors);
int vfp_ledger_begin(struct vfp_ledger *l, const char *id, enum vfp_op op);
int vfp_ledger_confirm(struct vfp_ledger *l, const char *id, enum vfp_op op, bool ok,
		       const char *reason);
const char *vfp_op_to_string(enum vfp_op op);
int vfp_ledger_sync(struct vfp_ledger *l, const struct vfp_inventory *inv,
		    const struct vfp_config *config, struct vfp_reconcile_report *ret_report);
int vfp_ledger_reconcile(struct vfp_ledger *l, const struct vfp_inventory *inv,
			 const struct vfp_config *config, const struct vfp_reconcile_ops *ops,
			 void *userdata, struct vfp_reconcile_report *ret_report);
json_t *vfp_ledger_get_allocation(struct vfp_ledger *l, const char *id);
json_t *vfp_ledger_list_allocations(struct vfp_ledger *l, const char *owner_key,
				    bool with_released);
json_t *vfp_ledger_get_vf(struct vfp_ledger *l, const char *pci);
json_t *vfp_ledger_counts(struct vfp_ledger *l);
json_t *vfp_ledger_audit(struct vfp_ledger *l, const char *pci, unsigned limit);
int vfp_ledger_set_original(struct vfp_ledger *l, const char *pci, json_t *original);
json_t *vfp_ledger_get_original(struct vfp_ledger *l, const char *pci);

/* ---- the kernel's view now: drivers, netdevs, IB GUIDs (sysfs) ----------- */

int vfp_device_read_driver(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size);
int vfp_device_read_netdev(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size);
int vfp_device_bind_driver(struct vfp_ctx *ctx, const char *pci, const char *driver);
int vfp_device_rebind(struct vfp_ctx *ctx, const char *pci);
int vfp_vf_write_ib_guids(struct vfp_ctx *ctx, const char *pf_pci, const char *driver,
			  unsigned index, const char *node, const char *port);

/* ---- resizing PFs (sriov_numvfs) ------------------------------------------ */

int vfp_numvfs_plan(struct vfp_ledger *l, const struct vfp_inventory *inv, const char *pf_pci,
		    int numvfs, json_t **ret_plan);
int vfp_numvfs_apply(struct vfp_ledger *l, const struct vfp_config *config,
		     const struct vfp_inventory *inv, const char *pf_pci, int numvfs,
		     json_t **ret_plan, struct vfp_inventory **ret_inv);
int vfp_pool_grow(struct vfp_ledger *l, const struct vfp_config *config,
		  const struct vfp_inventory *inv, const char *pool, struct vfp_inventory **ret_inv);

/*
 * A simulated host handles sysfs writes itself: return 1 when handled
 * (*ret_result holds 0 or -errno, as the kernel would answer), 0 to let
 * the write go to the file.
 */
typedef int (*vfp_sysfs_write_fn)(void *userdata, const char *root, const char *rel,
				  const char *value, int *ret_result);
void vfp_ctx_set_sysfs_write_handler(struct vfp_ctx *ctx, vfp_sysfs_write_fn fn, void *userdata);

#ifdef __cplusplus
}
#endif
