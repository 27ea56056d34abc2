/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ledger's internals, shared by the ledger-*.c and reconcile.c files. */
#pragma once

#include <sqlite3.h>
#include <time.h>

#include "private.h"

struct vfp_ledger {
	int refcount;
	struct vfp_ctx *ctx;
	sqlite3 *db;
	char *path;
	time_t (*now)(void);
	bool lazy; /* in a transaction of vfp_ledger_begin_lazy_tx() */
	bool sync_normal; /* synchronous = NORMAL: a lazy transaction's, not restored yet */
	unsigned lazy_holds; /* vfp_ledger_hold_lazy() without its release */
	struct ledger_stmt {
		const char *sql; /* identity of a string literal */
		sqlite3_stmt *stmt;
	} *cache; /* grows: one entry per statement of the library's source */
	size_t n_cache, cache_size;
};

#define VFP_LEDGER_ERROR_MAX 512

/* The calling thread's message of its last failed ledger call (ledger.c); never shared. */
char *vfp_ledger_error(void);
int vfp_ledger_fail(struct vfp_ledger *l, int r, const char *format, ...) _printf_(3, 4);
int vfp_ledger_errno(struct vfp_ledger *l, int rc, const char *what);
int vfp_ledger_exec(struct vfp_ledger *l, const char *sql);
int vfp_ledger_exec_cached(struct vfp_ledger *l, const char *sql);
int vfp_ledger_stmt(struct vfp_ledger *l, const char *sql, sqlite3_stmt **ret);
int vfp_ledger_query_int(struct vfp_ledger *l, const char *sql, int *ret);
int vfp_ledger_step_done(struct vfp_ledger *l, sqlite3_stmt *st, const char *what);
int vfp_ledger_collect(struct vfp_ledger *l, sqlite3_stmt *st, size_t size,
		       void (*fill)(sqlite3_stmt *st, void *elem), void **ret, size_t *ret_n,
		       const char *what);
int vfp_ledger_begin_tx(struct vfp_ledger *l);
int vfp_ledger_begin_lazy_tx(struct vfp_ledger *l);
int vfp_ledger_commit_tx(struct vfp_ledger *l);
void vfp_ledger_rollback_tx(struct vfp_ledger *l);
int vfp_ledger_migrate(struct vfp_ledger *l);
int vfp_ledger_schema_version(void);
int vfp_ledger_set_vf_state(struct vfp_ledger *l, const char *pci, enum vfp_vf_state state,
			    const char *reason);
int vfp_ledger_set_allocation_state(struct vfp_ledger *l, const char *id,
				    enum vfp_allocation_state state);
int vfp_ledger_set_allocation_vfs_state(struct vfp_ledger *l, const char *id,
					enum vfp_vf_state state, const char *reason);
int vfp_ledger_begin_attached(struct vfp_ledger *l, const char *id);
int vfp_ledger_end_allocation(struct vfp_ledger *l, const char *id, enum vfp_vf_state vf_state,
			      const char *reason);
int vfp_ledger_swap_pending(struct vfp_ledger *l, const char *id);
int vfp_ledger_next_guid(struct vfp_ledger *l, const struct vfp_config *config,
			 const char *owner_key, unsigned long long *ret_offset, char guid[static 24]);
int vfp_ledger_note_guids_released(struct vfp_ledger *l, const char *id);

static inline const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* numvfs.c, for numvfs-desired.c */
int vfp_numvfs_take_out_of_pool(struct vfp_ledger *l, const char *pf_pci);
int vfp_numvfs_write(struct vfp_ledger *l, struct vfp_ctx *ctx, const char *pf_pci, int n);
