/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VFs a scheduler chose for a domain (OpenNebula's PCI = [...] devices,
 * plain <hostdev>s in its deployment file), claimed for it beforehand by
 * their addresses: prepared before the guest starts and rewritten into
 * their VF devices (agent/deployment-adopt.c).
 */
#pragma once

#include <libxml/tree.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"

#define DEPLOYMENT_ADOPT_MAX 32

struct deployment_adopt {
	struct agent *agent;
	xmlDocPtr doc;
	const char *uuid, *name;
	char *err;
	size_t err_size;
	struct vfp_allocation *prepared[DEPLOYMENT_ADOPT_MAX];
	size_t n;
	xmlNodePtr dummies[DEPLOYMENT_ADOPT_MAX];
	size_t n_dummies;
	size_t n_replaced; /* <hostdev>s rewritten, prepared now or before */
};

int deployment_adopt_vf(struct deployment_adopt *d, const char *pci, const char *id);
void deployment_adopt_undo(struct deployment_adopt *d);
void deployment_adopt_finish(struct deployment_adopt *d, bool ok);
