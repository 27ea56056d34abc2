/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Claims given back: a claim made on the way to something else (an attach,
 * a deployment file's rewrite) whose operation failed is released. When
 * the ledger cannot take that release now (a full disk), the claim is kept
 * here, in memory, and given back before the next claim and in the quiet
 * minute, as the ends of operations are (agent_record_deferred()): a
 * failed operation leaves nothing reserved once the disk has room.
 */
#pragma once

#include <stddef.h>

struct agent;
struct agent_give_backs;
struct agent_room;

int agent_give_back(struct agent *a, const char *id, char *err, size_t err_size);
void agent_give_back_deferred(struct agent *a);
size_t agent_give_backs_pending(struct agent *a);
/* its list freed when the agent stops (agent/rooms.c) */
extern const struct agent_room give_back_room;
