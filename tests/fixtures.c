/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "fixtures.h"

static void record_warning(void *userdata, int priority, const char *file, int line,
			   const char *fn, const char *format, va_list args)
{
	struct fixture *f = userdata;

	if (priority > LOG_WARNING || f->n_warnings >= 32)
		return;
	vsnprintf(f->warnings[f->n_warnings++], sizeof(f->warnings[0]), format, args);
}

/* An empty sysfs root in a fresh temporary directory, and a context reading it. */
void fixture_setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "/tmp/vfagent-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->root));
	ck_assert_int_eq(vfp_ctx_new(&f->ctx), 0);
	ck_assert_int_eq(vfp_ctx_set_sysfs_root(f->ctx, f->root), 0);
	vfp_ctx_set_log_fn(f->ctx, record_warning, f);
}

void fixture_teardown(struct fixture *f)
{
	vfp_ctx_unref(f->ctx);
	rm_rf(f->root);
}

struct vfp_inventory *fixture_scan(struct fixture *f)
{
	struct vfp_inventory *inv = NULL;

	ck_assert_int_eq(vfp_inventory_scan(f->ctx, &inv), 0);
	ck_assert_ptr_nonnull(inv);
	ck_assert_uint_eq(vfp_inventory_get_warning_count(inv), f->n_warnings);
	return inv;
}

const char *fixture_find_warning(const struct fixture *f, const char *needle)
{
	for (size_t i = 0; i < f->n_warnings; i++)
		if (strstr(f->warnings[i], needle))
			return f->warnings[i];
	return NULL;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

int rm_rf(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
