/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "check-suites.h"
#include "libvfpool/libvfpool.h"

static const char *const good[] = { "0000:3b:00.0", "0000:00:1f.7", "ffff:ff:00.1",
				    "0001:af:01.3" };
static const char *const bad[] = {
	"",		   "0000:3B:00.0", /* upper case */
	"3b:00.0",	   /* no domain */
	"0000:3b:00.8",	   /* function > 7 */
	"0000:3b:20.0",	   /* slot > 1f */
	"0000:3b:00.0 ",   "0000:3b:00.0/", "../../../etc", "0000:3b:00:0",
	"0000-3b-00.0",	   "0000:3b:0.00", "00000:3b:00.0", "0000:3b:00.0\n",
	"0000:3g:00.0",
};

START_TEST(test_pci_addr_good)
{
	ck_assert_msg(vfp_pci_addr_is_valid(good[_i]), "%s should be valid", good[_i]);
}
END_TEST

START_TEST(test_pci_addr_bad)
{
	ck_assert_msg(!vfp_pci_addr_is_valid(bad[_i]), "\"%s\" should be refused", bad[_i]);
}
END_TEST

START_TEST(test_pci_addr_null)
{
	ck_assert(!vfp_pci_addr_is_valid(NULL));
}
END_TEST

Suite *suite_pci_addr(void)
{
	Suite *s = suite_create("pci-addr");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_pci_addr_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_loop_test(tc, test_pci_addr_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_pci_addr_null);
	suite_add_tcase(s, tc);
	return s;
}
