/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's PCIe tree, as rdma-core's rdma_topo reads it: each function's
 * place is where its bus/pci/devices link leads under devices/: the root
 * complex ("pci0000:3a", the kernel's name for a root bus) and the bridges
 * above it, one directory each. A bus number says nothing of the root: on
 * a Xeon, 0000:3b:00.0 hangs off pci0000:3a, and one root bus may carry
 * buses 00-7f. The role of each bridge comes from its PCIe capability
 * (root port, switch upstream or downstream port) when config space is
 * readable, else from its place; ACS control from its extended capability.
 *
 * Distances follow nvidia-smi topo: PIX through at most one switch (or one
 * root port, for two functions of one card), PXB through several switches
 * below one root port, PHB through the root complex, NODE between root
 * complexes of one NUMA node, SYS across NUMA nodes.
 *
 * A ConnectX-8 with Data Direct moves its data through a DMA function of
 * its own (15b3:2100), which a DGX-like host places under the GPU's
 * switch while the PF hangs off a CPU root port: the PF's distances are
 * the DMA function's. rdma-core's rdma_topo pairs the two by the "V3"
 * UUID of their VPD (the "SN" serial is the board's, shared by its NICs).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-topo.h"
#include "sysfs.h"

#define PCI_STATUS 0x06
#define PCI_STATUS_CAP_LIST 0x10
#define PCI_CAPABILITY_LIST 0x34
#define PCI_CAP_ID_EXP 0x10
#define PCI_EXT_CAP_ID_ACS 0x000d
#define PCI_CFG_SPACE_SIZE 256
#define PCI_CFG_SPACE_EXP_SIZE 4096

#define PCI_EXP_TYPE_ROOT_PORT 0x4
#define PCI_EXP_TYPE_UPSTREAM 0x5
#define PCI_EXP_TYPE_DOWNSTREAM 0x6
#define PCI_EXP_TYPE_PCI_BRIDGE 0x7

#define MAX_DEPTH 32
#define DATA_DIRECT_VENDOR "15b3"
#define DATA_DIRECT_DEVICE "2100"

static const char *const distance_names[] = {
	[VFP_PCIE_SELF] = "X",	     [VFP_PCIE_PIX] = "PIX",   [VFP_PCIE_PXB] = "PXB",
	[VFP_PCIE_PHB] = "PHB",	     [VFP_PCIE_NODE] = "NODE", [VFP_PCIE_SYS] = "SYS",
};

VFP_EXPORT const char *vfp_pcie_distance_to_string(enum vfp_pcie_distance d)
{
	return (unsigned)d < _VFP_PCIE_DISTANCE_MAX ? distance_names[d] : NULL;
}

/* "PIX" (any case) → VFP_PCIE_PIX; -EINVAL for anything else. */
VFP_EXPORT int vfp_pcie_distance_from_string(const char *s)
{
	for (int d = 0; s && d < _VFP_PCIE_DISTANCE_MAX; d++)
		if (strcasecmp(s, distance_names[d]) == 0)
			return d;
	return -EINVAL;
}

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

/*
 * The PCIe port type (-1: no PCIe capability) and ACS control register
 * (-1: none, or beyond the @len bytes read) of a config space.
 */
int pcie_config_parse(const unsigned char *cfg, size_t len, int *ret_port_type, int *ret_acs)
{
	unsigned pos, hops = 0;

	*ret_port_type = *ret_acs = -1;
	if (len < 64 || !(le16(cfg + PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return 0;
	for (pos = cfg[PCI_CAPABILITY_LIST] & ~3u; pos >= 0x40 && pos + 4 <= len && hops < 48;
	     pos = cfg[pos + 1] & ~3u, hops++)
		if (cfg[pos] == PCI_CAP_ID_EXP) {
			*ret_port_type = (le16(cfg + pos + 2) >> 4) & 0xf;
			break;
		}
	for (pos = PCI_CFG_SPACE_SIZE, hops = 0; pos && pos + 8 <= len && hops < 480; hops++) {
		uint32_t h = le32(cfg + pos);

		if (h == 0 || h == 0xffffffff)
			break;
		if ((h & 0xffff) == PCI_EXT_CAP_ID_ACS) {
			*ret_acs = le16(cfg + pos + 6);
			break;
		}
		pos = (h >> 20) & ~3u;
		if (pos < PCI_CFG_SPACE_SIZE)
			break;
	}
	return 0;
}

/*
 * Root and parent from "devices/[platform/…/]pci0000:3a/0000:3a:00.0/0000:3b:00.0":
 * the root is the first component named as a root bus; the parent the
 * component before the device, when it is a PCI address.
 */
static int parse_device_path(char *path, struct pcie_dev *d, char parent[static 13])
{
	char *save = NULL, *prev = NULL;
	bool in_tree = false;

	parent[0] = '\0';
	for (char *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		unsigned dom, bus;
		char end;

		if (!in_tree && sscanf(c, "pci%4x:%2x%c", &dom, &bus, &end) == 2 &&
		    strlen(c) < sizeof(d->root)) {
			snprintf(d->root, sizeof(d->root), "%s", c);
			in_tree = true;
		} else if (in_tree && strcmp(c, d->pci) == 0) {
			if (prev && vfp_pci_addr_is_valid(prev))
				snprintf(parent, 13, "%s", prev);
			return 0;
		}
		prev = c;
	}
	return -EINVAL;
}

/**
 * vfp_pcie_root_read() - the root complex @pci hangs off ("pci0000:3a")
 *
 * -EINVAL when its bus/pci/devices entry does not lead into devices/ under
 * a root bus (a flattened tree), -ENOENT when it has none.
 */
int vfp_pcie_root_read(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size)
{
	struct pcie_dev d = { 0 };
	char path[4096], parent[13];
	int r;

	if (vfp_pci_addr_normalize(pci, d.pci) < 0)
		return -EINVAL;
	r = vfp_sysfs_pci_device_path(ctx, d.pci, path, sizeof(path));
	if (r >= 0)
		r = parse_device_path(path, &d, parent);
	if (r >= 0 && (size_t)snprintf(buf, size, "%s", d.root) >= size)
		r = -ENAMETOOLONG;
	return r;
}

/* A ConnectX PF's or DMA function's VPD "V3"; garbage or none leaves it unpaired. */
static void read_vpd_v3(struct vfp_ctx *ctx, struct pcie_dev *d)
{
	struct vfp_vpd_ids ids;

	if (d->is_vf || strcmp(d->vendor, DATA_DIRECT_VENDOR) != 0 || d->class >> 8 == 0x0604)
		return;
	if (vfp_sysfs_read_vpd(ctx, d->pci, &ids) >= 0)
		memcpy(d->vpd_v3, ids.v3, sizeof(d->vpd_v3));
}

static void read_class(struct vfp_ctx *ctx, struct pcie_dev *d)
{
	char rel[96], buf[32];
	int v;

	vfp_sysfs_dev(rel, sizeof(rel), d->pci, "class");
	if (vfp_sysfs_read(ctx, rel, buf, sizeof(buf)) > 0 &&
	    vfp_parse_int(buf, 16, 0, 0xffffff, &v) >= 0)
		d->class = (unsigned)v;
	vfp_sysfs_dev(rel, sizeof(rel), d->pci, "vendor");
	if (vfp_sysfs_read(ctx, rel, buf, sizeof(buf)) == 6)
		memcpy(d->vendor, buf + 2, 5);
	vfp_sysfs_dev(rel, sizeof(rel), d->pci, "device");
	if (vfp_sysfs_read(ctx, rel, buf, sizeof(buf)) == 6)
		memcpy(d->device, buf + 2, 5);
	vfp_sysfs_dev(rel, sizeof(rel), d->pci, "numa_node");
	if (vfp_sysfs_read(ctx, rel, buf, sizeof(buf)) > 0 &&
	    vfp_parse_int(buf, 10, -1, 4095, &v) >= 0)
		d->numa_node = v;
	vfp_sysfs_dev(rel, sizeof(rel), d->pci, "physfn");
	d->is_vf = vfp_sysfs_exists(ctx, rel) > 0;
	read_vpd_v3(ctx, d);
	if (d->class >> 16 == 0x03)
		d->kind = PCIE_KIND_GPU;
	else if (d->class >> 16 == 0x12)
		d->kind = PCIE_KIND_ACCELERATOR;
	else if (d->class >> 8 == 0x0108)
		d->kind = PCIE_KIND_NVME;
}

/* A bridge's PCIe port type and ACS from its config space; -1s when unreadable. */
static void read_bridge(struct vfp_ctx *ctx, struct pcie_dev *d, int *ret_port_type)
{
	unsigned char cfg[PCI_CFG_SPACE_EXP_SIZE];
	char rel[96];
	int n;

	*ret_port_type = -1;
	vfp_sysfs_dev(rel, sizeof(rel), d->pci, "config");
	n = vfp_sysfs_read_bin(ctx, rel, cfg, sizeof(cfg));
	if (n > 0)
		pcie_config_parse(cfg, (size_t)n, ret_port_type, &d->acs_ctrl);
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(((const struct pcie_dev *)a)->pci, ((const struct pcie_dev *)b)->pci);
}

const struct pcie_dev *pcie_topo_find(const struct vfp_pcie_topo *t, const char *pci)
{
	struct pcie_dev key = { 0 };

	if (!t || vfp_pci_addr_normalize(pci, key.pci) < 0)
		return NULL;
	return bsearch(&key, t->devs, t->n, sizeof(key), cmp_dev);
}

/*
 * A bridge without a readable PCIe capability takes its role from its
 * place: on the root bus a root port; below a root port or a downstream
 * port an upstream port; below an upstream port a downstream port.
 */
static enum pcie_role role_by_place(const struct vfp_pcie_topo *t, const struct pcie_dev *d)
{
	const struct pcie_dev *up = d->parent >= 0 ? &t->devs[d->parent] : NULL;

	if (!up)
		return PCIE_ROOT_PORT;
	return up->role == PCIE_SWITCH_UPSTREAM ? PCIE_SWITCH_DOWNSTREAM : PCIE_SWITCH_UPSTREAM;
}

static enum pcie_role role_by_type(int port_type)
{
	switch (port_type) {
	case PCI_EXP_TYPE_ROOT_PORT:
		return PCIE_ROOT_PORT;
	case PCI_EXP_TYPE_UPSTREAM:
		return PCIE_SWITCH_UPSTREAM;
	case PCI_EXP_TYPE_DOWNSTREAM:
		return PCIE_SWITCH_DOWNSTREAM;
	default:
		return PCIE_BRIDGE;
	}
}

static bool is_data_direct(const struct pcie_dev *d)
{
	return strcmp(d->vendor, DATA_DIRECT_VENDOR) == 0 &&
	       strcmp(d->device, DATA_DIRECT_DEVICE) == 0;
}

/* Each PF whose VPD V3 is a Data Direct function's gets that function as its data path. */
static void pair_data_direct(struct vfp_pcie_topo *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (!is_data_direct(&t->devs[i]) || !t->devs[i].vpd_v3[0])
			continue;
		for (size_t j = 0; j < t->n; j++)
			if (j != i && !is_data_direct(&t->devs[j]) &&
			    strcmp(t->devs[j].vpd_v3, t->devs[i].vpd_v3) == 0)
				t->devs[j].data_direct = (int)i;
	}
}

/* Where @d's data goes through: its Data Direct function, else itself. */
const struct pcie_dev *pcie_topo_data_path(const struct vfp_pcie_topo *t,
					   const struct pcie_dev *d)
{
	return d->data_direct >= 0 ? &t->devs[d->data_direct] : d;
}

/* Parents by address, then bridge roles from the top down (addresses sort parents first). */
static void link_tree(struct vfp_pcie_topo *t, char (*parents)[13], const int *port_types)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct pcie_dev *p = parents[i][0] ? pcie_topo_find(t, parents[i]) : NULL;

		t->devs[i].parent = p ? (int)(p - t->devs) : -1;
	}
	for (unsigned depth = 0, changed = 1; changed && depth < MAX_DEPTH; depth++) {
		changed = 0;
		for (size_t i = 0; i < t->n; i++) {
			struct pcie_dev *d = &t->devs[i];
			enum pcie_role r;

			if (d->class >> 8 != 0x0604)
				continue;
			r = port_types[i] >= 0 ? role_by_type(port_types[i]) : role_by_place(t, d);
			changed |= r != d->role;
			d->role = r;
		}
	}
}

static int scan_one(struct vfp_ctx *ctx, const char *name, struct pcie_dev *d, char parent[13],
		    int *port_type)
{
	char path[4096];
	int r;

	memset(d, 0, sizeof(*d));
	d->numa_node = -1;
	d->data_direct = -1;
	d->acs_ctrl = -1;
	*port_type = -1;
	if (vfp_pci_addr_normalize(name, d->pci) < 0)
		return -EINVAL;
	r = vfp_sysfs_pci_device_path(ctx, d->pci, path, sizeof(path));
	if (r >= 0)
		r = parse_device_path(path, d, parent);
	if (r < 0)
		return r; /* a tree without the kernel's links: no place to tell */
	read_class(ctx, d);
	if (d->class >> 8 == 0x0604)
		read_bridge(ctx, d, port_type);
	return 0;
}

/**
 * vfp_pcie_topo_scan() - every PCI function under the sysfs root, with its
 * root complex, bridges, NUMA node and ACS
 * @ret_topo: vfp_pcie_topo_unref() it
 *
 * A function whose place cannot be told (its bus/pci/devices entry is no
 * link into devices/) is left out; that is not an error.
 */
VFP_EXPORT int vfp_pcie_topo_scan(struct vfp_ctx *ctx, struct vfp_pcie_topo **ret_topo)
{
	struct vfp_pcie_topo *t = calloc(1, sizeof(*t));
	char **names = NULL, (*parents)[13] = NULL;
	int *port_types = NULL;
	size_t n_names = 0;
	int r = t ? vfp_sysfs_list_dir(ctx, "bus/pci/devices", &names, &n_names) : -ENOMEM;

	if (r >= 0) {
		t->refcount = 1;
		t->devs = calloc(n_names + 1, sizeof(*t->devs));
		parents = calloc(n_names + 1, sizeof(*parents));
		port_types = calloc(n_names + 1, sizeof(*port_types));
		if (!t->devs || !parents || !port_types)
			r = -ENOMEM;
	}
	for (size_t i = 0; r >= 0 && i < n_names; i++)
		if (scan_one(ctx, names[i], &t->devs[t->n], parents[t->n], &port_types[t->n]) >= 0)
			t->n++;
	if (r >= 0) {
		/* list_dir sorted the names; normalizing keeps that order */
		link_tree(t, parents, port_types);
		pair_data_direct(t);
		*ret_topo = TAKE_PTR(t);
	}
	vfp_strv_free(names, n_names);
	free(parents);
	free(port_types);
	vfp_pcie_topo_unref(t);
	return r;
}

VFP_EXPORT struct vfp_pcie_topo *vfp_pcie_topo_ref(struct vfp_pcie_topo *t)
{
	if (t)
		__atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
	return t;
}

VFP_EXPORT struct vfp_pcie_topo *vfp_pcie_topo_unref(struct vfp_pcie_topo *t)
{
	if (!t || __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) > 0)
		return NULL;
	free(t->devs);
	free(t);
	return NULL;
}

/* The root complex of @pci ("pci0000:3a"), or NULL when the tree does not place it. */
VFP_EXPORT const char *vfp_pcie_topo_get_root(const struct vfp_pcie_topo *t, const char *pci)
{
	const struct pcie_dev *d = pcie_topo_find(t, pci);

	return d ? d->root : NULL;
}

/* @d and the bridges above it, from @d up; the count. */
static size_t chain(const struct vfp_pcie_topo *t, const struct pcie_dev *d, int *out)
{
	size_t n = 0;

	for (int i = (int)(d - t->devs); i >= 0 && n < MAX_DEPTH; i = t->devs[i].parent)
		out[n++] = i;
	return n;
}

/* Where the chains @ca and @cb meet: the positions of their lowest common entry. */
static bool meet(const int *ca, size_t na, const int *cb, size_t nb, size_t *ret_ia,
		 size_t *ret_ib)
{
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			if (ca[i] == cb[j]) {
				*ret_ia = i;
				*ret_ib = j;
				return true;
			}
	return false;
}

/* Switches (upstream ports) and plain bridges strictly between chain[0] and chain[upto]. */
static unsigned hops_below(const struct vfp_pcie_topo *t, const int *c, size_t upto)
{
	unsigned n = 0;

	for (size_t i = 1; i < upto; i++)
		n += t->devs[c[i]].role == PCIE_SWITCH_UPSTREAM || t->devs[c[i]].role == PCIE_BRIDGE;
	return n;
}

static enum vfp_pcie_distance distance(const struct vfp_pcie_topo *t, const struct pcie_dev *a,
				       const struct pcie_dev *b)
{
	int ca[MAX_DEPTH], cb[MAX_DEPTH];
	size_t na, nb, ia, ib;

	if (a == b)
		return VFP_PCIE_SELF;
	if (strcmp(a->root, b->root) != 0)
		return a->numa_node == b->numa_node ? VFP_PCIE_NODE : VFP_PCIE_SYS;
	na = chain(t, a, ca);
	nb = chain(t, b, cb);
	if (!meet(ca, na, cb, nb, &ia, &ib))
		return VFP_PCIE_PHB; /* under different root ports: through the host bridge */
	/* the switch (or root port) where they meet is one; any other on the way is one more */
	return hops_below(t, ca, ia) + hops_below(t, cb, ib) == 0 ? VFP_PCIE_PIX : VFP_PCIE_PXB;
}

/*
 * Whether ACS on a downstream port between @a and @b sends their peer
 * requests up to the root complex (P2P Request Redirect): then PIX and PXB
 * name the wiring, not the path data takes.
 */
bool pcie_topo_acs_redirects(const struct vfp_pcie_topo *t, const struct pcie_dev *a,
			     const struct pcie_dev *b)
{
	int ca[MAX_DEPTH], cb[MAX_DEPTH];
	size_t na = chain(t, a, ca), nb = chain(t, b, cb), ia, ib;

	if (a == b || !meet(ca, na, cb, nb, &ia, &ib))
		return false;
	for (size_t i = 1; i < ia; i++)
		if (t->devs[ca[i]].acs_ctrl > 0 && (t->devs[ca[i]].acs_ctrl & PCIE_ACS_CTRL_RR))
			return true;
	for (size_t i = 1; i < ib; i++)
		if (t->devs[cb[i]].acs_ctrl > 0 && (t->devs[cb[i]].acs_ctrl & PCIE_ACS_CTRL_RR))
			return true;
	return false;
}

/**
 * vfp_pcie_topo_distance() - how far apart PCI devices @a and @b are
 *
 * Measured where their data goes: a PF with a Data Direct function from
 * that function's place.
 *
 * -ENOENT when the tree does not place one of them (not on this host);
 * -EINVAL when one is no PCI address.
 */
VFP_EXPORT int vfp_pcie_topo_distance(const struct vfp_pcie_topo *t, const char *a,
				      const char *b, enum vfp_pcie_distance *ret_distance)
{
	char na[VFP_PCI_ADDR_LEN + 1], nb[VFP_PCI_ADDR_LEN + 1];
	const struct pcie_dev *da, *db;

	if (vfp_pci_addr_normalize(a, na) < 0 || vfp_pci_addr_normalize(b, nb) < 0)
		return -EINVAL;
	da = pcie_topo_find(t, a);
	db = pcie_topo_find(t, b);
	if (!da || !db)
		return -ENOENT;
	*ret_distance = distance(t, pcie_topo_data_path(t, da), pcie_topo_data_path(t, db));
	return 0;
}
