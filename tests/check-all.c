/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs every Check suite; CK_RUN_SUITE=name runs one (Check reads it itself). */
#include "config.h"

#include <stdlib.h>

#include "check-suites.h"

static Suite *(*const suites[])(void) = {
	suite_sysfs,
	suite_pci_addr,
	suite_inventory,
	suite_garbage,
	suite_config,
	suite_placement,
	suite_ledger,
	suite_numvfs,
	suite_crash,
};

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		srunner_add_suite(sr, suites[i]());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
