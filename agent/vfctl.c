/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfctl — the operators' command line. Exit 0 on success, 1 on an error
 * (one line on stderr), 2 on bad usage.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libvfpool/macro.h"
#include "vfctl.h"

#define EXIT_USAGE 2

enum output { OUTPUT_TABLE, OUTPUT_JSON };

struct vfctl {
	const char *sysfs_root;
	enum output output;
	int argc;
	char **argv;
};

struct command {
	const char *name;
	int min_args, max_args;
	int (*run)(struct vfctl *c);
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: vfctl [OPTIONS] COMMAND [ARGS]\n"
		"\n"
		"Show the SR-IOV physical and virtual functions of this host.\n"
		"\n"
		"Commands:\n"
		"  list               every SR-IOV PF with its VFs\n"
		"  show PCI           one PF or VF, by PCI address (0000:3b:00.1)\n"
		"\n"
		"Options:\n"
		"  -r, --sysfs-root DIR   read sysfs under DIR (default $VFAGENT_SYSFS_ROOT or /sys)\n"
		"  -o, --output FORMAT    table (default) or json\n"
		"  -h, --help             show this help\n"
		"  -V, --version          show the version\n");
}

static void log_stderr(void *userdata, int priority, const char *file, int line, const char *fn,
		       const char *format, va_list args)
{
	fprintf(stderr, "vfctl: %s: ", priority <= LOG_ERR ? "error" : "warning");
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
}

static int scan(const struct vfctl *c, struct vfp_inventory **ret_inv)
{
	struct vfp_ctx *ctx = NULL;
	int r;

	r = vfp_ctx_new(&ctx);
	if (r < 0) {
		fprintf(stderr, "vfctl: %s\n", strerror(-r));
		return r;
	}
	vfp_ctx_set_log_fn(ctx, log_stderr, NULL);
	if (c->sysfs_root)
		r = vfp_ctx_set_sysfs_root(ctx, c->sysfs_root);
	if (r < 0)
		fprintf(stderr, "vfctl: --sysfs-root %s: must be an absolute path\n", c->sysfs_root);
	else
		r = vfp_inventory_scan(ctx, ret_inv);
	if (r < 0 && r != -EINVAL)
		fprintf(stderr, "vfctl: cannot read %s/bus/pci/devices: %s\n",
			vfp_ctx_get_sysfs_root(ctx), strerror(-r));
	vfp_ctx_unref(ctx);
	return r;
}

static int print_json(json_t *o)
{
	if (!o || json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0) {
		json_decref(o);
		fprintf(stderr, "vfctl: out of memory\n");
		return EXIT_FAILURE;
	}
	fputc('\n', stdout);
	json_decref(o);
	return EXIT_SUCCESS;
}

static int cmd_list(struct vfctl *c)
{
	struct vfp_inventory *inv = NULL;
	int ret = EXIT_SUCCESS;

	if (scan(c, &inv) < 0)
		return EXIT_FAILURE;
	if (c->output == OUTPUT_JSON)
		ret = print_json(vfp_inventory_to_json(inv));
	else
		vfctl_print_table(stdout, inv);
	vfp_inventory_unref(inv);
	return ret;
}

static int cmd_show(struct vfctl *c)
{
	const char *pci = c->argv[0];
	struct vfp_inventory *inv = NULL;
	struct vfp_pf *pf;
	struct vfp_vf *vf;
	int ret = EXIT_SUCCESS;

	if (!vfp_pci_addr_is_valid(pci)) {
		fprintf(stderr, "vfctl: show: \"%s\" is not a PCI address (dddd:bb:ss.f, lower case)\n",
			pci);
		return EXIT_USAGE;
	}
	if (scan(c, &inv) < 0)
		return EXIT_FAILURE;
	pf = vfp_inventory_find_pf(inv, pci);
	vf = pf ? NULL : vfp_inventory_find_vf(inv, pci);
	if (!pf && !vf) {
		fprintf(stderr, "vfctl: show: no SR-IOV PF or VF at %s\n", pci);
		ret = EXIT_FAILURE;
	} else if (c->output == OUTPUT_JSON) {
		ret = print_json(pf ? vfp_pf_to_json(pf, true) : vfp_vf_to_json(vf));
	} else if (pf) {
		vfctl_print_pf(stdout, pf);
	} else {
		vfctl_print_vf(stdout, vf);
	}
	vfp_inventory_unref(inv);
	return ret;
}

static const struct command commands[] = {
	{ "list", 0, 0, cmd_list },
	{ "show", 1, 1, cmd_show },
};

static int parse_options(struct vfctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	int o;

	while ((o = getopt_long(argc, argv, "r:o:hV", opts, NULL)) >= 0) {
		switch (o) {
		case 'r':
			c->sysfs_root = optarg;
			break;
		case 'o':
			if (strcmp(optarg, "json") == 0)
				c->output = OUTPUT_JSON;
			else if (strcmp(optarg, "table") == 0)
				c->output = OUTPUT_TABLE;
			else {
				fprintf(stderr, "vfctl: --output: \"%s\" is not table or json\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		case 'V':
			printf("vfctl %s\n", PACKAGE_VERSION);
			exit(EXIT_SUCCESS);
		default:
			fprintf(stderr, "Try 'vfctl --help'.\n");
			return -EINVAL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct vfctl c = { 0 };
	const char *name;

	if (parse_options(&c, argc, argv) < 0)
		return EXIT_USAGE;
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	name = argv[optind];
	c.argc = argc - optind - 1;
	c.argv = argv + optind + 1;
	for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
		if (strcmp(name, commands[i].name) != 0)
			continue;
		if (c.argc < commands[i].min_args || c.argc > commands[i].max_args) {
			fprintf(stderr, "vfctl: %s: wrong number of arguments; see 'vfctl --help'\n",
				name);
			return EXIT_USAGE;
		}
		return commands[i].run(&c);
	}
	fprintf(stderr, "vfctl: unknown command \"%s\"; see 'vfctl --help'\n", name);
	return EXIT_USAGE;
}
