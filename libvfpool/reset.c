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

/* driver_override back to empty when it was before (binding set it). */
static void clear_override(struct vfp_ctx *ctx, const char *pci)
{
	char rel[64];

	vfp_sysfs_dev(rel, sizeof(rel), pci, "driver_override");
	(void)vfp_sysfs_write(ctx, rel, "\n");
}

/**
 * vfp_device_reset() - reset function @pci and bind it back to its driver
 * @ret_step: which step failed (may be NULL)
 * @ret_methods: the kernel's reset methods for it, for the log (may be NULL)
 *
 * The driver it had (none is fine) is what it has after; a
 * driver_override that was empty is empty again. -EOPNOTSUPP when the
 * kernel has no way to reset it; -ENXIO when its driver did not take it
 * back (it is left unbound); the kernel's -errno of the failed step
 * otherwise.
 */
VFP_EXPORT int vfp_device_reset(struct vfp_ctx *ctx, const char *pci,
				enum vfp_reset_step *ret_step, char ret_methods[static 64])
{
	char drv[64] = "", rel[64], override[64] = "", methods[64] = "";
	enum vfp_reset_step step = VFP_RESET_METHOD;
	int r;

	if (!vfp_pci_addr_is_valid(pci))
		return -EINVAL;
	r = reset_methods(ctx, pci, methods, sizeof(methods));
	if (r >= 0)
		r = vfp_device_read_driver(ctx, pci, drv, sizeof(drv));
	vfp_sysfs_dev(rel, sizeof(rel), pci, "driver_override");
	if (r >= 0 && (vfp_sysfs_read(ctx, rel, override, sizeof(override)) < 0 ||
		       strcmp(override, "(null)") == 0))
		override[0] = '\0';
	if (r >= 0 && drv[0] && (step = VFP_RESET_UNBIND))
		r = vfp_device_bind_driver(ctx, pci, "");
	vfp_sysfs_dev(rel, sizeof(rel), pci, "reset");
	if (r >= 0 && (step = VFP_RESET_WRITE))
		r = vfp_sysfs_write(ctx, rel, "1");
	if (drv[0] && step >= VFP_RESET_UNBIND) { /* back on its driver, even after a failed reset */
		int rr = vfp_device_bind_driver(ctx, pci, drv);

		if (rr < 0 && r >= 0)
			r = rr, step = VFP_RESET_REBIND;
		if (rr >= 0 && !override[0])
			clear_override(ctx, pci);
	}
	vfp_dbg(ctx, "%s: reset (%s): %d", pci, methods, r);
	if (ret_step)
		*ret_step = step;
	snprintf(ret_methods, 64, "%s", methods);
	return r;
}
