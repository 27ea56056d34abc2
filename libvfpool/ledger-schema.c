/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ledger's schema and its migrations. PRAGMA user_version holds the
 * schema version; each migration runs in its own transaction, so a crash
 * leaves the file at the old version or the new one, never between.
 */
#include "config.h"

#include "ledger-private.h"

static const char *const migrations[] = {
	/* 1: VFs, allocations, the VFs each holds, intents, and the audit log */
	"CREATE TABLE vfs ("
	"  pci TEXT PRIMARY KEY CHECK (length(pci) = 12),"
	"  pf TEXT NOT NULL,"
	"  vf_index INTEGER NOT NULL,"
	"  link_type TEXT NOT NULL,"
	"  numa_node INTEGER,"
	"  pool TEXT,"
	"  state TEXT NOT NULL CHECK (state IN ('free','reserved','attached','releasing',"
	"                                       'quarantined','unavailable')),"
	"  reason TEXT,"
	"  original TEXT,"
	"  updated INTEGER NOT NULL"
	") WITHOUT ROWID;"
	"CREATE TABLE allocations ("
	"  id TEXT PRIMARY KEY,"
	"  pool TEXT NOT NULL,"
	"  owner TEXT NOT NULL,"
	"  owner_key TEXT NOT NULL,"
	"  settings TEXT NOT NULL DEFAULT '{}',"
	"  idempotency_key TEXT UNIQUE,"
	"  state TEXT NOT NULL CHECK (state IN ('reserved','attached','releasing','released')),"
	"  flag TEXT,"
	"  lease_expires INTEGER,"
	"  created INTEGER NOT NULL,"
	"  updated INTEGER NOT NULL"
	");"
	"CREATE INDEX allocations_by_owner ON allocations(owner_key) WHERE state != 'released';"
	"CREATE TABLE allocation_vfs ("
	"  allocation_id TEXT NOT NULL REFERENCES allocations(id),"
	"  pci TEXT NOT NULL REFERENCES vfs(pci),"
	"  position INTEGER NOT NULL,"
	"  guid TEXT,"
	"  guid_offset INTEGER,"
	"  live INTEGER NOT NULL DEFAULT 1 CHECK (live IN (0, 1)),"
	"  PRIMARY KEY (allocation_id, pci)"
	");"
	/* the rule of the house: a VF is in at most one live allocation */
	"CREATE UNIQUE INDEX one_live_allocation_per_vf ON allocation_vfs(pci) WHERE live = 1;"
	"CREATE UNIQUE INDEX one_live_holder_per_guid ON allocation_vfs(guid)"
	"  WHERE live = 1 AND guid IS NOT NULL;"
	"CREATE TABLE intents ("
	"  allocation_id TEXT PRIMARY KEY REFERENCES allocations(id),"
	"  op TEXT NOT NULL CHECK (op IN ('attach','detach','release')),"
	"  started INTEGER NOT NULL"
	");"
	"CREATE TABLE audit ("
	"  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  ts INTEGER NOT NULL,"
	"  pci TEXT NOT NULL,"
	"  from_state TEXT,"
	"  to_state TEXT NOT NULL,"
	"  allocation_id TEXT,"
	"  reason TEXT"
	");"
	"CREATE INDEX audit_by_pci ON audit(pci, seq);"
	/* the audit log is written by the same transaction as the change it records */
	"CREATE TRIGGER vfs_audit_insert AFTER INSERT ON vfs BEGIN"
	"  INSERT INTO audit(ts, pci, from_state, to_state, reason)"
	"  VALUES (NEW.updated, NEW.pci, NULL, NEW.state, NEW.reason);"
	"END;"
	"CREATE TRIGGER vfs_audit_update AFTER UPDATE OF state ON vfs"
	"  WHEN OLD.state != NEW.state BEGIN"
	"  INSERT INTO audit(ts, pci, from_state, to_state, allocation_id, reason)"
	"  VALUES (NEW.updated, NEW.pci, OLD.state, NEW.state,"
	"          (SELECT allocation_id FROM allocation_vfs WHERE pci = NEW.pci AND live = 1),"
	"          NEW.reason);"
	"END;",
	/* 2: claims find a pool's free VFs per PF without scanning every VF */
	"CREATE INDEX vfs_free ON vfs(pool, state, pf, vf_index);",
	/*
	 * 3: free VFs per pool and PF, kept by triggers in the transaction that
	 * changes a VF, so a claim reads a few rows instead of counting them all
	 */
	"CREATE TABLE pf_free ("
	"  pool TEXT NOT NULL,"
	"  pf TEXT NOT NULL,"
	"  numa_node INTEGER NOT NULL,"
	"  n_free INTEGER NOT NULL CHECK (n_free >= 0),"
	"  PRIMARY KEY (pool, pf)"
	") WITHOUT ROWID;"
	"INSERT INTO pf_free SELECT pool, pf, min(coalesce(numa_node, -1)), count(*) FROM vfs"
	"  WHERE state = 'free' AND pool IS NOT NULL GROUP BY pool, pf;"
	"CREATE TRIGGER pf_free_insert AFTER INSERT ON vfs"
	"  WHEN NEW.state = 'free' AND NEW.pool IS NOT NULL BEGIN"
	"  INSERT INTO pf_free VALUES (NEW.pool, NEW.pf, coalesce(NEW.numa_node, -1), 1)"
	"  ON CONFLICT (pool, pf) DO UPDATE SET n_free = n_free + 1;"
	"END;"
	"CREATE TRIGGER pf_free_leave AFTER UPDATE OF state, pool, pf ON vfs"
	"  WHEN OLD.state = 'free' AND OLD.pool IS NOT NULL BEGIN"
	"  UPDATE pf_free SET n_free = n_free - 1 WHERE pool = OLD.pool AND pf = OLD.pf;"
	"END;"
	"CREATE TRIGGER pf_free_enter AFTER UPDATE OF state, pool, pf ON vfs"
	"  WHEN NEW.state = 'free' AND NEW.pool IS NOT NULL BEGIN"
	"  INSERT INTO pf_free VALUES (NEW.pool, NEW.pf, coalesce(NEW.numa_node, -1), 1)"
	"  ON CONFLICT (pool, pf) DO UPDATE SET n_free = n_free + 1;"
	"END;",
	/* 4: pruning finds released allocations by age without reading live ones */
	"CREATE INDEX allocations_released ON allocations(updated) WHERE state = 'released';",
	/* 5: one key per namespace owner, however the request spelled it */
	"UPDATE allocations SET owner_key = 'netns:' || substr(owner_key, 18)"
	"  WHERE owner_key LIKE 'netns:/run/netns/%';"
	"UPDATE allocations SET owner_key = 'netns:' || substr(owner_key, 22)"
	"  WHERE owner_key LIKE 'netns:/var/run/netns/%';",
	/*
	 * 6: what a claim asked for, whole, so that a key reused with other
	 * content is told apart from a retry; its MAC (lower-case) and live
	 * allocations by MAC, so a claim finds its MAC's holder at once. Not
	 * a unique index: a ledger from before may hold two live allocations
	 * with one MAC and must still open; claims check it (ledger-claim.c).
	 * Not a partial index either (WHERE state != 'released'): with one, a
	 * claim refused on a full disk left every later write failing with
	 * SQLITE_FULL after space came back (tests/faults.sh); the claim's
	 * query filters on state itself.
	 */
	"ALTER TABLE allocations ADD COLUMN request TEXT;"
	"ALTER TABLE allocations ADD COLUMN mac TEXT;"
	"UPDATE allocations SET mac = lower(json_extract(settings, '$.mac'));"
	"CREATE INDEX allocations_by_mac ON allocations(mac);",
	/* 7: VF counts kept across reboots (vfctl numvfs --persist), the agent's state */
	"CREATE TABLE numvfs_persisted ("
	"  pf TEXT PRIMARY KEY CHECK (length(pf) = 12),"
	"  numvfs INTEGER NOT NULL CHECK (numvfs BETWEEN 0 AND 65535),"
	"  updated INTEGER NOT NULL"
	") WITHOUT ROWID;",
	/* 8: a reservation held while a file exists (a suspended VM's checkpoint) */
	"ALTER TABLE allocations ADD COLUMN hold_path TEXT;",
	/* 9: VF hot-swaps under way, one step at a time (ledger-swap.c) */
	"CREATE TABLE swaps ("
	"  allocation_id TEXT PRIMARY KEY REFERENCES allocations(id) ON DELETE CASCADE,"
	"  old_pci TEXT NOT NULL,"
	"  new_pci TEXT,"
	"  temp_key TEXT NOT NULL,"
	"  step TEXT NOT NULL CHECK (step IN ('claiming','claimed','unplugging','plugging',"
	"                                     'exchanged')),"
	"  started INTEGER NOT NULL"
	");",
	/*
	 * 10: who released each GUID of the range last, and when (ledger-guid.c):
	 * a GUID goes back to its VM first and to others last, after a quarantine;
	 * outlives the pruning of released allocations. Filled from those kept.
	 */
	"CREATE TABLE guid_releases ("
	"  guid TEXT PRIMARY KEY,"
	"  guid_offset INTEGER NOT NULL,"
	"  owner_key TEXT NOT NULL,"
	"  released INTEGER NOT NULL"
	") WITHOUT ROWID;"
	"CREATE INDEX guid_releases_by_owner ON guid_releases(owner_key);"
	"INSERT INTO guid_releases(guid, guid_offset, owner_key, released)"
	"  SELECT v.guid, v.guid_offset, a.owner_key, max(a.updated) FROM allocation_vfs v"
	"  JOIN allocations a ON a.id = v.allocation_id"
	"  WHERE v.live = 0 AND v.guid IS NOT NULL AND v.guid_offset IS NOT NULL"
	"  AND NOT EXISTS (SELECT 1 FROM allocation_vfs w WHERE w.live = 1 AND w.guid = v.guid)"
	"  GROUP BY v.guid;",
	/* 11: whether a swap put the guest's MAC in its standby's PFs' filters itself */
	"ALTER TABLE swaps ADD COLUMN steered INTEGER NOT NULL DEFAULT 0;",
};

int vfp_ledger_schema_version(void)
{
	return (int)ELEMENTSOF(migrations);
}

/* Brings the file to the newest schema; a file from a newer vfagent is refused. */
int vfp_ledger_migrate(struct vfp_ledger *l)
{
	int version, r;

	r = vfp_ledger_query_int(l, "PRAGMA user_version", &version);
	if (r < 0)
		return r;
	if (version > vfp_ledger_schema_version())
		return vfp_ledger_fail(l, -EPROTO,
				       "ledger schema version %d is newer than this vfagent's (%d)",
				       version, vfp_ledger_schema_version());
	for (int v = version; v < vfp_ledger_schema_version(); v++) {
		char pragma[64];

		r = vfp_ledger_exec(l, "BEGIN IMMEDIATE");
		if (r < 0)
			return r;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
		r = vfp_ledger_exec(l, migrations[v]);
		if (r >= 0)
			r = vfp_ledger_exec(l, pragma);
		if (r >= 0)
			r = vfp_ledger_exec(l, "COMMIT");
		if (r < 0) {
			vfp_ledger_exec(l, "ROLLBACK");
			return r;
		}
		vfp_info(l->ctx, "ledger: migrated schema to version %d", v + 1);
	}
	return 0;
}
