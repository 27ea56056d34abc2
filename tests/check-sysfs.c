/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sysfs helpers and the context's root, on files the test writes itself. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/sim/sim-host.h"
#include "check-suites.h"
#include "fixtures.h"
#include "libvfpool/sysfs.h"

static struct fixture fx;

static void setup(void)
{
	fixture_setup(&fx);
}

static void teardown(void)
{
	fixture_teardown(&fx);
}

/* The three shapes of @fmt (a plain name, "%s", a real format) and NULL, each to the byte. */
START_TEST(test_dev_path)
{
	char buf[64];

	ck_assert_int_eq(vfp_sysfs_dev(buf, sizeof(buf), "0000:3b:00.1", NULL), 28);
	ck_assert_str_eq(buf, "bus/pci/devices/0000:3b:00.1");
	ck_assert_int_eq(vfp_sysfs_dev(buf, sizeof(buf), "0000:3b:00.1", "physfn"), 35);
	ck_assert_str_eq(buf, "bus/pci/devices/0000:3b:00.1/physfn");
	ck_assert_int_eq(vfp_sysfs_dev(buf, sizeof(buf), "0000:3b:00.1", "%s", "net"), 32);
	ck_assert_str_eq(buf, "bus/pci/devices/0000:3b:00.1/net");
	ck_assert_int_eq(vfp_sysfs_dev(buf, sizeof(buf), "0000:3b:00.0", "sriov/%u/node", 7u), 41);
	ck_assert_str_eq(buf, "bus/pci/devices/0000:3b:00.0/sriov/7/node");
}
END_TEST

/* A path that fills the buffer but for its NUL fits; one byte more does not, in every shape. */
START_TEST(test_path_too_long)
{
	const char *pci = "0000:3b:00.1";
	char buf[64];

	ck_assert_int_eq(vfp_sysfs_dev(buf, 36, pci, "physfn"), 35);
	ck_assert_int_eq(vfp_sysfs_dev(buf, 35, pci, "physfn"), -ENAMETOOLONG);
	ck_assert_int_eq(vfp_sysfs_dev(buf, 36, pci, "%s", "physfn"), 35);
	ck_assert_int_eq(vfp_sysfs_dev(buf, 35, pci, "%s", "physfn"), -ENAMETOOLONG);
	ck_assert_int_eq(vfp_sysfs_dev(buf, 36, pci, "phys%s", "fn"), 35);
	ck_assert_int_eq(vfp_sysfs_dev(buf, 35, pci, "phys%s", "fn"), -ENAMETOOLONG);
	ck_assert_int_eq(vfp_sysfs_dev(buf, 29, pci, NULL), 28);
	ck_assert_int_eq(vfp_sysfs_dev(buf, 28, pci, NULL), -ENAMETOOLONG);
	ck_assert_int_eq(vfp_sysfs_dev(buf, 10, pci, "physfn"), -ENAMETOOLONG);

	ck_assert_int_eq(vfp_ctx_set_sysfs_root(fx.ctx, "/r"), 0);
	ck_assert_int_eq(vfp_sysfs_path(fx.ctx, buf, 10, "%s", "abcdef"), 9);
	ck_assert_str_eq(buf, "/r/abcdef");
	ck_assert_int_eq(vfp_sysfs_path(fx.ctx, buf, 9, "%s", "abcdef"), -ENAMETOOLONG);
	ck_assert_int_eq(vfp_sysfs_path(fx.ctx, buf, 3, "%s", "abcdef"), -ENAMETOOLONG);
	ck_assert_int_eq(vfp_sysfs_path(fx.ctx, buf, 2, NULL), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_read_strips_newline)
{
	char buf[16];

	ck_assert_int_eq(sim_write(fx.root, "a/value", "0x15b3\n"), 0);
	ck_assert_int_eq(vfp_sysfs_read(fx.ctx, "a/value", buf, sizeof(buf)), 6);
	ck_assert_str_eq(buf, "0x15b3");
}
END_TEST

START_TEST(test_read_empty_is_not_an_error)
{
	char buf[16] = "x";

	ck_assert_int_eq(sim_write(fx.root, "a/empty", "%s", ""), 0);
	ck_assert_int_eq(vfp_sysfs_read(fx.ctx, "a/empty", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_read_too_long)
{
	char buf[8];

	ck_assert_int_eq(sim_write(fx.root, "a/long", "0123456789\n"), 0);
	ck_assert_int_eq(vfp_sysfs_read(fx.ctx, "a/long", buf, sizeof(buf)), -E2BIG);
}
END_TEST

START_TEST(test_read_exact_fit)
{
	char buf[8];

	ck_assert_int_eq(sim_write(fx.root, "a/seven", "1234567"), 0);
	ck_assert_int_eq(vfp_sysfs_read(fx.ctx, "a/seven", buf, sizeof(buf)), 7);
	ck_assert_str_eq(buf, "1234567");
}
END_TEST

START_TEST(test_read_errors)
{
	char buf[8];

	ck_assert_int_eq(vfp_sysfs_read(fx.ctx, "missing", buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(sim_mkdir_p(fx.root, "a/dir"), 0);
	ck_assert_int_eq(vfp_sysfs_read(fx.ctx, "a/dir", buf, sizeof(buf)), -EISDIR);
}
END_TEST

START_TEST(test_link_basename)
{
	char buf[32];

	ck_assert_int_eq(sim_mkdir_p(fx.root, "bus/pci/drivers/ixgbe"), 0);
	ck_assert_int_eq(sim_symlink(fx.root, "devices/x/driver", "bus/pci/drivers/ixgbe"), 0);
	ck_assert_int_eq(vfp_sysfs_readlink(fx.ctx, "devices/x/driver", buf, sizeof(buf)),
			 (int)strlen("../../bus/pci/drivers/ixgbe"));
	ck_assert_str_eq(buf, "../../bus/pci/drivers/ixgbe");
	ck_assert_int_eq(vfp_sysfs_link_basename(fx.ctx, "devices/x/driver", buf, sizeof(buf)), 5);
	ck_assert_str_eq(buf, "ixgbe");
	ck_assert_int_eq(vfp_sysfs_link_basename(fx.ctx, "devices/x/none", buf, sizeof(buf)),
			 -ENOENT);
	ck_assert_int_eq(sim_write(fx.root, "devices/x/file", "1\n"), 0);
	ck_assert_int_eq(vfp_sysfs_link_basename(fx.ctx, "devices/x/file", buf, sizeof(buf)),
			 -EINVAL);
}
END_TEST

START_TEST(test_list_dir_sorted)
{
	char **names = NULL;
	size_t n = 0;

	ck_assert_int_eq(sim_write(fx.root, "d/b", "1"), 0);
	ck_assert_int_eq(sim_write(fx.root, "d/c", "1"), 0);
	ck_assert_int_eq(sim_write(fx.root, "d/a", "1"), 0);
	ck_assert_int_eq(vfp_sysfs_list_dir(fx.ctx, "d", &names, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(names[0], "a");
	ck_assert_str_eq(names[1], "b");
	ck_assert_str_eq(names[2], "c");
	vfp_strv_free(names, n);
	ck_assert_int_eq(vfp_sysfs_list_dir(fx.ctx, "nope", &names, &n), -ENOENT);
}
END_TEST

START_TEST(test_write)
{
	char buf[16];

	ck_assert_int_eq(sim_write(fx.root, "p/sriov_numvfs", "0\n"), 0);
	ck_assert_int_eq(vfp_sysfs_write(fx.ctx, "p/sriov_numvfs", "4"), 0);
	ck_assert_int_eq(vfp_sysfs_read(fx.ctx, "p/sriov_numvfs", buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "4");
	ck_assert_int_eq(vfp_sysfs_write(fx.ctx, "p/missing", "4"), -ENOENT);
}
END_TEST

START_TEST(test_parse_int)
{
	int v = 99;

	ck_assert_int_eq(vfp_parse_int("42", 10, 0, 100, &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(vfp_parse_int("-1", 10, -1, 100, &v), 0);
	ck_assert_int_eq(v, -1);
	ck_assert_int_eq(vfp_parse_int("0x20", 16, 0, 0xffff, &v), 0);
	ck_assert_int_eq(v, 0x20);
	v = 7;
	ck_assert_int_eq(vfp_parse_int("", 10, 0, 100, &v), -EINVAL);
	ck_assert_int_eq(vfp_parse_int("abc", 10, 0, 100, &v), -EINVAL);
	ck_assert_int_eq(vfp_parse_int("12abc", 10, 0, 100, &v), -EINVAL);
	ck_assert_int_eq(vfp_parse_int(" 12", 10, 0, 100, &v), -EINVAL);
	ck_assert_int_eq(vfp_parse_int("+12", 10, 0, 100, &v), -EINVAL);
	ck_assert_int_eq(vfp_parse_int("101", 10, 0, 100, &v), -ERANGE);
	ck_assert_int_eq(vfp_parse_int("99999999999999999999", 10, 0, 100, &v), -ERANGE);
	ck_assert_int_eq(v, 7); /* untouched on failure */
}
END_TEST

START_TEST(test_ctx_root)
{
	struct vfp_ctx *ctx = NULL;

	ck_assert_int_eq(setenv("VFAGENT_SYSFS_ROOT", "/tmp/some/root", 1), 0);
	ck_assert_int_eq(vfp_ctx_new(&ctx), 0);
	ck_assert_str_eq(vfp_ctx_get_sysfs_root(ctx), "/tmp/some/root");
	ck_assert_int_eq(vfp_ctx_set_sysfs_root(ctx, "/x/y//"), 0);
	ck_assert_str_eq(vfp_ctx_get_sysfs_root(ctx), "/x/y");
	ck_assert_int_eq(vfp_ctx_set_sysfs_root(ctx, "relative"), -EINVAL);
	ck_assert_str_eq(vfp_ctx_get_sysfs_root(ctx), "/x/y");
	ck_assert_ptr_null(vfp_ctx_unref(ctx));
	ck_assert_int_eq(unsetenv("VFAGENT_SYSFS_ROOT"), 0);
	ck_assert_int_eq(vfp_ctx_new(&ctx), 0);
	ck_assert_str_eq(vfp_ctx_get_sysfs_root(ctx), "/sys");
	vfp_ctx_unref(ctx);
	ck_assert_ptr_null(vfp_ctx_unref(NULL));
}
END_TEST

Suite *suite_sysfs(void)
{
	Suite *s = suite_create("sysfs");
	TCase *tc = tcase_create("helpers");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_dev_path);
	tcase_add_test(tc, test_path_too_long);
	tcase_add_test(tc, test_read_strips_newline);
	tcase_add_test(tc, test_read_empty_is_not_an_error);
	tcase_add_test(tc, test_read_too_long);
	tcase_add_test(tc, test_read_exact_fit);
	tcase_add_test(tc, test_read_errors);
	tcase_add_test(tc, test_link_basename);
	tcase_add_test(tc, test_list_dir_sorted);
	tcase_add_test(tc, test_write);
	tcase_add_test(tc, test_parse_int);
	tcase_add_test(tc, test_ctx_root);
	suite_add_tcase(s, tc);
	return s;
}
