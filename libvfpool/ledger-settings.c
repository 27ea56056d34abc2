/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An allocation's settings changed after its claim: a network update
 * (OpenNebula's update_nic, a new VLAN, rate, spoofchk or trust) reaches a
 * VM's VFs while it runs. Only the knobs a VF's PF can change under a
 * running guest change here; MAC, GUID and IP stay what the claim said.
 */
#include "config.h"

#include <errno.h>

#include "ledger-args.h"

/* @delta's knobs that are set (not VFP_UNSET) over @s's; MAC, GUID and IP left alone. */
VFP_EXPORT void vfp_settings_merge(struct vfp_settings *s, const struct vfp_settings *delta)
{
	int *ints[][2] = {
		{ &s->vlan, (int *)&delta->vlan },	   { &s->qos, (int *)&delta->qos },
		{ &s->vlan_proto, (int *)&delta->vlan_proto }, { &s->spoofchk, (int *)&delta->spoofchk },
		{ &s->trust, (int *)&delta->trust },	   { &s->link_state, (int *)&delta->link_state },
	};

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (*ints[i][1] != VFP_UNSET)
			*ints[i][0] = *ints[i][1];
	if (delta->vlan == 0) /* no VLAN any more: nothing of one stays */
		s->qos = s->vlan_proto = VFP_UNSET;
	if (delta->min_tx_rate != VFP_UNSET)
		s->min_tx_rate = delta->min_tx_rate;
	if (delta->max_tx_rate != VFP_UNSET)
		s->max_tx_rate = delta->max_tx_rate;
}

/* Why allocation @id took no new settings: absent, ended, or busy. */
static int why_not(struct vfp_ledger *l, const char *id)
{
	static const char sql[] = "SELECT a.state, i.op FROM allocations a "
				  "LEFT JOIN intents i ON i.allocation_id = a.id WHERE a.id = ?";
	sqlite3_stmt *st;
	int r = vfp_ledger_bind(l, sql, &st, LEDGER_ARGS(ARG_TEXT(id)));

	if (r < 0)
		return r;
	r = sqlite3_step(st);
	if (r == SQLITE_DONE)
		r = vfp_ledger_fail(l, -ENOENT, "no allocation %s", id);
	else if (r == SQLITE_ROW && sqlite3_column_type(st, 1) != SQLITE_NULL)
		r = vfp_ledger_fail(l, -EBUSY, "allocation %s is busy: %s in progress", id,
				    (const char *)sqlite3_column_text(st, 1));
	else if (r == SQLITE_ROW)
		r = vfp_ledger_fail(l, -EBUSY, "allocation %s is %s: its settings cannot change",
				    id, (const char *)sqlite3_column_text(st, 0));
	else
		r = vfp_ledger_fail(l, -EIO, "allocation %s: %s", id, sqlite3_errmsg(l->db));
	sqlite3_reset(st);
	return r;
}

/**
 * vfp_ledger_set_settings() - allocation @id's settings are now @s
 *
 * Only while it is reserved or attached and no attach, detach or release of
 * it is under way (-EBUSY, naming which); -ENOENT when there is none.
 */
VFP_EXPORT int vfp_ledger_set_settings(struct vfp_ledger *l, const char *id,
				       const struct vfp_settings *s)
{
	static const char sql[] =
		"UPDATE allocations SET settings = ?, updated = ? WHERE id = ? AND "
		"state IN ('reserved', 'attached') AND "
		"NOT EXISTS (SELECT 1 FROM intents WHERE allocation_id = allocations.id)";
	json_t *o = vfp_settings_to_json(s);
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	int r = text ? vfp_ledger_run(l, sql, "allocation settings",
				      LEDGER_ARGS(ARG_TEXT(text), ARG_INT(l->now()), ARG_TEXT(id)))
		     : -ENOMEM;

	json_decref(o);
	free(text);
	if (r == 0)
		r = why_not(l, id);
	return r < 0 ? r : 0;
}
