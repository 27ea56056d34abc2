/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agent/container/netns.h"
#include "agent/log.h"
#include "agent/owner.h"

/* The namespace a container owner names, open; -errno with @err naming the field. */
static int open_owner_netns(const struct vfp_owner *o, int *ret_fd, char *err, size_t err_size)
{
	char spec[32], msg[AGENT_ERR_SIZE];
	int r;

	if (!o->netns)
		snprintf(spec, sizeof(spec), "pid:%lld", o->pid);
	r = netns_open(o->netns ? o->netns : spec, ret_fd, msg, sizeof(msg));
	if (r < 0)
		snprintf(err, err_size, "owner.%s: %s", o->netns ? "netns" : "pid", msg);
	return r;
}

/**
 * owner_resolve() - a container owner's namespace, found at claim time
 *
 * The namespace must exist (-ENOENT otherwise, naming the field); its
 * inode goes into @o->netns_inode, its cookie (never given to another
 * namespace while the kernel runs; 0 before Linux 5.14) into
 * @o->netns_cookie. A VM owner's domain may not exist yet
 * (a deployment file is claimed for before the domain is defined).
 */
int owner_resolve(struct vfp_owner *o, char *err, size_t err_size)
{
	ino_t inode = 0;
	int fd, r;

	if (o->kind != VFP_OWNER_CONTAINER)
		return 0;
	r = open_owner_netns(o, &fd, err, err_size);
	if (r < 0)
		return r;
	r = netns_inode(fd, &inode);
	o->netns_cookie = 0;
	if (r >= 0 && (r = netns_cookie(fd, &o->netns_cookie)) == -ENOPROTOOPT)
		r = 0;
	close(fd);
	o->netns_inode = inode;
	return r;
}

/* @o's namespace: the one kept at claim time, or found now. */
static int owner_ns(const struct vfp_owner *o, struct vfp_owner *ret, char *err, size_t err_size)
{
	int r = 0;

	*ret = *o;
	if (!o->netns_inode)
		r = owner_resolve(ret, err, err_size);
	return r;
}

/**
 * owner_check_netns() - the namespace @spec (inode @target, cookie
 * @target_cookie, 0 when the kernel has none) is @o's own: -EPERM when it
 * is another's (a namespace made since under a freed inode included), or
 * @o is a VM
 */
int owner_check_netns(const struct vfp_owner *o, ino_t target, unsigned long long target_cookie,
		      const char *spec, char *err, size_t err_size)
{
	struct vfp_owner own;
	int r;

	if (o->kind != VFP_OWNER_CONTAINER) {
		snprintf(err, err_size, "netns: the allocation's owner is VM %s: its VFs go into a "
			 "domain", o->name ? o->name : "?");
		return -EPERM;
	}
	r = owner_ns(o, &own, err, err_size);
	if (r >= 0 && ((ino_t)own.netns_inode != target ||
		       (own.netns_cookie && target_cookie && own.netns_cookie != target_cookie))) {
		snprintf(err, err_size, "netns: \"%.64s\" is not the namespace of the allocation's "
			 "owner", spec);
		r = -EPERM;
	}
	return r == -ENOENT ? -EPERM : r;
}

/* Whether @o is the VM whose domain has UUID @uuid (any case). */
bool owner_is_domain(const struct vfp_owner *o, const char *uuid)
{
	return o && o->kind == VFP_OWNER_VM && o->uuid && strcasecmp(o->uuid, uuid) == 0;
}

/**
 * owner_check_domain() - the domain @name (@uuid) is @o's own, by name or
 * UUID: -EPERM when it is another's, or @o is a container
 */
int owner_check_domain(const struct vfp_owner *o, const char *name, const char *uuid, char *err,
		       size_t err_size)
{
	if (owner_is_domain(o, uuid) || (o->kind == VFP_OWNER_VM && o->name &&
					 strcmp(o->name, name) == 0))
		return 0;
	snprintf(err, err_size, "domain: %s is not the allocation's owner (%s %s)", name,
		 o->kind == VFP_OWNER_VM ? "VM" : "container",
		 o->kind == VFP_OWNER_VM ? (o->name ? o->name : "?")
					 : (o->netns ? o->netns : "pid"));
	return -EPERM;
}

/**
 * owner_exists() - a container owner's namespace is still the one it
 * claimed with: 1 while it is, 0 once it is gone (no namespace under its
 * name, or another one); other owners are asked elsewhere (1 here)
 *
 * A look that fails for another reason (EMFILE, ENOMEM, EACCES…) is no
 * answer: -errno, and the owner is not taken for gone.
 */
int owner_exists(const struct vfp_owner *o)
{
	struct vfp_owner now = *o;
	char ignored[AGENT_ERR_SIZE];
	int r;

	if (o->kind != VFP_OWNER_CONTAINER)
		return 1;
	r = owner_resolve(&now, ignored, sizeof(ignored));
	if (r == -ENOENT || r == -ESRCH || r == -EINVAL)
		return 0;
	if (r < 0)
		return r;
	if (o->netns_cookie && now.netns_cookie && now.netns_cookie != o->netns_cookie)
		return 0; /* another namespace, under the inode the owner's had */
	return !o->netns_inode || now.netns_inode == o->netns_inode;
}
