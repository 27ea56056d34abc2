/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * POST /v1/allocations/{id}/attach with {"domain":…,"live":…,"config":…}:
 * the allocation's VFs into a libvirt domain (agent/vm/vm.c does the work).
 * With neither "live" nor "config", the domain's current state decides:
 * live while it runs, its config while it is defined and shut off.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/vm/libvirt.h"
#include "agent/vm/vm.h"
#include "api/api.h"

static int parse_flags(struct api_request *req, json_t *body, const struct libvirt_domain *d,
		       unsigned *ret)
{
	bool live = false, config = false;
	bool has_live = json_object_get(body, "live"), has_config = json_object_get(body, "config");
	int r = api_get_bool(req, body, "live", &live);

	if (r >= 0)
		r = api_get_bool(req, body, "config", &config);
	if (r < 0)
		return r;
	if (!has_live && !has_config) {
		live = d->active;
		config = !d->active && d->persistent;
	}
	if (!live && !config)
		return api_fail(req, -EINVAL, "live, config: at least one must be true");
	if (config && !d->persistent)
		return api_fail(req, -EINVAL, "config: domain %s is transient: it has no config",
				d->name);
	*ret = (live ? LIBVIRT_LIVE : 0) | (config ? LIBVIRT_CONFIG : 0);
	return 0;
}

/* The VFs before @n back out of the domain, in reverse. */
static void undo(struct agent *a, json_t *vfs, size_t n)
{
	while (n-- > 0) {
		json_t *vf = json_array_get(vfs, n);
		char err[512];

		if (vm_restore_vf(a, vf, err, sizeof(err)) < 0)
			log_error("VF %s: rollback: %s",
				  json_string_value(json_object_get(vf, "pci")), err);
	}
}

static int attach_all(struct api_request *req, json_t *alloc, const struct vm_target *t)
{
	json_t *vfs = json_object_get(alloc, "vfs");
	size_t i, n = json_array_size(vfs);
	int r = 0;

	for (i = 0; r >= 0 && i < n; i++) {
		const char *pci = json_string_value(json_object_get(json_array_get(vfs, i), "pci"));
		char err[512] = "";

		r = vm_attach_vf(req->agent, alloc, i, t, NULL, NULL, err, sizeof(err));
		if (r < 0)
			api_fail(req, r, "VF %s: %s", pci, err[0] ? err : strerror(-r));
		else
			log_info("VF %s: allocation %s: in domain %s (%s)", pci,
				 json_string_value(json_object_get(alloc, "id")), t->name, t->uuid);
	}
	if (r < 0 && i > 0)
		undo(req->agent, vfs, i - 1);
	return r;
}

/**
 * api_attach_domain() - @alloc's VFs into the domain @body names
 *
 * The ledger's attach intent brackets the work: begun before, confirmed
 * after, so a crash in between is resolved at the next start. A failure
 * leaves every VF as it was, and the message is libvirt's.
 */
int api_attach_domain(struct api_request *req, json_t *alloc, json_t *body)
{
	static const char *const keys[] = { "domain", "live", "config", NULL };
	struct agent *a = req->agent;
	const char *id = json_string_value(json_object_get(alloc, "id")), *name = NULL;
	struct libvirt_domain d = { 0 };
	struct vm_target t;
	unsigned flags = 0;
	int r = api_check_keys(req, body, keys);

	if (r >= 0)
		r = api_get_string(req, body, "domain", true, &name);
	if (r >= 0 && (r = libvirt_lookup(a->libvirt, name, &d, req->error,
					   sizeof(req->error))) < 0)
		return r;
	if (r >= 0)
		r = parse_flags(req, body, &d, &flags);
	if (r < 0)
		return r;
	t = (struct vm_target){ .uuid = d.uuid, .name = d.name, .flags = flags };
	r = api_ledger_step(a, id, VFP_OP_ATTACH, true, false, NULL, req);
	if (r < 0)
		return r;
	r = attach_all(req, alloc, &t);
	api_ledger_step(a, id, VFP_OP_ATTACH, false, r >= 0, r < 0 ? req->error : NULL, NULL);
	return r;
}
