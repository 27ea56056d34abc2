/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VM room's steps shared between its files: vm.c (the attach),
 * vm-detach.c (the detach and the host side's return), vm-domains.c (what
 * the domains hold) and vm-swap.c, which takes them one at a time.
 */
#pragma once

#include <stddef.h>

/* Declared, not included: agent.h and pf-side.h lead back to vm.h (tests/layout.sh). */
struct agent;
struct vf_facts;
struct vfp_restore_point;

int bind_vfio(struct agent *a, const struct vf_facts *f, struct vfp_restore_point *rp, char *err,
	      size_t err_size);
int restore_driver(struct agent *a, const char *pci, const struct vfp_restore_point *rp,
		   char *err, size_t err_size);
int leave_domain(struct agent *a, const char *pci, const struct vfp_restore_point *rp, char *err,
		 size_t err_size);
int wait_gone(struct agent *a, const struct vfp_restore_point *rp, const char *pci, char *err,
	      size_t err_size);
int vf_in_domain(struct agent *a, const char *pci);
void vf_left_guest(struct agent *a, const char *pci, const char *device_xml);
