/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event bus behind GET /v1/events: inventory and allocation changes,
 * numbered, kept in a ring of the last EVENTS_KEPT so a reader that falls
 * behind (or reconnects with Last-Event-ID) gets what it missed.
 */
#pragma once

#include <jansson.h>
#include <stdint.h>

#include "libvfpool/libvfpool.h"

#define EVENTS_KEPT 256

struct events;

int events_new(struct events **ret);
void events_free(struct events *e);
void events_emit(struct events *e, const char *type, json_t *data);
void events_emit_allocation(struct events *e, const char *id, enum vfp_allocation_state state);
void events_emit_inventory(struct events *e, const char *why,
			   const struct vfp_reconcile_report *rep);
void events_emit_numvfs(struct events *e, const struct vfp_numvfs_plan *p);
void events_on_allocation(struct events *e, void (*fn)(void *userdata, const char *id),
			  void *userdata);
void events_emit_config(struct events *e, size_t pools);
void events_emit_vf(struct events *e, const char *pci, enum vfp_vf_state state, const char *reason);
uint64_t events_last_id(struct events *e);
int events_wait(struct events *e, uint64_t *cursor, int timeout_ms, char **ret_text);
void events_shutdown(struct events *e);
