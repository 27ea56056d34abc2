/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <jansson.h>

struct agent;

int agent_partitions_json(struct agent *agent, json_t **ret);
void agent_partitions_watch(struct agent *agent);
void agent_partitions_retry(struct agent *agent);
