/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The library context: the sysfs root and where log messages go. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"
#include "sysfs.h"

/**
 * vfp_ctx_new() - create a library context
 *
 * The sysfs root is $VFAGENT_SYSFS_ROOT when set (read with secure_getenv,
 * so a setuid caller cannot be redirected), else /sys. No log function is
 * set: the library is silent until its caller says where messages go.
 */
VFP_EXPORT int vfp_ctx_new(struct vfp_ctx **ret_ctx)
{
	struct vfp_ctx *ctx;
	const char *root;
	int r;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->refcount = 1;
	ctx->log_priority = LOG_WARNING;
	root = secure_getenv("VFAGENT_SYSFS_ROOT");
	r = vfp_ctx_set_sysfs_root(ctx, root && *root ? root : vfp_sysfs_default_root());
	if (r < 0) {
		free(ctx);
		return r;
	}
	*ret_ctx = ctx;
	return 0;
}

VFP_EXPORT struct vfp_ctx *vfp_ctx_ref(struct vfp_ctx *ctx)
{
	if (ctx)
		vfp_ref_inc(&ctx->refcount);
	return ctx;
}

VFP_EXPORT struct vfp_ctx *vfp_ctx_unref(struct vfp_ctx *ctx)
{
	if (!ctx || vfp_ref_dec(&ctx->refcount) > 0)
		return NULL;
	free(ctx->sysfs_root);
	free(ctx);
	return NULL;
}

/* An absolute directory; trailing slashes are dropped ("/" stays as ""). */
VFP_EXPORT int vfp_ctx_set_sysfs_root(struct vfp_ctx *ctx, const char *root)
{
	size_t len;
	char *copy;

	if (!root || root[0] != '/')
		return -EINVAL;
	len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--;
	copy = strndup(root, len);
	if (!copy)
		return -ENOMEM;
	free(ctx->sysfs_root);
	ctx->sysfs_root = copy;
	return 0;
}

VFP_EXPORT const char *vfp_ctx_get_sysfs_root(const struct vfp_ctx *ctx)
{
	return ctx->sysfs_root[0] ? ctx->sysfs_root : "/";
}

VFP_EXPORT void vfp_ctx_set_log_fn(struct vfp_ctx *ctx, vfp_log_fn fn, void *userdata)
{
	ctx->log_fn = fn;
	ctx->log_data = userdata;
}

VFP_EXPORT void vfp_ctx_set_log_priority(struct vfp_ctx *ctx, int priority)
{
	ctx->log_priority = priority;
}

VFP_EXPORT int vfp_ctx_get_log_priority(const struct vfp_ctx *ctx)
{
	return ctx->log_priority;
}

VFP_EXPORT void vfp_ctx_set_sysfs_write_handler(struct vfp_ctx *ctx, vfp_sysfs_write_fn fn,
						void *userdata)
{
	ctx->write_fn = fn;
	ctx->write_data = userdata;
}

void vfp_log(struct vfp_ctx *ctx, int priority, const char *file, int line, const char *fn,
	     const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	ctx->log_fn(ctx->log_data, priority, file, line, fn, format, ap);
	va_end(ap);
}
