/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the REST layer reads of the agent's state for its answers (GET
 * /v1/host, its checks, /metrics, the event stream, the token of a TCP
 * listener), through functions: api/ never reaches into struct agent.
 */
#pragma once

#include <stdbool.h>

#include "agent/agent.h"

/* The agent's counters for /metrics, each read atomically. */
struct agent_counters {
	unsigned long resets_ok, resets_failed;
	unsigned long repairs_ok, repairs_failed;
	unsigned long lease_errors;
};

struct vfp_ctx *agent_ctx(const struct agent *a);
struct events *agent_events(const struct agent *a);
struct libvirt_conn *agent_libvirt(const struct agent *a);
const struct agent_ledger *agent_ledger(const struct agent *a);
const char *agent_token(const struct agent *a);
const char *agent_socket_path(const struct agent *a);
bool agent_simulated(const struct agent *a);
double agent_scan_seconds(const struct agent *a);
void agent_get_counters(const struct agent *a, struct agent_counters *ret);
