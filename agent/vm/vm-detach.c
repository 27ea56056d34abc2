/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF out of its libvirt domain and back to the host: the detach and its
 * wait for the guest, a kept standby's steering out, the driver and the PF
 * side restored once the domain no longer has the VF.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/log.h"
#include "agent/vm/domain-xml.h"
#include "agent/vm/libvirt.h"
#include "agent/vm/private.h"
#include "agent/vm/standby-host.h"
#include "agent/vm/standby-steer.h"
#include "agent/pf/pf-side.h"
#include "agent/vm/vm.h"

/* @rp's driver back on @pci (vm.c's rollback, a detach's host side). */
int restore_driver(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
		   char *err, size_t err_size)
{
	int r;

	if (!rp->driver)
		return 0;
	r = vfp_device_bind_driver(a->ctx, pci, rp->driver); /* "": unbound, as it was */
	agent_refresh_vf(a, pci, "VF rebound");
	if (r < 0)
		snprintf(err, err_size, "rebinding VF %s to %s: %s", pci,
			 rp->driver[0] ? rp->driver : "no driver", strerror(-r));
	return r;
}

/* How long a detach waits, once libvirt's call returned, for its device to leave the domain. */
static int detach_wait(struct agent *a)
{
	struct vfp_config *config = agent_get_config(a);
	int seconds = vfp_config_get_detach_wait(config);

	vfp_config_unref(config);
	return seconds;
}

/*
 * 1 while domain @uuid holds @pci (in its live XML while it runs, else in
 * its config), 0 once it does not or is gone, <0 when libvirt cannot say.
 */
static int domain_holds(struct agent *a, const char *uuid, const char *pci, char *err,
			size_t err_size)
{
	char *xml = NULL;
	int r = libvirt_domain_xml(a->libvirt, uuid, &xml, err, err_size);

	if (r == -ENOENT) {
		err[0] = '\0';
		return 0;
	}
	if (r >= 0 && (r = domxml_has_pci_hostdev(xml, pci)) < 0)
		snprintf(err, err_size, "libvirt gave domain %s's XML unreadable", uuid);
	free(xml);
	return r;
}

static const char *domain_name(const struct vfp_restore_point *rp)
{
	return rp->domain && rp->domain[0] ? rp->domain : "?";
}

/*
 * libvirt's detach returns once QEMU removed the device, or after its own
 * wait (5 s) with the device still there: QEMU only asked the guest, and
 * the device goes when the guest acknowledges (libvirt's DEVICE_REMOVED).
 * Done only once the domain's XML no longer has it; a device-removed event
 * makes it look again at once, else after the config's libvirt.detach_wait
 * seconds it gives up:
 * -ETIMEDOUT, the VF left with the domain and on vfio-pci.
 */
int wait_gone(struct agent *a, const struct vfp_restore_point *rp, const char *pci, char *err,
	      size_t err_size)
{
	int wait = detach_wait(a);
	struct timespec deadline;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += wait;
	for (bool said = false;; said = true) {
		unsigned seen = libvirt_conn_device_events(a->libvirt);

		r = domain_holds(a, rp->domain_uuid, pci, err, err_size);
		if (r <= 0)
			return r;
		if (!said)
			log_debug("VF %s: still in domain %s after the detach: waiting up to %d s for "
				  "the guest to let it go", pci, domain_name(rp), wait);
		if (libvirt_conn_wait_device_event(a->libvirt, seen, &deadline) < 0)
			break;
	}
	snprintf(err, err_size, "still in domain %s (%s): unplug not acknowledged in %d s",
		 domain_name(rp), rp->domain_uuid, wait); /* a ledger reason: short */
	return -ETIMEDOUT;
}

/*
 * The failover pair's standby out, once its VF is: a standby that stays
 * (libvirt refused) is a virtio NIC of the guest's, logged; the VF is home.
 */
static void leave_standby(struct agent *a, const struct vfp_restore_point *rp)
{
	char msg[AGENT_ERR_SIZE] = "";

	if (libvirt_detach(a->libvirt, rp->domain_uuid, rp->standby_xml, rp->flags, msg,
			   sizeof(msg)) < 0)
		log_warning("domain %s: the failover standby NIC stays: %s", domain_name(rp), msg);
}

/* VF @pci, out of its guest: a failover VF's MAC on the PF off the guest's, under the PF's lock. */
void vf_left_guest(struct agent *a, const char *pci, const char *device_xml)
{
	struct vfp_allocation_vf vf = { 0 };
	struct vf_target t;
	struct vf_facts f;

	if (!device_xml || !strstr(device_xml, "<teaming") || vf_facts_read(a, pci, &f) < 0)
		return;
	snprintf(vf.pf, sizeof(vf.pf), "%.*s", (int)sizeof(vf.pf) - 1, f.pf_pci);
	t = pf_side_target(a, &f);
	pthread_mutex_lock(pf_side_lock(&vf));
	standby_host_vf_gone(&t, device_xml);
	pthread_mutex_unlock(pf_side_lock(&vf));
}

/*
 * A kept standby's steering (vm_swap_keep_standby()) out of its PFs: once
 * its VF @left the guest (the VF's MAC is off the guest's: the PF takes the
 * guest's frames for the standby's bridge again), or when the VF stays, and
 * then the pair is recorded as it was before (a later detach takes both out).
 * A steering that stays in (refused) stays recorded, for that detach to retry.
 */
static void unsteer_kept(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
			 bool left)
{
	struct vfp_restore_point *now = left ? NULL : restore_point_load(a, pci);
	char err[AGENT_ERR_SIZE] = "";
	int n = standby_steer(a, rp->steered_xml, false, err, sizeof(err));

	if (n < 0)
		log_warning("VF %s: the guest's MAC out of its kept standby's PFs: %s", pci, err);
	else
		log_info("VF %s %s: the guest's MAC out of the unicast filter of %d PF(s) on its "
			 "kept standby's bridge", pci, left ? "out of the guest" : "still in the guest",
			 n);
	if (now && now->steered_xml) {
		int r = vfp_restore_point_set(&now->standby_xml, now->steered_xml);

		if (r >= 0 && n >= 0)
			r = vfp_restore_point_set(&now->steered_xml, NULL);
		if (r >= 0)
			r = restore_point_update(a, pci, now);
		if (r < 0)
			log_error("VF %s: its failover pair not recorded again: %s", pci, strerror(-r));
	}
	vfp_restore_point_free(now);
}

/**
 * vm_keep_undone() - VF @pci stays in its guest after all: a kept standby's
 * steering (vm_swap_keep_standby()) out and the pair recorded again
 */
void vm_keep_undone(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);

	if (rp && rp->steered_xml)
		unsteer_kept(a, pci, rp, false);
	vfp_restore_point_free(rp);
}

/* @rp's devices out of its domain, the VF's last; the VF's MAC off the guest's once it left. */
static int detach_devices(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
			  char *err, size_t err_size)
{
	int r = 0;

	if (rp->dummy_xml) /* before its VF, the reverse of the attach; one gone is gone */
		r = libvirt_detach(a->libvirt, rp->domain_uuid, rp->dummy_xml, rp->flags, err,
				   err_size);
	if (r >= 0)
		r = libvirt_detach(a->libvirt, rp->domain_uuid, rp->device_xml, rp->flags, err,
				   err_size);
	if (r >= 0)
		r = wait_gone(a, rp, pci, err, err_size);
	if (r >= 0)
		vf_left_guest(a, pci, rp->device_xml);
	return r;
}

/* @pci out of the domain @rp names, where it still is; no lock held (libvirt may take seconds). */
int leave_domain(struct agent *a, const char *pci, const struct vfp_restore_point *rp, char *err,
		 size_t err_size)
{
	int r;

	if (!rp->domain_uuid || !rp->device_xml)
		return 0;
	r = a->libvirt ? detach_devices(a, pci, rp, err, err_size) : -ENOTCONN;
	if (rp->steered_xml)
		unsteer_kept(a, pci, rp, r >= 0);
	if (r >= 0 && rp->standby_xml)
		leave_standby(a, rp);
	if (r == -ENOTCONN && !err[0])
		snprintf(err, err_size, "libvirt is not connected: VF %s stays with domain %s", pci,
			 rp->domain_uuid);
	return r;
}

/* Under the PF's lock, the device out of every domain: its driver, its PF-side settings. */
static int restore_host_side(struct agent *a, const char *pci, char *err, size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	char msg[AGENT_ERR_SIZE] = "";
	struct vf_facts f;
	int r;

	if (!rp)
		return 0;
	r = restore_driver(a, pci, rp, err, err_size);
	if (r >= 0 && vf_facts_read(a, pci, &f) >= 0)
		pf_side_restore(a, &f, rp, msg, sizeof(msg));
	if (r >= 0 && msg[0]) {
		snprintf(err, err_size, "restoring VF settings on the PF: %s", msg);
		r = -EIO;
	}
	if (r >= 0)
		r = restore_point_update(a, pci, NULL); /* restored: again changes nothing */
	vfp_restore_point_free(rp);
	return r;
}

/**
 * vm_restore_vf() - @vf out of its domain and back to the host
 *
 * Detached where the domain still has it, and only once the domain no
 * longer has it its driver and PF-side settings are restored and its
 * restore point cleared. A detach that failed, or that the guest has not
 * acknowledged within libvirt.detach_wait (-ETIMEDOUT), changes nothing
 * else: a VF still in a guest must not be rebound (unbinding it from
 * vfio-pci while QEMU holds it blocks in the kernel for good). The PF's lock
 * is taken only for the host side, after libvirt.
 */
int vm_restore_vf(struct agent *a, const struct vfp_allocation_vf *vf, char *err, size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, vf->pci);
	int r = vm_restore_vf_from(a, vf, rp, err, err_size);

	vfp_restore_point_free(rp);
	return r;
}

/*
 * vm_restore_vf() from @rp, @vf's restore point as its caller loaded it (a
 * release loads it once); the host side reads it again under the PF's lock.
 */
int vm_restore_vf_from(struct agent *a, const struct vfp_allocation_vf *vf,
		       const struct vfp_restore_point *rp, char *err, size_t err_size)
{
	pthread_mutex_t *lock = pf_side_lock(vf);
	int r;

	err[0] = '\0';
	if (!rp)
		return 0;
	r = leave_domain(a, vf->pci, rp, err, err_size);
	if (r < 0)
		return r;
	pthread_mutex_lock(lock);
	r = restore_host_side(a, vf->pci, err, err_size);
	pthread_mutex_unlock(lock);
	return r;
}

/**
 * vm_finish_detach() - VF @pci, which no allocation holds, out of the domain
 * its restore point still names, and back to the host
 *
 * For a repair of a VF whose detach the guest held up: 0 at once when no
 * domain is named; -ETIMEDOUT while the domain still holds it.
 */
int vm_finish_detach(struct agent *a, const char *pci, char *err, size_t err_size)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	bool in_domain = rp && rp->domain_uuid;
	struct vfp_allocation_vf vf = { 0 };
	struct vf_facts f;

	err[0] = '\0';
	vfp_restore_point_free(rp);
	if (!in_domain) /* a container's leftovers, or none: not a domain's to finish */
		return 0;
	snprintf(vf.pci, sizeof(vf.pci), "%s", pci);
	if (vf_facts_read(a, pci, &f) >= 0)
		snprintf(vf.pf, sizeof(vf.pf), "%.*s", (int)sizeof(vf.pf) - 1, f.pf_pci);
	return vm_restore_vf(a, &vf, err, err_size);
}

/**
 * vm_detach_finishable() - whether @pci's restore point still names a
 * domain that no longer holds it (the guest let go, the domain ended)
 */
bool vm_detach_finishable(struct agent *a, const char *pci)
{
	struct vfp_restore_point *rp = restore_point_load(a, pci);
	char err[AGENT_ERR_SIZE];
	bool yes = rp && rp->domain_uuid && !rp->pending && a->libvirt &&
		   domain_holds(a, rp->domain_uuid, pci, err, sizeof(err)) == 0;

	vfp_restore_point_free(rp);
	return yes;
}

