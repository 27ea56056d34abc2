/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Errors of a JSON document, each naming its path ("pools[1].selector:
 * unknown key "pfNames" (did you mean "pf_names"?)"). A document with
 * several errors gets them all, one a line, so an operator fixes a config
 * in one round rather than one restart per mistake.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-errors.h"

int vfp_config_error(char **ret_error, const char *path, const char *format, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, format);
	vsnprintf(msg, sizeof(msg), format, ap);
	va_end(ap);
	if (ret_error && asprintf(ret_error, "%s: %s", path, msg) < 0)
		*ret_error = NULL;
	return -EINVAL;
}

/*
 * vfp_config_errors_add() - @error (taken) on a line of its own after *@all;
 * returns the first of @r_all and @r that is an error (-ENOMEM first).
 */
int vfp_config_errors_add(char **all, int r_all, int r, char *error)
{
	char *joined;

	if (error && all && *all) {
		if (asprintf(&joined, "%s\n%s", *all, error) >= 0) {
			free(*all);
			*all = joined;
		}
		free(error);
	} else if (error && all)
		*all = error;
	else
		free(error);
	if (r_all == -ENOMEM || r == -ENOMEM)
		return -ENOMEM;
	return r_all < 0 ? r_all : r < 0 ? r : 0;
}

/* @s lower-cased without '_' and '-', at most @size - 1 bytes. */
static void folded(const char *s, char *out, size_t size)
{
	size_t o = 0;

	for (; *s && o + 1 < size; s++)
		if (*s != '_' && *s != '-')
			out[o++] = (char)tolower((unsigned char)*s);
	out[o] = '\0';
}

/* Edit distance of @a and @b (both short), capped at 3. */
static unsigned distance(const char *a, const char *b)
{
	size_t n = strlen(b);
	unsigned row[64], prev;

	if (n >= sizeof(row) / sizeof(row[0]) || strlen(a) >= sizeof(row) / sizeof(row[0]))
		return 3;
	for (size_t j = 0; j <= n; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; a[i - 1]; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= n; j++) {
			unsigned del = row[j] + 1, ins = row[j - 1] + 1,
				 sub = prev + (a[i - 1] != b[j - 1]);
			unsigned best = del < ins ? del : ins;

			prev = row[j];
			row[j] = best < sub ? best : sub;
		}
	}
	return row[n] < 3 ? row[n] : 3;
}

/* The allowed key @key was likely meant as: same letters in another case or
 * spelling (pfNames, pf-names), or a typo or two away (one for a short key); NULL if none. */
static const char *near_key(const char *key, const char *const *allowed)
{
	char k[64], a[64];

	folded(key, k, sizeof(k));
	for (size_t i = 0; allowed[i]; i++) {
		folded(allowed[i], a, sizeof(a));
		if (strcmp(k, a) == 0 || distance(k, a) <= (strlen(a) > 4 ? 2u : strlen(a) > 2 ? 1u : 0u))
			return allowed[i];
	}
	return NULL;
}

/* Unknown keys are errors, not ignored: a typo must not silently widen a pool. All are named. */
int vfp_json_check_keys(json_t *o, const char *path, const char *const *allowed,
			char **ret_error)
{
	const char *key, *near;
	json_t *v;
	int r = 0;

	json_object_foreach(o, key, v) {
		char *e = NULL;
		size_t i;

		for (i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i])
			continue;
		near = near_key(key, allowed);
		vfp_config_error(ret_error ? &e : NULL, path[0] ? path : "(top level)",
				 "unknown key \"%s\"%s%s%s", key, near ? " (did you mean \"" : "",
				 near ? near : "", near ? "\"?)" : "");
		r = vfp_config_errors_add(ret_error, r, -EINVAL, e);
	}
	return r;
}
