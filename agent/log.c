/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's log: one line per event on stderr, with the <N> priority
 * prefix journald reads (not on a terminal, where a person reads it). Every line, the library's included, passes here,
 * and here every control character in it is escaped (\\xNN): text that a
 * tenant or a peer chose (a namespace, a domain name, libvirt's or the
 * kernel's message about them) cannot end a line or forge a priority.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agent/log.h"

static int log_max = 6;
static int log_prefix = -1; /* decided at the first line: stderr is not a terminal */

/* Lines above @priority are dropped (the fuzzers keep only errors). */
void agent_set_log_priority(int priority)
{
	log_max = priority;
}

int agent_get_log_priority(void)
{
	return log_max;
}

/**
 * agent_log_priority_from_string() - "err", "warning", "info", "debug" (as
 * syslog and journalctl -p name them, "error" too) or a digit 0-7
 *
 * Returns the priority, or -EINVAL for anything else.
 */
int agent_log_priority_from_string(const char *s)
{
	static const struct {
		const char *name;
		int priority;
	} names[] = { { "err", 3 }, { "error", 3 }, { "warning", 4 }, { "info", 6 }, { "debug", 7 } };

	if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
		return s[0] - '0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(s, names[i].name) == 0)
			return names[i].priority;
	return -EINVAL;
}

/* @s with control characters as \xNN, into @out (always terminated). */
void agent_log_escape(const char *s, char *out, size_t size)
{
	size_t o = 0;

	for (; *s && o + 5 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
}

void agent_log(int priority, const char *format, ...)
{
	char line[2048], safe[4 * sizeof(line)];
	va_list ap;

	if (priority > log_max)
		return;
	va_start(ap, format);
	vsnprintf(line, sizeof(line), format, ap);
	va_end(ap);
	agent_log_escape(line, safe, sizeof(safe));
	if (log_prefix < 0)
		log_prefix = !isatty(STDERR_FILENO);
	if (log_prefix)
		fprintf(stderr, "<%d>%s\n", priority, safe);
	else
		fprintf(stderr, "vfagentd: %s\n", safe);
}

void agent_errf(char *err, size_t size, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vsnprintf(err, size, format, ap);
	va_end(ap);
}
