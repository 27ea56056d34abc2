/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin's log, as sriov-cni's "logLevel" and "logFile" ask for it: one
 * line per event, "vfagent[PID] LEVEL COMMAND CONTAINERID IFNAME: message",
 * appended to logFile (O_APPEND: concurrent plugins' lines do not mix) or
 * written to stderr. The levels are sriov-cni's: panic, error, warning,
 * info, debug. Without logLevel a logFile gets info and up, stderr errors
 * only: a runtime shows a plugin's stderr to its user (podman prints it).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cni.h"

static const char *const level_names[] = { "panic", "error", "warning", "info", "debug", NULL };

static struct {
	int level; /* the highest written */
	int fd;
	const struct cni_call *call;
} logger = { .level = CNI_LOG_ERROR, .fd = STDERR_FILENO };

static int level_from_string(const char *s)
{
	for (int i = 0; level_names[i]; i++)
		if (strcasecmp(s, level_names[i]) == 0)
			return i;
	return -1;
}

/**
 * cni_log_setup() - logLevel and logFile of @call's config read, each
 * checked with a message naming it; the log opened
 */
int cni_log_setup(const struct cni_call *call, struct cni_error *e)
{
	json_t *level = json_object_get(call->conf, "logLevel");
	json_t *file = json_object_get(call->conf, "logFile");
	int fd;

	logger.call = call;
	if (level && (!json_is_string(level) || level_from_string(json_string_value(level)) < 0))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"logLevel: must be panic, error, warning, info or debug");
	if (file && (!json_is_string(file) || json_string_value(file)[0] != '/'))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"logFile: must be an absolute path");
	if (file) {
		fd = open(json_string_value(file), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
					"logFile: %s: %s", json_string_value(file),
					strerror(errno));
		logger.fd = fd;
		logger.level = CNI_LOG_INFO;
	}
	if (level)
		logger.level = level_from_string(json_string_value(level));
	return 0;
}

/* One line, written at once. */
void cni_log(int level, const char *fmt, ...)
{
	const struct cni_call *c = logger.call;
	char line[1024];
	va_list ap;
	int n;

	if (level > logger.level)
		return;
	n = snprintf(line, sizeof(line), "vfagent[%d] %s %s %s %s: ", (int)getpid(),
		     level_names[level], c && c->command ? c->command : "-",
		     c && c->container_id && c->container_id[0] ? c->container_id : "-",
		     c && c->ifname && c->ifname[0] ? c->ifname : "-");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	for (char *p = line; *p; p++) /* one event, one line */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	n = (int)strlen(line);
	line[n++] = '\n';
	(void)!write(logger.fd, line, (size_t)n);
}
