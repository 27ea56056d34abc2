/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A VF reset between tenants and checked before anyone gets it again: the
 * function-level reset (libvfpool's vfp_device_reset: off its driver, FLR,
 * back on it), then what must be true of a healthy VF: its driver bound
 * again, its netdev back in the host (when its driver makes one), and its
 * settings on the PF the ones it had before the tenant.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/log.h"
#include "libvfpool/macro.h"
#include "agent/events.h"
#include "agent/pf/pf-side.h"
#include "agent/vm/vm.h"
#include "agent/vf-reset.h"

/* The driver's netdev, given up to @ms to appear (a probe makes it asynchronously). */
static bool netdev_back(struct vfp_ctx *ctx, const char *pci, int ms)
{
	const struct timespec tick = { 0, 20 * 1000 * 1000 };
	char name[64];

	for (int waited = 0; waited <= ms; waited += 20) {
		if (vfp_device_read_netdev(ctx, pci, name, sizeof(name)) >= 0)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

/*
 * The VF's settings on the PF against its restore point; unreadable is not a
 * failure. A MAC other than before is one the VF's driver chose after the
 * reset (igb hands a reset VF no MAC, and igbvf makes one up), unless it is
 * still its tenant's (@tenant_mac, NULL when the tenant asked none).
 */
static int check_pf_side(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
			 const char *tenant_mac, char *why, size_t size)
{
	struct vfp_vf_config now;
	const struct vfp_vf_config *was = &rp->pf_side;
	unsigned char tenant[6];
	char ignored[AGENT_ERR_SIZE];

	if (!rp->has_pf_side || pf_side_read(a, pci, &now, ignored, sizeof(ignored)) < 0)
		return 0;
	if (was->has_mac && now.has_mac && memcmp(was->mac, now.mac, 6) != 0 && tenant_mac &&
	    vfp_mac_parse(tenant_mac, tenant) == 0 && memcmp(tenant, now.mac, 6) == 0) {
		snprintf(why, size, "its MAC on the PF is still its tenant's, %s", tenant_mac);
		return -EIO;
	}
	if (was->vlan != VFP_UNSET && now.vlan != VFP_UNSET && was->vlan != now.vlan) {
		snprintf(why, size, "its VLAN on the PF is %d, not %d as before", now.vlan,
			 was->vlan);
		return -EIO;
	}
	if ((was->has_node_guid && now.has_node_guid && was->node_guid != now.node_guid) ||
	    (was->has_port_guid && now.has_port_guid && was->port_guid != now.port_guid)) {
		snprintf(why, size, "its IB GUIDs on the PF are not the unassigned ones it had");
		return -EIO;
	}
	return 0;
}

/* A healthy VF after its reset: its driver again, its netdev back, its PF-side settings. */
static int check_after(struct agent *a, const char *pci, const char *driver, bool had_netdev,
		       const struct vfp_restore_point *rp, const char *tenant_mac, char *why,
		       size_t size)
{
	char now[64] = "";

	(void)vfp_device_read_driver(a->ctx, pci, now, sizeof(now));
	if (strcmp(driver, now) != 0) {
		snprintf(why, size, "after the reset its driver is %s, not %s", now[0] ? now : "none",
			 driver[0] ? driver : "none");
		return -ENXIO;
	}
	if (had_netdev && !netdev_back(a->ctx, pci, 2000)) {
		snprintf(why, size, "after the reset %s made no netdev", now);
		return -ENODEV;
	}
	return rp ? check_pf_side(a, pci, rp, tenant_mac, why, size) : 0;
}

/**
 * agent_vf_reset() - reset VF @pci and check it came back healthy
 * @rp: its restore point (the PF-side settings to find again); may be NULL
 * @tenant_mac: the MAC its last tenant asked for, which must be gone; may be NULL
 * @why: on failure, what went wrong, for the VF's quarantine reason
 *
 * The VF must be out of every allocation's reach (releasing, quarantined).
 * One whose reset a crash interrupted (unbound, its driver in
 * driver_override) goes back to that driver.
 */
int agent_vf_reset(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
		   const char *tenant_mac, char *why, size_t size)
{
	struct vfp_reset_info info;
	char name[64];
	bool had_netdev = vfp_device_read_netdev(a->ctx, pci, name, sizeof(name)) >= 0;
	int r = vfp_device_reset(a->ctx, pci, &info);

	if (r < 0)
		snprintf(why, size, "reset (%s): %s: %s", info.methods[0] ? info.methods : "no method",
			 vfp_reset_step_to_string(info.step), strerror(-r));
	else
		r = check_after(a, pci, info.driver, had_netdev, rp, tenant_mac, why, size);
	__atomic_fetch_add(&a->resets[r >= 0], 1, __ATOMIC_RELAXED);
	if (r >= 0)
		log_info("VF %s: reset (%s), %s bound again%s", pci, info.methods,
			 info.driver[0] ? info.driver : "no driver", had_netdev ? ", netdev back" : "");
	return r;
}

/* The restore points of @alloc's VFs, in its order, before a release clears them. */
struct vfp_restore_point **agent_load_restore_points(struct agent *a,
						     const struct vfp_allocation *alloc)
{
	size_t n = vfp_allocation_get_vf_count(alloc);
	struct vfp_restore_point **rps = calloc(n + 1, sizeof(*rps));

	for (size_t i = 0; rps && i < n; i++)
		rps[i] = restore_point_load(a, vfp_allocation_get_vf(alloc, i)->pci);
	return rps;
}

void agent_free_restore_points(struct vfp_restore_point **rps, size_t n)
{
	for (size_t i = 0; rps && i < n; i++)
		vfp_restore_point_free(rps[i]);
	free(rps);
}

/*
 * Quarantines @pci with @why (its release goes on without it). A
 * quarantined VF stays so whatever its allocation does next, until a
 * repair: its release does not free it, its attach or detach does not make
 * it attached or reserved again.
 */
static void quarantine(struct agent *a, const char *pci, const char *why)
{
	char reason[AGENT_ERR_SIZE];

	agent_errf(reason, sizeof(reason), "reset failed: %s", why);
	agent_quarantine_vf(a, pci, reason);
}

/**
 * agent_quarantine_vf() - take VF @pci out of use with @reason: logged, in
 * the ledger, and an event
 */
void agent_quarantine_vf(struct agent *a, const char *pci, const char *reason)
{
	char err[AGENT_ERR_SIZE];

	if (ledger_quarantine_vf(a, pci, reason, err, sizeof(err)) < 0)
		log_error("VF %s: %s", pci, err);
	log_error("VF %s: quarantined: %s", pci, reason);
	if (a->events) /* none yet during the reconcile at start */
		events_emit_vf(a->events, pci, VFP_VF_QUARANTINED, reason);
}

/**
 * agent_reset_vfs() - reset every VF of @alloc whose pool asks for it
 * @rps: their restore points (agent_load_restore_points()), or NULL
 * @quarantine_failed: quarantine a VF whose reset failed, else only say so
 *
 * A VF that is gone from the host is skipped. Returns how many failed;
 * @why says why the first did.
 */
int agent_reset_vfs(struct agent *a, const struct vfp_allocation *alloc,
		    struct vfp_restore_point **rps, bool quarantine_failed, char *why, size_t size)
{
	struct vfp_config *config = agent_get_config(a);
	bool resets = vfp_config_pool_resets(config, vfp_allocation_get_pool(alloc));
	const char *mac = vfp_allocation_get_settings(alloc)->mac; /* the first VF's */
	int failed = 0;

	vfp_config_unref(config);
	for (size_t i = 0; resets && i < vfp_allocation_get_vf_count(alloc); i++) {
		const char *pci = vfp_allocation_get_vf(alloc, i)->pci;
		char drv[64], msg[AGENT_ERR_SIZE];

		if (vfp_device_read_driver(a->ctx, pci, drv, sizeof(drv)) == -ENODEV)
			continue; /* vanished: nothing to reset */
		if (agent_vf_reset(a, pci, rps ? rps[i] : NULL, i == 0 && mac[0] ? mac : NULL, msg,
				   sizeof(msg)) >= 0)
			continue;
		if (!failed++)
			snprintf(why, size, "VF %s: %s", pci, msg);
		if (quarantine_failed)
			quarantine(a, pci, msg);
	}
	return failed;
}

/* A release a crash interrupted, its VFs restored at the next start: reset as on any release. */
static int reset_released(struct agent *a, const struct vfp_allocation *alloc, char *why,
			  size_t size)
{
	return agent_reset_vfs(a, alloc, NULL, false, why, size);
}

const struct agent_room vf_reset_room = {
	.vf_lost = agent_quarantine_vf,
	.released = reset_released,
};

/**
 * agent_repair_vf() - bring quarantined VF @pci back: out of the domain a
 * held-up detach left it in (only once the domain no longer has it), onto
 * its own driver, reset, checked, and free again
 *
 * -EBUSY when it is not quarantined or an allocation holds it, or when the
 * repair failed (it stays quarantined, with this attempt's reason);
 * -ENOENT for an unknown VF. @err says which.
 */
int agent_repair_vf(struct agent *a, const char *pci, char *err, size_t err_size)
{
	char why[AGENT_ERR_SIZE] = "", reason[AGENT_ERR_SIZE];
	int r, r2;

	r = ledger_repair_vf(a, pci, false, NULL, err, err_size);
	if (r < 0)
		return r;
	r = vm_finish_detach(a, pci, why, sizeof(why)); /* a guest that held it up: gone now? */
	if (r >= 0 && (r = vfp_device_bind_driver(a->ctx, pci, NULL)) < 0)
		snprintf(why, sizeof(why), "binding its own driver: %s",
			 r == -ENXIO ? "no driver took it" : strerror(-r));
	else if (r >= 0)
		r = agent_vf_reset(a, pci, NULL, NULL, why, sizeof(why));
	snprintf(reason, sizeof(reason), "repair failed: %s", why);
	r2 = ledger_repair_vf(a, pci, r >= 0, r >= 0 ? NULL : reason, err, err_size);
	if (r2 < 0)
		return r2;
	__atomic_fetch_add(&a->repairs[r >= 0], 1, __ATOMIC_RELAXED);
	events_emit_vf(a->events, pci, r >= 0 ? VFP_VF_FREE : VFP_VF_QUARANTINED,
		       r >= 0 ? NULL : reason);
	if (r < 0) {
		log_error("VF %s: %s", pci, reason);
		snprintf(err, err_size, "VF %s stays quarantined: %s", pci, reason);
		return -EBUSY;
	}
	log_info("VF %s: repaired, free again", pci);
	agent_refresh_vf(a, pci, "repair"); /* its own driver again */
	return 0;
}

#define REPAIR_WAIT_MAX 86400 /* the longest a quarantined VF waits between two tries */

static struct agent_repair_wait *find_wait(struct agent *a, const char *pci)
{
	for (size_t i = 0; i < a->n_repair_waits; i++)
		if (strcmp(a->repair_waits[i].pci, pci) == 0)
			return &a->repair_waits[i];
	return NULL;
}

/* A VF no longer waiting (free again, by a repair or by hand): its next quarantine starts anew. */
static void forget_wait(struct agent *a, const char *pci)
{
	struct agent_repair_wait *w = find_wait(a, pci);

	if (w)
		*w = a->repair_waits[--a->n_repair_waits];
}

/* @pci's entry, made on first sight: its first try is @base after it was quarantined. */
static struct agent_repair_wait *repair_wait(struct agent *a, const char *pci, long long since,
					     long long base)
{
	struct agent_repair_wait *w = find_wait(a, pci);

	if (w)
		return w;
	if (!GREEDY_REALLOC(a->repair_waits, a->cap_repair_waits, a->n_repair_waits + 1))
		return NULL;
	w = &a->repair_waits[a->n_repair_waits++];
	snprintf(w->pci, sizeof(w->pci), "%s", pci);
	w->wait = base;
	w->next = since + base;
	return w;
}

/* One VF: repaired when its time has come; the wait doubles after each failure. */
static void retry_one(struct agent *a, const char *pci, long long base, long long now)
{
	struct agent_repair_wait *w;
	struct vfp_ledger_vf lv;
	char err[AGENT_ERR_SIZE];
	int r;

	r = ledger_get_vf(a, pci, &lv);
	if (r < 0 || lv.state != VFP_VF_QUARANTINED || lv.allocation[0]) {
		forget_wait(a, pci);
		return;
	}
	w = repair_wait(a, pci, lv.since, base);
	if (!w || now < w->next)
		return;
	if (agent_repair_vf(a, pci, err, sizeof(err)) >= 0) {
		forget_wait(a, pci);
		return;
	}
	w->wait = w->wait * 2 > REPAIR_WAIT_MAX ? REPAIR_WAIT_MAX : w->wait * 2;
	w->next = now + w->wait;
	log_info("VF %s: next repair in %lld s", pci, w->wait);
}

/**
 * agent_retry_repairs() - repair the quarantined VFs whose time has come
 *
 * With the config's repair.retry_seconds (0: never), a quarantined VF that
 * no allocation holds is repaired that long after it was quarantined, then
 * after twice as long each time it fails, up to a day. Called by the main
 * loop (each quiet minute, each SIGHUP).
 */
void agent_retry_repairs(struct agent *a)
{
	struct vfp_config *config = agent_get_config(a);
	long long base = vfp_config_get_repair_retry_seconds(config);
	struct vfp_inventory *inv;
	long long now = time(NULL);

	vfp_config_unref(config);
	if (base <= 0)
		return;
	inv = agent_get_inventory(a);
	for (size_t i = 0; i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(inv, i);

		for (size_t j = 0; j < vfp_pf_get_vf_count(pf); j++)
			retry_one(a, vfp_vf_get_pci(vfp_pf_get_vf(pf, j)), base, now);
	}
	vfp_inventory_unref(inv);
}

/* Whether @pci is quarantined, held by no allocation, and its domain let it go. */
static bool detach_finishable(struct agent *a, const char *pci)
{
	struct vfp_ledger_vf lv;
	int r;

	r = ledger_get_vf(a, pci, &lv);
	return r >= 0 && lv.state == VFP_VF_QUARANTINED && !lv.allocation[0] &&
	       vm_detach_finishable(a, pci);
}

/**
 * agent_finish_detaches() - free the VFs a guest held up, once it let go
 *
 * A detach the guest did not acknowledge in time leaves its VF quarantined,
 * its restore point still naming the domain. Once libvirt shows the domain
 * without it (its DEVICE_REMOVED came, or the domain ended), it is repaired:
 * restored, reset, checked, free. Called by the main loop on libvirt's
 * events and each quiet minute.
 */
void agent_finish_detaches(struct agent *a)
{
	struct vfp_inventory *inv;

	if (!a->libvirt)
		return;
	inv = agent_get_inventory(a);
	for (size_t i = 0; i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(inv, i);

		for (size_t j = 0; j < vfp_pf_get_vf_count(pf); j++) {
			const char *pci = vfp_vf_get_pci(vfp_pf_get_vf(pf, j));
			char err[AGENT_ERR_SIZE];

			if (!detach_finishable(a, pci))
				continue;
			log_info("VF %s: its domain let it go: finishing its detach", pci);
			if (agent_repair_vf(a, pci, err, sizeof(err)) < 0)
				log_error("VF %s: %s", pci, err);
		}
	}
	vfp_inventory_unref(inv);
}
