/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Why vfctl could not reach the agent, told so an operator can act on it:
 * no socket (the agent is not running), nothing listening on it, or a
 * socket this user may not open (who may, and how to join them).
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "libvfpool/macro.h"
#include "agent/vfctl/vfctl-error.h"
#include "vfctl.h"

/* errno of a plain connect() to @path: what libcurl's "couldn't connect" hides. */
static int connect_errno(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	if (strlen(path) >= sizeof(sa.sun_path))
		return ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	return connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : errno;
}

static void print_denied(const char *path)
{
	struct stat st;
	struct group *g = stat(path, &st) == 0 ? getgrgid(st.st_gid) : NULL;
	struct passwd *me = getpwuid(getuid());
	const char *user = me ? me->pw_name : "USER";

	if (!g || st.st_gid == 0) {
		vfctl_error("permission denied on %s: only root may connect to it", path);
		return;
	}
	vfctl_error("permission denied on %s: root and members of the group %s may connect; "
		    "to join it: usermod -aG %s %s (as root), then log in again",
		    path, g->gr_name, g->gr_name, user);
}

/**
 * vfctl_print_unreachable() - one line on stderr: why the agent at @h
 * could not be connected to
 */
void vfctl_print_unreachable(const struct vfctl_http *h)
{
	int e;

	if (h->url) {
		vfctl_error("agent not running (cannot connect to %s)", h->url);
		return;
	}
	e = connect_errno(h->socket);
	if (e == EACCES || e == EPERM)
		print_denied(h->socket);
	else if (e == ENOENT || e == ECONNREFUSED || e == 0)
		vfctl_error("agent not running (cannot connect to %s: %s)", h->socket,
			    e == ENOENT ? "no such socket" : "nothing listens on it");
	else
		vfctl_error("cannot connect to %s: %s", h->socket, strerror(e));
}
