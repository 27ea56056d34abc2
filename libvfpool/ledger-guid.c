/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's range of InfiniBand GUIDs: which GUID a claim's IB VF gets.
 *
 * A GUID outlives its allocation in two places the ledger cannot see: the
 * subnet manager's partitions.conf names it until `vfctl partitions write`
 * has run again (an agent it cannot reach keeps its last members written,
 * for as long as it does not answer), and a stopped, undeployed or cold
 * migrated VM brings it back when it resumes (the OpenNebula actions claim
 * it by GUID, here or on another host). A GUID handed to another tenant
 * meanwhile puts that tenant's port in the first one's partition. So the
 * ledger keeps, for each GUID of the range that was ever released, who had
 * it last and when (guid_releases, never pruned: one row per GUID at most),
 * and a claim takes, in this order:
 *  1. a GUID its own VM released here (OpenNebula never reuses a VM's name,
 *     one-ID): a VM that comes back gets its GUIDs back;
 *  2. a GUID never used, the lowest first;
 *  3. once every GUID of the range has been used, the GUID released longest
 *     ago, a container's before a VM's (a CNI DEL is final; a stopped VM may
 *     resume), and never one released within the quarantine ("guids":
 *     {"quarantine_seconds"}, an hour by default: longer than `vfctl
 *     partitions write --follow` takes to drop a released member).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ledger-private.h"

/* Offset @off of the range as a GUID, when the row's @guid is it (the range may have moved). */
static bool at_offset(unsigned long long first, unsigned long long count, long long off,
		      const char *guid, char out[static 24])
{
	char want[24];

	if (off < 0 || (unsigned long long)off >= count)
		return false;
	vfp_guid_format(first + (unsigned long long)off, want);
	if (!guid || strcmp(guid, want) != 0)
		return false;
	memcpy(out, want, sizeof(want));
	return true;
}

/* The first row of @st that is a GUID of the range now: 1, 0 for none. */
static int first_in_range(struct vfp_ledger *l, sqlite3_stmt *st, unsigned long long first,
			  unsigned long long count, unsigned long long *ret_offset,
			  char guid[static 24])
{
	int rc, found = 0;

	while (!found && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long off = sqlite3_column_int64(st, 0);

		found = at_offset(first, count, off, col_text(st, 1), guid);
		if (found)
			*ret_offset = (unsigned long long)off;
	}
	if (!found && rc != SQLITE_DONE)
		found = vfp_ledger_errno(l, rc, "GUID history");
	sqlite3_reset(st);
	return found;
}

/*
 * 1. A GUID @owner_key's VM released here, the lowest first: its NICs claim
 * in the order they first did, and took ascending GUIDs then, so each NIC
 * gets its own back (by release time, two NICs released across a second's
 * edge swapped GUIDs, and the IPoIB addresses paired with them).
 */
static int owners_own(struct vfp_ledger *l, const char *owner_key, unsigned long long first,
		      unsigned long long count, unsigned long long *ret_offset,
		      char guid[static 24])
{
	static const char sql[] =
		"SELECT r.guid_offset, r.guid FROM guid_releases r WHERE r.owner_key = ? AND "
		"NOT EXISTS (SELECT 1 FROM allocation_vfs v WHERE v.live = 1 AND v.guid = r.guid) "
		"ORDER BY r.guid_offset";
	sqlite3_stmt *st;
	int r;

	if (!owner_key || strncmp(owner_key, "vm:", 3) != 0)
		return 0;
	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, owner_key, -1, SQLITE_STATIC);
	return first_in_range(l, st, first, count, ret_offset, guid);
}

/* 2. The lowest offset no allocation ever held: @ret_offset == @count when none. */
static int never_used(struct vfp_ledger *l, unsigned long long *ret_offset)
{
	static const char sql[] = "SELECT guid_offset FROM allocation_vfs WHERE live = 1 AND "
				  "guid_offset IS NOT NULL UNION SELECT guid_offset FROM "
				  "guid_releases ORDER BY 1";
	unsigned long long want = 0;
	sqlite3_stmt *st;
	int r, rc;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long off = sqlite3_column_int64(st, 0);

		if (off < 0)
			continue;
		if ((unsigned long long)off > want)
			break;
		if ((unsigned long long)off == want)
			want++;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return vfp_ledger_errno(l, rc, "GUID pool");
	*ret_offset = want;
	return 0;
}

/* 3. The GUID released longest ago, out of quarantine, a container's before a VM's. */
static int oldest_released(struct vfp_ledger *l, long long quarantine, unsigned long long first,
			   unsigned long long count, unsigned long long *ret_offset,
			   char guid[static 24])
{
	static const char sql[] =
		"SELECT r.guid_offset, r.guid FROM guid_releases r WHERE r.released <= ? AND "
		"NOT EXISTS (SELECT 1 FROM allocation_vfs v WHERE v.live = 1 AND v.guid = r.guid) "
		"ORDER BY r.owner_key LIKE 'vm:%', r.released, r.guid_offset";
	sqlite3_stmt *st;
	int r;

	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, l->now() - quarantine);
	return first_in_range(l, st, first, count, ret_offset, guid);
}

/* Every GUID taken: said with how many are held and how many wait out their quarantine. */
static int exhausted(struct vfp_ledger *l, long long quarantine, unsigned long long first,
		     unsigned long long count)
{
	static const char sql[] =
		"SELECT count(*) FROM guid_releases r WHERE r.released > ? AND NOT EXISTS "
		"(SELECT 1 FROM allocation_vfs v WHERE v.live = 1 AND v.guid = r.guid)";
	sqlite3_stmt *st;
	long long waiting = 0;
	char f[24];
	int r;

	vfp_guid_format(first, f);
	r = vfp_ledger_stmt(l, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, l->now() - quarantine);
	if (sqlite3_step(st) == SQLITE_ROW)
		waiting = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (waiting == 0)
		return vfp_ledger_fail(l, -EBUSY,
				       "the GUID range %s + %llu is exhausted: every GUID is held",
				       f, count);
	return vfp_ledger_fail(l, -EBUSY,
			       "the GUID range %s + %llu is exhausted: %lld GUID%s released less "
			       "than %lld s ago (guids.quarantine_seconds), which the subnet "
			       "manager may still list in a partition; the rest held",
			       f, count, waiting, waiting == 1 ? "" : "s", quarantine);
}

/**
 * vfp_ledger_next_guid() - the GUID of the range a new IB VF of @owner_key's
 * claim gets (order: see the top of this file)
 *
 * Returns 1 with the GUID and its offset, 0 when the config has no range,
 * -EBUSY when none may be handed out now (the message says why).
 */
int vfp_ledger_next_guid(struct vfp_ledger *l, const struct vfp_config *config,
			 const char *owner_key, unsigned long long *ret_offset,
			 char guid[static 24])
{
	unsigned long long first, count, off = 0;
	long long quarantine;
	int r;

	if (!vfp_config_get_guid_range(config, &first, &count))
		return 0;
	r = owners_own(l, owner_key, first, count, ret_offset, guid);
	if (r != 0)
		return r;
	r = never_used(l, &off);
	if (r < 0)
		return r;
	if (off < count) {
		*ret_offset = off;
		vfp_guid_format(first + off, guid);
		return 1;
	}
	quarantine = vfp_config_get_guid_quarantine(config);
	r = oldest_released(l, quarantine, first, count, ret_offset, guid);
	return r != 0 ? r : exhausted(l, quarantine, first, count);
}

/*
 * The in-range GUIDs of allocation @id's live VFs, noted as released now by
 * its owner: called as it ends, before its VFs stop being live.
 */
int vfp_ledger_note_guids_released(struct vfp_ledger *l, const char *id)
{
	static const char sql[] =
		"INSERT INTO guid_releases(guid, guid_offset, owner_key, released) "
		"SELECT v.guid, v.guid_offset, a.owner_key, ?1 FROM allocation_vfs v "
		"JOIN allocations a ON a.id = v.allocation_id WHERE v.allocation_id = ?2 AND "
		"v.live = 1 AND v.guid IS NOT NULL AND v.guid_offset IS NOT NULL "
		"ON CONFLICT (guid) DO UPDATE SET guid_offset = excluded.guid_offset, "
		"owner_key = excluded.owner_key, released = excluded.released";
	sqlite3_stmt *st;
	int r = vfp_ledger_stmt(l, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, l->now());
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	r = vfp_ledger_step_done(l, st, "GUIDs released");
	return r < 0 ? r : 0;
}
