/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Errors of a JSON document (the config, a request): "path: message", one a line. */
#pragma once

#include <jansson.h>

/* "path: message", in a new string for *ret_error; returns -EINVAL. */
int vfp_config_error(char **ret_error, const char *path, const char *format, ...)
	__attribute__((format(printf, 3, 4)));
int vfp_json_check_keys(json_t *o, const char *path, const char *const *allowed,
			char **ret_error);
int vfp_config_errors_add(char **all, int r_all, int r, char *error);
