/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Claiming VFs: N free VFs of a pool become one allocation, all or none,
 * in one transaction. InfiniBand VFs take a node/port GUID from the
 * host's range (ledger-guid.c). A retry with the same idempotency key
 * gets the same allocation back and claims nothing.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "ledger-private.h"
#include "placement.h"
#include "selector.h"

#define MAX_CLAIM 64

static int new_allocation_id(char buf[static 37])
{
	unsigned char b[16];

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return negative_errno();
	b[6] = (b[6] & 0x0f) | 0x40; /* version 4 */
	b[8] = (b[8] & 0x3f) | 0x80; /* RFC 4122 variant */
	snprintf(buf, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
	return 0;
}

/*
 * What @req asks for, as one canonical text (keys sorted): a retry under the
 * same key must ask for exactly this again (free() it; NULL: -ENOMEM).
 */
static char *fingerprint(const struct vfp_claim *req)
{
	/* near and max_distance only when asked: requests kept before them still match */
	json_t *o = json_pack("{s:s, s:i, s:o*, s:o*, s:i, s:s, s:I, s:s*, s:s*}", "pool",
			      req->pool, "count", (int)req->count, "owner",
			      vfp_owner_to_json(req->owner), "settings",
			      req->settings ? vfp_settings_to_json(req->settings) : json_object(),
			      "numa_node", req->numa_node, "placement",
			      req->placement == VFP_PLACE_PACK ? "pack" : "spread", "lease_seconds",
			      (json_int_t)req->lease_seconds, "near", req->near, "max_distance",
			      req->near && req->max_distance != VFP_PCIE_SELF
				      ? vfp_pcie_distance_to_string(req->max_distance)
				      : NULL);
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(o);
	return s;
}

/*
 * An existing allocation under @key: the same request gets it back (1);
 * another request (-EEXIST), or any request once that allocation is
 * released (-EEXIST: the key is spent, as the Idempotency-Key draft lets a
 * server expire keys; a retry must not be told it holds VFs it gave back).
 * Allocations from before the ledger kept requests are compared by pool,
 * owner and count.
 */
static int replay(struct vfp_ledger *l, const struct vfp_claim *req, const char *owner_key,
		  const char *request, char ret_id[static 37])
{
	static const char sql[] =
		"SELECT a.id, a.pool, a.owner_key, (SELECT count(*) FROM allocation_vfs v "
		"WHERE v.allocation_id = a.id), a.state, a.request FROM allocations a "
		"WHERE a.idempotency_key = ?";
	sqlite3_stmt *st;
	const char *was;
	int r, rc;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, req->idempotency_key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return vfp_ledger_errno(l, rc, "idempotency lookup");
	snprintf(ret_id, 37, "%s", col_text(st, 0));
	was = sqlite3_column_type(st, 5) == SQLITE_NULL ? NULL : col_text(st, 5);
	if (strcmp(col_text(st, 4), "released") == 0)
		r = vfp_ledger_fail(l, -EEXIST,
				    "Idempotency-Key: \"%s\" named allocation %s, released since: "
				    "a new claim needs a new key",
				    req->idempotency_key, ret_id);
	else if (was ? strcmp(was, request) != 0
		     : strcmp(col_text(st, 1), req->pool) != 0 ||
			       strcmp(col_text(st, 2), owner_key) != 0 ||
			       sqlite3_column_int(st, 3) != (int)req->count)
		r = vfp_ledger_fail(l, -EEXIST,
				    "Idempotency-Key: \"%s\" was used for another request "
				    "(allocation %s): a retry must send the same body",
				    req->idempotency_key, ret_id);
	else
		r = 1;
	sqlite3_reset(st);
	return r;
}

/*
 * A MAC is in at most one live allocation, as a GUID is: two VFs with one
 * MAC on a switch take each other's traffic. -EBUSY naming the holder.
 */
static int mac_free(struct vfp_ledger *l, const struct vfp_claim *req)
{
	static const char sql[] = "SELECT id FROM allocations WHERE state != 'released' AND "
				  "mac = lower(?)";
	sqlite3_stmt *st;
	int r, rc;

	if (!req->settings || !req->settings->mac[0])
		return 0;
	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, req->settings->mac, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		r = vfp_ledger_fail(l, -EBUSY, "mac: %s is held by allocation %s",
				    req->settings->mac, col_text(st, 0));
	else if (rc != SQLITE_DONE)
		r = vfp_ledger_errno(l, rc, "MAC in use");
	sqlite3_reset(st);
	return r;
}

static void fill_pf_free(sqlite3_stmt *st, void *elem)
{
	struct vfp_pf_free *p = elem;

	snprintf(p->pf, sizeof(p->pf), "%s", col_text(st, 0));
	p->numa_node = sqlite3_column_int(st, 1);
	p->n_free = (unsigned)sqlite3_column_int(st, 2);
}

/* Free VFs of @pool per PF: a handful of rows, kept by the pf_free triggers. */
static int load_free_per_pf(struct vfp_ledger *l, const char *pool, struct vfp_pf_free **ret,
			    size_t *ret_n)
{
	static const char sql[] = "SELECT pf, numa_node, n_free FROM pf_free "
				  "WHERE pool = ? AND n_free > 0 ORDER BY pf";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, pool, -1, SQLITE_STATIC);
	return vfp_ledger_collect(l, st, sizeof(**ret), fill_pf_free, (void **)ret, ret_n,
				  "free VFs");
}

struct pick {
	char pci[VFP_PCI_ADDR_LEN + 1];
	char link_type[16];
};

/* The @k lowest free VFs of @pool on @pf, into @out. */
static int pick_on_pf(struct vfp_ledger *l, const char *pool, const char *pf, unsigned k,
		      struct pick *out)
{
	static const char sql[] = "SELECT pci, link_type FROM vfs WHERE pool = ? AND state = 'free' "
				  "AND pf = ? ORDER BY vf_index LIMIT ?";
	sqlite3_stmt *st;
	unsigned got = 0;
	int r, rc;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, pool, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, pf, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, (int)k);
	while (got < k && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		snprintf(out[got].pci, sizeof(out[got].pci), "%s", col_text(st, 0));
		snprintf(out[got].link_type, sizeof(out[got].link_type), "%s", col_text(st, 1));
		got++;
	}
	sqlite3_reset(st);
	return got == k ? 0 : vfp_ledger_fail(l, -EIO, "PF %s: free VFs changed under us", pf);
}

/*
 * The one VF @req->pci names, when it is a free VF of @req->pool: a VF held,
 * quarantined or in another pool is -EBUSY naming what holds it (another
 * scheduler chose it meanwhile: nothing is taken twice).
 */
static int choose_named(struct vfp_ledger *l, const struct vfp_claim *req, struct pick *out)
{
	static const char sql[] = "SELECT v.pool, v.state, v.link_type, (SELECT allocation_id FROM "
				  "allocation_vfs a WHERE a.pci = v.pci AND a.live = 1) FROM vfs v "
				  "WHERE v.pci = ?";
	char pci[VFP_PCI_ADDR_LEN + 1];
	sqlite3_stmt *st;
	int r, rc;

	if (vfp_pci_addr_normalize(req->pci, pci) < 0)
		return vfp_ledger_fail(l, -EINVAL, "pci: \"%.40s\" is not a PCI address", req->pci);
	if (req->count != 1)
		return vfp_ledger_fail(l, -EINVAL, "count: must be 1 with pci");
	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, pci, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		r = vfp_ledger_fail(l, -ENOENT, "pci: %s is no VF of this host", pci);
	else if (rc != SQLITE_ROW)
		r = vfp_ledger_errno(l, rc, "VF by address");
	else if (!col_text(st, 0) || strcmp(col_text(st, 0), req->pool) != 0)
		r = vfp_ledger_fail(l, -EBUSY, "pci: VF %s is not in pool \"%s\"", pci, req->pool);
	else if (strcmp(col_text(st, 1), "free") != 0)
		r = vfp_ledger_fail(l, -EBUSY, "pci: VF %s is not free: %s%s%s", pci, col_text(st, 1),
				    col_text(st, 3) ? " by allocation " : "",
				    col_text(st, 3) ? col_text(st, 3) : "");
	else {
		snprintf(out->pci, sizeof(out->pci), "%s", pci);
		snprintf(out->link_type, sizeof(out->link_type), "%s", col_text(st, 2));
	}
	sqlite3_reset(st);
	return r;
}

/*
 * Each PF's distance to the device @req->near names: -EINVAL for no PCI
 * address, -ENOENT for no device of this host.
 */
static int measure_near(struct vfp_ledger *l, const struct vfp_claim *req,
			struct vfp_pf_free *pfs, size_t n)
{
	char near[VFP_PCI_ADDR_LEN + 1];
	enum vfp_pcie_distance d;

	if (vfp_pci_addr_normalize(req->near, near) < 0)
		return vfp_ledger_fail(l, -EINVAL, "near: \"%.40s\" is not a PCI address",
				       req->near);
	if (!req->topo)
		return vfp_ledger_fail(l, -EIO, "near: the host's PCIe tree could not be read");
	if (!vfp_pcie_topo_get_root(req->topo, near))
		return vfp_ledger_fail(l, -ENOENT, "near: no PCI device %s on this host", near);
	for (size_t i = 0; i < n; i++)
		pfs[i].distance = vfp_pcie_topo_distance(req->topo, pfs[i].pf, near, &d) < 0
					  ? -1
					  : (int)d;
	return 0;
}

/* A claim near a device that its bound cannot meet: -EBUSY naming the best there is. */
static int refuse_near(struct vfp_ledger *l, const struct vfp_claim *req,
		       const struct vfp_pf_free *pfs, size_t n, int best)
{
	unsigned at_best = 0;

	if (best < 0)
		return vfp_ledger_fail(l, -EBUSY,
				       "near: no free VF of pool \"%s\" has a known distance to %s",
				       req->pool, req->near);
	for (size_t i = 0; i < n; i++)
		at_best += pfs[i].distance == best ? pfs[i].n_free : 0;
	return vfp_ledger_fail(l, -EBUSY,
			       "max_distance: no %u free VF%s of pool \"%s\" within %s of %s; "
			       "the closest free VFs are %s (%u)",
			       req->count, req->count == 1 ? "" : "s", req->pool,
			       vfp_pcie_distance_to_string(req->max_distance ? req->max_distance
										: VFP_PCIE_SYS),
			       req->near,
			       vfp_pcie_distance_to_string((enum vfp_pcie_distance)best), at_best);
}

static int place(struct vfp_ledger *l, const struct vfp_claim *req, struct vfp_pf_free *pfs,
		 size_t n, size_t *seq)
{
	unsigned total = 0;
	int r = 0, best;

	for (size_t i = 0; i < n; i++)
		total += pfs[i].n_free;
	if (req->count > total) /* too few whatever the distance: growing the pool may help */
		return vfp_ledger_fail(l, -ENOBUFS, "pool \"%s\" has %u free VF%s, %u requested",
				       req->pool, total, total == 1 ? "" : "s", req->count);
	if (!req->near)
		return vfp_place(pfs, n, req->count, req->numa_node, req->placement, seq);
	r = measure_near(l, req, pfs, n);
	if (r >= 0)
		r = vfp_place_near(pfs, n, req->count, req->max_distance, req->numa_node,
				   req->placement, seq, &best);
	if (r == -EBUSY)
		r = refuse_near(l, req, pfs, n, best);
	return r;
}

/*
 * The VFs a claim takes, in hand-out order: placement says which PF each
 * comes from; each PF gives its lowest free VFs.
 */
static int choose(struct vfp_ledger *l, const struct vfp_claim *req, struct pick *out)
{
	struct vfp_pf_free *pfs = NULL;
	size_t n = 0, seq[MAX_CLAIM];
	int r;

	r = load_free_per_pf(l, req->pool, &pfs, &n);
	if (r < 0)
		return r;
	r = place(l, req, pfs, n, seq);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		struct pick got[MAX_CLAIM];
		unsigned k = 0, used = 0;

		for (unsigned j = 0; j < req->count; j++)
			k += seq[j] == i;
		if (k == 0)
			continue;
		r = pick_on_pf(l, req->pool, pfs[i].pf, k, got);
		for (unsigned j = 0; r >= 0 && j < req->count; j++)
			if (seq[j] == i)
				out[j] = got[used++];
	}
	free(pfs);
	return r;
}

/*
 * The GUID asked for: the one the VF gets and the ledger shows, held like
 * a pool GUID (inside the pool's range it takes its offset, so the pool
 * never hands it out too). -EBUSY when a live allocation holds it.
 */
static int wanted_guid(struct vfp_ledger *l, const struct vfp_config *config, const char *want,
		       unsigned long long *ret_offset, bool *ret_in_range, char guid[static 24])
{
	static const char sql[] = "SELECT allocation_id FROM allocation_vfs WHERE live = 1 AND "
				  "guid = ?";
	unsigned long long g, first, count;
	sqlite3_stmt *st;
	int r, rc;

	if (vfp_guid_parse(want, &g) < 0)
		return vfp_ledger_fail(l, -EINVAL, "guid: \"%.40s\" is not a GUID", want);
	vfp_guid_format(g, guid);
	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, guid, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		r = vfp_ledger_fail(l, -EBUSY, "guid: %s is held by allocation %s", guid,
				    col_text(st, 0));
		sqlite3_reset(st);
		return r;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return vfp_ledger_errno(l, rc, "GUID in use");
	*ret_in_range = vfp_config_get_guid_range(config, &first, &count) && g >= first &&
			g - first < count;
	*ret_offset = *ret_in_range ? g - first : 0;
	return 1;
}

static int take_vf(struct vfp_ledger *l, const struct vfp_config *config, const char *id,
		   const char *owner_key, const struct pick *c, int position, const char *want_guid,
		   const char *state)
{
	static const char ins[] = "INSERT INTO allocation_vfs(allocation_id, pci, position, guid, "
				  "guid_offset) VALUES (?, ?, ?, ?, ?)";
	static const char upd[] = "UPDATE vfs SET state = ?3, reason = NULL, updated = ?1 "
				  "WHERE pci = ?2 AND state = 'free'";
	unsigned long long off = 0;
	bool has_off = true;
	char guid[24];
	sqlite3_stmt *st;
	int r, has_guid = 0;

	if (strcmp(c->link_type, "infiniband") == 0)
		has_guid = want_guid ? wanted_guid(l, config, want_guid, &off, &has_off, guid)
				     : vfp_ledger_next_guid(l, config, owner_key, &off, guid);
	if (has_guid < 0)
		return has_guid;
	r = vfp_ledger_stmt(l, ins, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c->pci, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, position);
	if (has_guid)
		sqlite3_bind_text(st, 4, guid, -1, SQLITE_STATIC);
	if (has_guid && has_off)
		sqlite3_bind_int64(st, 5, (sqlite3_int64)off);
	r = vfp_ledger_step_done(l, st, "claim VF");
	if (r < 0)
		return r;
	r = vfp_ledger_stmt(l, upd, &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, l->now());
	sqlite3_bind_text(st, 2, c->pci, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, state, -1, SQLITE_STATIC);
	r = vfp_ledger_step_done(l, st, "reserve VF");
	if (r == 0)
		return vfp_ledger_fail(l, -EBUSY, "VF %s is no longer free", c->pci);
	return r < 0 ? r : 0;
}

static int insert_allocation(struct vfp_ledger *l, const struct vfp_claim *req, const char *id,
			     const char *owner_key, const char *request)
{
	static const char sql[] =
		"INSERT INTO allocations(id, pool, owner, owner_key, settings, idempotency_key, "
		"state, lease_expires, created, updated, request, mac) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?12, ?7, ?8, ?9, ?10, lower(?11))";
	json_t *o = vfp_owner_to_json(req->owner), *s = NULL;
	char *owner = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL, *settings = NULL;
	time_t now = l->now();
	sqlite3_stmt *st;
	int r = -ENOMEM;

	if (req->settings)
		s = vfp_settings_to_json(req->settings);
	settings = s ? json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
	if (owner && settings)
		r = vfp_ledger_stmt(l, sql, &st);
	if (r >= 0) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, req->pool, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, owner, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, owner_key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, settings, -1, SQLITE_STATIC);
		if (req->idempotency_key)
			sqlite3_bind_text(st, 6, req->idempotency_key, -1, SQLITE_STATIC);
		if (req->lease_seconds)
			sqlite3_bind_int64(st, 7, now + req->lease_seconds);
		sqlite3_bind_int64(st, 8, now);
		sqlite3_bind_int64(st, 9, now);
		if (req->idempotency_key)
			sqlite3_bind_text(st, 10, request, -1, SQLITE_STATIC);
		if (req->settings && req->settings->mac[0])
			sqlite3_bind_text(st, 11, req->settings->mac, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 12, req->attach ? "attached" : "reserved", -1, SQLITE_STATIC);
		r = vfp_ledger_step_done(l, st, "new allocation");
	}
	json_decref(o);
	json_decref(s);
	free(owner);
	free(settings);
	return r;
}

static int claim_in_tx(struct vfp_ledger *l, const struct vfp_config *config,
		       const struct vfp_claim *req, const char *owner_key, char id[static 37])
{
	_cleanup_free_ char *request = req->idempotency_key ? fingerprint(req) : NULL;
	struct pick vfs[MAX_CLAIM];
	int r;

	if (req->idempotency_key && !request)
		return -ENOMEM;
	if (req->idempotency_key) {
		r = replay(l, req, owner_key, request, id);
		if (r != 0)
			return r;
	}
	r = mac_free(l, req);
	if (r >= 0)
		r = req->pci ? choose_named(l, req, vfs) : choose(l, req, vfs);
	if (r >= 0)
		r = new_allocation_id(id);
	if (r >= 0)
		r = insert_allocation(l, req, id, owner_key, request);
	for (unsigned i = 0; r >= 0 && i < req->count; i++)
		r = take_vf(l, config, id, owner_key, &vfs[i], (int)i,
			    i == 0 && req->settings && req->settings->guid[0] ? req->settings->guid
									       : NULL,
			    req->attach ? "attached" : "reserved");
	if (r >= 0 && req->attach)
		r = vfp_ledger_begin_attached(l, id);
	return r < 0 ? r : 0;
}

/**
 * vfp_ledger_forget_key() - the released allocation claimed with @key lets
 * go of it, so that a new claim may use it
 *
 * A CNI attachment's key (container, network, interface) comes back when a
 * runtime adds the same container again after a DEL. A live allocation
 * keeps its key (-EBUSY); no allocation with @key is not an error. Commits
 * lazily: the key of a released allocation outlives nothing.
 */
VFP_EXPORT int vfp_ledger_forget_key(struct vfp_ledger *l, const char *key)
{
	static const char sql[] = "UPDATE allocations SET idempotency_key = NULL "
				  "WHERE idempotency_key = ? AND state = 'released'";
	sqlite3_stmt *st;
	int r = vfp_ledger_begin_lazy_tx(l);

	if (r >= 0)
		r = vfp_ledger_stmt(l, sql, &st);
	if (r >= 0) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
		r = vfp_ledger_step_done(l, st, "forgetting a key");
	}
	if (r == 0) { /* nothing released had it: a live one, or none */
		struct vfp_allocation *a = NULL;

		if (vfp_ledger_get_allocation_by_key(l, key, &a) >= 0)
			r = vfp_ledger_fail(l, -EBUSY, "key %s: allocation %s is live", key,
					    vfp_allocation_get_id(a));
		vfp_allocation_unref(a);
	}
	if (r < 0) {
		vfp_ledger_rollback_tx(l);
		return r;
	}
	r = vfp_ledger_commit_tx(l);
	return r < 0 ? r : 0;
}

/**
 * vfp_ledger_claim() - reserve @req->count free VFs of @req->pool, all or none
 * @ret_allocation: the allocation (vfp_allocation_unref() it)
 *
 * Returns 0 for a new allocation, 1 when the idempotency key replayed an
 * earlier one. -ENOENT: no such pool; -EINVAL: a bad request (message
 * names the field); -ENOBUFS: the pool has too few free VFs (growing it may
 * help); -EBUSY: not enough free GUIDs, the MAC held by a live allocation,
 * or a VF taken meanwhile; -EEXIST: the idempotency key belongs to another
 * request, or to an allocation released since. The message for a person
 * is vfp_ledger_get_error().
 */
VFP_EXPORT int vfp_ledger_claim(struct vfp_ledger *l, const struct vfp_config *config,
				const struct vfp_claim *req, struct vfp_allocation **ret_allocation)
{
	struct vfp_allocation *alloc = NULL;
	int result, r;

	r = vfp_ledger_claim_batch(l, config, req, 1, &result, &alloc, NULL);
	if (r < 0 || result < 0)
		return r < 0 ? r : result;
	if (!alloc)
		return -ENOMEM;
	*ret_allocation = alloc;
	return result;
}

static const char savepoint[] = "SAVEPOINT claim", rollback[] = "ROLLBACK TO claim",
		  release[] = "RELEASE claim";

/* @req checked and claimed in the open transaction, inside its caller's savepoint. */
static int claim_checked(struct vfp_ledger *l, const struct vfp_config *config,
			 const struct vfp_claim *req, char id[static 37])
{
	char *owner_key = NULL, *err = NULL;
	int r;

	if (!req->pool || vfp_config_find_pool(config, req->pool) < 0)
		return vfp_ledger_fail(l, -ENOENT, "pool: no pool named \"%s\"",
				       req->pool ? req->pool : "(none)");
	if (req->count < 1 || req->count > MAX_CLAIM)
		return vfp_ledger_fail(l, -EINVAL, "count: must be in [1, %d]", MAX_CLAIM);
	if (req->owner && !vfp_config_pool_takes_owner(config, req->pool, req->owner->kind))
		return vfp_ledger_fail(l, -EPERM, "pool: \"%s\" is dedicated to %s (its owners)",
				       req->pool, req->owner->kind == VFP_OWNER_VM ? "containers" : "VMs");
	r = vfp_owner_key(req->owner, &owner_key, &err);
	if (r < 0) {
		vfp_ledger_fail(l, r, "%s", err ? err : "owner: invalid");
		free(err);
		return r;
	}
	r = claim_in_tx(l, config, req, owner_key, id);
	free(owner_key);
	return r;
}

/* Back to the savepoint, the failed claim's own message kept. */
static void roll_back(struct vfp_ledger *l)
{
	char saved[VFP_LEDGER_ERROR_MAX];

	memcpy(saved, vfp_ledger_error(), sizeof(saved));
	vfp_ledger_exec_cached(l, rollback);
	memcpy(vfp_ledger_error(), saved, sizeof(saved));
}

/*
 * @reqs[0..@n) in one savepoint, all or none: the first that fails undoes
 * the others, which fail -ECANCELED (a claim alone is its own group; its
 * replay of an earlier claim by key is undone too, as it wrote nothing to keep).
 */
static void claim_group(struct vfp_ledger *l, const struct vfp_config *config,
			const struct vfp_claim *reqs, size_t n, int *results, char (*ids)[37],
			char **errors)
{
	size_t bad = n;
	int r = vfp_ledger_exec_cached(l, savepoint);

	for (size_t i = 0; i < n; i++) {
		results[i] = r < 0 ? r : bad < n ? -ECANCELED : claim_checked(l, config, &reqs[i],
									       ids[i]);
		if (results[i] < 0 && bad == n)
			bad = i;
		if (errors)
			errors[i] = results[i] == -ECANCELED && i != bad
					    ? strdup("not claimed: a claim made with it failed")
				    : results[i] < 0 ? strdup(vfp_ledger_error()) : NULL;
	}
	if (bad < n || (n == 1 && results[0] == 1))
		roll_back(l);
	vfp_ledger_exec_cached(l, release);
	for (size_t i = 0; i < n; i++) {
		if (bad < n && results[i] >= 0) {
			results[i] = -ECANCELED;
			if (errors)
				errors[i] = strdup("not claimed: a claim made with it failed");
		}
		if (results[i] == 0)
			vfp_info(l->ctx, "allocation %s: claimed %u VF%s of pool %s", ids[i],
				 reqs[i].count, reqs[i].count == 1 ? "" : "s", reqs[i].pool);
	}
}

/* Whether any of @reqs is for an owner whose claims must wait for the disk. */
static bool outlives_power_cut(const struct vfp_claim *reqs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (vfp_owner_outlives_power_cut(reqs[i].owner))
			return true;
	return false;
}

/* The size of the group that begins at claim @i: it runs while @together says so. */
static size_t group_size(const bool *together, size_t i, size_t n)
{
	size_t k = 1;

	while (together && i + k < n && together[i + k - 1])
		k++;
	return k;
}

/**
 * vfp_ledger_claim_groups() - @n claims in one durable commit (group commit)
 * @together: claim i and claim i + 1 are all or none (one savepoint: a
 *	deployment's claims, one per NIC); NULL: each claim on its own
 * @ret_results: per claim, what vfp_ledger_claim() would return; -ECANCELED
 *	for one undone because another of its group failed
 * @ret_allocations: per claim, the allocation or NULL
 * @ret_errors: per claim, NULL or the message of its failure (free() them); may be NULL
 *
 * Each group is all or none on its own (a savepoint each); one commit and
 * one fsync make them all durable (no fsync when every owner is a
 * container: nothing of theirs outlives a power cut). Returns < 0 only
 * when the commit itself fails, and then no claim took effect.
 */
VFP_EXPORT int vfp_ledger_claim_groups(struct vfp_ledger *l, const struct vfp_config *config,
				       const struct vfp_claim *reqs, size_t n, const bool *together,
				       int *ret_results, struct vfp_allocation **ret_allocations,
				       char **ret_errors)
{
	char (*ids)[37] = calloc(n + 1, sizeof(*ids));
	int r;

	if (!ids)
		return -ENOMEM;
	r = outlives_power_cut(reqs, n) ? vfp_ledger_begin_tx(l) : vfp_ledger_begin_lazy_tx(l);
	for (size_t i = 0, k; r >= 0 && i < n; i += k) {
		k = group_size(together, i, n);
		claim_group(l, config, &reqs[i], k, &ret_results[i], &ids[i],
			    ret_errors ? &ret_errors[i] : NULL);
	}
	if (r >= 0)
		r = vfp_ledger_commit_tx(l);
	for (size_t i = 0; i < n; i++) {
		if (r < 0)
			ret_results[i] = r;
		ret_allocations[i] = NULL;
		if (r >= 0 && ret_results[i] >= 0 &&
		    vfp_ledger_get_allocation(l, ids[i], &ret_allocations[i]) < 0)
			ret_results[i] = -ENOMEM;
	}
	free(ids);
	return r < 0 ? r : 0;
}

/** vfp_ledger_claim_batch() - vfp_ledger_claim_groups() with each claim on its own */
VFP_EXPORT int vfp_ledger_claim_batch(struct vfp_ledger *l, const struct vfp_config *config,
				      const struct vfp_claim *reqs, size_t n, int *ret_results,
				      struct vfp_allocation **ret_allocations, char **ret_errors)
{
	return vfp_ledger_claim_groups(l, config, reqs, n, NULL, ret_results, ret_allocations,
				       ret_errors);
}
