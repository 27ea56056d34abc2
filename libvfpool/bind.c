/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device's driver and netdev as the kernel shows them now (not as the last
 * scan saw them), and rebinding a VF to another driver through sysfs:
 * driver_override, unbind, drivers_probe, as libvirt's virPCIDeviceBindToStub
 * does. On a simulated host the same writes go to its kernel stand-in.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libvfpool.h"
#include "macro.h"
#include "private.h"
#include "sysfs.h"

bool vfp_driver_name_is_valid(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/**
 * vfp_device_read_driver() - the driver @pci is bound to now
 *
 * An unbound device is not an error: @buf is "" and the return is 0.
 * -ENODEV when the device is gone, -EINVAL for a malformed address.
 */
VFP_EXPORT int vfp_device_read_driver(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size)
{
	char rel[64];
	int r;

	if (!vfp_pci_addr_is_valid(pci))
		return -EINVAL;
	vfp_sysfs_dev(rel, sizeof(rel), pci, NULL);
	if (vfp_sysfs_exists(ctx, rel) <= 0)
		return -ENODEV;
	vfp_sysfs_dev(rel, sizeof(rel), pci, "driver");
	r = vfp_sysfs_link_basename(ctx, rel, buf, size);
	if (r == -ENOENT) {
		buf[0] = '\0';
		return 0;
	}
	return r < 0 ? r : 0;
}

/**
 * vfp_device_read_netdev() - the one netdev under @pci's net/ now
 *
 * -ENOENT when it has none (moved into a namespace, bound to vfio-pci, or
 * not a network device), -ENOTUNIQ when it has several.
 */
VFP_EXPORT int vfp_device_read_netdev(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size)
{
	char rel[64], **names = NULL;
	size_t n = 0;
	int r;

	if (!vfp_pci_addr_is_valid(pci))
		return -EINVAL;
	vfp_sysfs_dev(rel, sizeof(rel), pci, "net");
	r = vfp_sysfs_list_dir(ctx, rel, &names, &n);
	if (r >= 0 && n == 0)
		r = -ENOENT;
	else if (r >= 0 && n > 1)
		r = -ENOTUNIQ;
	else if (r >= 0 && (size_t)snprintf(buf, size, "%s", names[0]) >= size)
		r = -ENAMETOOLONG;
	else if (r > 0)
		r = 0;
	vfp_strv_free(names, n);
	return r;
}

/* @pci off its driver, if it has one; then, if @probe, offered to the drivers again. */
static int unbind(struct vfp_ctx *ctx, const char *pci, bool probe)
{
	char rel[64], drv[64];
	int r = vfp_device_read_driver(ctx, pci, drv, sizeof(drv));

	if (r >= 0 && drv[0]) {
		vfp_sysfs_dev(rel, sizeof(rel), pci, "driver/unbind");
		r = vfp_sysfs_write(ctx, rel, pci);
	}
	if (r >= 0 && probe)
		r = vfp_sysfs_write(ctx, "bus/pci/drivers_probe", pci);
	return r;
}

/**
 * vfp_device_bind_driver() - rebind @pci to @driver
 * @driver: a driver name; "" for none (unbound, the override cleared, no
 *	    probe); or NULL for the device's own driver (the override is
 *	    cleared and the kernel picks, as at boot)
 *
 * Returns 0 when @pci ends up bound to @driver (or to some driver, for
 * NULL; to none, for ""); -ENXIO when no driver took it, which leaves it
 * unbound with the override in place for the caller to undo; the kernel's
 * -errno otherwise.
 */
VFP_EXPORT int vfp_device_bind_driver(struct vfp_ctx *ctx, const char *pci, const char *driver)
{
	char rel[64], now[64] = "";
	int r;

	if (!vfp_pci_addr_is_valid(pci) || (driver && driver[0] && !vfp_driver_name_is_valid(driver)))
		return -EINVAL;
	r = vfp_device_read_driver(ctx, pci, now, sizeof(now));
	if (r < 0)
		return r;
	if (driver && strcmp(now, driver) == 0)
		return 0;
	vfp_sysfs_dev(rel, sizeof(rel), pci, "driver_override");
	r = vfp_sysfs_write(ctx, rel, driver && driver[0] ? driver : "\n");
	if (r >= 0)
		r = unbind(ctx, pci, !driver || driver[0]);
	if (r >= 0)
		r = vfp_device_read_driver(ctx, pci, now, sizeof(now));
	if (r >= 0 && (driver ? strcmp(now, driver) != 0 : now[0] == '\0'))
		r = -ENXIO;
	vfp_dbg(ctx, "%s: bind to %s: %d", pci, !driver ? "its own driver" : driver[0] ? driver : "none",
		r);
	return r;
}

/**
 * vfp_device_rebind() - unbind @pci and probe it again, keeping its driver
 *
 * What makes a VF pick up settings its PF holds for it (IB GUIDs on mlx5).
 * An unbound device is only probed.
 */
VFP_EXPORT int vfp_device_rebind(struct vfp_ctx *ctx, const char *pci)
{
	if (!vfp_pci_addr_is_valid(pci))
		return -EINVAL;
	return unbind(ctx, pci, true);
}
