/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfagentd — the per-host SR-IOV agent. This stage reads the inventory
 * (of the real host or of a simulated one) and reports it; the REST API
 * and the ledger come with their own issues.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "libvfpool/libvfpool.h"
#include "libvfpool/macro.h"
#include "sim-host.h"

struct options {
	const char *sysfs_root;
	const char *simulate_dir;
	bool once;
};

static void log_stderr(void *userdata, int priority, const char *file, int line, const char *fn,
		       const char *format, va_list args)
{
	fprintf(stderr, "<%d>vfagentd: ", priority);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: vfagentd [--sysfs-root DIR] [--simulate DIR] --once\n"
		     "\n"
		     "  -r, --sysfs-root DIR   read sysfs under DIR (default $VFAGENT_SYSFS_ROOT or /sys)\n"
		     "      --simulate DIR     build a simulated host in DIR (if empty) and use it\n"
		     "      --once             scan, report the inventory, and exit\n"
		     "  -h, --help             show this help\n");
}

static int parse_options(struct options *o, int argc, char **argv)
{
	enum { OPT_SIMULATE = 256, OPT_ONCE };
	static const struct option opts[] = {
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "simulate", required_argument, NULL, OPT_SIMULATE },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "r:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'r':
			o->sysfs_root = optarg;
			break;
		case OPT_SIMULATE:
			o->simulate_dir = optarg;
			break;
		case OPT_ONCE:
			o->once = true;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vfagentd: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* Builds the default simulated host in @dir unless it already holds one. */
static int simulate(const char *dir)
{
	char probe[PATH_MAX];
	struct stat st;
	int r;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return negative_errno();
	snprintf(probe, sizeof(probe), "%s/bus/pci/devices", dir);
	if (stat(probe, &st) == 0)
		return 0;
	r = sim_host_build_default(dir);
	if (r >= 0)
		fprintf(stderr, "<6>vfagentd: simulated host built in %s\n", dir);
	return r;
}

static void report(const struct vfp_inventory *inv)
{
	for (size_t i = 0; i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(inv, i);
		int num = 0, total = 0;

		vfp_pf_get_numvfs(pf, &num);
		vfp_pf_get_totalvfs(pf, &total);
		fprintf(stderr, "<6>vfagentd: pf %s %s:%s %s %s, %zu VFs (numvfs %d of %d)\n",
			vfp_pf_get_pci(pf), vfp_pf_get_vendor(pf) ?: "?",
			vfp_pf_get_device(pf) ?: "?", vfp_pf_get_driver(pf) ?: "unbound",
			vfp_link_type_to_string(vfp_pf_get_link_type(pf)), vfp_pf_get_vf_count(pf),
			num, total);
	}
	fprintf(stderr, "<6>vfagentd: %zu PFs, %zu VFs, %u warnings\n",
		vfp_inventory_get_pf_count(inv), vfp_inventory_get_vf_count(inv),
		vfp_inventory_get_warning_count(inv));
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct vfp_ctx *ctx = NULL;
	struct vfp_inventory *inv = NULL;
	int r;

	if (parse_options(&o, argc, argv) < 0)
		return 2;
	if (o.simulate_dir) {
		r = simulate(o.simulate_dir);
		if (r < 0) {
			fprintf(stderr, "vfagentd: building the simulated host in %s: %s\n",
				o.simulate_dir, strerror(-r));
			return EXIT_FAILURE;
		}
		o.sysfs_root = o.simulate_dir;
	}
	if (!o.once) {
		fprintf(stderr, "vfagentd: serving the API is not built yet; use --once\n");
		return 2;
	}
	r = vfp_ctx_new(&ctx);
	if (r >= 0 && o.sysfs_root)
		r = vfp_ctx_set_sysfs_root(ctx, o.sysfs_root);
	if (r >= 0) {
		vfp_ctx_set_log_fn(ctx, log_stderr, NULL);
		r = vfp_inventory_scan(ctx, &inv);
	}
	if (r < 0) {
		fprintf(stderr, "vfagentd: reading the inventory under %s: %s\n",
			ctx ? vfp_ctx_get_sysfs_root(ctx) : "?", strerror(-r));
		vfp_ctx_unref(ctx);
		return EXIT_FAILURE;
	}
	report(inv);
	vfp_inventory_unref(inv);
	vfp_ctx_unref(ctx);
	return EXIT_SUCCESS;
}
