/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Errors become HTTP here and nowhere else: ENOENT 404, EINVAL 400,
 * EBUSY/EEXIST 409, EPERM/EACCES 403, E2BIG 413, ENOSYS 501, ENOSPC 507,
 * ENOTCONN 503 (libvirt unreachable), EREMOTEIO 502 (libvirt failed),
 * ETIMEDOUT 504 (a guest did not let go of a device in time),
 * anything else 500. The body is {"error":"EBUSY","message":"…"}.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"

static const struct {
	int err;
	unsigned status;
	const char *name;
} errors[] = {
	{ ENOENT, 404, "ENOENT" },  { EINVAL, 400, "EINVAL" },	 { EBUSY, 409, "EBUSY" },
	{ EEXIST, 409, "EEXIST" },  { EPERM, 403, "EPERM" },	 { EACCES, 403, "EACCES" },
	{ E2BIG, 413, "E2BIG" },    { ENOSYS, 501, "ENOSYS" },	 { ENOSPC, 507, "ENOSPC" },
	{ EPROTO, 500, "EPROTO" },  { EIO, 500, "EIO" },	 { ENOMEM, 500, "ENOMEM" },
	{ EAGAIN, 503, "EAGAIN" },  { ERANGE, 409, "ERANGE" },	 { EOPNOTSUPP, 409, "EOPNOTSUPP" },
	{ ENODEV, 409, "ENODEV" },  { EROFS, 500, "EROFS" },
	{ EMSGSIZE, 400, "EMSGSIZE" }, { EBADRQC, 405, "EBADRQC" },
	{ ENOTCONN, 503, "ENOTCONN" }, { EREMOTEIO, 502, "EREMOTEIO" },
	{ ETIMEDOUT, 504, "ETIMEDOUT" },
};

unsigned api_status_for(int r)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].err == -r)
			return errors[i].status;
	return 500;
}

const char *api_errno_name(int r)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].err == -r)
			return errors[i].name;
	return "EIO";
}

json_t *api_error_body(int r, const char *message)
{
	return json_pack("{s:s, s:s}", "error", api_errno_name(r), "message",
			 message && *message ? message : strerror(-r));
}

/*
 * Records the message for the answer; returns @r for `return api_fail(...)`.
 * Messages quote what the client sent, so bytes that are not ASCII become
 * '?': the answer stays valid JSON (which escapes control characters; the
 * log escapes them too, in agent_log()).
 */
int api_fail(struct api_request *req, int r, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vsnprintf(req->error, sizeof(req->error), format, ap);
	va_end(ap);
	for (char *p = req->error; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	return r;
}

int api_reply(struct api_request *req, unsigned status, json_t *json)
{
	if (!json)
		return api_fail(req, -ENOMEM, "out of memory");
	req->status = status;
	json_decref(req->json);
	req->json = json;
	return 0;
}

/* The body as a JSON object; garbage, non-UTF-8 and duplicate keys are 400s. */
int api_parse_body(struct api_request *req, json_t **ret)
{
	json_error_t err;
	json_t *o;

	if (!req->body || req->body_len == 0)
		return api_fail(req, -EINVAL, "body: a JSON object is required");
	o = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &err);
	if (!o)
		return api_fail(req, -EINVAL, "body: line %d, column %d: %s", err.line, err.column,
				err.text);
	if (!json_is_object(o)) {
		json_decref(o);
		return api_fail(req, -EINVAL, "body: must be a JSON object");
	}
	*ret = o;
	return 0;
}

/* The path of the object being read, for error messages: "" or "owner.". */
static const char *prefix(const struct api_request *req)
{
	return req->field_prefix ? req->field_prefix : "";
}

int api_check_keys(struct api_request *req, json_t *o, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		size_t i;

		for (i = 0; allowed[i] && strcmp(allowed[i], key) != 0; i++)
			;
		if (!allowed[i])
			return api_fail(req, -EINVAL, "%s%.100s: unknown field", prefix(req), key);
	}
	return 0;
}

int api_get_string(struct api_request *req, json_t *o, const char *key, bool required,
		   const char **ret)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v)) {
		if (required)
			return api_fail(req, -EINVAL, "%s%s: required", prefix(req), key);
		*ret = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return api_fail(req, -EINVAL, "%s%s: must be a string", prefix(req), key);
	*ret = json_string_value(v);
	return 0;
}

int api_get_int(struct api_request *req, json_t *o, const char *key, long long min,
		long long max, bool required, long long *ret)
{
	json_t *v = json_object_get(o, key);

	if (!v) {
		if (required)
			return api_fail(req, -EINVAL, "%s%s: required", prefix(req), key);
		return 0;
	}
	if (!json_is_integer(v))
		return api_fail(req, -EINVAL, "%s%s: must be an integer", prefix(req), key);
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return api_fail(req, -EINVAL, "%s%s: must be in [%lld, %lld]", prefix(req), key, min,
				max);
	*ret = json_integer_value(v);
	return 0;
}

int api_get_bool(struct api_request *req, json_t *o, const char *key, bool *ret)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return api_fail(req, -EINVAL, "%s%s: must be true or false", prefix(req), key);
	*ret = json_is_true(v);
	return 0;
}
