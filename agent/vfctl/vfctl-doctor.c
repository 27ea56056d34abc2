/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfctl doctor: the host's preflight, one line per check, as the agent
 * answers it (GET /v1/host/checks) or, with --local, run here by libvfpool
 * on this host's sysfs and the agent's config file.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvfpool/libvfpool.h"
#include "agent/vfctl/vfctl-error.h"
#include "agent/vfctl/vfctl.h"

/* The report of the checks run here; the config's failure to load is one of its lines. */
int vfctl_doctor_local(struct vfp_ctx *ctx, const struct vfp_host_env *env_in, json_t **ret)
{
	struct vfp_host_env env = *env_in;
	struct vfp_inventory *inv = NULL;
	struct vfp_config *config = NULL;
	struct vfp_host_checks *c = NULL;
	char *error = NULL;
	int r;

	if (vfp_config_load_file(env.config_path, &config, &error) < 0)
		env.config_error = error ? error : "cannot be read";
	r = vfp_inventory_scan(ctx, &inv);
	if (r < 0)
		vfctl_error("doctor: cannot read %s/bus/pci/devices: %s",
			    vfp_ctx_get_sysfs_root(ctx), strerror(-r));
	if (r >= 0)
		r = vfp_host_checks_new(&c);
	if (r >= 0)
		r = vfp_host_checks_run(c, ctx, &env, inv, config);
	if (r >= 0 && !(*ret = vfp_host_checks_to_json(c)))
		r = -ENOMEM;
	vfp_host_checks_free(c);
	vfp_config_unref(config);
	vfp_inventory_unref(inv);
	free(error);
	return r;
}

/* One line per check: "FAIL  sriov 0000:3b:00.0   fact (fix: …)". */
/* @text, its later lines (a config's several errors) under its first one's column. */
static void print_indented(FILE *out, const char *text)
{
	for (; *text; text++) {
		fputc(*text, out);
		if (*text == '\n')
			fprintf(out, "%33s", "");
	}
}

void vfctl_print_checks(FILE *out, json_t *report)
{
	json_t *check;
	size_t i;

	json_array_foreach(json_object_get(report, "checks"), i, check) {
		const char *status = json_string_value(json_object_get(check, "status"));
		const char *subject = json_string_value(json_object_get(check, "subject"));
		const char *fix = json_string_value(json_object_get(check, "fix"));
		char name[96], upper[8] = "";

		for (size_t k = 0; status && status[k] && k < sizeof(upper) - 1; k++)
			upper[k] = (char)(status[k] - 'a' + 'A');
		snprintf(name, sizeof(name), "%s%s%s",
			 json_string_value(json_object_get(check, "check")) ?: "?",
			 subject ? " " : "", subject ?: "");
		fprintf(out, "%-4s  %-26s ", upper, name);
		print_indented(out, json_string_value(json_object_get(check, "fact")) ?: "");
		fprintf(out, "%s%s%s\n", fix ? " (fix: " : "", fix ?: "", fix ? ")" : "");
	}
}

/* 0 when every check passed (or did not apply), 1 for a warning, 2 for a failure. */
int vfctl_doctor_exit_status(json_t *report)
{
	const char *worst = json_string_value(json_object_get(report, "status"));

	if (!worst || strcmp(worst, "fail") == 0)
		return 2;
	return strcmp(worst, "warn") == 0 ? 1 : 0;
}
