/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

void vfctl_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
