/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Resetting a VF between tenants: off its driver, a function-level reset
 * through sysfs (`reset`, by the methods `reset_method` lists), back on the
 * same driver. The driver's teardown and probe drop whatever the last
 * tenant left in the function and in the driver (netdev, addresses, MAC,
 * queues); the reset clears the device itself.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libvfpool.h"
#include "private.h"
#include "sysfs.h"

static const char *const step_names[] = {
	[VFP_RESET_METHOD] = "reading reset_method",
	[VFP_RESET_UNBIND] = "unbinding its driver",
	[VFP_RESET_WRITE] = "writing reset",
	[VFP_RESET_REBIND] = "binding its driver again",
};

VFP_EXPORT const char *vfp_reset_step_to_string(enum vfp_reset_step s)
{
	return (unsigned)s < ELEMENTSOF(step_names) ? step_names[s] : "resetting";
}

/* The methods the kernel would use ("flr", "pm bus"); -EOPNOTSUPP when it has none. */
static int reset_methods(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size)
{
	char rel[64];
	int r;

	vfp_sysfs_dev(rel, sizeof(rel), pci, "reset_method");
	r = vfp_sysfs_read(ctx, rel, buf, size);
	if (r == -ENOENT) { /* kernels before 5.15: no reset_method, a reset file when one works */
		vfp_sysfs_dev(rel, sizeof(rel), pci, "reset");
		snprintf(buf, size, "(kernel's choice)");
		return vfp_sysfs_exists(ctx, rel) > 0 ? 0 : -EOPNOTSUPP;
	}
	if (r >= 0 && !buf[0])
		return -EOPNOTSUPP;
	return r < 0 ? r : 0;
}

static int read_override(struct vfp_ctx *ctx, const char *pci, char *buf, size_t size)
{
	char rel[64];

	vfp_sysfs_dev(rel, sizeof(rel), pci, "driver_override");
	if (vfp_sysfs_read(ctx, rel, buf, size) < 0 || strcmp(buf, "(null)") == 0)
		buf[0] = '\0';
	return 0;
}

static int write_override(struct vfp_ctx *ctx, const char *pci, const char *driver)
{
	char rel[64];

	vfp_sysfs_dev(rel, sizeof(rel), pci, "driver_override");
	return vfp_sysfs_write(ctx, rel, driver[0] ? driver : "\n");
}

/*
 * Off its driver, the driver's name left in driver_override: a reset that a
 * crash interrupts leaves the VF unbound, and the override says where it
 * goes back (vfp_device_reset() on it again finds it there).
 */
static int unbind_keeping_driver(struct vfp_ctx *ctx, const char *pci, const char *driver)
{
	char rel[64];
	int r = write_override(ctx, pci, driver);

	vfp_sysfs_dev(rel, sizeof(rel), pci, "driver/unbind");
	return r < 0 ? r : vfp_sysfs_write(ctx, rel, pci);
}

/**
 * vfp_device_reset() - reset function @pci and bind it back to its driver
 * @ret: the reset methods, the driver it went back to, and which step
 *       failed (set on failure too)
 *
 * The driver it had (none is fine) is what it has after. A VF found
 * unbound with a driver_override is one whose reset a crash interrupted:
 * it goes back to that driver. -EOPNOTSUPP when the kernel has no way to
 * reset it; -ENXIO when its driver did not take it back (it is left
 * unbound); the kernel's -errno of the failed step otherwise.
 */
VFP_EXPORT int vfp_device_reset(struct vfp_ctx *ctx, const char *pci, struct vfp_reset_info *ret)
{
	char bound[64] = "", rel[64];
	int r;

	*ret = (struct vfp_reset_info){ .step = VFP_RESET_METHOD };
	if (!vfp_pci_addr_is_valid(pci))
		return -EINVAL;
	r = reset_methods(ctx, pci, ret->methods, sizeof(ret->methods));
	if (r >= 0)
		r = vfp_device_read_driver(ctx, pci, bound, sizeof(bound));
	if (r >= 0 && !bound[0]) /* unbound: an interrupted reset's override names its driver */
		read_override(ctx, pci, ret->driver, sizeof(ret->driver));
	else if (r >= 0)
		snprintf(ret->driver, sizeof(ret->driver), "%s", bound);
	if (r >= 0 && bound[0]) {
		ret->step = VFP_RESET_UNBIND;
		r = unbind_keeping_driver(ctx, pci, bound);
	}
	vfp_sysfs_dev(rel, sizeof(rel), pci, "reset");
	if (r >= 0) {
		ret->step = VFP_RESET_WRITE;
		r = vfp_sysfs_write(ctx, rel, "1");
	}
	if (ret->driver[0] && ret->step >= VFP_RESET_UNBIND) { /* back on it, even after a failure */
		int rr = vfp_device_bind_driver(ctx, pci, ret->driver);

		if (rr < 0 && r >= 0)
			r = rr, ret->step = VFP_RESET_REBIND;
		if (rr >= 0)
			write_override(ctx, pci, "");
	}
	vfp_dbg(ctx, "%s: reset (%s): %d", pci, ret->methods, r);
	return r;
}
