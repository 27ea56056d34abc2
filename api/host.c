/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GET /v1/host and GET /v1/health. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/agent-facts.h"
#include "agent/log.h"
#include "agent/vm/libvirt.h"
#include "agent/container/rdma.h"
#include "api/api.h"

/* {state: n} over every pool. */
static json_t *state_totals(struct agent *a)
{
	unsigned total[_VFP_VF_STATE_MAX] = { 0 };
	struct vfp_pool_count *counts = NULL;
	size_t n = 0;

	if (ledger_counts(a, &counts, &n) < 0)
		n = 0;
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < _VFP_VF_STATE_MAX; s++)
			total[s] += counts[i].vfs[s];
	free(counts);
	return api_state_counts_json(total);
}

/*
 * {"uri","connected","foreign_vfs":[{"pci","domain","uuid"}]}: VFs domains hold unbooked;
 * "status" too when libvirt's library is not installed.
 */
static json_t *libvirt_facts(struct agent *a)
{
	const char *missing = libvirt_missing();
	json_t *foreign = json_array(), *o;
	struct agent_foreign_vf *vfs = NULL;
	char status[512];
	size_t n = 0;

	if (ledger_get_foreign_vfs(a, &vfs, &n) < 0)
		n = 0;
	for (size_t i = 0; foreign && i < n; i++)
		json_array_append_new(foreign, json_pack("{s:s, s:s, s:s}", "pci", vfs[i].pci,
							 "domain", vfs[i].domain, "uuid",
							 vfs[i].uuid));
	free(vfs);
	o = json_pack("{s:s?, s:b, s:o}", "uri", libvirt_conn_get_uri(agent_libvirt(a)), "connected",
		      libvirt_conn_is_connected(agent_libvirt(a)), "foreign_vfs", foreign);
	if (o && missing) {
		snprintf(status, sizeof(status), "cannot load libvirt: %s: VMs get no VFs, containers do "
			 "(install %s)",
			 missing, LIBVIRT_PACKAGE);
		json_object_set_new(o, "status", json_string(status));
	}
	return o;
}

/*
 * {"devices":N,"netns_mode":…}, {"devices":N,"status":…} or {"status":"no RDMA: …"}; a
 * "status" too when the PFs' RDMA devices are not listed by libibverbs (its drivers missing).
 */
static json_t *rdma_json(struct agent *a, const struct vfp_inventory *inv)
{
	struct rdma_host h;
	char why[AGENT_ERR_SIZE];
	json_t *o;

	rdma_host_facts(&h);
	if (h.devices < 0)
		o = json_pack("{s:s}", "status", h.status);
	else if (!h.netns_mode[0])
		o = json_pack("{s:i, s:s}", "devices", h.devices, "status", h.status);
	else
		o = json_pack("{s:i, s:s}", "devices", h.devices, "netns_mode", h.netns_mode);
	/* a simulated host's RDMA devices are not libibverbs' */
	if (o && !agent_simulated(a) && rdma_verbs_missing(inv, why, sizeof(why)))
		json_object_set_new(o, "status", json_string(why));
	return o;
}

/*
 * {"version","sysfs_root","pfs","vfs","states":{state:n},"scan_seconds",
 *  "rdma_netns_mode","rdma":{"devices":N,…} or {"status":"no RDMA: …"},"libvirt":{…},
 *  "pending":[…] (api/host-pending.c)}
 */
int api_get_host(struct api_request *req)
{
	struct vfp_inventory *inv = agent_get_inventory(req->agent);
	json_t *rdma = rdma_json(req->agent, inv);
	json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:o, s:f, s:O, s:o}", "version",
			      PACKAGE_VERSION, "sysfs_root", vfp_ctx_get_sysfs_root(agent_ctx(req->agent)),
			      "pfs", (json_int_t)vfp_inventory_get_pf_count(inv), "vfs",
			      (json_int_t)vfp_inventory_get_vf_count(inv), "states",
			      state_totals(req->agent), "scan_seconds", agent_scan_seconds(req->agent),
			      "rdma_netns_mode", json_object_get(rdma, "netns_mode")
			      ? json_object_get(rdma, "netns_mode") : json_null(), "rdma", rdma);

	vfp_inventory_unref(inv);
	if (o) {
		json_object_set_new(o, "libvirt", libvirt_facts(req->agent));
		json_object_set_new(o, "pending", api_host_pending_json(req->agent));
	}
	return api_reply(req, 200, o);
}

/* The agent answers and its ledger reads: {"status":"ok"}. */
int api_get_health(struct api_request *req)
{
	struct vfp_pool_count *counts = NULL;
	size_t n = 0;
	int r;

	r = ledger_counts(req->agent, &counts, &n);
	free(counts);
	if (r < 0)
		return api_fail(req, -EIO, "the ledger does not answer");
	return api_reply(req, 200, json_pack("{s:s}", "status", "ok"));
}
