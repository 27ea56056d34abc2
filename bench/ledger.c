/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/ledger: durable allocations and releases per second, against the
 * raw rate of a 4 KiB write + fdatasync in the same directory (the floor a
 * durable commit cannot beat) and against SQLite's own smallest durable
 * commit there (one row, WAL, synchronous=FULL, as the ledger's), for one
 * client and for 16 concurrent client threads whose claims the agent's
 * queue commits in groups, and the cost of a reconcile at 4,096 VFs.
 * BENCH_DIR picks the directory.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/claim-queue.h"
#include "agent/sim/sim-host.h"
#include "libvfpool/libvfpool.h"

#define OPS 400
#define CLIENTS 16

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of the calling thread (its own work, user and kernel, not the waits) */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double floor_cpu; /* CPU seconds per write + fdatasync, the last time measured */

static double fsync_rate(const char *dir)
{
	char path[2 * PATH_MAX], buf[4096];
	double t0, c0;
	int fd;

	memset(buf, 'x', sizeof(buf));
	snprintf(path, sizeof(path), "%s/fsync-probe", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	t0 = now_s();
	c0 = cpu_s();
	for (int i = 0; i < OPS; i++)
		if (pwrite(fd, buf, sizeof(buf), (off_t)(i % 16) * 4096) < 0 || fdatasync(fd) < 0)
			return -1;
	floor_cpu = (cpu_s() - c0) / OPS;
	t0 = now_s() - t0;
	close(fd);
	unlink(path);
	return OPS / t0;
}

/* Transactions of one inserted row per second, in a database of its own in @dir. */
static double sqlite_row_rate(const char *dir)
{
	char path[2 * PATH_MAX], aux[2 * PATH_MAX + 8];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	double t0;
	int ok;

	snprintf(path, sizeof(path), "%s/sqlite-probe", dir);
	ok = sqlite3_open(path, &db) == SQLITE_OK &&
	     sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; "
				  "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)",
			  NULL, NULL, NULL) == SQLITE_OK &&
	     sqlite3_prepare_v2(db, "INSERT INTO t (v) VALUES ('x')", -1, &st, NULL) == SQLITE_OK;
	t0 = now_s();
	for (int i = 0; ok && i < OPS; i++)
		ok = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK &&
		     sqlite3_step(st) == SQLITE_DONE && sqlite3_reset(st) == SQLITE_OK &&
		     sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
	t0 = now_s() - t0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	unlink(path);
	for (int i = 0; i < 2; i++) {
		snprintf(aux, sizeof(aux), "%s%s", path, i ? "-shm" : "-wal");
		unlink(aux);
	}
	return ok ? OPS / t0 : -1;
}

static int build_host(const char *root, unsigned n_pfs)
{
	for (unsigned i = 0; i < n_pfs; i++) {
		char addr[16], ifname[16];
		struct sim_pf_spec s = { SIM_CX6_IB, addr, ifname, (int)(i * 200), 0,
					 (int)(i * 200), 128, 128, NULL };

		snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0x10 + 2 * i);
		snprintf(ifname, sizeof(ifname), "ib%u", i);
		if (sim_add_pf(root, &s) < 0)
			return -1;
	}
	return 0;
}

struct env {
	struct vfp_ctx *ctx;
	struct vfp_inventory *inv;
	struct vfp_config *config;
	char state[PATH_MAX + 64];
};

struct rates {
	double claims, releases;     /* per second */
	double claim_cpu, release_cpu; /* CPU seconds per operation */
};

/* @n claims of one VF, then their releases: their rates and CPU time. */
static int client(struct env *e, int n, struct rates *ret)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_VM, .name = "bench" };
	struct vfp_claim req = { .pool = "all", .count = 1, .owner = &owner, .numa_node = -1 };
	struct vfp_ledger *l = NULL;
	char **ids = calloc((size_t)n, sizeof(*ids));
	double t0, c0;

	if (!ids || vfp_ledger_open(e->ctx, e->state, &l) < 0)
		return -1;
	t0 = now_s();
	c0 = cpu_s();
	for (int i = 0; i < n; i++) {
		struct vfp_allocation *a = NULL;

		if (vfp_ledger_claim(l, e->config, &req, &a) < 0) {
			fprintf(stderr, "claim: %s\n", vfp_ledger_get_error(l));
			return -1;
		}
		ids[i] = strdup(vfp_allocation_get_id(a));
		vfp_allocation_unref(a);
	}
	ret->claims = n / (now_s() - t0);
	ret->claim_cpu = (cpu_s() - c0) / n;
	t0 = now_s();
	c0 = cpu_s();
	for (int i = 0; i < n; i++) {
		if (vfp_ledger_begin(l, ids[i], VFP_OP_RELEASE) < 0 ||
		    vfp_ledger_confirm(l, ids[i], VFP_OP_RELEASE, true, NULL) < 0)
			return -1;
		free(ids[i]);
	}
	ret->releases = n / (now_s() - t0);
	ret->release_cpu = (cpu_s() - c0) / n;
	free(ids);
	vfp_ledger_unref(l);
	return 0;
}

struct worker {
	struct env *e;
	struct claim_queue *q;
	const struct vfp_owner *owner;
	int n, failed;
};

static void *worker(void *userdata)
{
	struct worker *w = userdata;
	struct vfp_claim req = { .pool = "all", .count = 1, .owner = w->owner, .numa_node = -1 };

	for (int i = 0; i < w->n; i++) {
		struct vfp_allocation *a = NULL;

		if (claim_queue_claim(w->q, w->e->config, &req, &a, NULL) < 0)
			w->failed++;
		vfp_allocation_unref(a);
	}
	return NULL;
}

/* The queue's commit, as the agent's (ledger_claim_batch()) without its lock: one committer. */
static void commit(void *userdata, const struct vfp_config *config, const struct vfp_claim *reqs,
		   size_t n, const bool *together, int *ret_results,
		   struct vfp_allocation **ret_allocations, char **ret_errors)
{
	struct vfp_ledger *l = userdata;

	if (vfp_ledger_claim_groups(l, config, reqs, n, together, ret_results, ret_allocations,
				    ret_errors) >= 0)
		return;
	for (size_t k = 0; k < n; k++) {
		free(ret_errors[k]);
		ret_errors[k] = strdup(vfp_ledger_get_error(l));
		ret_results[k] = ret_results[k] < 0 ? ret_results[k] : -EIO;
	}
}

/* CLIENTS threads claiming through the agent's group-commit queue; returns claims/s. */
static double concurrent(struct env *e)
{
	static const struct vfp_owner owner = { .kind = VFP_OWNER_VM, .name = "b" };
	struct worker w[CLIENTS];
	pthread_t th[CLIENTS];
	struct claim_queue *q = NULL;
	struct vfp_ledger *l = NULL;
	int failed = 0;
	double t0;

	if (vfp_ledger_open(e->ctx, e->state, &l) < 0 || claim_queue_new(commit, l, &q) < 0)
		return -1;
	t0 = now_s();
	for (int c = 0; c < CLIENTS; c++) {
		w[c] = (struct worker){ e, q, &owner, OPS / CLIENTS, 0 };
		pthread_create(&th[c], NULL, worker, &w[c]);
	}
	for (int c = 0; c < CLIENTS; c++) {
		pthread_join(th[c], NULL);
		failed += w[c].failed;
	}
	t0 = now_s() - t0;
	claim_queue_free(q);
	vfp_ledger_unref(l);
	return failed ? -1 : OPS / t0;
}

static int reconcile_cost(struct env *e, double *ret_first_ms, double *ret_steady_ms)
{
	struct vfp_ledger *l = NULL;
	char dir[PATH_MAX + 128];
	double t0;

	snprintf(dir, sizeof(dir), "%s.rc", e->state);
	if (vfp_ledger_open(e->ctx, dir, &l) < 0)
		return -1;
	t0 = now_s();
	if (vfp_ledger_reconcile(l, e->inv, e->config, NULL, NULL, NULL) < 0)
		return -1;
	*ret_first_ms = (now_s() - t0) * 1e3;
	t0 = now_s();
	if (vfp_ledger_reconcile(l, e->inv, e->config, NULL, NULL, NULL) < 0)
		return -1;
	*ret_steady_ms = (now_s() - t0) * 1e3;
	vfp_ledger_unref(l);
	return 0;
}

int main(void)
{
	char base[PATH_MAX], root[PATH_MAX + 32], cmd[PATH_MAX + 48];
	struct env e = { 0 };
	json_t *cfg = json_loads("{\"pools\": [{\"name\": \"all\", \"selector\": "
				 "{\"vendors\": [\"15b3\"]}}]}", 0, NULL);
	struct vfp_ledger *l = NULL;
	double floor, floor2, row, conc, first_ms, steady_ms;
	struct rates one;

	/* the sysfs root must be absolute */
	if (!realpath(getenv("BENCH_DIR") ? getenv("BENCH_DIR") : ".", base))
		return EXIT_FAILURE;
	snprintf(root, sizeof(root), "%.3000s/vfagent-bench-XXXXXX", base);
	if (!mkdtemp(root) || build_host(root, 32) < 0 || vfp_ctx_new(&e.ctx) < 0 ||
	    vfp_ctx_set_sysfs_root(e.ctx, root) < 0 || vfp_inventory_scan(e.ctx, &e.inv) < 0 ||
	    vfp_config_load_json(cfg, &e.config, NULL) < 0)
		return EXIT_FAILURE;
	snprintf(e.state, sizeof(e.state), "%s/state", root);
	if (vfp_ledger_open(e.ctx, e.state, &l) < 0 ||
	    vfp_ledger_reconcile(l, e.inv, e.config, NULL, NULL, NULL) < 0)
		return EXIT_FAILURE;
	vfp_ledger_unref(l);

	/* the floor drifts on a shared machine: take it around the runs and use the mean */
	floor = fsync_rate(root);
	row = sqlite_row_rate(root);
	if (floor < 0 || row < 0 || client(&e, OPS, &one) < 0 || (conc = concurrent(&e)) < 0 ||
	    reconcile_cost(&e, &first_ms, &steady_ms) < 0 || (floor2 = fsync_rate(root)) < 0) {
		fprintf(stderr, "bench/ledger: failed\n");
		return EXIT_FAILURE;
	}
	printf("bench/ledger in %s (%d operations each)\n", base, OPS);
	printf("  4 KiB write + fdatasync      %8.0f /s   (floor: mean of %.0f before, %.0f after)\n",
	       (floor + floor2) / 2, floor, floor2);
	floor = (floor + floor2) / 2;
	printf("  SQLite, one row per commit   %8.0f /s   ratio %.2f   (WAL, synchronous=FULL: "
	       "the store's own floor)\n", row, row / floor);
	printf("  claim, 1 client              %8.0f /s   ratio %.2f   CPU %.0f us each\n",
	       one.claims, one.claims / floor, one.claim_cpu * 1e6);
	printf("  release, 1 client            %8.0f /s   ratio %.2f   CPU %.0f us each "
	       "(the intent waits for the disk, the confirmation does not)\n",
	       one.releases, one.releases / floor, one.release_cpu * 1e6);
	printf("  (the floor's own CPU: %.0f us per 4 KiB write + fdatasync)\n",
	       floor_cpu * 1e6);
	printf("  claim, %d clients (grouped)  %8.0f /s   ratio %.2f\n", CLIENTS, conc,
	       conc / floor);
	printf("  reconcile, 4,096 VFs         %8.1f ms first (inserts), %.1f ms steady\n", first_ms,
	       steady_ms);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	json_decref(cfg);
	return system(cmd) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
