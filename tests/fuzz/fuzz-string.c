/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers every harness shares, in libFuzzer and replay builds alike. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s;

	if (memchr(data, '\0', size) || !(s = malloc(size + 1)))
		return NULL;
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}
