/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vfagentd's rooms, handed to the agent in one place (rooms.c). */
#pragma once

#include "agent/agent.h"

int agent_add_rooms(struct agent *a);
