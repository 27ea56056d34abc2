/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfctl's one way to say what went wrong: "vfctl: " and the message, one
 * line on stderr in one write (DESIGN.md §7).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/vfctl/vfctl-error.h"

/**
 * vfctl_error() - "vfctl: @format" and a newline on stderr (a %m in @format reads errno)
 */
void vfctl_error(const char *format, ...)
{
	char *msg = NULL;
	va_list args;
	int n;

	va_start(args, format);
	n = vasprintf(&msg, format, args);
	va_end(args);
	fprintf(stderr, "vfctl: %s\n", n >= 0 ? msg : format);
	if (n >= 0)
		free(msg);
}
