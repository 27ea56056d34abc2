/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs every Check suite; CK_RUN_SUITE=name runs one (Check reads it itself),
 * VFAGENT_SKIP_SUITES=a,b leaves those out (the valgrind run skips "crash").
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-suites.h"

static const struct {
	const char *name;
	Suite *(*make)(void);
} suites[] = {
	{ "sysfs", suite_sysfs },	  { "pci-addr", suite_pci_addr },
	{ "inventory", suite_inventory }, { "garbage", suite_garbage },
	{ "config", suite_config },	  { "placement", suite_placement },
	{ "ledger", suite_ledger },	  { "numvfs", suite_numvfs },
	{ "nlmsg", suite_nlmsg },	  { "nlsock", suite_nlsock },
	{ "crash", suite_crash },	  { "vfinfo", suite_vfinfo },
	{ "bind", suite_bind },		  { "domxml", suite_domxml },
	{ "ledger-sync", suite_ledger_sync }, { "uuid", suite_uuid },
	{ "ledger-guid", suite_ledger_guid },
	{ "pcie-topo", suite_pcie_topo }, { "standby", suite_standby },
};

static bool skipped(const char *name)
{
	const char *skip = getenv("VFAGENT_SKIP_SUITES");
	char list[256], item[64];

	if (!skip)
		return false;
	snprintf(list, sizeof(list), ",%s,", skip);
	snprintf(item, sizeof(item), ",%s,", name);
	return strstr(list, item) != NULL;
}

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		if (!skipped(suites[i].name))
			srunner_add_suite(sr, suites[i].make());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
