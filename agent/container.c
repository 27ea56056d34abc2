/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "container.h"
#include "libvfpool/macro.h"
#include "netns.h"
#include "nlmsg.h"
#include "rdma.h"
#include "vfconfig.h"

/* Changes on one PF are serialized; different PFs go in parallel (striped locks). */
static pthread_mutex_t pf_locks[32] = { [0 ... 31] = PTHREAD_MUTEX_INITIALIZER };

static pthread_mutex_t *pf_lock(json_t *vf)
{
	const char *pf = json_string_value(json_object_get(vf, "pf"));
	unsigned h = 5381;

	for (; pf && *pf; pf++)
		h = h * 33 + (unsigned char)*pf;
	return &pf_locks[h % ELEMENTSOF(pf_locks)];
}

/* What the inventory knows of a VF and its PF, copied out of it. */
struct vf_facts {
	char pci[16], pf_pci[16], pf_netdev[32], pf_driver[64], rdma[64];
	unsigned index;
	bool ethernet;
};

static int vf_facts(struct agent *a, const char *pci, struct vf_facts *f)
{
	struct vfp_inventory *inv = agent_get_inventory(a);
	const struct vfp_vf *vf = vfp_inventory_find_vf(inv, pci);
	const struct vfp_pf *pf = vf ? vfp_vf_get_pf(vf) : NULL;

	if (pf) {
		snprintf(f->pci, sizeof(f->pci), "%s", pci);
		snprintf(f->pf_pci, sizeof(f->pf_pci), "%s", vfp_pf_get_pci(pf));
		snprintf(f->pf_netdev, sizeof(f->pf_netdev), "%s",
			 vfp_pf_get_netdev(pf) ? vfp_pf_get_netdev(pf) : "");
		snprintf(f->pf_driver, sizeof(f->pf_driver), "%s",
			 vfp_pf_get_driver(pf) ? vfp_pf_get_driver(pf) : "");
		snprintf(f->rdma, sizeof(f->rdma), "%s",
			 vfp_vf_get_rdma_device(vf) ? vfp_vf_get_rdma_device(vf) : "");
		f->index = vfp_vf_get_index(vf);
		f->ethernet = vfp_vf_get_link_type(vf) == VFP_LINK_ETHERNET;
	}
	vfp_inventory_unref(inv);
	return pf ? 0 : -ENODEV;
}

static struct vf_target target_of(struct agent *a, const struct vf_facts *f)
{
	return (struct vf_target){ .ctx = a->ctx, .pci = f->pci, .pf_pci = f->pf_pci,
				   .pf_netdev = f->pf_netdev[0] ? f->pf_netdev : NULL,
				   .pf_driver = f->pf_driver[0] ? f->pf_driver : NULL,
				   .index = f->index };
}

static int save_original(struct agent *a, const char *pci, json_t *orig)
{
	int r;

	pthread_mutex_lock(&a->ledger_lock);
	r = vfp_ledger_set_original(a->ledger, pci, orig);
	pthread_mutex_unlock(&a->ledger_lock);
	return r;
}

static json_t *load_original(struct agent *a, const char *pci)
{
	json_t *orig;

	pthread_mutex_lock(&a->ledger_lock);
	orig = vfp_ledger_get_original(a->ledger, pci);
	pthread_mutex_unlock(&a->ledger_lock);
	return orig;
}

/* PF side: the restore point is in the ledger before the PF is asked to change. */
static int apply_pf_side(struct agent *a, const struct vf_facts *f, const struct vf_settings *want,
			 json_t *orig, char *err, size_t err_size)
{
	struct vf_target t = target_of(a, f);
	struct vf_settings snap;
	int r;

	if (vfconfig_is_empty(want))
		return 0;
	r = vfconfig_snapshot(&t, want, &snap, err, err_size);
	if (r < 0) {
		if (!err[0] || !strstr(err, "PF"))
			snprintf(err, err_size, "reading VF %u's settings on PF %s: %s", f->index,
				 t.pf_netdev ? t.pf_netdev : f->pf_pci, strerror(-r));
		return r;
	}
	json_object_set_new(orig, "vf_settings", vfconfig_to_json(&snap));
	r = save_original(a, f->pci, orig);
	if (r >= 0)
		r = vfconfig_apply(&t, want, err, err_size);
	if (r < 0) {
		char ignored[256];

		vfconfig_apply(&t, &snap, ignored, sizeof(ignored));
	}
	return r;
}

static void restore_pf_side(struct agent *a, const struct vf_facts *f, json_t *orig,
			    char *err, size_t err_size)
{
	struct vf_target t = target_of(a, f);
	struct vf_settings snap;

	err[0] = '\0';
	if (vfconfig_from_json(json_object_get(orig, "vf_settings"), f->index, &snap) >= 0 &&
	    !vfconfig_is_empty(&snap))
		vfconfig_apply(&t, &snap, err, err_size);
}

/*
 * In exclusive RDMA netns mode the RDMA device follows the netdev, and must
 * open from inside. A kernel with no RDMA has nothing to move.
 */
static int move_rdma(const struct vf_facts *f, int netns_fd, json_t *orig, char *err,
		     size_t err_size)
{
	char msg[256];
	int exclusive = 0, r;

	if (!f->rdma[0])
		return 0;
	r = rdma_netns_exclusive(&exclusive, msg, sizeof(msg));
	if (r == -EPROTONOSUPPORT)
		return 0;
	if (r < 0) {
		snprintf(err, err_size, "%s", msg);
		return r;
	}
	if (!exclusive)
		return 0; /* shared mode: every namespace sees it already */
	r = rdma_move(f->rdma, -1, netns_fd, err, err_size);
	if (r >= 0 && (r = rdma_check_open(netns_fd, f->rdma, err, err_size)) < 0) {
		_cleanup_close_ int host = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

		if (host >= 0)
			rdma_move(f->rdma, netns_fd, host, msg, sizeof(msg));
	}
	if (r >= 0)
		json_object_set_new(orig, "rdma_device", json_string(f->rdma));
	return r;
}

static void netns_config_for(const struct container_target *t, json_t *settings, bool first,
			     bool ethernet, const char *ifname, unsigned char mac[6],
			     struct netns_config *cfg)
{
	const char *m = json_string_value(json_object_get(settings, "mac"));

	*cfg = (struct netns_config){ .ifname = ifname, .mtu = t->mtu };
	if (first) {
		cfg->addresses = t->addresses;
		cfg->gateway = t->gateway;
	}
	if (first && ethernet && m && nl_parse_mac(m, mac) == 0)
		cfg->mac = mac;
}

/*
 * VF @i of @alloc into the namespace as @ifname
 *
 * PF-side settings first (an IB GUID needs a rebind, which makes a new
 * netdev), then the netdev, then the RDMA device. Any failure undoes the
 * steps before it, and @err says which step failed, in the kernel's words.
 */
static int attach_vf(struct agent *a, json_t *alloc, size_t i, const struct container_target *t,
		     const char *ifname, char *err, size_t err_size)
{
	json_t *vf = json_array_get(json_object_get(alloc, "vfs"), i);
	json_t *settings = json_object_get(alloc, "settings");
	const char *pci = json_string_value(json_object_get(vf, "pci"));
	struct vf_settings want;
	struct netns_config cfg;
	struct vf_facts f;
	unsigned char mac[6];
	char netdev[64], msg[256];
	json_t *orig = json_object(), *moved = NULL;
	int r = vf_facts(a, pci, &f);

	if (r < 0)
		snprintf(err, err_size, "VF %s is not on this host any more", pci);
	if (r >= 0)
		r = vfconfig_from_request(settings, vf, i == 0, &want, err, err_size);
	if (r >= 0)
		r = apply_pf_side(a, &f, &want, orig, err, err_size);
	if (r >= 0 && (r = vfp_device_read_netdev(a->ctx, pci, netdev, sizeof(netdev))) < 0) {
		snprintf(err, err_size, "VF %s has no netdev (bound to vfio-pci?): it cannot go "
			 "into a namespace", pci);
		restore_pf_side(a, &f, orig, msg, sizeof(msg));
		r = -ENODEV;
	}
	netns_config_for(t, settings, i == 0, f.ethernet, ifname, mac, &cfg);
	if (r >= 0 && (r = netns_attach(netdev, t->fd, &cfg, &moved, err, err_size)) < 0)
		restore_pf_side(a, &f, orig, msg, sizeof(msg));
	if (r >= 0) {
		json_object_update(orig, moved);
		json_object_set_new(orig, "netns", json_string(t->netns));
		json_object_set_new(orig, "netns_inode", json_integer((json_int_t)t->inode));
		json_object_set_new(orig, "ifname", json_string(ifname));
		r = move_rdma(&f, t->fd, orig, err, err_size);
		if (r < 0) {
			netns_detach(orig, t->fd, NULL, msg, sizeof(msg));
			restore_pf_side(a, &f, orig, msg, sizeof(msg));
		}
	}
	if (r >= 0)
		r = save_original(a, pci, orig);
	json_decref(moved);
	json_decref(orig);
	return r;
}

/*
 * @vf back in the host as its restore point says
 * @netns_fd: the namespace, or -1 to open the one recorded
 *
 * In reverse order: RDMA device, netdev (found by PCI address when its
 * namespace died and the kernel returned it under another name), PF side.
 * A VF never attached has nothing to restore.
 */
static int restore_vf(struct agent *a, json_t *vf, int netns_fd, char *err, size_t err_size)
{
	const char *pci = json_string_value(json_object_get(vf, "pci"));
	json_t *orig = load_original(a, pci);
	const char *rdma_dev = json_string_value(json_object_get(orig, "rdma_device"));
	char found[64], msg[256] = "";
	struct vf_facts f;
	int r = 0;

	err[0] = '\0';
	if (!orig)
		return 0;
	if (rdma_dev && netns_fd >= 0) {
		_cleanup_close_ int host = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

		r = host < 0 ? negative_errno() : rdma_move(rdma_dev, netns_fd, host, err, err_size);
	}
	if (vfp_device_read_netdev(a->ctx, pci, found, sizeof(found)) < 0)
		found[0] = '\0';
	if (r >= 0)
		r = netns_detach(orig, netns_fd, found[0] ? found : NULL, err, err_size);
	if (vf_facts(a, pci, &f) >= 0)
		restore_pf_side(a, &f, orig, msg, sizeof(msg));
	if (msg[0] && r >= 0) {
		snprintf(err, err_size, "restoring VF settings on the PF: %s", msg);
		r = -EIO;
	}
	if (r >= 0)
		r = save_original(a, pci, NULL); /* restored: a second restore changes nothing */
	json_decref(orig);
	return r;
}

/**
 * container_attach_vf() - VF @i of @alloc into the namespace as @ifname
 *
 * Under its PF's lock. Any failure undoes the steps taken; @err says which
 * step failed, in the kernel's words.
 */
int container_attach_vf(struct agent *a, json_t *alloc, size_t i, const struct container_target *t,
			const char *ifname, char *err, size_t err_size)
{
	pthread_mutex_t *lock = pf_lock(json_array_get(json_object_get(alloc, "vfs"), i));
	int r;

	pthread_mutex_lock(lock);
	r = attach_vf(a, alloc, i, t, ifname, err, err_size);
	pthread_mutex_unlock(lock);
	return r;
}

/**
 * container_restore_vf() - @vf back in the host as its restore point says
 * @netns_fd: the namespace, or -1 to open the one recorded
 *
 * Under its PF's lock. A VF with no restore point (never attached, or
 * restored already) is left alone.
 */
int container_restore_vf(struct agent *a, json_t *vf, int netns_fd, char *err, size_t err_size)
{
	pthread_mutex_t *lock = pf_lock(vf);
	int r;

	pthread_mutex_lock(lock);
	r = restore_vf(a, vf, netns_fd, err, err_size);
	pthread_mutex_unlock(lock);
	return r;
}

/* Every VF of @alloc back to the host; every VF is tried, the first error is returned. */
int container_detach_all(struct agent *a, json_t *alloc, char *err, size_t err_size)
{
	size_t i;
	json_t *vf;
	int r = 0;

	json_array_foreach(json_object_get(alloc, "vfs"), i, vf) {
		const char *pci = json_string_value(json_object_get(vf, "pci"));
		char msg[256];
		int rr = container_restore_vf(a, vf, -1, msg, sizeof(msg));

		if (msg[0])
			log_warning("VF %s: %s", pci, msg);
		if (rr < 0 && r == 0) {
			r = rr;
			snprintf(err, err_size, "VF %s: %s", pci, msg[0] ? msg : strerror(-rr));
		}
	}
	return r;
}

/* 1 while @vf's recorded namespace (name and inode) is there, 0 once gone, -1 if it has none. */
static int vf_netns_alive(struct agent *a, json_t *vf)
{
	json_t *orig = load_original(a, json_string_value(json_object_get(vf, "pci")));
	const char *spec = json_string_value(json_object_get(orig, "netns"));
	json_t *inode = json_object_get(orig, "netns_inode");
	int r = -1;

	if (spec && json_is_integer(inode) && json_object_get(orig, "ifname"))
		r = netns_alive(spec, (ino_t)json_integer_value(inode));
	json_decref(orig);
	return r;
}

/**
 * container_netns_alive() - 1 while the namespace @alloc's VFs went into
 * exists, 0 once it is gone, -1 when none of them went into one
 */
int container_netns_alive(struct agent *a, json_t *alloc)
{
	json_t *vf = json_array_get(json_object_get(alloc, "vfs"), 0);

	return vf ? vf_netns_alive(a, vf) : -1;
}

/**
 * container_is_attached() - 1 when every VF of @alloc is in its namespace
 *
 * For the reconcile after a crash during an attach: every VF must have its
 * restore point with a namespace that is still there; else 0, and the
 * attach is rolled back.
 */
int container_is_attached(struct agent *a, json_t *alloc)
{
	size_t i;
	json_t *vf;

	json_array_foreach(json_object_get(alloc, "vfs"), i, vf)
		if (vf_netns_alive(a, vf) != 1)
			return 0;
	return 1;
}
