/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * REST request bodies, route by route, against a whole agent in this
 * process (a simulated host in /dev/shm, its ledger, test:///default): the
 * first byte picks the route, the rest is the body. Every answer is a
 * status with a message or a reply, never a crash or a leak; whatever a
 * request claimed is given back afterwards, so the pools never run dry.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/release.h"
#include "agent/rooms.h"
#include "agent/sim/sim-host.h"
#include "api/api.h"
#include "fuzz.h"

static struct agent a;
static char fixed_id[64];

static void setup(void)
{
	static char dir[96];
	static const struct vfp_owner owner = { .kind = VFP_OWNER_VM, .name = "fuzz" };
	struct vfp_allocation *alloc = NULL;
	struct vfp_claim c = { .pool = "eth", .count = 1, .owner = &owner, .numa_node = -1 };

	snprintf(dir, sizeof(dir), "%s/host", fuzz_tmpdir("api"));
	a.opt.simulate_dir = dir;
	a.opt.config_json = sim_host_config(); /* handed in at the edge, as main.c does */
	agent_set_log_priority(3);
	agent_add_rooms(&a);
	if (agent_init(&a) < 0)
		abort();
	{
		LEDGER_GUARD(g, &a);

		if (vfp_ledger_claim(g.l, a.config, &c, &alloc) < 0)
			abort();
	}
	snprintf(fixed_id, sizeof(fixed_id), "%s", vfp_allocation_get_id(alloc));
	vfp_allocation_unref(alloc);
}

/* Every allocation but the fixed one back, so the next input finds VFs free. */
static void give_back(void)
{
	struct vfp_allocation **list = NULL;
	size_t n = 0;
	char err[256];

	if (ledger_list_allocations(&a, NULL, false, &list, &n, NULL, 0) < 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if (strcmp(vfp_allocation_get_id(list[i]), fixed_id) != 0)
			agent_release_allocation(&a, vfp_allocation_get_id(list[i]), err,
						 sizeof(err));
	vfp_allocation_list_free(list, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		const char *method, *path;
		api_handler handler;
	} routes[] = {
		{ "POST", "/v1/allocations", api_post_allocation },
		{ "PUT", "/v1/pfs/0000:d8:00.0/numvfs", api_put_numvfs },
		{ "POST", "/v1/allocations/ID/attach", api_attach },
		{ "POST", "/v1/domain-xml", api_domain_xml },
	};
	struct api_request req = { 0 };
	size_t k;
	int r;

	if (size < 1)
		return 0;
	if (!a.ctx)
		setup();
	k = data[0] % (sizeof(routes) / sizeof(routes[0]));
	req = (struct api_request){ .agent = &a, .method = routes[k].method, .path = routes[k].path,
				    .body = (const char *)data + 1, .body_len = size - 1,
				    .status = 200 };
	req.params[0] = k == 1 ? "0000:d8:00.0" : fixed_id;
	r = routes[k].handler(&req);
	if (r < 0 && !req.error[0])
		abort(); /* a refusal must say why */
	json_decref(req.json);
	free(req.text);
	give_back();
	return 0;
}
