/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IPAM plugin the config's "ipam" names, run as the spec's delegation
 * says: found in CNI_PATH, the same environment (CNI_COMMAND as asked) and
 * the same config on stdin, its stderr ours, its result or error read from
 * its stdout.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cni.h"
#include "libvfpool/macro.h"

#define OUTPUT_MAX (1 << 20)

/* The first executable @type in the ':'-separated @path. */
static int find_plugin(const char *path, const char *type, char *buf, size_t size,
		       struct cni_error *e)
{
	if (!path || !path[0])
		return cni_fail(e, CNI_ERR_ENV, "invalid environment variables",
				"CNI_PATH: not set, and ipam needs it to find \"%.64s\"", type);
	if (!type[0] || strchr(type, '/'))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"ipam.type: \"%.64s\" is not a plugin name", type);
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");

		if (n > 0 && (size_t)snprintf(buf, size, "%.*s/%s", (int)n, p, type) < size &&
		    access(buf, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
			"ipam.type: no plugin \"%.64s\" in CNI_PATH (%.200s)", type, path);
}

static void child(const char *exe, const char *command, int in, int out)
{
	dup2(in, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	setenv("CNI_COMMAND", command, 1);
	execl(exe, exe, (char *)NULL);
	_exit(127);
}

/* Writes the config into the plugin's stdin and reads all of its stdout. */
static int talk(const struct cni_call *call, int in, int out, char **ret, size_t *ret_n)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	ssize_t got = 0;

	for (size_t done = 0; done < call->stdin_len; done += (size_t)got)
		if ((got = write(in, call->stdin_data + done, call->stdin_len - done)) < 0 &&
		    errno != EINTR)
			break;
		else if (got < 0)
			got = 0;
	close(in);
	while (buf && (got = read(out, buf + n, cap - n - 1)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		n += (size_t)got;
		if (n + 1 == cap) {
			char *more = cap < OUTPUT_MAX ? realloc(buf, cap *= 2) : NULL;

			if (!more)
				break;
			buf = more;
		}
	}
	if (!buf || got != 0) {
		free(buf);
		return -EIO;
	}
	buf[n] = '\0';
	*ret = buf;
	*ret_n = n;
	return 0;
}

/* The delegate's failure: its own error object when it printed one. */
static int delegate_error(const char *type, const char *command, const char *out, int status,
			  struct cni_error *e)
{
	json_t *j = out ? json_loads(out, 0, NULL) : NULL;
	json_t *code = json_object_get(j, "code");

	if (json_is_integer(code)) {
		const char *msg = json_string_value(json_object_get(j, "msg"));
		const char *details = json_string_value(json_object_get(j, "details"));

		cni_fail(e, (int)json_integer_value(code), msg ? msg : "IPAM failed",
			 "ipam %s %s: %s%s%s", type, command, msg ? msg : "",
			 details && details[0] ? ": " : "", details ? details : "");
	} else {
		cni_fail(e, CNI_ERR_IO, "IPAM failed", "ipam %s %s: exit status %d", type, command,
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	json_decref(j);
	return -1;
}

/**
 * cni_ipam_exec() - the IPAM plugin run with CNI_COMMAND=@command
 * @ret: its result for ADD (NULL: not wanted)
 */
int cni_ipam_exec(const struct cni_call *call, const char *command, json_t **ret,
		  struct cni_error *e)
{
	const char *type = json_string_value(json_object_get(call->ipam, "type"));
	_cleanup_free_ char *out = NULL;
	char exe[4096];
	int in_pipe[2], out_pipe[2], status = 0, r;
	size_t n = 0;
	pid_t pid;

	if (find_plugin(call->path, type, exe, sizeof(exe), e) < 0)
		return -1;
	if (pipe2(in_pipe, O_CLOEXEC) < 0 || pipe2(out_pipe, O_CLOEXEC) < 0)
		return cni_fail(e, CNI_ERR_IO, "I/O failure", "pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0)
		child(exe, command, in_pipe[0], out_pipe[1]);
	close(in_pipe[0]);
	close(out_pipe[1]);
	if (pid < 0) {
		close(in_pipe[1]);
		close(out_pipe[0]);
		return cni_fail(e, CNI_ERR_IO, "I/O failure", "fork: %s", strerror(errno));
	}
	signal(SIGPIPE, SIG_IGN);
	r = talk(call, in_pipe[1], out_pipe[0], &out, &n);
	close(out_pipe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return delegate_error(type, command, out, status, e);
	if (!ret)
		return 0;
	*ret = json_loadb(out, n, 0, NULL);
	if (!json_is_object(*ret)) {
		json_decref(*ret);
		return cni_fail(e, CNI_ERR_DECODE, "failed to decode content",
				"ipam %s %s: its result is not a JSON object", type, command);
	}
	return 0;
}
