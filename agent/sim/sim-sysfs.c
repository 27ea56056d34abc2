/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Building blocks of the simulated host's sysfs tree: directories, attribute
 * files, relative links, and PCI devices with their driver, IOMMU group,
 * netdev and RDMA device, laid out as the kernel lays them out.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libvfpool/macro.h"
#include "agent/sim/sim-host.h"

/*
 * snprintf for paths: a path that does not fit becomes "" so the file
 * operation that follows fails (ENOENT) instead of touching a cut path.
 */
void sim_pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
}

int sim_mkdir_p(const char *root, const char *rel)
{
	char path[PATH_MAX];
	size_t rootlen = strlen(root);

	sim_pathf(path, sizeof(path), "%s/%s", root, rel);
	if (!path[0])
		return -ENAMETOOLONG;
	for (char *p = path + rootlen + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return negative_errno();
		*p = '/';
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return negative_errno();
	return 0;
}

static int mkdir_parent(const char *root, const char *rel)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", rel);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	return sim_mkdir_p(root, dir);
}

/* Writes an attribute file (with the kernel's trailing newline), making its directory. */
int sim_write(const char *root, const char *rel, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;
	int r;

	r = mkdir_parent(root, rel);
	if (r < 0)
		return r;
	sim_pathf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "we");
	if (!f)
		return negative_errno();
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) != 0)
		return negative_errno();
	return 0;
}

/* Splits @s at '/' into at most @max components pointing into @s (which it edits). */
static size_t split_path(char *s, char **parts, size_t max)
{
	size_t n = 0;

	for (char *tok = strtok(s, "/"); tok && n < max; tok = strtok(NULL, "/"))
		parts[n++] = tok;
	return n;
}

/* A link at @link_rel to @target_rel, both under @root, spelled relative as sysfs does. */
int sim_symlink(const char *root, const char *link_rel, const char *target_rel)
{
	char lbuf[PATH_MAX], tbuf[PATH_MAX], rel[PATH_MAX] = "", path[PATH_MAX];
	char *lp[64], *tp[64];
	size_t nl, nt, common = 0, len = 0;
	int r;

	r = mkdir_parent(root, link_rel);
	if (r < 0)
		return r;
	sim_pathf(lbuf, sizeof(lbuf), "%s", link_rel);
	sim_pathf(tbuf, sizeof(tbuf), "%s", target_rel);
	nl = split_path(lbuf, lp, ELEMENTSOF(lp)) - 1; /* the link's directory */
	nt = split_path(tbuf, tp, ELEMENTSOF(tp));
	while (common < nl && common < nt && strcmp(lp[common], tp[common]) == 0)
		common++;
	for (size_t i = common; i < nl; i++)
		len += snprintf(rel + len, sizeof(rel) - len, "../");
	for (size_t i = common; i < nt; i++)
		len += snprintf(rel + len, sizeof(rel) - len, "%s%s", tp[i], i + 1 < nt ? "/" : "");
	sim_pathf(path, sizeof(path), "%s/%s", root, link_rel);
	if (symlink(rel, path) < 0)
		return negative_errno();
	return 0;
}

/* The device's directory under devices/, relative to @root, found through bus/pci/devices. */
int sim_device_dir(const char *root, const char *addr, char *buf, size_t size)
{
	char link[PATH_MAX], target[PATH_MAX];
	ssize_t n;
	const char *p;

	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", root, addr);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return negative_errno();
	target[n] = '\0';
	p = strstr(target, "devices/");
	if (!p)
		return -EINVAL;
	if ((size_t)snprintf(buf, size, "%s", p) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* Binds @addr to @driver (NULL unbinds): the device's driver link and the driver's own. */
int sim_bind_driver(const char *root, const char *addr, const char *driver)
{
	char dev[PATH_MAX], rel[PATH_MAX], path[PATH_MAX], target[PATH_MAX];
	ssize_t n;
	int r;

	r = sim_device_dir(root, addr, dev, sizeof(dev));
	if (r < 0)
		return r;
	sim_pathf(path, sizeof(path), "%s/%s/driver", root, dev);
	n = readlink(path, target, sizeof(target) - 1);
	if (n >= 0) {
		target[n] = '\0';
		sim_pathf(rel, sizeof(rel), "%s/bus/pci/drivers/%s/%s", root, strrchr(target, '/') + 1,
			 addr);
		unlink(rel);
		unlink(path);
	}
	if (!driver)
		return 0;
	sim_pathf(rel, sizeof(rel), "bus/pci/drivers/%s", driver);
	r = sim_mkdir_p(root, rel);
	if (r >= 0) {
		sim_pathf(path, sizeof(path), "%s/driver", dev);
		r = sim_symlink(root, path, rel);
	}
	if (r >= 0) {
		sim_pathf(path, sizeof(path), "bus/pci/drivers/%s/%s", driver, addr);
		r = sim_symlink(root, path, dev);
	}
	return r;
}

/**
 * sim_add_pci_device() - a PCI function with its ids, class, NUMA node,
 * IOMMU group and driver, and its bus/pci/devices link
 */
int sim_add_pci_device(const char *root, const struct sim_pci_dev *d)
{
	char dev[PATH_MAX], rel[PATH_MAX];
	int r;

	sim_pathf(dev, sizeof(dev), "devices/%s/%s", d->parent ? d->parent : "pci0000:00", d->addr);
	r = sim_mkdir_p(root, dev);
	if (r < 0)
		return r;
	sim_pathf(rel, sizeof(rel), "%s/vendor", dev);
	r = sim_write(root, rel, "0x%s\n", d->vendor);
	sim_pathf(rel, sizeof(rel), "%s/device", dev);
	if (r >= 0)
		r = sim_write(root, rel, "0x%s\n", d->device);
	sim_pathf(rel, sizeof(rel), "%s/class", dev);
	if (r >= 0)
		r = sim_write(root, rel, "0x%06x\n", d->class);
	sim_pathf(rel, sizeof(rel), "%s/numa_node", dev);
	if (r >= 0)
		r = sim_write(root, rel, "%d\n", d->numa_node);
	sim_pathf(rel, sizeof(rel), "bus/pci/devices/%s", d->addr);
	if (r >= 0)
		r = sim_symlink(root, rel, dev);
	if (r >= 0 && d->iommu_group >= 0) {
		char group[64];

		sim_pathf(group, sizeof(group), "kernel/iommu_groups/%d", d->iommu_group);
		sim_pathf(rel, sizeof(rel), "%s/iommu_group", dev);
		r = sim_symlink(root, rel, group);
		sim_pathf(rel, sizeof(rel), "%s/devices/%s", group, d->addr);
		if (r >= 0)
			r = sim_symlink(root, rel, dev);
	}
	if (r >= 0 && d->driver)
		r = sim_bind_driver(root, d->addr, d->driver);
	return r;
}

/* A netdev of @addr: net/<ifname>/{address,type,operstate,mtu,ifindex} and class/net. */
int sim_add_netdev(const char *root, const char *addr, const char *ifname, int type,
		   const char *mac)
{
	static int next_ifindex = 2;
	char dev[PATH_MAX], rel[PATH_MAX], net[PATH_MAX];
	int r;

	r = sim_device_dir(root, addr, dev, sizeof(dev));
	if (r < 0)
		return r;
	sim_pathf(net, sizeof(net), "%s/net/%s", dev, ifname);
	sim_pathf(rel, sizeof(rel), "%s/address", net);
	r = sim_write(root, rel, "%s\n", mac);
	sim_pathf(rel, sizeof(rel), "%s/type", net);
	if (r >= 0)
		r = sim_write(root, rel, "%d\n", type);
	sim_pathf(rel, sizeof(rel), "%s/operstate", net);
	if (r >= 0)
		r = sim_write(root, rel, "down\n");
	sim_pathf(rel, sizeof(rel), "%s/mtu", net);
	if (r >= 0)
		r = sim_write(root, rel, "%d\n", type == 32 ? 2044 : 1500);
	sim_pathf(rel, sizeof(rel), "%s/ifindex", net);
	if (r >= 0)
		r = sim_write(root, rel, "%d\n", next_ifindex++);
	sim_pathf(rel, sizeof(rel), "%s/device", net);
	if (r >= 0)
		r = sim_symlink(root, rel, dev);
	sim_pathf(rel, sizeof(rel), "class/net/%s", ifname);
	if (r >= 0)
		r = sim_symlink(root, rel, net);
	return r;
}

/* An RDMA device of @addr with port 1: infiniband/<name>/{node_guid,ports/1/...}. */
int sim_add_rdma_device(const char *root, const char *addr, const char *name,
			const char *link_layer)
{
	char dev[PATH_MAX], rel[PATH_MAX], ib[PATH_MAX];
	bool is_ib = strcmp(link_layer, "InfiniBand") == 0;
	int r;

	r = sim_device_dir(root, addr, dev, sizeof(dev));
	if (r < 0)
		return r;
	sim_pathf(ib, sizeof(ib), "%s/infiniband/%s", dev, name);
	sim_pathf(rel, sizeof(rel), "%s/node_guid", ib);
	r = sim_write(root, rel, "%s\n", "0000:0000:0000:0000");
	sim_pathf(rel, sizeof(rel), "%s/ports/1/state", ib);
	if (r >= 0)
		r = sim_write(root, rel, "%s\n", is_ib ? "4: ACTIVE" : "1: DOWN");
	sim_pathf(rel, sizeof(rel), "%s/ports/1/phys_state", ib);
	if (r >= 0)
		r = sim_write(root, rel, "%s\n", is_ib ? "5: LinkUp" : "3: Disabled");
	sim_pathf(rel, sizeof(rel), "%s/ports/1/sm_lid", ib);
	if (r >= 0)
		r = sim_write(root, rel, "%s\n", is_ib ? "0x1" : "0x0");
	sim_pathf(rel, sizeof(rel), "%s/ports/1/lid", ib);
	if (r >= 0)
		r = sim_write(root, rel, "0x0\n");
	sim_pathf(rel, sizeof(rel), "%s/ports/1/link_layer", ib);
	if (r >= 0)
		r = sim_write(root, rel, "%s\n", link_layer);
	sim_pathf(rel, sizeof(rel), "%s/ports/1/pkeys/0", ib); /* the default partition */
	if (r >= 0 && is_ib)
		r = sim_write(root, rel, "0xffff\n");
	sim_pathf(rel, sizeof(rel), "%s/device", ib);
	if (r >= 0)
		r = sim_symlink(root, rel, dev);
	sim_pathf(rel, sizeof(rel), "class/infiniband/%s", name);
	if (r >= 0)
		r = sim_symlink(root, rel, ib);
	return r;
}
