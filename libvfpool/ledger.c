/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ledger: one SQLite file in the state directory (WAL, synchronous=FULL,
 * foreign keys on). Every change is a transaction that is durable before
 * the call returns. The agent is its single writer.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ledger-private.h"

/*
 * A failed call's message lives in the thread that made the call, as
 * libvirt's virGetLastError() does, not in the ledger: two threads that
 * share a ledger never read each other's, and none outlives the next call
 * of its own thread.
 */
static _Thread_local char last_error[VFP_LEDGER_ERROR_MAX];

char *vfp_ledger_error(void)
{
	return last_error;
}

int vfp_ledger_fail(struct vfp_ledger *l, int r, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vsnprintf(last_error, sizeof(last_error), format, ap);
	va_end(ap);
	vfp_dbg(l->ctx, "ledger: %s", last_error);
	return r;
}

/* SQLite's result codes as -errno: a full disk is -ENOSPC, a busy file -EBUSY. */
int vfp_ledger_errno(struct vfp_ledger *l, int rc, const char *what)
{
	int r;

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		r = -EAGAIN;
		break;
	case SQLITE_FULL:
		r = -ENOSPC;
		break;
	case SQLITE_NOMEM:
		r = -ENOMEM;
		break;
	case SQLITE_READONLY:
		r = -EROFS;
		break;
	case SQLITE_CONSTRAINT:
		r = -EEXIST;
		break;
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		r = -EACCES;
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		r = -EBADMSG;
		break;
	default:
		r = -EIO;
	}
	return vfp_ledger_fail(l, r, "ledger %s: %s: %s", l->path, what, sqlite3_errmsg(l->db));
}

/* synchronous = FULL again, where a lazy transaction left NORMAL. */
static void restore_full(struct vfp_ledger *l)
{
	if (!l->sync_normal)
		return;
	l->sync_normal = false;
	if (sqlite3_exec(l->db, "PRAGMA synchronous = FULL", NULL, NULL, NULL) != SQLITE_OK)
		vfp_err(l->ctx, "ledger %s: synchronous = FULL: %s", l->path, sqlite3_errmsg(l->db));
}

/*
 * Before every statement but a lazy transaction's: any may commit, and its
 * commit waits for the disk (lazy ones held together leave NORMAL between them).
 */
static void need_full(struct vfp_ledger *l)
{
	if (l->sync_normal && !l->lazy)
		restore_full(l);
}

int vfp_ledger_exec(struct vfp_ledger *l, const char *sql)
{
	int rc;

	need_full(l);
	rc = sqlite3_exec(l->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : vfp_ledger_errno(l, rc, "exec");
}

/*
 * A prepared statement for @sql, a string literal, cached by its address.
 * The cache grows as statements come: their number is bounded by the
 * library's source, so a cache full is never a failure of the caller's.
 */
int vfp_ledger_stmt(struct vfp_ledger *l, const char *sql, sqlite3_stmt **ret)
{
	struct ledger_stmt *e;
	int rc;

	need_full(l);
	for (size_t i = 0; i < l->n_cache; i++) {
		if (l->cache[i].sql == sql) {
			sqlite3_reset(l->cache[i].stmt);
			sqlite3_clear_bindings(l->cache[i].stmt);
			*ret = l->cache[i].stmt;
			return 0;
		}
	}
	if (!GREEDY_REALLOC(l->cache, l->cache_size, l->n_cache + 1))
		return vfp_ledger_fail(l, -ENOMEM, "out of memory for a statement");
	e = &l->cache[l->n_cache];
	rc = sqlite3_prepare_v3(l->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &e->stmt, NULL);
	if (rc != SQLITE_OK)
		return vfp_ledger_errno(l, rc, "prepare");
	e->sql = sql;
	l->n_cache++;
	*ret = e->stmt;
	return 0;
}

int vfp_ledger_query_int(struct vfp_ledger *l, const char *sql, int *ret)
{
	sqlite3_stmt *st;
	int r, rc;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return vfp_ledger_errno(l, rc, "query");
	*ret = sqlite3_column_int(st, 0);
	sqlite3_reset(st);
	return 0;
}

int vfp_ledger_step_done(struct vfp_ledger *l, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? sqlite3_changes(l->db) : vfp_ledger_errno(l, rc, what);
}

/**
 * vfp_ledger_collect() - every row of @st (bound, not yet stepped) into a new
 * array of @size-byte elements, each zeroed and then filled by @fill
 * @what: names the query in a failure's message
 *
 * *@ret (free() it) and *@ret_n are set only on success.
 */
int vfp_ledger_collect(struct vfp_ledger *l, sqlite3_stmt *st, size_t size,
		       void (*fill)(sqlite3_stmt *st, void *elem), void **ret, size_t *ret_n,
		       const char *what)
{
	unsigned char *rows = NULL;
	size_t n = 0, cap = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		unsigned char *grown = vfp_greedy_realloc(rows, &cap, n + 1, size);

		if (!grown)
			break;
		rows = grown;
		memset(rows + n * size, 0, size);
		fill(st, rows + n++ * size);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		free(rows);
		return rc == SQLITE_ROW ? -ENOMEM : vfp_ledger_errno(l, rc, what);
	}
	*ret = rows;
	*ret_n = n;
	return 0;
}

/* Every commit after a lazy one waits for the disk again: at once, unless lazy ones are held. */
static void end_lazy(struct vfp_ledger *l)
{
	if (!l->lazy)
		return;
	l->lazy = false;
	if (!l->lazy_holds)
		restore_full(l);
}

/**
 * vfp_ledger_hold_lazy() - the lazy transactions that follow, until
 * vfp_ledger_release_lazy(), keep synchronous = NORMAL between them
 *
 * A lazy transaction sets NORMAL before it and FULL after it, two PRAGMAs
 * SQLite parses each time; an operation that makes several in a row (a
 * restore point per VF, then its confirmation) sets each once. Nothing else
 * changes: any other statement, of any caller, sets FULL again first, so
 * every other commit still waits for the disk. Holds nest.
 */
VFP_EXPORT void vfp_ledger_hold_lazy(struct vfp_ledger *l)
{
	l->lazy_holds++;
}

/* vfp_ledger_hold_lazy() ended: FULL again now, when it was the last hold. */
VFP_EXPORT void vfp_ledger_release_lazy(struct vfp_ledger *l)
{
	if (l->lazy_holds && !--l->lazy_holds && !l->lazy)
		restore_full(l);
}

/**
 * vfp_ledger_get_changes() - how many rows this ledger's commits (and
 * rollbacks) have changed since it was opened
 *
 * Equal twice: nothing was written in between, so an answer made of the
 * ledger's rows then is still right.
 */
VFP_EXPORT uint64_t vfp_ledger_get_changes(const struct vfp_ledger *l)
{
	return (uint64_t)sqlite3_total_changes64(l->db);
}

/*
 * @sql (a string literal, cached by its address: see vfp_ledger_stmt()), a
 * statement with no result that runs often (a transaction's BEGIN and COMMIT,
 * a claim's savepoint), prepared once instead of parsed on every run.
 */
int vfp_ledger_exec_cached(struct vfp_ledger *l, const char *sql)
{
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r >= 0)
		r = vfp_ledger_step_done(l, st, "exec");
	return r < 0 ? r : 0;
}

/* IMMEDIATE: take the write lock now, so two writers never deadlock on upgrade. */
int vfp_ledger_begin_tx(struct vfp_ledger *l)
{
	static const char sql[] = "BEGIN IMMEDIATE";

	return vfp_ledger_exec_cached(l, sql);
}

/*
 * A transaction whose commit does not wait for the disk: it is in the WAL
 * (a crash of the agent keeps it) and becomes durable with the next
 * durable commit, since the WAL is replayed in order. For what a power cut
 * makes moot: a confirmation (the intent stays open, and the next start
 * resolves it against the host), intents and restore points of kernel
 * state, which the power cut resets too, and a container's claims and
 * releases (its namespace does not outlive the host). SQLite takes the synchronous
 * setting only outside a transaction.
 */
int vfp_ledger_begin_lazy_tx(struct vfp_ledger *l)
{
	int r = 0;

	l->lazy = true;
	if (!l->sync_normal) {
		r = vfp_ledger_exec(l, "PRAGMA synchronous = NORMAL");
		l->sync_normal = r >= 0;
	}
	if (r >= 0)
		r = vfp_ledger_begin_tx(l);
	if (r < 0)
		end_lazy(l);
	return r;
}

int vfp_ledger_commit_tx(struct vfp_ledger *l)
{
	static const char sql[] = "COMMIT";
	int r = vfp_ledger_exec_cached(l, sql);

	if (r < 0)
		vfp_ledger_rollback_tx(l);
	end_lazy(l);
	return r;
}

void vfp_ledger_rollback_tx(struct vfp_ledger *l)
{
	if (!sqlite3_get_autocommit(l->db))
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	end_lazy(l);
}

static time_t default_now(void)
{
	return time(NULL);
}

static int ledger_configure(struct vfp_ledger *l)
{
	static const char *const pragmas[] = {
		"PRAGMA journal_mode = WAL",
		"PRAGMA synchronous = FULL",
		"PRAGMA journal_size_limit = 1048576", /* the WAL, once checkpointed */
		/*
		 * a checkpoint every 256 pages (1 MiB) rather than SQLite's 1000 (4 MiB): the
		 * ledger is small, and a WAL four times its size filled a small state disk
		 * by itself (tests/faults.sh's 2 MiB tmpfs), SQLITE_FULL with room to spare
		 */
		"PRAGMA wal_autocheckpoint = 256",
		"PRAGMA foreign_keys = ON",
		/* the agent is the single writer: hold the lock, skip per-commit shm locking */
		"PRAGMA locking_mode = EXCLUSIVE",
		"PRAGMA trusted_schema = OFF",
		/* statement journals (a statement undone alone) in memory, not in temporary files */
		"PRAGMA temp_store = MEMORY",
	};
	int r;

	sqlite3_busy_timeout(l->db, 200);
	sqlite3_extended_result_codes(l->db, 1);
	for (size_t i = 0; i < ELEMENTSOF(pragmas); i++) {
		r = vfp_ledger_exec(l, pragmas[i]);
		if (r < 0)
			return r;
	}
	return vfp_ledger_migrate(l);
}

/**
 * vfp_ledger_open() - open (creating if needed) the ledger in @state_dir
 *
 * The directory is created with mode 0700 when missing. The file is
 * @state_dir/ledger.db. On failure vfp_ledger_open_error() is not
 * available: the message goes to the context's log at LOG_ERR.
 */
VFP_EXPORT int vfp_ledger_open(struct vfp_ctx *ctx, const char *state_dir,
			       struct vfp_ledger **ret_ledger)
{
	struct vfp_ledger *l;
	int r, rc;

	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
		return negative_errno();
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->refcount = 1;
	l->ctx = vfp_ctx_ref(ctx);
	l->now = default_now;
	if (asprintf(&l->path, "%s/ledger.db", state_dir) < 0) {
		l->path = NULL;
		vfp_ledger_unref(l);
		return -ENOMEM;
	}
	rc = sqlite3_open_v2(l->path, &l->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	r = rc == SQLITE_OK ? ledger_configure(l) : vfp_ledger_errno(l, rc, "open");
	if (r == -EAGAIN)
		r = vfp_ledger_fail(l, -EBUSY, "ledger %s is in use by another process "
					       "(another vfagentd?)", l->path);
	if (r < 0) {
		vfp_err(ctx, "%s", last_error);
		vfp_ledger_unref(l);
		return r;
	}
	*ret_ledger = l;
	return 0;
}

VFP_EXPORT struct vfp_ledger *vfp_ledger_ref(struct vfp_ledger *l)
{
	if (l)
		vfp_ref_inc(&l->refcount);
	return l;
}

/* Closing checkpoints the WAL into the main file, so a clean stop leaves one file. */
VFP_EXPORT struct vfp_ledger *vfp_ledger_unref(struct vfp_ledger *l)
{
	if (!l || vfp_ref_dec(&l->refcount) > 0)
		return NULL;
	for (size_t i = 0; i < l->n_cache; i++)
		sqlite3_finalize(l->cache[i].stmt);
	free(l->cache);
	if (l->db)
		sqlite3_close(l->db);
	vfp_ctx_unref(l->ctx);
	free(l->path);
	free(l);
	return NULL;
}

/*
 * The message of the calling thread's last failed call on a ledger, for a
 * person to act on (thread-local: another thread's failures never show
 * here). Copy it before the next call.
 */
VFP_EXPORT const char *vfp_ledger_get_error(const struct vfp_ledger *l)
{
	(void)l;
	return last_error;
}

VFP_EXPORT const char *vfp_ledger_get_path(const struct vfp_ledger *l)
{
	return l->path;
}
