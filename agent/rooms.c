/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfagentd's rooms, handed to the agent before agent_init(): the attach
 * paths that answer reconcile for their VFs (vm/ for a domain's, container/
 * for every other, last) and the rooms with a part in the agent's own steps
 * (numvfs.c, vf-reset.c; give-back.c, whose list the agent frees as it stops).
 * The agent calls down into none of them by name;
 * main.c and the harnesses that run a whole agent hand them in here.
 */
#include "config.h"

#include "agent/container/container.h"
#include "agent/give-back.h"
#include "agent/numvfs.h"
#include "agent/rooms.h"
#include "agent/vf-reset.h"
#include "agent/vm/vm.h"

int agent_add_rooms(struct agent *a)
{
	int r = agent_add_attach_path(a, &vm_attach_path);

	if (r >= 0)
		r = agent_add_attach_path(a, &container_attach_path); /* every other VF: last */
	if (r >= 0)
		r = agent_add_room(a, &numvfs_room);
	if (r >= 0)
		r = agent_add_room(a, &vf_reset_room);
	if (r >= 0)
		r = agent_add_room(a, &give_back_room);
	return r;
}
