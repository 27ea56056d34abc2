/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The security groups of a deployment file's NICs (?security_groups=MAC=0+101,…:
 * OpenNebula's SECURITY_GROUPS of each NIC, its ids joined with "+"), kept in
 * each NIC's claim: no rule of theirs reaches a VF, and `vfctl doctor` names them.
 */
#pragma once

#include <stddef.h>

#include "agent/vm/domain-xml.h"

int deployment_nic_security_groups(const char *list, const struct domxml_nic *nic, char *out,
				   size_t size, char *err, size_t err_size);
