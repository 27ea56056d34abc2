/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/container/container.h"
#include "libvfpool/macro.h"
#include "agent/container/netns.h"
#include "agent/netlink/nlmsg.h"
#include "agent/container/rdma.h"
#include "agent/pf/pf-side.h"
#include "agent/pf/vfconfig.h"

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
	if (r == -ENOENT) { /* rxe and siw unregister when their netdev leaves the namespace */
		snprintf(err, err_size, "RDMA device %s went away when its netdev moved: a software "
			 "RDMA device does not follow its netdev into a namespace", f->rdma);
		return -EOPNOTSUPP;
	}
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
	bool applied = false;
	int r = vf_facts_read(a, pci, &f);

	if (r < 0)
		snprintf(err, err_size, "VF %s is not on this host any more", pci);
	if (r >= 0)
		r = vfconfig_from_request(settings, vf, i == 0, &want, err, err_size);
	if (r >= 0 && (r = pf_side_apply(a, &f, &want, orig, err, err_size)) >= 0)
		applied = true;
	if (r >= 0 && (r = vfp_device_read_netdev(a->ctx, pci, netdev, sizeof(netdev))) < 0) {
		snprintf(err, err_size, "VF %s has no netdev (bound to vfio-pci?): it cannot go "
			 "into a namespace", pci);
		r = -ENODEV;
	}
	netns_config_for(t, settings, i == 0, f.ethernet, ifname, mac, &cfg);
	if (r >= 0 && (r = netns_snapshot(netdev, &moved, err, err_size)) >= 0) {
		json_object_update(orig, moved);
		json_object_set_new(orig, "netns", json_string(t->netns));
		json_object_set_new(orig, "netns_inode", json_integer((json_int_t)t->inode));
		json_object_set_new(orig, "ifname", json_string(ifname));
		r = restore_point_save(a, pci, orig); /* where it goes, before it goes */
	}
	if (r >= 0)
		r = netns_attach(netdev, t->fd, &cfg, orig, err, err_size);
	if (r >= 0 && (r = move_rdma(&f, t->fd, orig, err, err_size)) < 0)
		netns_detach(orig, t->fd, NULL, msg, sizeof(msg));
	if (r < 0 && applied) {
		pf_side_restore(a, &f, orig, msg, sizeof(msg));
		restore_point_save(a, pci, NULL);
	}
	if (r >= 0)
		r = restore_point_save(a, pci, orig);
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
	json_t *orig = restore_point_load(a, pci);
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
	if (vf_facts_read(a, pci, &f) >= 0)
		pf_side_restore(a, &f, orig, msg, sizeof(msg));
	if (msg[0] && r >= 0) {
		snprintf(err, err_size, "restoring VF settings on the PF: %s", msg);
		r = -EIO;
	}
	if (r >= 0)
		r = restore_point_save(a, pci, NULL); /* restored: a second restore changes nothing */
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
	pthread_mutex_t *lock = pf_side_lock(json_array_get(json_object_get(alloc, "vfs"), i));
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
	pthread_mutex_t *lock = pf_side_lock(vf);
	int r;

	pthread_mutex_lock(lock);
	r = restore_vf(a, vf, netns_fd, err, err_size);
	pthread_mutex_unlock(lock);
	return r;
}

/* 1 while @vf's recorded namespace (name and inode) is there, 0 once gone, -1 if it has none. */
static int vf_netns_alive(struct agent *a, json_t *vf)
{
	json_t *orig = restore_point_load(a, json_string_value(json_object_get(vf, "pci")));
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
 * For the reconcile after a crash during an attach: every VF's netdev must
 * be in the namespace its restore point names, under its new name; else 0,
 * and the attach is rolled back.
 */
int container_is_attached(struct agent *a, json_t *alloc)
{
	size_t i;
	json_t *vf;

	json_array_foreach(json_object_get(alloc, "vfs"), i, vf) {
		json_t *orig = restore_point_load(a, json_string_value(json_object_get(vf, "pci")));
		int in = netns_holds(json_string_value(json_object_get(orig, "netns")),
				     (ino_t)json_integer_value(json_object_get(orig, "netns_inode")),
				     json_string_value(json_object_get(orig, "ifname")));

		json_decref(orig);
		if (!in)
			return 0;
	}
	return 1;
}
