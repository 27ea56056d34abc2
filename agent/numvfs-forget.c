/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A persisted VF count dropped (`vfctl numvfs PF --forget`): the row goes
 * from the ledger and the running config is read again without it, so the
 * config's numvfs rules decide the PF's count from the next start (or
 * reload) on. The PF keeps the VFs it has now.
 */
#include "config.h"

#include <stdio.h>

#include "agent/ledger.h"
#include "agent/log.h"
#include "agent/numvfs.h"
#include "libvfpool/macro.h"

/**
 * agent_forget_numvfs() - PF @pf's persisted count dropped
 *
 * 1 when it had one, 0 when not; -errno with @err otherwise.
 */
int agent_forget_numvfs(struct agent *a, const char *pf, char *err, size_t err_size)
{
	struct vfp_config *c = NULL;
	char msg[AGENT_ERR_SIZE];
	int r, had = 0;

	pthread_mutex_lock(&a->config_lock);
	r = agent_load_config(a, &c);
	if (r < 0)
		snprintf(err, err_size, "forget: the config does not load (the agent's log says "
			 "why): fix it first");
	if (r >= 0 && (r = had = ledger_forget_numvfs(a, pf, msg, sizeof(msg))) < 0)
		snprintf(err, err_size, "forget: %s", msg);
	if (r >= 0 && (r = agent_add_persisted_numvfs(a, c)) < 0)
		snprintf(err, err_size, "forget: reading the persisted counts back failed");
	if (r >= 0) {
		if (had)
			log_info("numvfs: PF %s: its persisted count dropped; the config's rules "
				 "decide its VFs again", pf);
		r = agent_replace_config(a, TAKE_PTR(c));
	}
	vfp_config_unref(c);
	pthread_mutex_unlock(&a->config_lock);
	return r < 0 ? r : had;
}
