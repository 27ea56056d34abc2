/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/container/container.h"
#include "agent/log.h"
#include "libvfpool/macro.h"
#include "agent/container/netns.h"
#include "agent/container/vf-netdev.h"
#include "agent/netlink/nlmsg.h"
#include "agent/container/rdma.h"
#include "agent/pf/pf-side.h"
#include "agent/pf/vfconfig.h"

/*
 * In exclusive RDMA netns mode the RDMA device follows the netdev, and must
 * open from inside. A kernel with no RDMA has nothing to move.
 */
static int move_rdma(const struct vf_facts *f, int netns_fd, struct vfp_restore_point *rp,
		     char *err, size_t err_size)
{
	char msg[AGENT_ERR_SIZE];
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
		r = vfp_restore_point_set(&rp->rdma_device, f->rdma);
	return r;
}

static void netns_config_for(const struct container_target *t, const struct vfp_settings *s,
			     bool first, bool ethernet, const char *ifname, unsigned char mac[6],
			     struct netns_config *cfg)
{
	*cfg = (struct netns_config){ .ifname = ifname, .mtu = t->mtu };
	if (first) {
		cfg->addresses = t->addresses;
		cfg->n_addresses = t->n_addresses;
		cfg->gateway = t->gateway;
	}
	if (first && ethernet && s->mac[0] && vfp_mac_parse(s->mac, mac) == 0)
		cfg->mac = mac;
}

/* Where the netdev goes, in @rp before it goes: its snapshot, the namespace, its name there. */
static int record_target(const char *netdev, const char *pci, const struct container_target *t,
			 const char *ifname, struct vfp_restore_point *rp, char *err,
			 size_t err_size)
{
	int r = vf_netdev_snapshot(netdev, pci, rp, err, err_size);

	if (r >= 0)
		r = vfp_restore_point_set(&rp->netns, t->netns);
	if (r >= 0)
		r = vfp_restore_point_set(&rp->ifname, ifname);
	rp->netns_inode = t->inode;
	rp->netns_cookie = t->cookie;
	return r;
}

static int vf_netdev(struct agent *a, const char *pci, char *buf, size_t size, char *err,
		     size_t err_size)
{
	if (vfp_device_read_netdev(a->ctx, pci, buf, size) >= 0)
		return 0;
	snprintf(err, err_size, "VF %s has no netdev (bound to vfio-pci?): it cannot go into a "
		 "namespace", pci);
	return -ENODEV;
}

static bool is_userspace_driver(const char *driver)
{
	static const char *const drivers[] = { "vfio-pci", "uio_pci_generic", "igb_uio", NULL };

	for (int i = 0; drivers[i]; i++)
		if (strcmp(driver, drivers[i]) == 0)
			return true;
	return false;
}

/*
 * A VF handed over in userspace mode (a DPDK application's, on vfio-pci):
 * no netdev moves; the namespace is recorded as the lease, with no name in
 * it (restore_vf() then moves nothing back, and the reset binds vfio-pci
 * again). One on a kernel driver is refused: it has a netdev to hand over.
 */
static int userspace_target(struct agent *a, const char *pci, const struct container_target *t,
			    struct vfp_restore_point *rp, char *err, size_t err_size)
{
	char driver[64] = "";
	int r;

	(void)vfp_device_read_driver(a->ctx, pci, driver, sizeof(driver));
	if (!is_userspace_driver(driver)) {
		snprintf(err, err_size, "VF %s is bound to %s, not vfio-pci: userspace mode "
			 "(vfioPciMode) hands over a VF its application drives", pci,
			 driver[0] ? driver : "no driver");
		return -EINVAL;
	}
	r = vfp_restore_point_set(&rp->netns, t->netns);
	rp->netns_inode = t->inode;
	rp->netns_cookie = t->cookie;
	if (r >= 0)
		r = restore_point_update(a, pci, rp);
	return r;
}

/* The PF side of one VF back as its restore point says, once (see vf_netdev_detach()). */
struct pf_side_undo {
	struct agent *a;
	const char *pci;
	const struct vfp_restore_point *rp;
	bool done;
	char msg[AGENT_ERR_SIZE];
};

static void pf_side_undo(void *arg)
{
	struct pf_side_undo *u = arg;
	struct vf_facts f;

	if (u->done)
		return;
	u->done = true;
	if (vf_facts_read(u->a, u->pci, &f) >= 0)
		pf_side_restore(u->a, &f, u->rp, u->msg, sizeof(u->msg));
}

/*
 * VF @i of @alloc into the namespace as @ifname
 *
 * PF-side settings first (an IB GUID needs a rebind, which makes a new
 * netdev), then the netdev, then the RDMA device. Any failure undoes the
 * steps before it, and @err says which step failed, in the kernel's words.
 * An undo that fails (the tenant took the netdev on the instant it came)
 * sets @undone: the VF is not known to be home, and its restore point stays.
 */
static int attach_vf(struct agent *a, const struct vfp_allocation *alloc, size_t i,
		     const struct container_target *t, const char *ifname,
		     struct vfp_restore_point *rp, struct container_undo *undone, char *err,
		     size_t err_size)
{
	const struct vfp_allocation_vf *vf = vfp_allocation_get_vf(alloc, i);
	const struct vfp_settings *settings = vfp_allocation_get_settings(alloc);
	struct vfp_vf_config want;
	struct netns_config cfg;
	struct vf_facts f;
	unsigned char mac[6];
	struct pf_side_undo undo = { .a = a, .pci = vf->pci, .rp = rp };
	char netdev[64], msg[AGENT_ERR_SIZE];
	bool applied = false, moved = false;
	int r = vf_facts_read(a, vf->pci, &f);

	if (r < 0)
		snprintf(err, err_size, "VF %s is not on this host any more", vf->pci);
	if (r >= 0)
		r = vfconfig_from_request(settings, vf, i == 0, &want, err, err_size);
	if (r >= 0 && (r = pf_side_apply(a, &f, &want, false, rp, err, err_size)) >= 0)
		applied = true;
	if (r >= 0 && t->userspace && (r = userspace_target(a, vf->pci, t, rp, err, err_size)) >= 0)
		return 0;
	if (r >= 0)
		r = vf_netdev(a, vf->pci, netdev, sizeof(netdev), err, err_size);
	if (r >= 0)
		netns_config_for(t, settings, i == 0, f.ethernet, ifname, mac, &cfg);
	if (r >= 0 && (r = record_target(netdev, vf->pci, t, ifname, rp, err, err_size)) >= 0)
		r = restore_point_update(a, vf->pci, rp); /* where it goes, before it goes */
	if (r >= 0) {
		moved = true;
		r = vf_netdev_attach(vf->pci, t->fd, &cfg, rp, err, err_size);
	}
	if (r >= 0)
		r = move_rdma(&f, t->fd, rp, err, err_size);
	if (r >= 0) /* what the move added: the RDMA device that went with it */
		r = restore_point_update(a, vf->pci, rp);
	if (r < 0 && moved && vf_netdev_detach(vf->pci, rp, t->fd, applied ? pf_side_undo : NULL,
					       &undo, msg, sizeof(msg)) < 0)
		snprintf(undone->why, sizeof(undone->why), "%s", msg);
	if (r < 0 && applied)
		pf_side_undo(&undo); /* when the netdev never came home: the PF side all the same */
	if (r < 0 && undo.msg[0] && !undone->why[0])
		agent_errf(undone->why, sizeof(undone->why), "restoring VF settings on the PF: %s",
			   undo.msg);
	undone->failed = undone->why[0] != '\0';
	if (r < 0 && applied && !undone->failed)
		restore_point_save(a, vf->pci, NULL);
	return r;
}

/*
 * @vf back in the host as its restore point says
 * @netns_fd: the namespace, or -1 to open the one recorded
 *
 * RDMA device, netdev home (found by its device, wherever it is, whatever
 * its name), PF side, then the netdev's own name, MTU, state and MAC (a PF
 * that set the VF's MAC refuses it another until then). A VF never
 * attached has nothing to restore. A netdev that is not back keeps the
 * restore point: the VF is not restored.
 */
static int restore_vf(struct agent *a, const struct vfp_allocation_vf *vf, int netns_fd,
		      char *err, size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, vf->pci);
	struct pf_side_undo undo = { .a = a, .pci = vf->pci, .rp = rp };
	int r = 0;

	err[0] = '\0';
	if (!rp)
		return 0;
	if (rp->rdma_device && netns_fd >= 0) {
		_cleanup_close_ int host = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

		r = host < 0 ? negative_errno()
			     : rdma_move(rp->rdma_device, netns_fd, host, err, err_size);
	}
	if (r >= 0)
		r = vf_netdev_detach(vf->pci, rp, netns_fd, pf_side_undo, &undo, err, err_size);
	pf_side_undo(&undo); /* when the netdev never came home: the PF side all the same */
	if (undo.msg[0] && r >= 0) {
		snprintf(err, err_size, "restoring VF settings on the PF: %s", undo.msg);
		r = -EIO;
	}
	/*
	 * Restored: a second restore changes nothing. A restore point the
	 * ledger cannot drop (a full disk) is not a VF astray: one more
	 * restore from it puts back what is there already.
	 */
	if (r >= 0 && restore_point_update(a, vf->pci, NULL) < 0)
		log_warning("VF %s: restored, but its restore point stays in the ledger", vf->pci);
	vfp_restore_point_free(rp);
	return r;
}

/**
 * container_attach_vf() - VF @i of @alloc into the namespace as @ifname
 *
 * Under its PF's lock. Any failure undoes the steps taken; @err says which
 * step failed, in the kernel's words, and @undone whether the undo failed
 * (then the VF must not be offered again: quarantine it).
 */
int container_attach_vf(struct agent *a, const struct vfp_allocation *alloc, size_t i,
			const struct container_target *t, const char *ifname,
			struct container_undo *undone, char *err, size_t err_size)
{
	struct vfp_restore_point *rp = pf_side_begin(vfp_allocation_get_vf(alloc, i));
	int r;

	*undone = (struct container_undo){ 0 };
	r = rp ? attach_vf(a, alloc, i, t, ifname, rp, undone, err, err_size) : -ENOMEM;
	if (rp)
		pf_side_end(vfp_allocation_get_vf(alloc, i), rp);
	return r;
}

/**
 * container_restore_vf() - @vf back in the host as its restore point says
 * @netns_fd: the namespace, or -1 to open the one recorded
 *
 * Under its PF's lock: RDMA device, netdev home (found by its device, never
 * by its name inside), PF side, netdev settings. A VF with no restore point
 * (never attached, or restored already) is left alone.
 */
int container_restore_vf(struct agent *a, const struct vfp_allocation_vf *vf, int netns_fd,
			 char *err, size_t err_size)
{
	pthread_mutex_t *lock = pf_side_lock(vf);
	int r;

	pthread_mutex_lock(lock);
	r = restore_vf(a, vf, netns_fd, err, err_size);
	pthread_mutex_unlock(lock);
	return r;
}

/*
 * 1 while @vf's recorded namespace (name and inode) is there, 0 once gone,
 * -ENXIO if it went into none, another -errno when the look failed.
 */
static int vf_netns_alive(struct agent *a, const struct vfp_allocation_vf *vf)
{
	struct vfp_restore_point *rp = restore_point_load(a, vf->pci);
	int r = -ENXIO;

	if (rp && rp->netns) /* with an ifname, or a userspace VF's lease */
		r = netns_alive(rp->netns, (ino_t)rp->netns_inode, rp->netns_cookie);
	vfp_restore_point_free(rp);
	return r;
}

/**
 * container_netns_alive() - 1 while the namespace @alloc's VFs went into
 * exists, 0 once it is gone, -ENXIO when none of them went into one
 *
 * Any other -errno (EMFILE, ENOMEM…) is a look that failed: it says
 * nothing of the namespace, which is not gone.
 */
int container_netns_alive(struct agent *a, const struct vfp_allocation *alloc)
{
	const struct vfp_allocation_vf *vf = vfp_allocation_get_vf(alloc, 0);

	return vf ? vf_netns_alive(a, vf) : -ENXIO;
}

/**
 * container_is_attached() - 1 when every VF of @alloc is in its namespace
 *
 * For the reconcile after a crash during an attach: every VF's netdev must
 * be in the namespace its restore point names (found by its device); else
 * 0, and the attach is rolled back; -errno when a look failed.
 */
/* For reconcile: a VF back from wherever it is, its namespace being unknown. */
static int restore_any(struct agent *a, const struct vfp_allocation_vf *vf, char *err,
		       size_t err_size)
{
	return container_restore_vf(a, vf, -1, err, err_size);
}

/* Every VF no other path owns is a container's: added last. */
const struct agent_attach_path container_attach_path = {
	.is_attached = container_is_attached,
	.restore_vf = restore_any,
};

int container_is_attached(struct agent *a, const struct vfp_allocation *alloc)
{
	for (size_t i = 0; i < vfp_allocation_get_vf_count(alloc); i++) {
		const char *pci = vfp_allocation_get_vf(alloc, i)->pci;
		struct vfp_restore_point *rp = restore_point_load(a, pci);
		int in = rp && rp->ifname ? vf_netdev_in_netns(pci, rp)
			 : rp && rp->netns ? 1 /* userspace: no netdev to find */
					   : 0;

		vfp_restore_point_free(rp);
		if (in <= 0)
			return in;
	}
	return 1;
}
