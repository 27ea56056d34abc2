/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the facts of one PCI device directory. A missing file is an
 * absent fact and stays quiet; a file that exists but holds garbage, or
 * cannot be read, is absent too and earns exactly one warning naming it.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"
#include "sysfs.h"


enum vfp_link_type vfp_link_type_from_arphrd(int type)
{
	switch (type) {
	case 1: /* ARPHRD_ETHER */
		return VFP_LINK_ETHERNET;
	case 32: /* ARPHRD_INFINIBAND */
		return VFP_LINK_INFINIBAND;
	default:
		return VFP_LINK_NONE;
	}
}

/* Printable ASCII without '/': safe in a path, a log line and a JSON string. */
static bool name_is_sane(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < 0x21 || *s > 0x7e || *s == '/')
			return false;
	return true;
}

static int dup_or_null(const char *s, char **ret)
{
	char *c = strdup(s);

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

/*
 * Reads one attribute of a device. True when a value was read; a missing
 * file is quietly false, any other failure is false with a warning.
 */
static bool read_attr(struct vfp_inventory *inv, const char *pci, const char *attr, char *buf,
		      size_t size)
{
	char rel[PATH_MAX];
	int r;

	vfp_sysfs_dev(rel, sizeof(rel), pci, "%s", attr);
	r = vfp_sysfs_read(inv->ctx, rel, buf, size);
	if (r >= 0)
		return true;
	if (r != -ENOENT)
		vfp_inventory_warn(inv, pci, attr, "cannot read: %s", strerror(-r));
	return false;
}

/* A vendor or device id: "0x15b3" in sysfs, "15b3" for us. */
int vfp_device_read_id(struct vfp_inventory *inv, const char *pci, const char *attr,
		       char **ret_id)
{
	char buf[VFP_ATTR_MAX], id[5] = "";

	if (!read_attr(inv, pci, attr, buf, sizeof(buf)))
		return 0;
	if (strncmp(buf, "0x", 2) == 0 && strlen(buf) == 6) {
		for (size_t i = 0; i < 4; i++)
			id[i] = (char)tolower((unsigned char)buf[2 + i]);
		id[4] = '\0';
	}
	if (!vfp_pci_id_is_valid(id)) {
		vfp_inventory_warn(inv, pci, attr, "not a PCI id: \"%s\"", buf);
		return 0;
	}
	return dup_or_null(id, ret_id);
}

/* An int attribute in @base (16 accepts sysfs's "0x"); out of [@min, @max] is garbage. */
int vfp_device_read_opt_int(struct vfp_inventory *inv, const char *pci, const char *attr,
			    int base, int min, int max, struct vfp_opt_int *ret)
{
	char buf[VFP_ATTR_MAX];
	int v;

	if (!read_attr(inv, pci, attr, buf, sizeof(buf)))
		return 0;
	if (vfp_parse_int(buf, base, min, max, &v) < 0) {
		vfp_inventory_warn(inv, pci, attr, "not a number in [%d, %d]: \"%s\"", min, max,
				   buf);
		return 0;
	}
	ret->valid = true;
	ret->value = v;
	return 0;
}

/* The name a link points at ("driver" → "mlx5_core"); no link is no name. */
int vfp_device_read_link_name(struct vfp_inventory *inv, const char *pci, const char *link,
			      char **ret_name)
{
	char rel[PATH_MAX], name[NAME_MAX + 1];
	int r;

	vfp_sysfs_dev(rel, sizeof(rel), pci, "%s", link);
	r = vfp_sysfs_link_basename(inv->ctx, rel, name, sizeof(name));
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		vfp_inventory_warn(inv, pci, link, "not a readable link: %s", strerror(-r));
		return 0;
	}
	if (!name_is_sane(name)) {
		vfp_inventory_warn(inv, pci, link, "target name is not printable ASCII");
		return 0;
	}
	return dup_or_null(name, ret_name);
}

/* The one entry of net/ or infiniband/; none is normal, two or more is a warning. */
static int read_single_entry(struct vfp_inventory *inv, const char *pci, const char *dir,
			     char **ret_name)
{
	char rel[PATH_MAX];
	char **names = NULL;
	size_t n = 0;
	int r;

	vfp_sysfs_dev(rel, sizeof(rel), pci, "%s", dir);
	r = vfp_sysfs_list_dir(inv->ctx, rel, &names, &n);
	if (r == -ENOENT)
		return 0;
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		vfp_inventory_warn(inv, pci, dir, "cannot list: %s", strerror(-r));
		return 0;
	}
	if (n > 1)
		vfp_inventory_warn(inv, pci, dir, "%zu entries (%s, %s%s), expected one", n,
				   names[0], names[1], n > 2 ? ", …" : "");
	else if (n == 1 && !name_is_sane(names[0]))
		vfp_inventory_warn(inv, pci, dir, "entry name is not printable ASCII");
	else if (n == 1)
		*ret_name = TAKE_PTR(names[0]);
	vfp_strv_free(names, n);
	return 0;
}

static bool is_hw_address(const char *s)
{
	size_t bytes = 0;

	for (;;) {
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]))
			return false;
		bytes++;
		if (s[2] == '\0')
			break;
		if (s[2] != ':')
			return false;
		s += 3;
	}
	return bytes == 6 || bytes == 20; /* Ethernet, IPoIB */
}

static int read_netdev(struct vfp_inventory *inv, const char *pci, struct vfp_devfacts *f)
{
	char attr[NAME_MAX + 16], buf[VFP_ATTR_MAX];
	struct vfp_opt_int type = { 0 };
	int r;

	r = read_single_entry(inv, pci, "net", &f->netdev);
	if (r < 0 || !f->netdev)
		return r;
	snprintf(attr, sizeof(attr), "net/%s/type", f->netdev);
	r = vfp_device_read_opt_int(inv, pci, attr, 10, 0, 0xffff, &type);
	if (r < 0)
		return r;
	f->netdev_type = type.valid ? type.value : -1;

	snprintf(attr, sizeof(attr), "net/%s/address", f->netdev);
	if (!read_attr(inv, pci, attr, buf, sizeof(buf)))
		return 0;
	if (!is_hw_address(buf)) {
		vfp_inventory_warn(inv, pci, attr, "not a hardware address: \"%s\"", buf);
		return 0;
	}
	return dup_or_null(buf, &f->mac);
}

/*
 * A software RDMA device over @netdev (rdma_rxe names its netdev in its
 * "parent" attribute; it has no infiniband/ entry under the PCI device):
 * the RDMA device of a VF whose netdev carries RoCE through rxe.
 */
static int read_soft_rdma(struct vfp_inventory *inv, const char *netdev, char **ret_name)
{
	char **names = NULL, rel[PATH_MAX], buf[VFP_ATTR_MAX];
	size_t n = 0;
	int r = vfp_sysfs_list_dir(inv->ctx, "class/infiniband", &names, &n);

	if (r < 0)
		return r == -ENOMEM ? r : 0;
	for (size_t i = 0; i < n && !*ret_name; i++) {
		vfp_sysfs_class(rel, sizeof(rel), "infiniband", names[i], "parent");
		if (name_is_sane(names[i]) && vfp_sysfs_read(inv->ctx, rel, buf, sizeof(buf)) >= 0 &&
		    strcmp(buf, netdev) == 0)
			*ret_name = TAKE_PTR(names[i]);
	}
	vfp_strv_free(names, n);
	return 0;
}

void vfp_devfacts_clear(struct vfp_devfacts *f)
{
	free(f->vendor);
	free(f->device);
	free(f->driver);
	free(f->netdev);
	free(f->mac);
	free(f->rdma_device);
	memset(f, 0, sizeof(*f));
}

/**
 * vfp_device_read_facts() - the facts PFs and VFs share
 *
 * A device with no driver, no netdev or no RDMA device is not an error:
 * those facts stay NULL. Only -ENOMEM fails the read.
 */
int vfp_device_read_facts(struct vfp_inventory *inv, const char *pci, struct vfp_devfacts *f)
{
	int r;

	f->netdev_type = -1;
	r = vfp_device_read_id(inv, pci, "vendor", &f->vendor);
	if (r >= 0)
		r = vfp_device_read_id(inv, pci, "device", &f->device);
	if (r >= 0)
		r = vfp_device_read_link_name(inv, pci, "driver", &f->driver);
	if (r >= 0)
		r = vfp_device_read_opt_int(inv, pci, "numa_node", 10, -1, INT_MAX, &f->numa_node);
	if (r >= 0)
		r = read_netdev(inv, pci, f);
	if (r >= 0)
		r = read_single_entry(inv, pci, "infiniband", &f->rdma_device);
	if (r >= 0 && !f->rdma_device && f->netdev)
		r = read_soft_rdma(inv, f->netdev, &f->rdma_device);
	return r;
}

/* Port 1's link layer of an RDMA device, for a PF without a netdev. */
int vfp_device_read_rdma_link_layer(struct vfp_inventory *inv, const char *pci,
				    const char *rdma_device, enum vfp_link_type *ret)
{
	char attr[NAME_MAX + 32], buf[VFP_ATTR_MAX];

	snprintf(attr, sizeof(attr), "infiniband/%s/ports/1/link_layer", rdma_device);
	if (!read_attr(inv, pci, attr, buf, sizeof(buf)))
		return 0;
	if (strcmp(buf, "InfiniBand") == 0)
		*ret = VFP_LINK_INFINIBAND;
	else if (strcmp(buf, "Ethernet") == 0)
		*ret = VFP_LINK_ETHERNET;
	else
		vfp_inventory_warn(inv, pci, attr, "unknown link layer \"%s\"", buf);
	return 0;
}
