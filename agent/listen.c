/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Listening sockets: "unix:PATH" (the default, mode 0660, owned by the
 * configured group), "tcp:ADDR:PORT" (needs a bearer token), or the
 * sockets systemd passes (LISTEN_FDS).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "agent/log.h"
#include "libvfpool/macro.h"
#include "agent/listen.h"

/* A socket file left by a dead agent is removed; one a live agent answers on is -EADDRINUSE. */
static int remove_stale(const struct sockaddr_un *sa, int type)
{
	_cleanup_close_ int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return negative_errno();
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		return -EADDRINUSE;
	if (errno == ECONNREFUSED && unlink(sa->sun_path) < 0 && errno != ENOENT)
		return negative_errno();
	return 0;
}

/*
 * A listening socket of @type at @path, given @mode and, unless it is -1,
 * group @gid before listen(): no one else can connect in between.
 */
static int listen_unix_path(const char *path, int type, mode_t mode, gid_t gid, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	int r;

	if (strlen(path) >= sizeof(sa.sun_path) || path[0] != '/')
		return -EINVAL;
	strcpy(sa.sun_path, path);
	r = remove_stale(&sa, type);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negative_errno();
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, mode) < 0 ||
	    (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) || listen(fd, 128) < 0)
		return negative_errno();
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static int open_unix(const char *path, const char *group, int *ret_fd)
{
	gid_t gid = (gid_t)-1;

	if (group) {
		struct group *g = getgrnam(group);

		if (!g)
			return -ESRCH;
		gid = g->gr_gid;
	}
	return listen_unix_path(path, SOCK_STREAM, 0660, gid, ret_fd);
}

static int open_tcp(const char *hostport, int *ret_fd)
{
	char host[256];
	const char *colon = strrchr(hostport, ':');
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	_cleanup_close_ int fd = -1;
	int one = 1, r;

	if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof(host))
		return -EINVAL;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport), hostport);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	r = fd < 0 ? negative_errno() : 0;
	if (r >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (r >= 0 && (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0))
		r = negative_errno();
	freeaddrinfo(ai);
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/*
 * The CNI plugin's socket (api/cni-server.c): SOCK_SEQPACKET at @path, mode
 * 0600 before listen(), so only root connects (the server checks SO_PEERCRED
 * as well).
 */
int listen_open_seqpacket(const char *path, int *ret_fd)
{
	return listen_unix_path(path, SOCK_SEQPACKET, 0600, (gid_t)-1, ret_fd);
}

/* "unix:/run/vfagent/vfagent.sock" or "tcp:127.0.0.1:8080" / "tcp:[::1]:8080". */
int listen_parse_and_open(const char *spec, const char *group, int *ret_fd, bool *ret_is_tcp)
{
	if (strncmp(spec, "unix:", 5) == 0) {
		*ret_is_tcp = false;
		return open_unix(spec + 5, group, ret_fd);
	}
	if (strncmp(spec, "tcp:", 4) == 0) {
		*ret_is_tcp = true;
		return open_tcp(spec + 4, ret_fd);
	}
	return -EINVAL;
}

/*
 * Sockets passed by systemd; an AF_UNIX one needs no token, any other one
 * does. A SOCK_SEQPACKET one is the CNI plugin's (vfagentd-cni.socket): it
 * goes to @ret_cni_fd (-1: none), not to the HTTP server.
 */
int listen_from_systemd(int *fds, bool *is_tcp, int max, int *ret_cni_fd)
{
	int n = sd_listen_fds(1), k = 0;

	*ret_cni_fd = -1;
	if (n <= 0)
		return n;
	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;

		if (sd_is_socket(fd, AF_UNIX, SOCK_SEQPACKET, 1) > 0 && *ret_cni_fd < 0) {
			*ret_cni_fd = fd;
			continue;
		}
		if (k == max)
			return -E2BIG;
		fds[k] = fd;
		is_tcp[k++] = sd_is_socket(fd, AF_UNIX, SOCK_STREAM, 1) <= 0;
	}
	return k;
}

/*
 * A unix socket systemd passed: its path into @path ("" when abstract), and,
 * when the config names a socket_group, the check that systemd gave the
 * socket that group: the socket unit's SocketGroup= and socket_group are one
 * setting, and a socket in another group is refused, naming both.
 */
int listen_check_systemd_unix(int fd, const char *group, char *path, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(sa);
	size_t n;
	struct group *g;
	struct stat st;

	path[0] = '\0';
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return negative_errno();
	n = len > offsetof(struct sockaddr_un, sun_path) ? len - offsetof(struct sockaddr_un, sun_path) : 0;
	if (n == 0 || sa.sun_path[0] == '\0')
		return 0;
	snprintf(path, size, "%.*s", (int)strnlen(sa.sun_path, n), sa.sun_path);
	if (!group)
		return 0;
	g = getgrnam(group);
	if (!g) {
		log_error("socket_group \"%s\" does not exist (systemd-sysusers creates it, or: "
			  "groupadd --system %s)", group, group);
		return -ESRCH;
	}
	if (stat(path, &st) < 0)
		return negative_errno();
	if (st.st_gid != g->gr_gid) {
		struct group *has = getgrgid(st.st_gid);

		log_error("socket_group is \"%s\" but systemd made %s with group %s: set "
			  "SocketGroup=%s in vfagentd.socket (systemctl edit vfagentd.socket) or "
			  "change socket_group to match", group, path,
			  has ? has->gr_name : "(unknown)", group);
		return -EPERM;
	}
	return 0;
}

/* The bearer token: the file's first line, at least 16 characters. */
int listen_read_token(const char *path, char **ret)
{
	char buf[512];
	struct stat st;
	FILE *f = fopen(path, "re");

	if (!f)
		return negative_errno();
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 0077))
		log_warning("token file %s is readable by group or others (mode %03o)", path,
			    st.st_mode & 0777);
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strlen(buf) < 16)
		return -EINVAL;
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
}
