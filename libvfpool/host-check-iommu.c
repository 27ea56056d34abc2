/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host checks for passthrough: the IOMMU is on, vfio-pci can be had, and
 * each VF's IOMMU group holds nothing else (else a VM must take the whole
 * group). What virt-host-validate checks for QEMU, for VFs.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "host-checks.h"
#include "sysfs.h"

static size_t iommu_group_count(struct vfp_ctx *ctx)
{
	char **names = NULL;
	size_t n = 0;

	if (vfp_sysfs_list_dir(ctx, "kernel/iommu_groups", &names, &n) < 0)
		return 0;
	vfp_strv_free(names, n);
	return n;
}

/* The IOMMU words of the kernel command line ("intel_iommu=on iommu=pt"), or "none". */
static void iommu_words(const char *cmdline, char *buf, size_t size)
{
	char copy[4096], *save = NULL;
	size_t used = 0;

	snprintf(copy, sizeof(copy), "%s", cmdline);
	buf[0] = '\0';
	for (char *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
		if (strncmp(w, "intel_iommu=", 12) == 0 || strncmp(w, "amd_iommu=", 10) == 0 ||
		    strncmp(w, "iommu=", 6) == 0)
			used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s%s",
						 used ? " " : "", w);
	if (!used)
		snprintf(buf, size, "none");
}

static const char *iommu_fix(const char *cpu_vendor, const char *words)
{
	if (strstr(cpu_vendor, "AuthenticAMD"))
		return "enable the IOMMU (AMD-Vi) in the firmware setup; if it is on, check that "
		       "the kernel command line has no amd_iommu=off";
	if (strstr(words, "intel_iommu=on"))
		return "enable VT-d in the firmware setup: the kernel was asked for the IOMMU and "
		       "found none";
	return "add intel_iommu=on iommu=pt to the kernel command line (GRUB_CMDLINE_LINUX in "
	       "/etc/default/grub, then update-grub) and reboot";
}

void vfp_host_check_iommu(const struct vfp_host_check_run *run)
{
	const char *proc = run->env->proc_root;
	char cmdline[4096] = "", cpuinfo[4096] = "", words[512];
	size_t groups = iommu_group_count(run->ctx);

	(void)vfp_host_read(proc, "cmdline", cmdline, sizeof(cmdline));
	(void)vfp_host_read(proc, "cpuinfo", cpuinfo, sizeof(cpuinfo));
	iommu_words(cmdline, words, sizeof(words));
	if (groups > 0)
		check_add(run, VFP_CHECK_PASS, "iommu", NULL, NULL,
			  "%zu IOMMU groups; kernel command line: %s", groups, words);
	else
		check_add(run, VFP_CHECK_FAIL, "iommu", NULL, iommu_fix(cpuinfo, words),
			  "no IOMMU groups under %s/kernel/iommu_groups; kernel command line: %s",
			  vfp_ctx_get_sysfs_root(run->ctx), words);
}

void vfp_host_check_vfio(const struct vfp_host_check_run *run)
{
	const char *mods = run->env->modules_dir;
	int r;

	if (vfp_sysfs_exists(run->ctx, "bus/pci/drivers/vfio-pci") > 0 ||
	    vfp_sysfs_exists(run->ctx, "module/vfio_pci") > 0) {
		check_add(run, VFP_CHECK_PASS, "vfio-pci", NULL, NULL, "vfio-pci is loaded");
		return;
	}
	r = vfp_host_file_contains(mods, "modules.dep", "/vfio-pci.ko");
	if (r > 0) {
		check_add(run, VFP_CHECK_PASS, "vfio-pci", NULL, NULL,
			  "vfio-pci is a module of this kernel (%s), loaded on first use", mods);
		return;
	}
	if (r < 0)
		check_add(run, VFP_CHECK_WARN, "vfio-pci", NULL,
			  "check that the running kernel's modules are installed",
			  "vfio-pci is not loaded and %s/modules.dep is unreadable: %s", mods,
			  strerror(-r));
	else
		check_add(run, VFP_CHECK_FAIL, "vfio-pci", NULL,
			  "boot a kernel built with CONFIG_VFIO_PCI (Debian's linux-image-amd64 "
			  "is); containers do not need it",
			  "vfio-pci is neither loaded nor a module of this kernel (%s): VMs cannot "
			  "take VFs",
			  mods);
}

/* @vf's group mates other than itself, listed into @buf; their count. */
static size_t group_mates(struct vfp_ctx *ctx, const struct vfp_vf *vf, char *buf, size_t size)
{
	char **devs = NULL;
	size_t n = 0, mates = 0, used = 0;
	int group;

	buf[0] = '\0';
	if (vfp_vf_get_iommu_group(vf, &group) < 0 ||
	    vfp_iommu_group_devices(ctx, group, &devs, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(devs[i], vfp_vf_get_pci(vf)) == 0)
			continue;
		if (mates++ < 3)
			used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s%s",
						 used ? ", " : "", devs[i]);
	}
	vfp_iommu_group_devices_free(devs, n);
	return mates;
}

void vfp_host_check_iommu_groups(const struct vfp_host_check_run *run)
{
	size_t n_vfs = vfp_inventory_get_vf_count(run->inv), shared = 0;
	char first[160] = "", mates[128];

	if (iommu_group_count(run->ctx) == 0) {
		check_add(run, VFP_CHECK_SKIP, "iommu-groups", NULL, NULL, "no IOMMU");
		return;
	}
	for (size_t i = 0; i < vfp_inventory_get_pf_count(run->inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(run->inv, i);

		for (size_t j = 0; j < vfp_pf_get_vf_count(pf); j++) {
			const struct vfp_vf *vf = vfp_pf_get_vf(pf, j);

			if (group_mates(run->ctx, vf, mates, sizeof(mates)) > 0 && !shared++)
				snprintf(first, sizeof(first), "%s with %s", vfp_vf_get_pci(vf),
					 mates);
		}
	}
	if (!shared)
		check_add(run, VFP_CHECK_PASS, "iommu-groups", NULL, NULL,
			  "each of %zu VFs has an IOMMU group of its own", n_vfs);
	else
		check_add(run, VFP_CHECK_WARN, "iommu-groups", NULL,
			  "a VM must take every device of such a group; put the card behind a port "
			  "with ACS (or enable ACS in the firmware setup). Containers are not affected",
			  "%zu of %zu VFs share their IOMMU group (first: %s)", shared, n_vfs, first);
}
