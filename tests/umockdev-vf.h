/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A VF on a umockdev testbed, for the hotplug test and bench/udev. */
#pragma once

#include <umockdev.h>

char *testbed_add_vf(UMockdevTestbed *tb, const char *pf_path, const char *name,
		     unsigned index);
