/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The names of VF and allocation states, as the ledger stores them and the API shows them. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "private.h"

static const char *const vf_states[_VFP_VF_STATE_MAX] = {
	[VFP_VF_FREE] = "free",		    [VFP_VF_RESERVED] = "reserved",
	[VFP_VF_ATTACHED] = "attached",	    [VFP_VF_RELEASING] = "releasing",
	[VFP_VF_QUARANTINED] = "quarantined", [VFP_VF_UNAVAILABLE] = "unavailable",
	[VFP_VF_RELEASED] = "released",
};

static const char *const allocation_states[_VFP_ALLOCATION_STATE_MAX] = {
	[VFP_ALLOCATION_RESERVED] = "reserved",
	[VFP_ALLOCATION_ATTACHED] = "attached",
	[VFP_ALLOCATION_RELEASING] = "releasing",
	[VFP_ALLOCATION_RELEASED] = "released",
};

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -EINVAL;
}

VFP_EXPORT const char *vfp_vf_state_to_string(enum vfp_vf_state s)
{
	return (unsigned)s < _VFP_VF_STATE_MAX ? vf_states[s] : NULL;
}

VFP_EXPORT int vfp_vf_state_from_string(const char *s)
{
	return lookup(vf_states, _VFP_VF_STATE_MAX, s);
}

VFP_EXPORT const char *vfp_allocation_state_to_string(enum vfp_allocation_state s)
{
	return (unsigned)s < _VFP_ALLOCATION_STATE_MAX ? allocation_states[s] : NULL;
}

VFP_EXPORT int vfp_allocation_state_from_string(const char *s)
{
	return lookup(allocation_states, _VFP_ALLOCATION_STATE_MAX, s);
}
