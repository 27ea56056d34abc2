/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vfagent.json: any bytes give a config or an error naming where; never both, never neither. */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>

#include "fuzz.h"
#include "libvfpool/libvfpool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	struct vfp_config *c = NULL;
	char *err = NULL;
	int r;

	if (!root)
		return 0;
	r = vfp_config_load_json(root, &c, &err);
	if ((r >= 0) != (c != NULL) || (r == -22 && !err))
		abort();
	if (c) {
		json_decref(vfp_config_pools_to_json(c));
		for (size_t i = 0; i < vfp_config_get_pool_count(c); i++)
			vfp_config_find_pool(c, vfp_config_get_pool_name(c, i));
		vfp_config_pool_for_network(c, "sriov_ib0", NULL);
		vfp_config_get_libvirt_uri(c);
	}
	vfp_config_unref(c);
	free(err);
	json_decref(root);
	return 0;
}
