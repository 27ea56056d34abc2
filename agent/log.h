/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's log (log.c): one line per event on stderr, with the <N>
 * priority prefix journald reads. Its own header, so that a room that only
 * logs (libvirt, listeners, privileges) needs nothing of struct agent.
 */
#pragma once

#include <stddef.h>

/*
 * The size of an error buffer in the agent (char err[AGENT_ERR_SIZE]): a
 * function that fails fills its caller's (char *err, size_t err_size); the
 * one that drops the error logs it once (DESIGN.md §7). One size for all, so
 * a message that quotes another is cut only at its own end.
 */
#define AGENT_ERR_SIZE 512
/* An error message in @err that may quote another as long: cut at its end, on purpose. */
void agent_errf(char *err, size_t size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

void agent_set_log_priority(int priority);
int agent_get_log_priority(void);
int agent_log_priority_from_string(const char *s);
void agent_log(int priority, const char *format, ...) __attribute__((format(printf, 2, 3)));
void agent_log_escape(const char *s, char *out, size_t size);
#define log_debug(...) agent_log(7, __VA_ARGS__)
#define log_info(...) agent_log(6, __VA_ARGS__)
#define log_warning(...) agent_log(4, __VA_ARGS__)
#define log_error(...) agent_log(3, __VA_ARGS__)
