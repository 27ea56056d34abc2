/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every sysfs read and write of vfagent goes through these helpers, which
 * prefix the context's sysfs root. Paths given here are relative to the
 * root ("bus/pci/devices/0000:3b:00.0/vendor"). Reads are bounded, strip the
 * trailing newline and fail with -errno.
 */
#pragma once

#include <stddef.h>

#include "private.h"
#include "vpd.h"

int vfp_sysfs_path(const struct vfp_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
	_printf_(4, 5);
int vfp_sysfs_dev(char *buf, size_t size, const char *pci, const char *fmt, ...) _printf_(4, 5);
int vfp_sysfs_class(char *buf, size_t size, const char *cls, const char *name, const char *attr);
int vfp_sysfs_read(const struct vfp_ctx *ctx, const char *rel, char *buf, size_t size);
int vfp_sysfs_readlink(const struct vfp_ctx *ctx, const char *rel, char *buf, size_t size);
int vfp_sysfs_link_basename(const struct vfp_ctx *ctx, const char *rel, char *buf, size_t size);
int vfp_sysfs_pci_device_path(const struct vfp_ctx *ctx, const char *pci, char *buf, size_t size);
int vfp_sysfs_read_bin(const struct vfp_ctx *ctx, const char *rel, void *buf, size_t size);
int vfp_sysfs_read_vpd(struct vfp_ctx *ctx, const char *pci, struct vfp_vpd_ids *ret);
int vfp_sysfs_exists(const struct vfp_ctx *ctx, const char *rel);
int vfp_sysfs_write(const struct vfp_ctx *ctx, const char *rel, const char *value);
int vfp_sysfs_list_dir(const struct vfp_ctx *ctx, const char *rel, char ***ret_names,
		       size_t *ret_count);
void vfp_strv_free(char **v, size_t n);

const char *vfp_sysfs_default_root(void);
int vfp_parse_int(const char *s, int base, int min, int max, int *ret);
