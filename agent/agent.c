/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's life: open the context, the config, the inventory and the
 * ledger, reconcile, and keep them current (rescans after hotplug events,
 * config reloads on SIGHUP).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/claim-queue.h"
#include "agent/events.h"
#include "agent/log.h"
#include "agent/vm/libvirt.h"
#include "agent/sim/sim-host.h"

static __attribute__((format(printf, 6, 0))) void
log_library(void *userdata, int priority, const char *file, int line, const char *fn,
	    const char *format, va_list args)
{
	char msg[AGENT_ERR_SIZE];

	vsnprintf(msg, sizeof(msg), format, args);
	agent_log(priority, "%s", msg);
}

/* The config file the agent reads, or NULL for the one handed in (opt.config_json). */
const char *agent_config_path(const struct agent *a)
{
	if (a->opt.config_path)
		return a->opt.config_path;
	return a->opt.config_json ? NULL : VFAGENT_CONFIG_FILE;
}

int agent_load_config(const struct agent *a, struct vfp_config **ret)
{
	char *err = NULL;
	int r;

	if (!agent_config_path(a)) {
		json_t *root = json_loads(a->opt.config_json, 0, NULL);

		r = vfp_config_load_json(root, ret, &err);
		json_decref(root);
	} else {
		const char *path = agent_config_path(a);

		r = vfp_config_load_file(path, ret, &err);
		if (r < 0 && err && strncmp(err, path, strlen(path)) != 0) {
			/* every error, one a line */
			for (char *line = strtok(err, "\n"); line; line = strtok(NULL, "\n"))
				log_error("config %s: %s", path, line);
			free(err);
			return r;
		}
	}
	if (r < 0)
		log_error("config: %s", err ? err : strerror(-r));
	free(err);
	return r;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int open_context(struct agent *a)
{
	int r = vfp_ctx_new(&a->ctx);

	if (r < 0)
		return r;
	vfp_ctx_set_log_fn(a->ctx, log_library, a);
	vfp_ctx_set_log_priority(a->ctx, agent_get_log_priority());
	if (a->opt.simulate_dir) {
		r = sim_host_create(a->opt.simulate_dir);
		if (r < 0) {
			log_error("building the simulated host in %s: %s", a->opt.simulate_dir,
				  strerror(-r));
			return r;
		}
		vfp_ctx_set_sysfs_write_handler(a->ctx, sim_kernel_write, NULL);
		a->opt.sysfs_root = a->opt.simulate_dir;
	}
	if (a->opt.sysfs_root) {
		r = vfp_ctx_set_sysfs_root(a->ctx, a->opt.sysfs_root);
		if (r < 0)
			log_error("--sysfs-root %s: must be an absolute path", a->opt.sysfs_root);
	}
	return r;
}

static int scan(struct agent *a, struct vfp_inventory **ret)
{
	double t0 = now_s();
	int r = vfp_inventory_scan(a->ctx, ret);

	if (r < 0) {
		log_error("reading the inventory under %s: %s", vfp_ctx_get_sysfs_root(a->ctx),
			  strerror(-r));
		return r;
	}
	a->scan_seconds = now_s() - t0;
	return 0;
}

static const char *state_dir(const struct agent *a)
{
	static char buf[PATH_MAX];

	if (a->opt.state_dir)
		return a->opt.state_dir;
	if (!a->opt.simulate_dir)
		return "/var/lib/vfagent";
	snprintf(buf, sizeof(buf), "%.4000s/state", a->opt.simulate_dir);
	return buf;
}

static void log_report(const struct vfp_reconcile_report *rep)
{
	log_info("reconciled: %u new VFs, %u vanished, %u returned, %u intents rolled back, %u "
		 "rolled forward, %u leases expired, %u quarantined",
		 rep->added, rep->vanished, rep->returned, rep->intents_rolled_back,
		 rep->intents_rolled_forward, rep->expired, rep->quarantined);
}

/**
 * agent_add_attach_path() - @p answers reconcile for the VFs it owns; before
 * agent_init(), the path that takes every VF last
 */
int agent_add_attach_path(struct agent *a, const struct agent_attach_path *p)
{
	if (a->n_attach_paths == AGENT_MAX_ATTACH_PATHS)
		return -E2BIG;
	a->attach_paths[a->n_attach_paths++] = p;
	return 0;
}

/**
 * agent_add_room() - @r's steps run at the agent's own (struct agent_room);
 * before agent_init()
 */
int agent_add_room(struct agent *a, const struct agent_room *r)
{
	if (a->n_rooms == AGENT_MAX_ROOMS)
		return -E2BIG;
	a->rooms[a->n_rooms++] = r;
	return 0;
}

/* The config in place: every room's step for it. */
static void config_applied(struct agent *a)
{
	for (size_t i = 0; i < a->n_rooms; i++)
		if (a->rooms[i]->config_applied)
			a->rooms[i]->config_applied(a);
}

/* The attach path that owns @vf (NULL: none was added). */
static const struct agent_attach_path *path_of(struct agent *a,
					       const struct vfp_allocation_vf *vf)
{
	for (size_t i = 0; i < a->n_attach_paths; i++)
		if (!a->attach_paths[i]->owns || (vf && a->attach_paths[i]->owns(a, vf)))
			return a->attach_paths[i];
	return NULL;
}

/* How reconcile asks the host about an intent a crash left half done. */
static int op_is_attached(void *userdata, const struct vfp_allocation *alloc)
{
	struct agent *a = userdata;
	const struct agent_attach_path *p = path_of(a, vfp_allocation_get_vf(alloc, 0));

	return p ? p->is_attached(a, alloc) : -EOPNOTSUPP;
}

/*
 * What a crash left half done, undone VF by VF; a VF that does not come
 * back (its namespace died with it, the tenant moved it on) is quarantined
 * with the reason: the confirm that follows leaves it so.
 */
static int op_undo(void *userdata, const struct vfp_allocation *alloc)
{
	struct agent *a = userdata;
	int r = 0;

	for (size_t i = 0; i < vfp_allocation_get_vf_count(alloc); i++) {
		const struct vfp_allocation_vf *vf = vfp_allocation_get_vf(alloc, i);
		const struct agent_attach_path *p = path_of(a, vf);
		char err[AGENT_ERR_SIZE] = "no attach path for it", reason[AGENT_ERR_SIZE];
		int rr = p ? p->restore_vf(a, vf, err, sizeof(err)) : -EOPNOTSUPP;

		if (rr >= 0)
			continue;
		agent_errf(reason, sizeof(reason), "undoing allocation %s after a restart failed: %s",
			   vfp_allocation_get_id(alloc), err);
		for (size_t j = 0; j < a->n_rooms; j++)
			if (a->rooms[j]->vf_lost)
				a->rooms[j]->vf_lost(a, vf->pci, reason);
		r = r < 0 ? r : rr;
	}
	return r;
}

/* A release a crash interrupted goes on: VFs restored, then reset as on any release. */
static int op_restore(void *userdata, const struct vfp_allocation *alloc)
{
	struct agent *a = userdata;
	char why[AGENT_ERR_SIZE];
	int r = op_undo(userdata, alloc);

	for (size_t i = 0; r >= 0 && i < a->n_rooms; i++) {
		if (!a->rooms[i]->released ||
		    a->rooms[i]->released(a, alloc, why, sizeof(why)) <= 0)
			continue;
		log_error("allocation %s: %s", vfp_allocation_get_id(alloc), why);
		r = -EIO; /* its VFs are quarantined */
	}
	return r;
}

static const struct vfp_reconcile_ops reconcile_ops = {
	.is_attached = op_is_attached,
	.detach = op_undo,
	.restore = op_restore,
};

/*
 * libvirt: the config's URI, else test:///default on a simulated host (its
 * VFs exist nowhere else) and qemu:///system on a real one; none at all
 * (libvirt never loaded) when the config says "libvirt": false, or when
 * libvirt's library is not installed (GET /v1/host and doctor say so).
 */
static int open_libvirt(struct agent *a)
{
	const char *uri = vfp_config_get_libvirt_uri(a->config);
	int r;

	if (!vfp_config_get_libvirt_enabled(a->config)) {
		log_info("libvirt: off (\"libvirt\": false in the config): containers get VFs, "
			 "VMs do not");
		return 0;
	}
	if (!uri)
		uri = a->opt.simulate_dir ? "test:///default" : "qemu:///system";
	r = libvirt_conn_new(uri, &a->libvirt);
	if (r >= 0 && a->opt.libvirt_detach_handler)
		libvirt_conn_set_detach_handler(a->libvirt, a->opt.libvirt_detach_handler,
						a->opt.libvirt_detach_userdata);
	if (r == -ENOPKG) /* not installed: said why, and the agent serves containers */
		return 0;
	if (r < 0)
		log_error("libvirt %s: %s", uri, strerror(-r));
	return r;
}

/**
 * agent_init() - everything the agent needs before it serves
 *
 * Nothing is served unless the config parses, the inventory reads, and the
 * ledger opens and reconciles.
 */
int agent_init(struct agent *a)
{
	struct vfp_reconcile_report rep;
	int r;

	pthread_rwlock_init(&a->state_lock, NULL);
	pthread_mutex_init(&a->config_lock, NULL);
	r = open_context(a);
	if (r >= 0)
		r = agent_load_config(a, &a->config);
	if (r >= 0)
		r = scan(a, &a->inv);
	if (r >= 0) {
		r = ledger_open(a, state_dir(a));
		if (r < 0)
			log_error("opening the ledger in %s: %s", state_dir(a), strerror(-r));
	}
	if (r >= 0)
		r = agent_add_persisted_numvfs(a, a->config);
	if (r >= 0)
		r = open_libvirt(a);
	if (r >= 0)
		config_applied(a); /* numvfs.c: VFs back after a reboot, before reconcile */
	if (r >= 0) {
		char err[AGENT_ERR_SIZE];

		r = ledger_reconcile(a, a->inv, a->config, &reconcile_ops, a, &rep, err,
				     sizeof(err));
		if (r < 0)
			log_error("reconcile: %s", err);
		else
			log_report(&rep);
	}
	if (r >= 0)
		r = events_new(&a->events);
	if (r >= 0)
		r = claim_queue_new(ledger_claim_batch, a, &a->claims);
	if (r >= 0)
		log_info("%zu PFs, %zu VFs under %s; ledger %s", vfp_inventory_get_pf_count(a->inv),
			 vfp_inventory_get_vf_count(a->inv), vfp_ctx_get_sysfs_root(a->ctx),
			 ledger_path(a));
	return r;
}

/* Closes the ledger last, after the claims in flight are committed. */
void agent_fini(struct agent *a)
{
	claim_queue_free(a->claims);
	libvirt_conn_free(a->libvirt);
	free(a->repair_waits);
	for (size_t i = a->n_rooms; i-- > 0;) /* the reverse of the order they came in */
		if (a->rooms[i]->fini)
			a->rooms[i]->fini(a);
	if (a->events)
		events_shutdown(a->events);
	ledger_close(a);
	vfp_inventory_unref(a->inv);
	vfp_config_unref(a->config);
	vfp_ctx_unref(a->ctx);
	events_free(a->events);
	free(a->token);
	pthread_rwlock_destroy(&a->state_lock);
}

struct vfp_inventory *agent_get_inventory(struct agent *a)
{
	struct vfp_inventory *inv;

	pthread_rwlock_rdlock(&a->state_lock);
	inv = vfp_inventory_ref(a->inv);
	pthread_rwlock_unlock(&a->state_lock);
	return inv;
}

struct vfp_config *agent_get_config(struct agent *a)
{
	struct vfp_config *c;

	pthread_rwlock_rdlock(&a->state_lock);
	c = vfp_config_ref(a->config);
	pthread_rwlock_unlock(&a->state_lock);
	return c;
}

/* Takes @inv's reference; callers hold state_lock for writing. */
void agent_replace_inventory(struct agent *a, struct vfp_inventory *inv)
{
	vfp_inventory_unref(a->inv);
	a->inv = inv;
}

/**
 * agent_rescan() - read the inventory again and write it into the ledger
 * @why: what triggered it, for the log
 */
int agent_rescan(struct agent *a, const char *why)
{
	struct vfp_reconcile_report rep = { 0 };
	struct vfp_inventory *inv = NULL;
	char err[AGENT_ERR_SIZE];
	int r;

	r = scan(a, &inv);
	if (r < 0)
		return r;
	pthread_rwlock_wrlock(&a->state_lock);
	r = ledger_sync(a, inv, a->config, &rep, err, sizeof(err));
	if (r < 0)
		log_error("rescan (%s): %s", why, err);
	agent_replace_inventory(a, inv);
	pthread_rwlock_unlock(&a->state_lock);
	if (r >= 0 && (rep.added || rep.vanished || rep.returned)) {
		log_info("rescan (%s): %u new VFs, %u vanished, %u returned", why, rep.added,
			 rep.vanished, rep.returned);
		events_emit_inventory(a->events, why, &rep);
	}
	return r;
}

/**
 * agent_refresh_vf() - VF @pci read again after the agent rebound it, into
 * the inventory and the ledger as a rescan would put it, without reading
 * the rest of the host; a rescan when the VF is not as the inventory has it
 * @why: what changed it, for the log
 */
int agent_refresh_vf(struct agent *a, const char *pci, const char *why)
{
	struct vfp_reconcile_report rep = { 0 };
	struct vfp_inventory *inv = NULL;
	char err[AGENT_ERR_SIZE];
	int r;

	pthread_rwlock_wrlock(&a->state_lock);
	r = vfp_inventory_refresh_vf(a->inv, pci, &inv);
	if (r >= 0) {
		r = ledger_sync(a, inv, a->config, &rep, err, sizeof(err));
		if (r < 0)
			log_error("VF %s (%s): %s", pci, why, err);
		agent_replace_inventory(a, inv);
	}
	pthread_rwlock_unlock(&a->state_lock);
	if (r == -ENOENT || r == -ENODEV) /* new to the inventory, or gone from the host */
		return agent_rescan(a, why);
	if (r >= 0 && (rep.added || rep.vanished || rep.returned)) {
		log_info("VF %s (%s): %u new VFs, %u vanished, %u returned", pci, why, rep.added,
			 rep.vanished, rep.returned);
		events_emit_inventory(a->events, why, &rep);
	}
	return r;
}

/*
 * The ledger against the inventory it has, for pools whose health policy
 * watches the PF's link: a link event may have made VFs unhealthy or
 * healthy again. Nothing is read from sysfs but the links.
 */
void agent_resync_health(struct agent *a)
{
	char err[AGENT_ERR_SIZE];

	pthread_rwlock_rdlock(&a->state_lock);
	if (vfp_config_watches_pf_links(a->config) &&
	    ledger_sync(a, a->inv, a->config, NULL, err, sizeof(err)) < 0)
		log_error("health: %s", err);
	pthread_rwlock_unlock(&a->state_lock);
}

/*
 * The VF counts persisted in the ledger (vfctl numvfs --persist) into @c, a
 * config just loaded that nobody else holds: they come before its rules.
 */
int agent_add_persisted_numvfs(struct agent *a, struct vfp_config *c)
{
	char err[AGENT_ERR_SIZE];
	int r = ledger_add_persisted_numvfs(a, c, err, sizeof(err));

	if (r < 0)
		log_error("config: the persisted VF counts: %s", err);
	return r;
}

/* SIGHUP: a config that does not parse keeps the old one, and says why. */
int agent_reload_config(struct agent *a)
{
	struct vfp_config *c = NULL;
	int r;

	pthread_mutex_lock(&a->config_lock);
	r = agent_load_config(a, &c);
	if (r >= 0 && (r = agent_add_persisted_numvfs(a, c)) < 0)
		vfp_config_unref(c);
	if (r < 0) {
		pthread_mutex_unlock(&a->config_lock);
		log_error("reload: keeping the running config");
		return r;
	}
	log_info("reload: %zu pools", vfp_config_get_pool_count(c));
	r = agent_replace_config(a, c);
	pthread_mutex_unlock(&a->config_lock);
	config_applied(a);
	return r;
}

/* Takes @c's reference: the running config from now on, the ledger's pools synced to it. */
int agent_replace_config(struct agent *a, struct vfp_config *c)
{
	size_t pools = vfp_config_get_pool_count(c);
	int r;

	pthread_rwlock_wrlock(&a->state_lock);
	vfp_config_unref(a->config);
	a->config = c;
	r = ledger_sync(a, a->inv, a->config, NULL, NULL, 0);
	pthread_rwlock_unlock(&a->state_lock);
	events_emit_config(a->events, pools);
	return r;
}

