/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One suite per module; check-all runs them all. */
#pragma once

#include <check.h>

Suite *suite_sysfs(void);
Suite *suite_pci_addr(void);
Suite *suite_uuid(void);
Suite *suite_inventory(void);
Suite *suite_garbage(void);
Suite *suite_config(void);
Suite *suite_placement(void);
Suite *suite_pcie_topo(void);
Suite *suite_ledger(void);
Suite *suite_ledger_sync(void);
Suite *suite_ledger_guid(void);
Suite *suite_numvfs(void);
Suite *suite_crash(void);
Suite *suite_nlmsg(void);
Suite *suite_nlsock(void);
Suite *suite_vfinfo(void);
Suite *suite_bind(void);
Suite *suite_domxml(void);
Suite *suite_standby(void);
