/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

bool valid_mac(const char *s);
bool valid_guid(const char *s);
bool valid_ip_prefix(const char *s, int *ret_family);
bool valid_token(const char *s);
