/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A simulated host, a config and a ledger for the ledger, numvfs and crash suites. */
#pragma once

#include "fixtures.h"
#include "libvfpool/ledger-private.h"

struct lfx {
	struct fixture fx;
	char state_dir[128];
	struct vfp_config *config;
	struct vfp_inventory *inv;
	struct vfp_ledger *l;
};

extern const char *const lfx_default_config;

void lfx_setup(struct lfx *t, const char *config_json);
void lfx_teardown(struct lfx *t);
void lfx_reopen(struct lfx *t);
void lfx_rescan(struct lfx *t);
struct vfp_config *lfx_config(const char *json);
int lfx_count(struct lfx *t, const char *pool, const char *state);
const char *lfx_vf_state(struct lfx *t, const char *pci);
struct vfp_allocation *lfx_claim(struct lfx *t, const char *pool, unsigned count,
				 enum vfp_placement placement, int numa, const char *key, int expect);
void lfx_release(struct lfx *t, const char *id);
void lfx_assert_invariants(struct lfx *t);
int lfx_query_int(struct lfx *t, const char *sql);
