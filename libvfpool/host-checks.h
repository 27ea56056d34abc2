/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host checks of host-check-*.c, run in order by vfp_host_checks_run(). */
#pragma once

#include "private.h"

struct vfp_host_check_run {
	struct vfp_host_checks *out;
	struct vfp_ctx *ctx;
	const struct vfp_host_env *env;
	const struct vfp_inventory *inv;
	const struct vfp_config *config;
};

#define check_add(run, ...) vfp_host_checks_add((run)->out, __VA_ARGS__)

/* A file under a host root (/proc, /lib/modules/...): up to @size - 1 bytes, NUL-terminated. */
int vfp_host_read(const char *root, const char *rel, char *buf, size_t size);
/* 1 when a line of @root/@rel contains @needle, 0 when none does, -errno when unreadable. */
int vfp_host_file_contains(const char *root, const char *rel, const char *needle);

void vfp_host_check_iommu(const struct vfp_host_check_run *run);
void vfp_host_check_vfio(const struct vfp_host_check_run *run);
void vfp_host_check_iommu_groups(const struct vfp_host_check_run *run);
void vfp_host_check_sriov(const struct vfp_host_check_run *run);
void vfp_host_check_rdma(const struct vfp_host_check_run *run);
void vfp_host_check_config(const struct vfp_host_check_run *run);
