/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One request to the agent and its answer: a JSON object per datagram on
 * the agent's SOCK_SEQPACKET socket (api/cni-server.c). The agent's errors
 * ({"error":"EINVAL","message":…}) become CNI error codes here.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cni.h"
#include "libvfpool/macro.h"

#define ANSWER_MAX (256 * 1024)
#define ANSWER_SECONDS 300 /* an ADD waits for a kernel moving a netdev; a reset for a device */

static const struct {
	const char *error;
	int code;
	const char *msg;
} codes[] = {
	{ "EINVAL", CNI_ERR_CONFIG, "invalid network config" },
	{ "ENOENT", CNI_ERR_CONFIG, "invalid network config" },
	{ "EBUSY", CNI_ERR_NO_VF, "no VF" },
	{ "EEXIST", CNI_ERR_EXISTS, "the attachment exists with other settings" },
	{ "ENOBUFS", CNI_ERR_NO_VF, "no VF" },
	{ "EAGAIN", CNI_ERR_TRY_AGAIN, "try again later" },
	{ "ENOTCONN", CNI_ERR_TRY_AGAIN, "try again later" },
};

static int agent_error(json_t *answer, struct cni_error *e)
{
	const char *error = json_string_value(json_object_get(answer, "error"));
	const char *message = json_string_value(json_object_get(answer, "message"));

	for (size_t i = 0; error && i < ELEMENTSOF(codes); i++)
		if (strcmp(error, codes[i].error) == 0)
			return cni_fail(e, codes[i].code, codes[i].msg, "%s",
					message ? message : error);
	return cni_fail(e, CNI_ERR_AGENT, "the agent failed", "%s: %s", error ? error : "?",
			message ? message : "no message");
}

static int connect_agent(const char *path, struct cni_error *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = ANSWER_SECONDS };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return cni_fail(e, CNI_ERR_CONFIG, "invalid network config",
				"socket: \"%.64s\" is too long for a unix socket", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cni_fail(e, CNI_ERR_IO, "I/O failure", "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(fd);
		return cni_fail(e, CNI_ERR_TRY_AGAIN, "the agent is not reachable",
				"socket %s: %s (is vfagentd running?)", path, strerror(err));
	}
	return fd;
}

/**
 * cni_agent_ask() - @req to the agent at @socket; its answer in @ret when it
 * says "ok", else the error it gave (as a CNI error in @e)
 */
int cni_agent_ask(const char *socket, json_t *req, json_t **ret, struct cni_error *e)
{
	_cleanup_free_ char *out = json_dumps(req, JSON_COMPACT), *in = malloc(ANSWER_MAX);
	_cleanup_close_ int fd = -1;
	json_error_t jerr;
	json_t *answer;
	ssize_t n;

	if (!out || !in)
		return cni_fail(e, CNI_ERR_IO, "out of memory", "out of memory");
	fd = connect_agent(socket, e);
	if (fd < 0)
		return -1;
	if (send(fd, out, strlen(out), MSG_NOSIGNAL) < 0)
		return cni_fail(e, CNI_ERR_TRY_AGAIN, "the agent is not reachable",
				"sending to %s: %s", socket, strerror(errno));
	n = recv(fd, in, ANSWER_MAX, MSG_TRUNC);
	if (n <= 0 || n > ANSWER_MAX)
		return cni_fail(e, CNI_ERR_IO, "I/O failure", "the agent at %s %s", socket,
				n == 0 ? "closed the connection without an answer"
				: n > 0 ? "answered more than 256 KiB" : strerror(errno));
	answer = json_loadb(in, (size_t)n, 0, &jerr);
	if (!json_is_object(answer)) {
		json_decref(answer);
		return cni_fail(e, CNI_ERR_IO, "I/O failure", "the agent's answer is not JSON");
	}
	if (!json_is_true(json_object_get(answer, "ok"))) {
		agent_error(answer, e);
		json_decref(answer);
		return -1;
	}
	*ret = answer;
	return 0;
}
