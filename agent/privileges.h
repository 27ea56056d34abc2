/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What vfagentd keeps once it serves. SECURITY.md says why each capability
 * stays; everything else goes, from the effective, permitted, inheritable
 * and bounding sets, and no exec can gain any back (no_new_privs).
 */
#pragma once

int privileges_drop(void);
