/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A host's preflight results (`vfctl doctor`, GET /v1/host/checks): one
 * line per check and subject, with what was seen and, when not a pass,
 * what fixes it. The checks themselves live in host-check-*.c; callers may
 * add their own (the agent adds libvirt's).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "host-checks.h"

struct vfp_host_check {
	enum vfp_check_status status;
	char *check, *subject, *fact, *fix;
};

struct vfp_host_checks {
	struct vfp_host_check *v;
	size_t n, cap;
	bool failed; /* out of memory on the way: the list is short */
};

static const char *const status_names[] = {
	[VFP_CHECK_PASS] = "pass",
	[VFP_CHECK_SKIP] = "skip",
	[VFP_CHECK_WARN] = "warn",
	[VFP_CHECK_FAIL] = "fail",
};

VFP_EXPORT const char *vfp_check_status_to_string(enum vfp_check_status s)
{
	return (unsigned)s < ELEMENTSOF(status_names) ? status_names[s] : NULL;
}

VFP_EXPORT int vfp_host_checks_new(struct vfp_host_checks **ret)
{
	struct vfp_host_checks *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

VFP_EXPORT void vfp_host_checks_free(struct vfp_host_checks *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].check);
		free(c->v[i].subject);
		free(c->v[i].fact);
		free(c->v[i].fix);
	}
	free(c->v);
	free(c);
}

/**
 * vfp_host_checks_add() - one result: @check ("iommu"), @subject (a PF, a
 * pool; NULL for the host), @status, @fix (NULL on a pass), and the fact seen
 */
VFP_EXPORT void vfp_host_checks_add(struct vfp_host_checks *c, enum vfp_check_status status,
				    const char *check, const char *subject, const char *fix,
				    const char *fact_format, ...)
{
	struct vfp_host_check *e;
	va_list ap;
	int r;

	if (!GREEDY_REALLOC(c->v, c->cap, c->n + 1)) {
		c->failed = true;
		return;
	}
	e = &c->v[c->n];
	*e = (struct vfp_host_check){ .status = status };
	va_start(ap, fact_format);
	r = vasprintf(&e->fact, fact_format, ap);
	va_end(ap);
	e->check = strdup(check);
	e->subject = subject ? strdup(subject) : NULL;
	e->fix = fix ? strdup(fix) : NULL;
	if (r < 0 || !e->check || (subject && !e->subject) || (fix && !e->fix)) {
		free(r < 0 ? NULL : e->fact);
		free(e->check);
		free(e->subject);
		free(e->fix);
		c->failed = true;
		return;
	}
	c->n++;
}

/* The worst status of all; a list cut short by a failed allocation is a fail. */
VFP_EXPORT enum vfp_check_status vfp_host_checks_worst(const struct vfp_host_checks *c)
{
	enum vfp_check_status worst = c->failed ? VFP_CHECK_FAIL : VFP_CHECK_PASS;

	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].status > worst)
			worst = c->v[i].status;
	return worst;
}

static json_t *check_to_json(const struct vfp_host_check *e)
{
	return json_pack("{s:s, s:s?, s:s, s:s, s:s?}", "check", e->check, "subject", e->subject,
			 "status", status_names[e->status], "fact", e->fact, "fix", e->fix);
}

/* {"status": worst, "checks": [{check, subject, status, fact, fix}]} in the order added. */
VFP_EXPORT json_t *vfp_host_checks_to_json(const struct vfp_host_checks *c)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < c->n; i++)
		if (json_array_append_new(a, check_to_json(&c->v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	if (!a)
		return NULL;
	return json_pack("{s:s, s:o}", "status", status_names[vfp_host_checks_worst(c)], "checks",
			 a);
}

int vfp_host_read(const char *root, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	buf[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

int vfp_host_file_contains(const char *root, const char *rel, const char *needle)
{
	char path[PATH_MAX];
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) >= 0)
		if (strstr(line, needle))
			return 1;
	return 0;
}

/* Where the host's files are when the caller leaves them out. */
static void default_env(const struct vfp_host_env *in, struct vfp_host_env *out, char *mods,
			size_t size)
{
	struct utsname u;

	*out = *in;
	if (!out->proc_root)
		out->proc_root = "/proc";
	if (!out->modules_dir) {
		snprintf(mods, size, "/lib/modules/%s", uname(&u) == 0 ? u.release : "unknown");
		out->modules_dir = mods;
	}
}

/**
 * vfp_host_checks_run() - every host check, in order, into @c
 * @env: where /proc and the kernel's modules are, the config's path and,
 *       when @config is NULL, why it did not load
 * @inv: the inventory under @ctx's sysfs root
 *
 * A check that cannot read what it needs says so in its line; nothing here
 * fails. Returns -ENOMEM when a line could not be added.
 */
VFP_EXPORT int vfp_host_checks_run(struct vfp_host_checks *c, struct vfp_ctx *ctx,
				   const struct vfp_host_env *env,
				   const struct vfp_inventory *inv,
				   const struct vfp_config *config)
{
	static void (*const checks[])(const struct vfp_host_check_run *) = {
		vfp_host_check_iommu,  vfp_host_check_vfio,  vfp_host_check_iommu_groups,
		vfp_host_check_sriov,  vfp_host_check_rdma,  vfp_host_check_config,
	};
	struct vfp_host_env e;
	char mods[PATH_MAX];
	struct vfp_host_check_run run = { c, ctx, &e, inv, config };

	default_env(env, &e, mods, sizeof(mods));
	for (size_t i = 0; i < ELEMENTSOF(checks); i++)
		checks[i](&run);
	return c->failed ? -ENOMEM : 0;
}
