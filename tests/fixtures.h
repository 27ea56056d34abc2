/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test fixtures: temporary sysfs trees and a context that records warnings. */
#pragma once

#include <stddef.h>

#include "libvfpool/libvfpool.h"

struct fixture {
	char root[64];
	struct vfp_ctx *ctx;
	char warnings[32][512];
	size_t n_warnings;
};

void fixture_setup(struct fixture *f);
void fixture_teardown(struct fixture *f);
struct vfp_inventory *fixture_scan(struct fixture *f);
const char *fixture_find_warning(const struct fixture *f, const char *needle);
int rm_rf(const char *path);
