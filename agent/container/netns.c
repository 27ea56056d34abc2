/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "agent/log.h"
#include "libvfpool/macro.h"
#include "agent/container/netns.h"

/* /proc/N/ns/net for "pid:N", /run/netns/NAME for a name or path; -EINVAL for the rest. */
static int netns_path(const char *spec, char *path, size_t size)
{
	const char *pid = strncmp(spec, "pid:", 4) == 0 ? spec + 4 : NULL;
	const char *name = pid ? NULL : vfp_owner_netns_name(spec); /* the one spelling rule */

	if (pid && pid[0] && strspn(pid, "0123456789") == strlen(pid) && strlen(pid) < 11)
		snprintf(path, size, "/proc/%s/ns/net", pid);
	else if (name)
		snprintf(path, size, "/run/netns/%s", name);
	else
		return -EINVAL;
	return 0;
}

/*
 * Whether @path is a namespace (nsfs), looked at without opening it. `ip netns
 * del` unmounts the namespace, then unlinks the mount point: in between, the
 * name is an empty file of mode 0000 that an agent without CAP_DAC_OVERRIDE
 * may not open (EACCES), and that names no namespace.
 */
static bool names_a_namespace(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) < 0 || sf.f_type == NSFS_MAGIC; /* unknown: not gone */
}

/**
 * netns_open() - a network namespace by /run/netns name, path, or "pid:N"
 *
 * Only /run/netns/NAME, /var/run/netns/NAME and /proc/N/ns/net are taken:
 * a request does not get to open an arbitrary file. The fd must be a
 * network namespace (NS_GET_NSTYPE).
 */
int netns_open(const char *spec, int *ret_fd, char *err, size_t err_size)
{
	char path[128];
	struct stat st;
	int fd, r = 0;

	if (netns_path(spec, path, sizeof(path)) < 0) {
		snprintf(err, err_size, "netns: \"%.64s\" is not a /run/netns name or path, or pid:N",
			 spec);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = negative_errno(); /* before snprintf can change it */
		if (r == -EACCES && !names_a_namespace(path))
			r = -EINVAL;
		snprintf(err, err_size, r == -EINVAL ? "netns: %s is not a network namespace"
						     : "netns: %s: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0)
		r = negative_errno();
	else if ((st.st_mode & S_IFMT) == S_IFDIR || ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET)
		r = -EINVAL;
	if (r < 0) {
		close(fd);
		snprintf(err, err_size, r == -EINVAL ? "netns: %s is not a network namespace"
						     : "netns: %s: %s", path, strerror(-r));
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* Same namespace: the same nsfs inode on the same device. */
static bool same_ns(const struct stat *a, const char *path)
{
	struct stat b;

	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/**
 * netns_is_host() - @fd is the agent's own network namespace or init's
 *
 * Neither is a container: an attach there would configure the host.
 */
bool netns_is_host(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return true; /* unknown: treated as the host */
	return same_ns(&st, "/proc/self/ns/net") || same_ns(&st, "/proc/1/ns/net");
}

int netns_inode(int fd, ino_t *ret)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	*ret = st.st_ino;
	return 0;
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* Linux 5.14 */
#endif

/**
 * netns_cookie() - the cookie of the namespace @fd: a number the kernel
 * gives each network namespace once and never again until it reboots (an
 * inode is given again as soon as its namespace is freed)
 *
 * Read off a socket made inside (SO_NETNS_COOKIE, Linux 5.14): the calling
 * thread enters the namespace for that and comes back. -ENOPROTOOPT on an
 * older kernel (the caller keeps 0: unknown).
 */
static bool cookie_off; /* a simulated host said the kernel has none (netns_cookie_disable()) */

/**
 * netns_cookie_disable() - from now on the kernel is taken to give no
 * cookie, as before Linux 5.14: for a simulated host
 * (VFAGENT_SIM_NO_NETNS_COOKIE), so that tests cover that kernel too
 */
void netns_cookie_disable(void)
{
	cookie_off = true;
}

int netns_cookie(int fd, unsigned long long *ret)
{
	_cleanup_close_ int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int s = -1;
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	int r = 0;

	if (cookie_off)
		return -ENOPROTOOPT;
	if (self < 0 || setns(fd, CLONE_NEWNET) < 0)
		return negative_errno();
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) < 0)
		r = negative_errno();
	if (setns(self, CLONE_NEWNET) < 0) /* back home, or this thread is lost to us */
		abort();
	if (r >= 0)
		*ret = cookie;
	return r;
}

/*
 * Whether @fd is still the namespace recorded as @inode and @cookie (0: not
 * known, as on a kernel before 5.14 or in a record made before this check):
 * 1 yes, 0 another, -errno when the cookie could not be read.
 */
static int netns_is(int fd, ino_t inode, unsigned long long cookie)
{
	unsigned long long now_cookie = 0;
	ino_t now = 0;
	int r = netns_inode(fd, &now);

	if (r < 0)
		return r;
	if (now != inode)
		return 0;
	if (!cookie)
		return 1;
	r = netns_cookie(fd, &now_cookie);
	if (r == -ENOPROTOOPT)
		return 1;
	return r < 0 ? r : now_cookie == cookie;
}

/**
 * netns_open_if_same() - the namespace @spec names, open, if it is still
 * the one with @inode and @cookie (0: not known)
 *
 * -ENOENT when it is gone: the name leads nowhere, or to another namespace
 * (another inode or cookie, or no namespace at all). Any other error
 * (EMFILE, ENOMEM, EACCES…) says nothing of the namespace and comes back as
 * it is: errors are not absence.
 */
int netns_open_if_same(const char *spec, ino_t inode, unsigned long long cookie, int *ret_fd)
{
	char ignored[AGENT_ERR_SIZE];
	int fd, r;

	if (!spec)
		return -ENOENT;
	r = netns_open(spec, &fd, ignored, sizeof(ignored));
	if (r == -EINVAL || r == -ESRCH)
		return -ENOENT; /* no namespace there any more (or never: a bad spec) */
	if (r < 0)
		return r;
	r = netns_is(fd, inode, cookie);
	if (r == 0)
		r = -ENOENT;
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/**
 * netns_alive() - @spec still names the namespace whose inode is @inode (and
 * cookie @cookie, when known)
 *
 * 1 while it does; 0 when the name is gone (ip netns del, the process
 * exited) or now names another namespace: the one the VF went into is gone
 * for us; -errno when the look failed and says nothing either way.
 */
int netns_alive(const char *spec, ino_t inode, unsigned long long cookie)
{
	int fd = -1, r = netns_open_if_same(spec, inode, cookie, &fd);

	if (r >= 0)
		close(fd);
	return r >= 0 ? 1 : r == -ENOENT ? 0 : r;
}
