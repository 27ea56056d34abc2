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
#include <stdint.h>
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

/* ---- PCI addresses, GUIDs ---------------------------------------------- */

bool vfp_pci_addr_is_valid(const char *s);
int vfp_pci_addr_normalize(const char *s, char out[static VFP_PCI_ADDR_LEN + 1]);
int vfp_iommu_group_devices(const struct vfp_ctx *ctx, int group, char ***ret_list,
			    size_t *ret_n);
void vfp_iommu_group_devices_free(char **list, size_t n);
int vfp_guid_parse(const char *s, unsigned long long *ret);
int vfp_mac_parse(const char *s, unsigned char mac[6]);
int vfp_mac_parse_unicast(const char *s, unsigned char mac[6]);
void vfp_guid_format(unsigned long long g, char buf[static 24]);
int vfp_pkey_from_json(json_t *pkey, json_t *membership, int *ret_pkey, const char **ret_why);
void vfp_pkey_format(int pkey, char buf[static 7]);
const char *vfp_pkey_membership(int pkey);
int vfp_security_groups_parse(const char *text, char *out, size_t size);
json_t *vfp_security_groups_to_json(const char *groups);
int vfp_security_groups_from_json(json_t *v, char *out, size_t size);

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
int vfp_inventory_refresh_vf(const struct vfp_inventory *inv, const char *pci,
			     struct vfp_inventory **ret_inv);
struct vfp_inventory *vfp_inventory_ref(struct vfp_inventory *inv);
struct vfp_inventory *vfp_inventory_unref(struct vfp_inventory *inv);
size_t vfp_inventory_get_pf_count(const struct vfp_inventory *inv);
size_t vfp_inventory_get_vf_count(const struct vfp_inventory *inv);
unsigned vfp_inventory_get_warning_count(const struct vfp_inventory *inv);
struct vfp_pf *vfp_inventory_get_pf(const struct vfp_inventory *inv, size_t i);
struct vfp_pf *vfp_inventory_find_pf(const struct vfp_inventory *inv, const char *pci);
struct vfp_vf *vfp_inventory_find_vf(const struct vfp_inventory *inv, const char *pci);
int vfp_inventory_get_iommu_group_devices(struct vfp_inventory *inv, int group,
					  const char *const **ret_list, size_t *ret_n);

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

/* JSON views with the field names of api/openapi.yaml; absent facts are null. */
json_t *vfp_pf_to_json(const struct vfp_pf *pf, bool with_vfs);
json_t *vfp_vf_to_json(const struct vfp_vf *vf);
json_t *vfp_inventory_to_json(const struct vfp_inventory *inv);

/* ---- PCIe topology: what a VF is near ----------------------------------- */

/*
 * How far apart two PCI devices are, in the words of `nvidia-smi topo`:
 * through at most one switch (PIX), several switches below one root port
 * (PXB), the host bridge of one root complex (PHB), two root complexes of
 * one NUMA node (NODE), or the interconnect between NUMA nodes (SYS).
 * Ordered: a smaller value is closer.
 */
enum vfp_pcie_distance {
	VFP_PCIE_SELF = 0, /* "X": the device itself */
	VFP_PCIE_PIX,
	VFP_PCIE_PXB,
	VFP_PCIE_PHB,
	VFP_PCIE_NODE,
	VFP_PCIE_SYS,
	_VFP_PCIE_DISTANCE_MAX,
};

const char *vfp_pcie_distance_to_string(enum vfp_pcie_distance d);
int vfp_pcie_distance_from_string(const char *s);

/* A snapshot of the host's PCI tree: every function, its bridges up to its root complex. */
struct vfp_pcie_topo;

int vfp_pcie_topo_scan(struct vfp_ctx *ctx, struct vfp_pcie_topo **ret_topo);
struct vfp_pcie_topo *vfp_pcie_topo_ref(struct vfp_pcie_topo *t);
struct vfp_pcie_topo *vfp_pcie_topo_unref(struct vfp_pcie_topo *t);
int vfp_pcie_topo_distance(const struct vfp_pcie_topo *t, const char *a, const char *b,
			   enum vfp_pcie_distance *ret_distance);
const char *vfp_pcie_topo_get_root(const struct vfp_pcie_topo *t, const char *pci);
json_t *vfp_pcie_topo_to_json(const struct vfp_pcie_topo *t, const struct vfp_inventory *inv);
const char *vfp_pf_get_pcie_root(const struct vfp_pf *pf);

/* ---- configuration (vfagent.json) -------------------------------------- */

struct vfp_config;

int vfp_config_load_file(const char *path, struct vfp_config **ret_config, char **ret_error);
int vfp_config_load_json(json_t *root, struct vfp_config **ret_config, char **ret_error);
struct vfp_config *vfp_config_ref(struct vfp_config *config);
struct vfp_config *vfp_config_unref(struct vfp_config *config);
size_t vfp_config_get_pool_count(const struct vfp_config *config);
const char *vfp_config_get_pool_name(const struct vfp_config *config, size_t i);
unsigned vfp_config_get_pool_grow_step(const struct vfp_config *config, size_t i);
bool vfp_config_pool_resets(const struct vfp_config *config, const char *name);
int vfp_config_find_pool(const struct vfp_config *config, const char *name);
const char *vfp_config_pool_for_vf(const struct vfp_config *config, const struct vfp_vf *vf);
bool vfp_config_is_excluded(const struct vfp_config *config, const struct vfp_vf *vf);
bool vfp_config_watches_pf_links(const struct vfp_config *config);
const char *vfp_config_vf_unhealthy(const struct vfp_config *config, const struct vfp_vf *vf,
				    char *buf, size_t size);
const char *vfp_config_pool_for_network(const struct vfp_config *config, const char *bridge,
					const char *network);
const struct vfp_failover *vfp_config_failover_for_network(const struct vfp_config *config,
							   const char *bridge, const char *network);
int vfp_config_pkey_for_network(const struct vfp_config *config, const char *bridge,
				const char *network);
const unsigned char *vfp_config_get_ipoib_mac_prefix(const struct vfp_config *config);
const unsigned char *vfp_config_get_opennebula_mac_prefix(const struct vfp_config *config);
bool vfp_config_get_guid_range(const struct vfp_config *config, unsigned long long *ret_first,
			       unsigned long long *ret_count);
json_t *vfp_config_pools_to_json(const struct vfp_config *config);
const char *vfp_config_get_socket_group(const struct vfp_config *config);
const char *vfp_config_get_libvirt_uri(const struct vfp_config *config);
bool vfp_config_get_libvirt_enabled(const struct vfp_config *config);
bool vfp_config_get_libvirt_managed(const struct vfp_config *config);
int vfp_config_get_detach_wait(const struct vfp_config *config);
int vfp_config_get_steer_hold(const struct vfp_config *config);

/* What the ledger keeps of the past: released allocations and audit rows. */
struct vfp_retention {
	long long seconds;     /* released allocations older than this go */
	unsigned allocations;  /* and beyond this many, the oldest go */
	unsigned audit;	       /* audit rows beyond this many, the oldest go */
};

void vfp_config_get_retention(const struct vfp_config *config, struct vfp_retention *ret);
long long vfp_config_get_orphan_seconds(const struct vfp_config *config);
long long vfp_config_get_repair_retry_seconds(const struct vfp_config *config);
int vfp_config_get_desired_numvfs(const struct vfp_config *config, const struct vfp_pf *pf);
int vfp_config_add_persisted_numvfs(struct vfp_config *c, const char *pf, int numvfs);

/* ---- what the ledger holds: states, owners, settings ------------------ */

#define VFP_UNSET (-1)

enum vfp_vf_state {
	VFP_VF_FREE,
	VFP_VF_RESERVED,
	VFP_VF_ATTACHED,
	VFP_VF_RELEASING,
	VFP_VF_QUARANTINED,
	VFP_VF_UNAVAILABLE,
	VFP_VF_RELEASED, /* only as a VF of an ended allocation */
	_VFP_VF_STATE_MAX,
};

enum vfp_allocation_state {
	VFP_ALLOCATION_RESERVED,
	VFP_ALLOCATION_ATTACHED,
	VFP_ALLOCATION_RELEASING,
	VFP_ALLOCATION_RELEASED,
	_VFP_ALLOCATION_STATE_MAX,
};

/* The names the ledger and the API use; from_string() gives -EINVAL for any other. */
const char *vfp_vf_state_to_string(enum vfp_vf_state s);
int vfp_vf_state_from_string(const char *s);
const char *vfp_allocation_state_to_string(enum vfp_allocation_state s);
int vfp_allocation_state_from_string(const char *s);

enum vfp_owner_kind {
	VFP_OWNER_VM,
	VFP_OWNER_CONTAINER,
};

/* Whether an owner of @kind may claim pool @name's VFs (config "owners"). */
bool vfp_config_pool_takes_owner(const struct vfp_config *c, const char *name,
				 enum vfp_owner_kind kind);

/* Who holds an allocation. Strings are NULL when absent. */
struct vfp_owner {
	enum vfp_owner_kind kind;
	const char *name;  /* a VM: its domain's name (required) */
	const char *uuid;  /* a VM: its domain's UUID, when known */
	const char *netns; /* a container: its namespace's /run/netns name, or */
	long long pid;	   /* a container: a process in its namespace; 0 for none */
	unsigned long long netns_inode; /* a container: its namespace when claimed; 0 unknown */
	unsigned long long netns_cookie; /* and its cookie (never given twice); 0 unknown */
};

int vfp_owner_key(const struct vfp_owner *owner, char **ret_key, char **ret_error);
bool vfp_uuid_is_valid(const char *s);
bool vfp_owner_outlives_power_cut(const struct vfp_owner *o);
const char *vfp_owner_netns_name(const char *netns);

/*
 * A VF's settings on its PF (IFLA_VFINFO_LIST): what an attach sets, and the
 * restore point it leaves. Fields at VFP_UNSET (or has_* false) are unknown
 * when read and left alone when set.
 */
struct vfp_vf_config {
	unsigned index; /* the VF's number on its PF */
	bool has_mac;
	unsigned char mac[6];
	int vlan;	       /* 0-4095, 0: no VLAN */
	int qos;	       /* 0-7 */
	int vlan_proto;	       /* host order: 0x8100 (802.1Q) or 0x88a8 (802.1ad) */
	int spoofchk;	       /* 0 or 1 */
	int trust;	       /* 0 or 1 */
	int link_state;	       /* IFLA_VF_LINK_STATE_{AUTO,ENABLE,DISABLE} */
	long long min_tx_rate; /* Mbit/s */
	long long max_tx_rate; /* Mbit/s */
	bool has_node_guid, has_port_guid;
	unsigned long long node_guid, port_guid;
	int pkey; /* wanted only, never read back: the tenant's IB partition (mlx4: mapped at the
		   * VF's P_Key index 0 once the port has it); VFP_UNSET: none */
};

void vfp_vf_config_init(struct vfp_vf_config *c, unsigned index);
bool vfp_vf_config_is_empty(const struct vfp_vf_config *c);

/*
 * A failover NIC's standby (libvirt's teaming pair, QEMU's virtio-net
 * failover): the virtio NIC that carries the guest's traffic while its VF
 * is away. @source may hold "{vlan}", the NIC's VLAN id (libvirt tags a
 * standby's VLAN only on Open vSwitch).
 */
enum vfp_standby_kind {
	VFP_STANDBY_NONE = 0,
	VFP_STANDBY_BRIDGE,	 /* a Linux bridge */
	VFP_STANDBY_OPENVSWITCH, /* an Open vSwitch bridge */
	VFP_STANDBY_MACVTAP,	 /* libvirt's type='direct', mode='bridge' */
};

struct vfp_failover {
	enum vfp_standby_kind kind;
	char source[64];
};

int vfp_failover_from_json(json_t *o, const char *path, struct vfp_failover *ret,
			   char **ret_error);
json_t *vfp_failover_to_json(const struct vfp_failover *f);
int vfp_failover_standby_source(const struct vfp_failover *f, int vlan, char *buf, size_t size,
				char *err, size_t err_size);

/*
 * What a claim asks of its VFs, each value checked by the caller (the API
 * names the field). MAC, GUID and IP are for the allocation's first VF.
 * Strings are "" and numbers VFP_UNSET when not asked for.
 */
struct vfp_settings {
	char mac[18];  /* "02:00:0a:01:00:05" */
	int vlan;      /* 0-4094; 0 asks for no VLAN */
	char guid[24]; /* "00:11:22:33:44:55:66:77" */
	char ip[64];   /* "10.1.0.5/16" */
	int qos;
	int vlan_proto; /* 0x8100 or 0x88a8 */
	int spoofchk, trust;
	int link_state;
	long long min_tx_rate, max_tx_rate;
	struct vfp_failover failover; /* VFP_STANDBY_NONE: a VF alone */
	int pkey; /* an IB partition, as a port's table shows it (0x8000: full member) */
	char security_groups[128]; /* OpenNebula's of the NIC, "0,101": said, never applied */
};

void vfp_vf_config_to_settings(const struct vfp_vf_config *c, struct vfp_settings *s);

void vfp_settings_init(struct vfp_settings *s);
void vfp_settings_merge(struct vfp_settings *s, const struct vfp_settings *delta);
const char *vfp_link_state_to_string(int link_state);
int vfp_link_state_from_string(const char *s);

/* ---- allocations -------------------------------------------------------- */

struct vfp_allocation;

/* One VF of an allocation, in claim order. */
struct vfp_allocation_vf {
	char pci[VFP_PCI_ADDR_LEN + 1];
	char pf[VFP_PCI_ADDR_LEN + 1];
	unsigned index;
	char guid[24]; /* from the GUID pool; "" for none */
	enum vfp_vf_state state; /* VFP_VF_RELEASED once the allocation ended */
};

struct vfp_allocation *vfp_allocation_ref(struct vfp_allocation *a);
struct vfp_allocation *vfp_allocation_unref(struct vfp_allocation *a);
const char *vfp_allocation_get_id(const struct vfp_allocation *a);
const char *vfp_allocation_get_pool(const struct vfp_allocation *a);
enum vfp_allocation_state vfp_allocation_get_state(const struct vfp_allocation *a);
const struct vfp_owner *vfp_allocation_get_owner(const struct vfp_allocation *a);
const struct vfp_settings *vfp_allocation_get_settings(const struct vfp_allocation *a);
const char *vfp_allocation_get_idempotency_key(const struct vfp_allocation *a);
const char *vfp_allocation_get_flag(const struct vfp_allocation *a);
int vfp_allocation_get_lease_expires(const struct vfp_allocation *a, long long *ret);
const char *vfp_allocation_get_hold_path(const struct vfp_allocation *a);
long long vfp_allocation_get_created(const struct vfp_allocation *a);
long long vfp_allocation_get_updated(const struct vfp_allocation *a);
size_t vfp_allocation_get_vf_count(const struct vfp_allocation *a);
const struct vfp_allocation_vf *vfp_allocation_get_vf(const struct vfp_allocation *a, size_t i);
void vfp_allocation_list_free(struct vfp_allocation **list, size_t n);

/* ---- restore points: how to put a VF back --------------------------------- */

/*
 * What an attach changed on one VF, written to the ledger before the change:
 * its settings on the PF, its driver, where its netdev went (a container) or
 * which domain took it (a VM). Strings are owned (NULL when absent).
 */
struct vfp_restore_point {
	bool has_pf_side;
	struct vfp_vf_config pf_side; /* the values before the attach */
	char *driver;		      /* bound before vfio-pci ("" none); NULL: untouched */
	/* a container's */
	char *netns;		      /* the namespace as the request named it */
	unsigned long long netns_inode;
	unsigned long long netns_cookie; /* SO_NETNS_COOKIE; 0: not known */
	char *ifname;		      /* the netdev's name inside */
	char *rdma_device;	      /* moved along in exclusive RDMA netns mode */
	char *name;		      /* the netdev before it moved: name, MAC, MTU, up */
	char *mac;
	char *altnames;		      /* its alternative names in the host, space separated */
	unsigned mtu;
	bool up;
	int ifindex;		      /* where the netdev was last seen inside (a hint) */
	int peer_ifindex;	      /* a veth stand-in's host-side peer: how it is known */
	/* a VM's */
	char *domain_uuid, *domain;
	unsigned flags;		      /* libvirt's attach flags */
	char *device_xml;
	long long since;	      /* when it was written */
	bool pending;		      /* the domain did not exist yet (deployment file) */
	char *dummy_xml;	      /* an IPoIB dummy NIC attached with it; NULL: none */
	char *standby_xml;	      /* a failover pair's standby, attached before it; NULL: none */
	int pkey_idx0;		      /* mlx4: the physical P_Key index the VF's index 0 had
				       * (VFP_PKEY_NONE: none); VFP_UNSET: untouched */
	char *steered_xml;	      /* a kept standby whose MAC the agent put into the unicast
				       * filters of its bridge's PFs while the VF leaves (a live
				       * migration's source); NULL: none */
};

struct vfp_restore_point *vfp_restore_point_new(void);
void vfp_restore_point_free(struct vfp_restore_point *rp);
int vfp_restore_point_set(char **field, const char *value);

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
	const struct vfp_owner *owner;
	const struct vfp_settings *settings; /* may be NULL: nothing asked */
	const char *idempotency_key;	     /* may be NULL */
	int numa_node;			     /* preferred NUMA node, -1 for none */
	enum vfp_placement placement;
	unsigned lease_seconds; /* 0: a reservation never expires */
	const char *pci; /* this one VF of the pool (count 1): the scheduler's choice, or Multus'
			  * deviceID; NULL: any */
	const char *near; /* the closest free VFs to this PCI device win; NULL: no preference */
	enum vfp_pcie_distance max_distance; /* with near: none farther; SELF (0): no bound */
	const struct vfp_pcie_topo *topo;    /* where near is looked up (required with near) */
	bool attach; /* the claim begins its attach too, in its transaction: the allocation and
		      * its VFs attached, an attach intent open, which vfp_ledger_confirm() ends
		      * (not ok: reserved again) and a restart's reconcile resolves as any attach */
};

/* How reconcile asks the host about an allocation and acts on it; any may be NULL. */
struct vfp_reconcile_ops {
	int (*is_attached)(void *userdata, const struct vfp_allocation *a); /* 1, 0, <0 unknown */
	int (*detach)(void *userdata, const struct vfp_allocation *a);	/* idempotent undo */
	int (*restore)(void *userdata, const struct vfp_allocation *a); /* to the snapshot */
};

struct vfp_reconcile_report {
	unsigned added, vanished, returned, expired, quarantined;
	unsigned intents_rolled_back, intents_rolled_forward;
};

/* The ledger's view of one VF. */
struct vfp_ledger_vf {
	char pool[64];	      /* "" when in no pool */
	enum vfp_vf_state state;
	char reason[128];     /* "" for none */
	char allocation[37];  /* the live allocation holding it, "" for none */
	long long since;      /* when it came into this state (seconds since the epoch) */
};

/* How many VFs of a pool are in each state. */
struct vfp_pool_count {
	char pool[64]; /* "" for VFs in no pool */
	unsigned vfs[_VFP_VF_STATE_MAX];
	unsigned unhealthy; /* of the unavailable: kept back by the pool's health policy */
};

int vfp_ledger_open(struct vfp_ctx *ctx, const char *state_dir, struct vfp_ledger **ret_ledger);
struct vfp_ledger *vfp_ledger_ref(struct vfp_ledger *l);
struct vfp_ledger *vfp_ledger_unref(struct vfp_ledger *l);
/* The calling thread's last failed call's message (thread-local, as libvirt's last error). */
const char *vfp_ledger_get_error(const struct vfp_ledger *l);
const char *vfp_ledger_get_path(const struct vfp_ledger *l);
int vfp_ledger_persist_numvfs(struct vfp_ledger *l, const char *pf, int numvfs);
int vfp_ledger_forget_numvfs(struct vfp_ledger *l, const char *pf);
int vfp_ledger_add_persisted_numvfs(struct vfp_ledger *l, struct vfp_config *config);
int vfp_ledger_claim(struct vfp_ledger *l, const struct vfp_config *config,
		     const struct vfp_claim *req, struct vfp_allocation **ret_allocation);
int vfp_ledger_claim_groups(struct vfp_ledger *l, const struct vfp_config *config,
			    const struct vfp_claim *reqs, size_t n, const bool *together,
			    int *ret_results, struct vfp_allocation **ret_allocations,
			    char **ret_errors);
int vfp_ledger_claim_batch(struct vfp_ledger *l, const struct vfp_config *config,
			   const struct vfp_claim *reqs, size_t n, int *ret_results,
			   struct vfp_allocation **ret_allocations, char **ret_errors);
int vfp_ledger_begin(struct vfp_ledger *l, const char *id, enum vfp_op op);
int vfp_ledger_begin_volatile(struct vfp_ledger *l, const char *id, enum vfp_op op);
int vfp_ledger_begin_volatile_many(struct vfp_ledger *l, const char *const *ids, size_t n,
				   enum vfp_op op);
int vfp_ledger_confirm(struct vfp_ledger *l, const char *id, enum vfp_op op, bool ok,
		       const char *reason);
int vfp_ledger_confirm_many(struct vfp_ledger *l, const char *const *ids, size_t n,
			    enum vfp_op op, bool ok, const char *reason);
const char *vfp_op_to_string(enum vfp_op op);
int vfp_ledger_sync(struct vfp_ledger *l, const struct vfp_inventory *inv,
		    const struct vfp_config *config, struct vfp_reconcile_report *ret_report);
int vfp_ledger_reconcile(struct vfp_ledger *l, const struct vfp_inventory *inv,
			 const struct vfp_config *config, const struct vfp_reconcile_ops *ops,
			 void *userdata, struct vfp_reconcile_report *ret_report);
int vfp_ledger_get_allocation(struct vfp_ledger *l, const char *id,
			      struct vfp_allocation **ret_allocation);
int vfp_ledger_set_hold(struct vfp_ledger *l, const char *id, const char *path);
int vfp_ledger_set_settings(struct vfp_ledger *l, const char *id, const struct vfp_settings *s);
int vfp_ledger_get_allocation_by_key(struct vfp_ledger *l, const char *key,
				     struct vfp_allocation **ret_allocation);
int vfp_ledger_forget_key(struct vfp_ledger *l, const char *key);
int vfp_ledger_list_allocations(struct vfp_ledger *l, const char *owner_key, bool with_released,
				struct vfp_allocation ***ret_list, size_t *ret_n);
int vfp_ledger_list_domain_allocations(struct vfp_ledger *l, const char *uuid,
				       struct vfp_allocation ***ret_list, size_t *ret_n);
int vfp_ledger_prune(struct vfp_ledger *l, const struct vfp_retention *keep,
		     unsigned *ret_pruned);
int vfp_ledger_get_vf(struct vfp_ledger *l, const char *pci, struct vfp_ledger_vf *ret);
int vfp_ledger_counts(struct vfp_ledger *l, struct vfp_pool_count **ret_counts, size_t *ret_n);
json_t *vfp_ledger_audit(struct vfp_ledger *l, const char *pci, unsigned limit);
int vfp_ledger_quarantine_vf(struct vfp_ledger *l, const char *pci, const char *reason);
int vfp_ledger_repair_vf(struct vfp_ledger *l, const char *pci, bool ok, const char *reason);
uint64_t vfp_ledger_get_changes(const struct vfp_ledger *l);
void vfp_ledger_hold_lazy(struct vfp_ledger *l);
void vfp_ledger_release_lazy(struct vfp_ledger *l);
int vfp_ledger_set_restore_point(struct vfp_ledger *l, const char *pci,
				 const struct vfp_restore_point *rp);
int vfp_ledger_update_restore_point(struct vfp_ledger *l, const char *pci,
				    const struct vfp_restore_point *rp);
int vfp_ledger_get_restore_point(struct vfp_ledger *l, const char *pci,
				 struct vfp_restore_point **ret_rp);

/* A VF hot-swap's steps (ledger-swap.c says what each leaves behind). */
enum vfp_swap_step {
	VFP_SWAP_CLAIMING,
	VFP_SWAP_CLAIMED,
	VFP_SWAP_UNPLUGGING,
	VFP_SWAP_PLUGGING,
	VFP_SWAP_EXCHANGED,
};

struct vfp_swap {
	char allocation[37];
	char old_pci[VFP_PCI_ADDR_LEN + 1], new_pci[VFP_PCI_ADDR_LEN + 1]; /* new: "" until claimed */
	char temp_key[128]; /* the swap's claim's idempotency key */
	enum vfp_swap_step step;
	long long started;
};

const char *vfp_swap_step_to_string(enum vfp_swap_step s);
int vfp_ledger_swap_begin(struct vfp_ledger *l, const char *id, const char *old_pci,
			  const char *temp_key);
int vfp_ledger_swap_step(struct vfp_ledger *l, const char *id, enum vfp_swap_step step,
			 const char *new_pci);
int vfp_ledger_swap_exchange(struct vfp_ledger *l, const char *id, const char *temp_id);
int vfp_ledger_swap_set_steered(struct vfp_ledger *l, const char *id, bool steered);
int vfp_ledger_swap_steered(struct vfp_ledger *l, const char *id);
int vfp_ledger_swap_end(struct vfp_ledger *l, const char *id);
int vfp_ledger_swap_list(struct vfp_ledger *l, struct vfp_swap **ret, size_t *ret_n);
int vfp_ledger_swap_get(struct vfp_ledger *l, const char *id, struct vfp_swap *ret);

/* ---- the kernel's view now: drivers, netdevs, IB GUIDs (sysfs) ----------- */

int vfp_device_read_driver(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size);
int vfp_device_read_netdev(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size);
int vfp_device_bind_driver(struct vfp_ctx *ctx, const char *pci, const char *driver);
int vfp_device_rebind(struct vfp_ctx *ctx, const char *pci);
#define VFP_PKEY_NONE (-2) /* an mlx4 VF's P_Key index mapped to no physical one */
int vfp_ib_mlx4_find_pkey(struct vfp_ctx *ctx, const char *pf, int pkey, int *ret_index);
int vfp_ib_mlx4_read_pkey_idx(struct vfp_ctx *ctx, const char *pf, const char *vf, unsigned virt,
			      int *ret);
int vfp_ib_mlx4_write_pkey_idx(struct vfp_ctx *ctx, const char *pf, const char *vf,
			       unsigned virt, int phys);
int vfp_ib_port_has_pkey(struct vfp_ctx *ctx, const char *rdma, int pkey);
int vfp_vf_write_ib_guids(struct vfp_ctx *ctx, const char *pf_pci, const char *driver,
			  unsigned index, const char *node, const char *port);

/* The steps of a reset, for saying which one failed. */
enum vfp_reset_step {
	VFP_RESET_METHOD,
	VFP_RESET_UNBIND,
	VFP_RESET_WRITE,
	VFP_RESET_REBIND,
};

struct vfp_reset_info {
	char methods[64]; /* the kernel's reset_method ("flr") */
	char driver[64];  /* the driver the device went back to, "" for none */
	enum vfp_reset_step step; /* the step that failed */
};

const char *vfp_reset_step_to_string(enum vfp_reset_step s);
int vfp_device_reset(struct vfp_ctx *ctx, const char *pci, struct vfp_reset_info *ret);

/* ---- resizing PFs (sriov_numvfs) ------------------------------------------ */

/* What resizing a PF would do, and whether it may. */
struct vfp_numvfs_plan {
	char pf[VFP_PCI_ADDR_LEN + 1];
	int from, to, totalvfs;
	bool allowed;
	char reason[512];		  /* why not; "" when allowed */
	struct vfp_allocation **blockers; /* the live allocations holding VFs of the PF */
	size_t n_blockers;
};

int vfp_numvfs_plan(struct vfp_ledger *l, const struct vfp_inventory *inv, const char *pf_pci,
		    int numvfs, struct vfp_numvfs_plan **ret_plan);
void vfp_numvfs_plan_free(struct vfp_numvfs_plan *p);
int vfp_numvfs_apply(struct vfp_ledger *l, const struct vfp_config *config,
		     const struct vfp_inventory *inv, const char *pf_pci, int numvfs,
		     struct vfp_numvfs_plan **ret_plan, struct vfp_inventory **ret_inv);
int vfp_numvfs_apply_config(struct vfp_ledger *l, const struct vfp_config *config,
			    const struct vfp_inventory *inv, struct vfp_numvfs_plan ***ret_plans,
			    struct vfp_inventory **ret_inv);
/* Which PF a pool grew, from and to how many VFs: what undoing it takes. */
struct vfp_pool_growth {
	char pf[16];
	int from, to;
};

int vfp_pool_grow(struct vfp_ledger *l, const struct vfp_config *config,
		  const struct vfp_inventory *inv, const char *pool,
		  struct vfp_pool_growth *ret_growth, struct vfp_inventory **ret_inv);

/* ---- host checks (vfctl doctor, GET /v1/host/checks) ---------------------- */

/* Ordered by severity: a list's status is its worst. */
enum vfp_check_status {
	VFP_CHECK_PASS,
	VFP_CHECK_SKIP, /* does not apply here, or cannot be checked by this caller */
	VFP_CHECK_WARN,
	VFP_CHECK_FAIL,
};

/* What the checks read outside sysfs; NULL fields take the running host's. */
struct vfp_host_env {
	const char *proc_root;	  /* "/proc": cmdline, cpuinfo */
	const char *modules_dir;  /* "/lib/modules/<release>": modules.dep */
	const char *config_path;  /* named in the config's line */
	const char *config_error; /* why the config did not load, when it is NULL */
	const char *socket_path;  /* the agent's unix socket: its group is checked, when it exists */
	const int *verbs_devices; /* RDMA devices libibverbs lists (the agent's), NULL: not known */
};

struct vfp_host_checks;

const char *vfp_check_status_to_string(enum vfp_check_status s);
int vfp_host_checks_new(struct vfp_host_checks **ret);
void vfp_host_checks_free(struct vfp_host_checks *c);
void vfp_host_checks_add(struct vfp_host_checks *c, enum vfp_check_status status,
			 const char *check, const char *subject, const char *fix,
			 const char *fact_format, ...) __attribute__((format(printf, 6, 7)));
int vfp_host_checks_run(struct vfp_host_checks *c, struct vfp_ctx *ctx,
			const struct vfp_host_env *env, const struct vfp_inventory *inv,
			const struct vfp_config *config);
enum vfp_check_status vfp_host_checks_worst(const struct vfp_host_checks *c);
json_t *vfp_host_checks_to_json(const struct vfp_host_checks *c);

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
