/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host checks for SR-IOV itself: there are PFs, each PF's firmware offers
 * VFs (sriov_totalvfs > 0), mlx4's VF count is set by its module parameter,
 * no Mellanox function hides its VFs because firmware turned SR-IOV off, and
 * each PF has the VF count the config's "numvfs" rules want.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "host-checks.h"
#include "sysfs.h"

static void firmware_fix(const struct vfp_pf *pf, char *buf, size_t size)
{
	const char *vendor = vfp_pf_get_vendor(pf);

	if (vendor && strcmp(vendor, "15b3") == 0)
		snprintf(buf, size,
			 "mstconfig -d %s set SRIOV_EN=1 NUM_OF_VFS=16 (package mstflint), then "
			 "reboot (or mstfwreset -d %s reset)",
			 vfp_pf_get_pci(pf), vfp_pf_get_pci(pf));
	else
		snprintf(buf, size, "enable SR-IOV for %s in the firmware (BIOS/UEFI) setup",
			 vfp_pf_get_pci(pf));
}

static void check_mlx4(const struct vfp_host_check_run *run, const struct vfp_pf *pf, int numvfs,
		       int total)
{
	char param[64] = "";

	if (vfp_sysfs_read(run->ctx, "module/mlx4_core/parameters/num_vfs", param,
			   sizeof(param)) < 0)
		snprintf(param, sizeof(param), "unreadable");
	if (numvfs > 0)
		check_add(run, VFP_CHECK_PASS, "sriov", vfp_pf_get_pci(pf), NULL,
			  "mlx4_core: %d of %d VFs, set by num_vfs=%s", numvfs, total, param);
	else
		check_add(run, VFP_CHECK_FAIL, "sriov", vfp_pf_get_pci(pf),
			  "echo 'options mlx4_core num_vfs=8 probe_vf=0' > "
			  "/etc/modprobe.d/mlx4_core.conf, then reload mlx4_core or reboot",
			  "mlx4_core: 0 VFs (num_vfs=%s); the driver sets the count only at load",
			  param);
}

static void check_pf(const struct vfp_host_check_run *run, const struct vfp_pf *pf)
{
	const char *driver = vfp_pf_get_driver(pf);
	int total = 0, numvfs = 0;
	char fix[256];

	(void)vfp_pf_get_numvfs(pf, &numvfs);
	if (vfp_pf_get_totalvfs(pf, &total) < 0 || total <= 0) {
		firmware_fix(pf, fix, sizeof(fix));
		check_add(run, VFP_CHECK_FAIL, "sriov", vfp_pf_get_pci(pf), fix,
			  "sriov_totalvfs is 0: SR-IOV is off in the card's firmware");
		return;
	}
	if (driver && strcmp(driver, "mlx4_core") == 0)
		check_mlx4(run, pf, numvfs, total);
	else if (!driver)
		check_add(run, VFP_CHECK_WARN, "sriov", vfp_pf_get_pci(pf),
			  "load the PF's driver (lspci -k shows the candidates)",
			  "no driver bound: its VF count cannot be set");
	else
		check_add(run, VFP_CHECK_PASS, "sriov", vfp_pf_get_pci(pf), NULL,
			  "%s, %s: %d of %d VFs", driver,
			  vfp_link_type_to_string(vfp_pf_get_link_type(pf)), numvfs, total);
}

/* A Mellanox network function that is neither a PF nor a VF: SR-IOV is off in its firmware. */
static bool sriov_hidden(struct vfp_ctx *ctx, const char *pci)
{
	char rel[128], vendor[16] = "", class[16] = "";

	vfp_sysfs_dev(rel, sizeof(rel), pci, "vendor");
	if (vfp_sysfs_read(ctx, rel, vendor, sizeof(vendor)) < 0 || strcmp(vendor, "0x15b3") != 0)
		return false;
	vfp_sysfs_dev(rel, sizeof(rel), pci, "class");
	if (vfp_sysfs_read(ctx, rel, class, sizeof(class)) < 0 || strncmp(class, "0x02", 4) != 0)
		return false;
	vfp_sysfs_dev(rel, sizeof(rel), pci, "sriov_totalvfs");
	if (vfp_sysfs_exists(ctx, rel) != 0)
		return false;
	vfp_sysfs_dev(rel, sizeof(rel), pci, "physfn");
	return vfp_sysfs_exists(ctx, rel) == 0;
}

static void check_hidden(const struct vfp_host_check_run *run)
{
	char **devs = NULL, fix[160];
	size_t n = 0;

	if (vfp_sysfs_list_dir(run->ctx, "bus/pci/devices", &devs, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!sriov_hidden(run->ctx, devs[i]))
			continue;
		snprintf(fix, sizeof(fix),
			 "mstconfig -d %s set SRIOV_EN=1 NUM_OF_VFS=16 (package mstflint), then "
			 "reboot", devs[i]);
		check_add(run, VFP_CHECK_FAIL, "sriov", devs[i], fix,
			  "a Mellanox function without an SR-IOV capability: SR-IOV is off in its "
			  "firmware");
	}
	vfp_strv_free(devs, n);
}

/* The config's "numvfs" rules against the PF's count now. */
static void check_desired(const struct vfp_host_check_run *run, const struct vfp_pf *pf)
{
	int want = run->config ? vfp_config_get_desired_numvfs(run->config, pf) : -1, have = 0;

	if (want < 0 || vfp_pf_get_numvfs(pf, &have) < 0)
		return;
	if (want == have)
		check_add(run, VFP_CHECK_PASS, "numvfs", vfp_pf_get_pci(pf), NULL,
			  "%d VFs, as the config says", have);
	else
		check_add(run, VFP_CHECK_WARN, "numvfs", vfp_pf_get_pci(pf),
			  "systemctl reload vfagentd applies it, unless allocations hold VFs of "
			  "the PF (vfctl numvfs PF N --dry-run names them)",
			  "%d VFs, the config wants %d", have, want);
}

void vfp_host_check_sriov(const struct vfp_host_check_run *run)
{
	size_t n = vfp_inventory_get_pf_count(run->inv);

	if (n == 0)
		check_add(run, VFP_CHECK_FAIL, "sriov", NULL,
			  "enable SR-IOV in the firmware setup and in the card's firmware; lspci -vvv "
			  "shows a capable function's 'Single Root I/O Virtualization' capability",
			  "no SR-IOV PF under %s/bus/pci/devices", vfp_ctx_get_sysfs_root(run->ctx));
	for (size_t i = 0; i < n; i++) {
		check_pf(run, vfp_inventory_get_pf(run->inv, i));
		check_desired(run, vfp_inventory_get_pf(run->inv, i));
	}
	check_hidden(run);
}
