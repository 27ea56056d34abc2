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
#include "agent/container/container.h"
#include "agent/events.h"
#include "agent/numvfs.h"
#include "agent/vm/libvirt.h"
#include "agent/release.h"
#include "agent/sim/sim-host.h"
#include "agent/vf-reset.h"
#include "agent/vm/vm.h"

static __attribute__((format(printf, 6, 0))) void
log_library(void *userdata, int priority, const char *file, int line, const char *fn,
	    const char *format, va_list args)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), format, args);
	agent_log(priority, "%s", msg);
}

/* The simulated host's config: its Mellanox VFs in "ib", its Intel VFs in "eth". */
static const char simulated_config[] =
	"{\"pools\": ["
	"  {\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"], \"link_types\": [\"infiniband\"]}},"
	"  {\"name\": \"eth\", \"selector\": {\"vendors\": [\"8086\"]}, \"grow\": {\"step\": 2}}],"
	" \"networks\": [{\"bridge\": \"sriov_ib0\", \"pool\": \"ib\"},"
	"              {\"bridge\": \"sriov_eth0\", \"pool\": \"eth\"}],"
	" \"guids\": {\"first\": \"02:c9:03:00:00:00:00:01\", \"count\": 4096}}";

/* The config file the agent reads, or NULL for the simulated host's built-in one. */
const char *agent_config_path(const struct agent *a)
{
	if (a->opt.config_path)
		return a->opt.config_path;
	return a->opt.simulate_dir ? NULL : VFAGENT_CONFIG_FILE;
}

int agent_load_config(const struct agent *a, struct vfp_config **ret)
{
	char *err = NULL;
	int r;

	if (!agent_config_path(a)) {
		json_t *root = json_loads(simulated_config, 0, NULL);

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

/* How reconcile asks the host about an intent a crash left half done. */
static int op_is_attached(void *userdata, const struct vfp_allocation *alloc)
{
	struct agent *a = userdata;
	const struct vfp_allocation_vf *vf = vfp_allocation_get_vf(alloc, 0);

	return vf && vm_is_vm_vf(a, vf) ? vm_is_attached(a, alloc) : container_is_attached(a, alloc);
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
		char err[512], reason[700];
		int rr = vm_is_vm_vf(a, vf) ? vm_restore_vf(a, vf, err, sizeof(err))
					    : container_restore_vf(a, vf, -1, err, sizeof(err));

		if (rr >= 0)
			continue;
		snprintf(reason, sizeof(reason), "undoing allocation %.40s after a restart failed: "
			 "%.600s", vfp_allocation_get_id(alloc), err);
		agent_quarantine_vf(a, vf->pci, reason);
		r = r < 0 ? r : rr;
	}
	return r;
}

/* A release a crash interrupted goes on: VFs restored, then reset as on any release. */
static int op_restore(void *userdata, const struct vfp_allocation *alloc)
{
	char why[256];
	int r = op_undo(userdata, alloc);

	if (r >= 0 && agent_reset_vfs(userdata, alloc, NULL, false, why, sizeof(why)) > 0) {
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
 * (libvirt never loaded) when the config says "libvirt": false.
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
	if (r < 0 && r != -ENOPKG) /* that one said why already */
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
	pthread_mutex_init(&a->ledger_lock, NULL);
	pthread_mutex_init(&a->config_lock, NULL);
	r = open_context(a);
	if (r >= 0)
		r = agent_load_config(a, &a->config);
	if (r >= 0)
		r = scan(a, &a->inv);
	if (r >= 0) {
		r = vfp_ledger_open(a->ctx, state_dir(a), &a->ledger);
		if (r < 0)
			log_error("opening the ledger in %s: %s", state_dir(a), strerror(-r));
	}
	if (r >= 0)
		r = agent_add_persisted_numvfs(a, a->config);
	if (r >= 0)
		r = open_libvirt(a);
	if (r >= 0)
		agent_apply_desired_numvfs(a); /* VFs back after a reboot, before reconcile */
	if (r >= 0) {
		r = vfp_ledger_reconcile(a->ledger, a->inv, a->config, &reconcile_ops, a, &rep);
		if (r < 0)
			log_error("reconcile: %s", vfp_ledger_get_error(a->ledger));
		else
			log_report(&rep);
	}
	if (r >= 0)
		r = events_new(&a->events);
	if (r >= 0)
		r = claim_queue_new(a->ledger, &a->ledger_lock, &a->claims);
	if (r >= 0)
		log_info("%zu PFs, %zu VFs under %s; ledger %s", vfp_inventory_get_pf_count(a->inv),
			 vfp_inventory_get_vf_count(a->inv), vfp_ctx_get_sysfs_root(a->ctx),
			 vfp_ledger_get_path(a->ledger));
	return r;
}

/* Closes the ledger last, after the claims in flight are committed. */
void agent_fini(struct agent *a)
{
	claim_queue_free(a->claims);
	libvirt_conn_free(a->libvirt);
	free(a->foreign_vfs.vfs);
	free(a->running.d);
	free(a->repair_waits);
	if (a->n_unrecorded)
		log_warning("%zu operations' ends were not recorded: the next start resolves them",
			    a->n_unrecorded);
	free(a->unrecorded);
	if (a->events)
		events_shutdown(a->events);
	vfp_ledger_unref(a->ledger);
	vfp_inventory_unref(a->inv);
	vfp_config_unref(a->config);
	vfp_ctx_unref(a->ctx);
	events_free(a->events);
	free(a->token);
	pthread_mutex_destroy(&a->ledger_lock);
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
	int r;

	r = scan(a, &inv);
	if (r < 0)
		return r;
	pthread_rwlock_wrlock(&a->state_lock);
	pthread_mutex_lock(&a->ledger_lock);
	r = vfp_ledger_sync(a->ledger, inv, a->config, &rep);
	if (r < 0)
		log_error("rescan (%s): %s", why, vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	agent_replace_inventory(a, inv);
	pthread_rwlock_unlock(&a->state_lock);
	if (r >= 0 && (rep.added || rep.vanished || rep.returned)) {
		log_info("rescan (%s): %u new VFs, %u vanished, %u returned", why, rep.added,
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
	int r = 0;

	pthread_rwlock_rdlock(&a->state_lock);
	if (vfp_config_watches_pf_links(a->config)) {
		pthread_mutex_lock(&a->ledger_lock);
		r = vfp_ledger_sync(a->ledger, a->inv, a->config, NULL);
		if (r < 0)
			log_error("health: %s", vfp_ledger_get_error(a->ledger));
		pthread_mutex_unlock(&a->ledger_lock);
	}
	pthread_rwlock_unlock(&a->state_lock);
}

/*
 * The VF counts persisted in the ledger (vfctl numvfs --persist) into @c, a
 * config just loaded that nobody else holds: they come before its rules.
 */
int agent_add_persisted_numvfs(struct agent *a, struct vfp_config *c)
{
	int r;

	pthread_mutex_lock(&a->ledger_lock);
	r = vfp_ledger_add_persisted_numvfs(a->ledger, c);
	if (r < 0)
		log_error("config: the persisted VF counts: %s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
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
	agent_apply_desired_numvfs(a);
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
	pthread_mutex_lock(&a->ledger_lock);
	r = vfp_ledger_sync(a->ledger, a->inv, a->config, NULL);
	pthread_mutex_unlock(&a->ledger_lock);
	pthread_rwlock_unlock(&a->state_lock);
	events_emit_config(a->events, pools);
	return r;
}

/* Allocation @id as the ledger has it now; -ENOENT with @err saying so. */
int agent_get_allocation(struct agent *a, const char *id, struct vfp_allocation **ret, char *err,
			 size_t err_size)
{
	int r;

	pthread_mutex_lock(&a->ledger_lock);
	r = vfp_ledger_get_allocation(a->ledger, id, ret);
	if (r < 0)
		snprintf(err, err_size, "%s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	return r;
}

/* How intent @op of allocation @id ended, kept to be written when the ledger takes it. */
struct agent_unrecorded {
	char id[40];
	enum vfp_op op;
	bool ok;
	char reason[256];
};

/* Under ledger_lock: the end of @id's @op, to write later (a newer one for @id replaces it). */
void agent_intent_defer_locked(struct agent *a, const char *id, enum vfp_op op, bool ok,
			       const char *reason)
{
	struct agent_unrecorded *u = NULL;

	for (size_t i = 0; i < a->n_unrecorded && !u; i++)
		if (strcmp(a->unrecorded[i].id, id) == 0)
			u = &a->unrecorded[i];
	if (!u && a->n_unrecorded == a->cap_unrecorded) {
		size_t cap = a->cap_unrecorded ? 2 * a->cap_unrecorded : 8;
		struct agent_unrecorded *n = realloc(a->unrecorded, cap * sizeof(*n));

		if (!n) {
			log_error("allocation %s: %s %s: not recorded, and no memory to keep it: the "
				  "next start resolves it", id, vfp_op_to_string(op), ok ? "done" : "failed");
			return;
		}
		a->unrecorded = n, a->cap_unrecorded = cap;
	}
	if (!u)
		u = &a->unrecorded[a->n_unrecorded++];
	*u = (struct agent_unrecorded){ .op = op, .ok = ok };
	snprintf(u->id, sizeof(u->id), "%s", id);
	snprintf(u->reason, sizeof(u->reason), "%s", reason ? reason : "");
}

/*
 * Under ledger_lock: writes the ends of operations the ledger could not
 * take when they ended (a full disk). 0 once none is left; else the
 * ledger's -errno, and the rest stay for the next try. An end the ledger
 * no longer expects (-ENOENT: resolved meanwhile) is dropped.
 */
static int record_deferred_locked(struct agent *a)
{
	while (a->n_unrecorded) {
		struct agent_unrecorded *u = &a->unrecorded[0];
		int r = vfp_ledger_confirm(a->ledger, u->id, u->op, u->ok,
					   u->ok ? NULL : u->reason);

		if (r < 0 && r != -ENOENT)
			return r;
		log_info("allocation %s: %s %s: recorded now", u->id, vfp_op_to_string(u->op),
			 u->ok ? "done" : "failed");
		memmove(u, u + 1, --a->n_unrecorded * sizeof(*u));
	}
	return 0;
}

/* Under ledger_lock: before a new operation, the ends of earlier ones; @err when they do not fit. */
static int ledger_ready_locked(struct agent *a, char *err, size_t err_size)
{
	int r = record_deferred_locked(a);

	if (r < 0)
		snprintf(err, err_size, "the ledger cannot record the end of an earlier operation "
			 "yet: %s", vfp_ledger_get_error(a->ledger));
	return r;
}

/**
 * agent_record_deferred() - write the ends of operations the ledger could
 * not take when they ended; for the main loop's quiet minute (a new
 * operation tries first anyway)
 */
void agent_record_deferred(struct agent *a)
{
	pthread_mutex_lock(&a->ledger_lock);
	if (a->n_unrecorded && record_deferred_locked(a) < 0)
		log_warning("%zu operations' ends wait for the ledger: %s", a->n_unrecorded,
			    vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
}

/**
 * agent_ledger_ready() - under ledger_lock, before an operation begins:
 * the ends of earlier ones written first; -errno with @err when they
 * cannot be (the disk is still full), rather than an operation "in
 * progress" that ended long ago
 */
int agent_ledger_ready(struct agent *a, char *err, size_t err_size)
{
	return ledger_ready_locked(a, err, err_size);
}

/*
 * Begins intent @op of allocation @id; @err on failure. @durable: it waits
 * for the disk, for an @op whose effect outlives a power cut (a domain's
 * persistent config, a release, a detach); see vfp_ledger_begin_volatile().
 */
int agent_intent_begin(struct agent *a, const char *id, enum vfp_op op, bool durable, char *err,
		       size_t err_size)
{
	int r;

	err[0] = '\0';
	pthread_mutex_lock(&a->ledger_lock);
	r = ledger_ready_locked(a, err, err_size);
	if (r >= 0)
		r = durable ? vfp_ledger_begin(a->ledger, id, op)
			    : vfp_ledger_begin_volatile(a->ledger, id, op);
	if (r < 0 && !err[0])
		snprintf(err, err_size, "%s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	return r;
}

/* agent_intent_begin(), not durable, for each of @ids in one transaction: all or none. */
int agent_intents_begin_volatile(struct agent *a, const char *const *ids, size_t n,
				 enum vfp_op op, char *err, size_t err_size)
{
	int r;

	err[0] = '\0';
	pthread_mutex_lock(&a->ledger_lock);
	r = ledger_ready_locked(a, err, err_size);
	if (r >= 0)
		r = vfp_ledger_begin_volatile_many(a->ledger, ids, n, op);
	if (r < 0 && !err[0])
		snprintf(err, err_size, "%s", vfp_ledger_get_error(a->ledger));
	pthread_mutex_unlock(&a->ledger_lock);
	return r;
}

/*
 * How intent @op of each allocation of @ids ended, in one transaction. One
 * the ledger cannot take now (a full disk) is logged and kept: written
 * before the next operation, or in the quiet minute; until then the intent
 * stays open, and a restart would resolve it by what the host shows.
 */
int agent_intents_confirm(struct agent *a, const char *const *ids, size_t n, enum vfp_op op,
			  bool ok, const char *reason)
{
	int r;

	pthread_mutex_lock(&a->ledger_lock);
	r = vfp_ledger_confirm_many(a->ledger, ids, n, op, ok, reason);
	if (r < 0)
		log_error("%s", vfp_ledger_get_error(a->ledger));
	for (size_t i = 0; r < 0 && r != -ENOENT && i < n; i++)
		agent_intent_defer_locked(a, ids[i], op, ok, reason);
	pthread_mutex_unlock(&a->ledger_lock);
	return r;
}

/**
 * agent_intent_defer() - the end of @id's @op to record as @ok, replacing
 * one kept already (an attach the ledger could not record, undone since)
 */
void agent_intent_defer(struct agent *a, const char *id, enum vfp_op op, bool ok,
			const char *reason)
{
	pthread_mutex_lock(&a->ledger_lock);
	agent_intent_defer_locked(a, id, op, ok, reason);
	pthread_mutex_unlock(&a->ledger_lock);
}

/* How intent @op of allocation @id ended (@ok; @reason when not); a failure is logged. */
int agent_intent_confirm(struct agent *a, const char *id, enum vfp_op op, bool ok,
			 const char *reason)
{
	return agent_intents_confirm(a, &id, 1, op, ok, reason);
}
