/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Is anyone serving the agent's socket? Under socket activation the socket
 * accepts connections while vfagentd starts, restarts or fails to start:
 * a request would wait its whole --timeout (120 s) in the socket's queue.
 * The first request of a vfctl run is preceded by GET /v1/health, which an
 * agent that serves answers at once; no answer within PROBE_SECONDS, or the
 * connection closed unanswered, is said with where to look.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "libvfpool/macro.h"
#include "vfctl.h"

#define PROBE_SECONDS 15

static const char probe[] = "GET /v1/health HTTP/1.0\r\nHost: localhost\r\n\r\n";

/* The first bytes of the answer within @seconds: 1, 0 when it closed unanswered, -ETIMEDOUT. */
static int first_bytes(int fd, int seconds)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;
	ssize_t n;

	if (poll(&p, 1, seconds * 1000) == 0)
		return -ETIMEDOUT;
	n = recv(fd, &c, 1, MSG_PEEK);
	return n > 0 ? 1 : 0;
}

/**
 * vfctl_probe() - 0 when an agent serves @h's unix socket, or when the
 * request itself will say why it cannot connect; -ETIMEDOUT or -ECONNRESET
 * (said on stderr unless quiet) when the socket takes connections nobody
 * answers
 */
int vfctl_probe(const struct vfctl_http *h, long timeout)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	int seconds = timeout > 0 && timeout < PROBE_SECONDS ? (int)timeout : PROBE_SECONDS;
	int r;

	if (h->url || !h->socket || strlen(h->socket) >= sizeof(sa.sun_path))
		return 0;
	strcpy(sa.sun_path, h->socket);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 0;
	if (send(fd, probe, sizeof(probe) - 1, MSG_NOSIGNAL) >= 0)
		r = first_bytes(fd, seconds);
	else
		r = errno == EPIPE || errno == ECONNRESET ? 0 : 1; /* closed; else curl says */
	if (r > 0 || h->quiet)
		return r > 0 ? 0 : r == 0 ? -ECONNRESET : r;
	if (r == -ETIMEDOUT)
		fprintf(stderr, "vfctl: no answer from the agent within %d s: %s takes "
			"connections but nothing answered within %d s: vfagentd is starting, "
			"hung, or failing to start (systemctl status vfagentd; journalctl -u "
			"vfagentd)\n", seconds, h->socket, seconds);
	else
		fprintf(stderr, "vfctl: %s closed the connection unanswered: vfagentd stopped or "
			"failed to start (systemctl status vfagentd; journalctl -u vfagentd)\n",
			h->socket);
	return r == 0 ? -ECONNRESET : r;
}
