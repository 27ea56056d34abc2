/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulated host's kernel: sysfs writes behave as Linux's do. Writing
 * sriov_numvfs creates or destroys VFs with their links, netdevs and RDMA
 * devices, refusing as drivers/pci/iov.c does, in its order (set_numvfs()).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libvfpool/macro.h"
#include "agent/sim/sim-host.h"

static int read_file(const char *root, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	FILE *f;

	sim_pathf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "re");
	if (!f)
		return negative_errno();
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_link_name(const char *root, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	sim_pathf(path, sizeof(path), "%s/%s", root, rel);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return negative_errno();
	target[n] = '\0';
	sim_pathf(buf, size, "%s", strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
	return buf[0] ? 0 : -ENAMETOOLONG;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

/* Removes a file, a link or a whole directory under @root. */
static void sim_remove(const char *root, const char *rel)
{
	char path[PATH_MAX];

	sim_pathf(path, sizeof(path), "%s/%s", root, rel);
	if (path[0] && unlink(path) < 0)
		nftw(path, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Removes the links other parts of sysfs hold to a device's netdevs and RDMA devices. */
static void remove_class_links(const char *root, const char *dev, const char *dir,
			       const char *class)
{
	char rel[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	sim_pathf(path, sizeof(path), "%s/%s/%s", root, dev, dir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		sim_pathf(rel, sizeof(rel), "class/%s/%s", class, de->d_name);
		sim_remove(root, rel);
	}
	closedir(d);
}

/* A VF is gone the way the kernel removes it: every link to it, then its directory. */
static void remove_vf(const char *root, const char *pf_dev, unsigned index)
{
	char rel[PATH_MAX], addr[32], dev[PATH_MAX], drv[64], group[32];

	sim_pathf(rel, sizeof(rel), "%s/virtfn%u", pf_dev, index);
	if (read_link_name(root, rel, addr, sizeof(addr)) < 0)
		return;
	sim_remove(root, rel);
	if (sim_device_dir(root, addr, dev, sizeof(dev)) < 0)
		return;
	remove_class_links(root, dev, "net", "net");
	remove_class_links(root, dev, "infiniband", "infiniband");
	sim_pathf(rel, sizeof(rel), "%s/driver", dev);
	if (read_link_name(root, rel, drv, sizeof(drv)) >= 0) {
		sim_pathf(rel, sizeof(rel), "bus/pci/drivers/%s/%s", drv, addr);
		sim_remove(root, rel);
	}
	sim_pathf(rel, sizeof(rel), "%s/iommu_group", dev);
	if (read_link_name(root, rel, group, sizeof(group)) >= 0) {
		sim_pathf(rel, sizeof(rel), "kernel/iommu_groups/%s", group);
		sim_remove(root, rel);
	}
	sim_pathf(rel, sizeof(rel), "bus/pci/devices/%s", addr);
	sim_remove(root, rel);
	sim_remove(root, dev);
}

/* As the kernel's kstrtou16(s, 0): decimal, 0x hex or 0 octal, one trailing newline. */
static int parse_u16(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	if (*s == '+')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || v > 65535 || (*end && strcmp(end, "\n") != 0))
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static int read_int(const char *root, const char *dev, const char *attr)
{
	char rel[PATH_MAX], buf[32];

	sim_pathf(rel, sizeof(rel), "%s/%s", dev, attr);
	return read_file(root, rel, buf, sizeof(buf)) < 0 ? 0 : atoi(buf);
}

static int make_vfs(const char *root, const char *pf, const char *pf_dev, unsigned cur,
		    unsigned n)
{
	char rel[PATH_MAX];
	struct sim_pf_read rd;
	int r;

	for (unsigned i = 0; i < cur; i++)
		remove_vf(root, pf_dev, i);
	r = sim_pf_spec_read(root, pf, &rd);
	rd.spec.numvfs = n;
	for (unsigned i = 0; r >= 0 && i < n; i++)
		r = sim_add_vf(root, &rd.spec, i, sim_card_vf_driver(rd.spec.card));
	sim_pathf(rel, sizeof(rel), "%s/sriov_numvfs", pf_dev);
	if (r >= 0)
		r = sim_write(root, rel, "%u\n", n);
	return r;
}

/*
 * sriov_numvfs_store() of drivers/pci/iov.c, check for check: not a u16
 * EINVAL; above sriov_totalvfs ERANGE; the current number succeeds and
 * changes nothing; no driver, or one without sriov_configure (mlx4_core,
 * which sizes VFs by module parameter) ENOENT; N on top of N' != 0 EBUSY.
 */
static int set_numvfs(const char *root, const char *pf, const char *value)
{
	char pf_dev[PATH_MAX], rel[PATH_MAX], drv[64];
	unsigned n, cur;

	if (sim_device_dir(root, pf, pf_dev, sizeof(pf_dev)) < 0)
		return -ENOENT;
	if (parse_u16(value, &n) < 0)
		return -EINVAL;
	if ((int)n > read_int(root, pf_dev, "sriov_totalvfs"))
		return -ERANGE;
	cur = (unsigned)read_int(root, pf_dev, "sriov_numvfs");
	if (n == cur)
		return 0;
	sim_pathf(rel, sizeof(rel), "%s/driver", pf_dev);
	if (read_link_name(root, rel, drv, sizeof(drv)) < 0 || strcmp(drv, "mlx4_core") == 0)
		return -ENOENT;
	if (n != 0 && cur != 0)
		return -EBUSY;
	return make_vfs(root, pf, pf_dev, cur, n);
}

/* @addr as a line of <root>/@name, for tests to count (resets, unbinds). */
static void log_device(const char *root, const char *name, const char *addr)
{
	char rel[PATH_MAX];
	FILE *log;

	sim_pathf(rel, sizeof(rel), "%s/%s", root, name);
	log = fopen(rel, "ae");
	if (log) {
		fprintf(log, "%s\n", addr);
		fclose(log);
	}
}

/*
 * Unbinding removes what the driver made: netdevs and RDMA devices. Each
 * is recorded in <root>/sim-unbinds.
 */
static void unbind(const char *root, const char *addr)
{
	char dev[PATH_MAX], rel[PATH_MAX];

	if (sim_device_dir(root, addr, dev, sizeof(dev)) < 0)
		return;
	remove_class_links(root, dev, "net", "net");
	remove_class_links(root, dev, "infiniband", "infiniband");
	sim_pathf(rel, sizeof(rel), "%s/net", dev);
	sim_remove(root, rel);
	sim_pathf(rel, sizeof(rel), "%s/infiniband", dev);
	sim_remove(root, rel);
	sim_bind_driver(root, addr, NULL);
	log_device(root, "sim-unbinds", addr);
}

/* drivers_probe: the driver in driver_override, else the card's VF driver. */
static int probe(const char *root, const char *addr)
{
	char dev[PATH_MAX], rel[PATH_MAX], drv[64] = "", pf[32];
	struct sim_pf_read rd;
	int r;

	if (sim_device_dir(root, addr, dev, sizeof(dev)) < 0)
		return -ENODEV;
	sim_pathf(rel, sizeof(rel), "%s/driver", dev);
	if (read_link_name(root, rel, drv, sizeof(drv)) >= 0)
		return 0; /* bound already: the kernel does nothing */
	sim_pathf(rel, sizeof(rel), "%s/physfn", dev);
	if (read_link_name(root, rel, pf, sizeof(pf)) < 0 || sim_pf_spec_read(root, pf, &rd) < 0)
		return -ENODEV;
	sim_pathf(rel, sizeof(rel), "%s/driver_override", dev);
	if (read_file(root, rel, drv, sizeof(drv)) < 0 || !drv[0] || !strcmp(drv, "(null)"))
		snprintf(drv, sizeof(drv), "%s", sim_card_vf_driver(rd.spec.card));
	if (strcmp(drv, "vfio-pci") != 0 && strcmp(drv, sim_card_vf_driver(rd.spec.card)) != 0)
		return 0; /* no such driver here: the device stays unbound, and the write succeeds */
	r = sim_bind_driver(root, addr, drv);
	if (r >= 0 && strcmp(drv, sim_card_vf_driver(rd.spec.card)) == 0)
		r = sim_add_vf_functions(root, &rd.spec, addr);
	return r;
}

/*
 * reset_store() of drivers/pci/pci-sysfs.c: only "1" (EINVAL), a function
 * with no reset method has none (ENOTTY). A reset with a driver bound
 * takes the function from under it: the driver lets go and probes again,
 * so what it made (netdev, MAC) is made anew. Each reset is recorded in
 * <root>/sim-resets, one address a line, for tests to count.
 */
static int reset(const char *root, const char *addr, const char *value)
{
	char dev[PATH_MAX], rel[PATH_MAX], methods[64] = "", drv[64];

	if (sim_device_dir(root, addr, dev, sizeof(dev)) < 0)
		return -ENODEV;
	if (strcmp(value, "1") != 0 && strcmp(value, "1\n") != 0)
		return -EINVAL;
	sim_pathf(rel, sizeof(rel), "%s/reset_method", dev);
	if (read_file(root, rel, methods, sizeof(methods)) < 0 || !methods[0])
		return -ENOTTY;
	sim_pathf(rel, sizeof(rel), "%s/driver", dev);
	if (read_link_name(root, rel, drv, sizeof(drv)) >= 0) {
		unbind(root, addr);
		probe(root, addr);
	}
	log_device(root, "sim-resets", addr);
	return 0;
}

/* "bus/pci/drivers/D/unbind" or "bus/pci/devices/X/driver/unbind": the device is in @value. */
static bool is_unbind(const char *rel)
{
	size_t n = strlen(rel);

	return n > 7 && strcmp(rel + n - 7, "/unbind") == 0 &&
	       (strncmp(rel, "bus/pci/drivers/", 16) == 0 ||
		(strncmp(rel, "bus/pci/devices/", 16) == 0 && strstr(rel, "/driver/unbind")));
}

/**
 * sim_kernel_write() - libvfpool's sysfs write handler for a simulated host
 *
 * Handles the writes whose effect the kernel makes (sriov_numvfs,
 * drivers_probe, unbind); the others (driver_override) go to the file.
 */
/*
 * A fault a test asks for: <root>/sim-faults holds "ATTR ERRNO [COUNT]"
 * (e.g. "sriov_numvfs EBUSY", "drivers_probe EIO 1"); a write to a path
 * that ends in ATTR then fails as the kernel would fail it, every time, or
 * the next COUNT times. "SLOW" instead of an errno makes the write take 3 s
 * and then work (a test kills the agent in the middle of it).
 */
static int injected_fault(const char *root, const char *rel)
{
	static const struct {
		const char *name;
		int err;
	} errnos[] = { { "EBUSY", EBUSY }, { "EIO", EIO }, { "EINVAL", EINVAL },
		       { "ENOMEM", ENOMEM }, { "EPERM", EPERM }, { "ENODEV", ENODEV } };
	char buf[256], attr[128], name[16];
	size_t n = strlen(rel), m;
	int count = -1, fields;

	if (read_file(root, "sim-faults", buf, sizeof(buf)) < 0 ||
	    (fields = sscanf(buf, "%127s %15s %d", attr, name, &count)) < 2 || count == 0)
		return 0;
	m = strlen(attr);
	if (m > n || strcmp(rel + n - m, attr) != 0)
		return 0;
	if (fields == 3)
		sim_write(root, "sim-faults", "%s %s %d\n", attr, name, count - 1);
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (strcmp(name, errnos[i].name) == 0)
			return -errnos[i].err;
	if (strcmp(name, "SLOW") == 0)
		sleep(3);
	return 0;
}

int sim_kernel_write(void *userdata, const char *root, const char *rel, const char *value,
		     int *ret_result)
{
	char pf[32], addr[32];
	const char *attr;
	int fault = injected_fault(root, rel);

	if (fault < 0) {
		*ret_result = fault;
		return 1;
	}
	snprintf(addr, sizeof(addr), "%.*s", (int)strcspn(value, "\n"), value);
	if (strcmp(rel, "bus/pci/drivers_probe") == 0) {
		*ret_result = probe(root, addr);
		return 1;
	}
	if (is_unbind(rel)) {
		unbind(root, addr);
		*ret_result = 0;
		return 1;
	}
	if (strncmp(rel, "bus/pci/devices/", 16) != 0)
		return 0;
	attr = strchr(rel + 16, '/');
	if (!attr || attr - (rel + 16) >= (int)sizeof(pf))
		return 0;
	snprintf(pf, sizeof(pf), "%.*s", (int)(attr - (rel + 16)), rel + 16);
	if (strcmp(attr, "/sriov_numvfs") == 0) {
		*ret_result = set_numvfs(root, pf, value);
		return 1;
	}
	if (strcmp(attr, "/reset") == 0) {
		*ret_result = reset(root, pf, value);
		return 1;
	}
	return 0;
}
