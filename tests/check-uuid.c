/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "check-suites.h"
#include "libvfpool/libvfpool.h"

static const char *const good[] = {
	"8f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b43",
	"8F6FD3C5-8A5E-4C19-9E0E-3C2D1F0A4B43", /* libvirt takes either case */
	"00000000-0000-0000-0000-000000000000",
};
static const char *const bad[] = {
	"",
	"8f6fd3c5",					/* short: ends at its NUL */
	"8f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b4",		/* 35 characters */
	"8f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b431",	/* 37 */
	"8f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b43\n",
	"8f6fd3c58a5e-4c19-9e0e-3c2d1f0a4b43-",		/* a dash out of place */
	"8f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b4g",		/* not hex */
	"8f6fd3c5 8a5e 4c19 9e0e 3c2d1f0a4b43",
	"{8f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b4}",
	"one-42",
};

START_TEST(test_uuid_good)
{
	ck_assert_msg(vfp_uuid_is_valid(good[_i]), "%s should be valid", good[_i]);
}
END_TEST

START_TEST(test_uuid_bad)
{
	ck_assert_msg(!vfp_uuid_is_valid(bad[_i]), "\"%s\" should be refused", bad[_i]);
}
END_TEST

START_TEST(test_uuid_null)
{
	ck_assert(!vfp_uuid_is_valid(NULL));
}
END_TEST

Suite *suite_uuid(void)
{
	Suite *s = suite_create("uuid");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_uuid_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_loop_test(tc, test_uuid_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_uuid_null);
	suite_add_tcase(s, tc);
	return s;
}
