/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfctl — the operators' command line. It talks to vfagentd over its unix
 * socket; `list --local` and `show --local` read sysfs directly. Exit 0 on
 * success, 1 on an error (one line on stderr), 2 on bad usage.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libvfpool/libvfpool.h"
#include "libvfpool/macro.h"
#include "agent/vfctl/vfctl-curl.h"
#include "agent/vfctl/vfctl-error.h"
#include "agent/vfctl/vfctl.h"

#define EXIT_USAGE 2

struct vfctl {
	struct vfctl_http http;
	const char *sysfs_root, *owner, *mac, *guid, *ip, *key, *pool, *state;
	const char *netns, *ifname, *gateway, *addresses[8], *domain;
	struct vfp_host_env host; /* doctor --local: the config file, /proc, the modules */
	size_t n_addresses;
	bool json, local, dry_run, pack, live, config, persist, forget;
	long count, vlan, mtu, max_tx_rate, min_tx_rate;
	int spoofchk, trust; /* -1: not asked */
	const char *link_state;
	char vf[VFP_PCI_ADDR_LEN + 1], pf[VFP_PCI_ADDR_LEN + 1]; /* swap --vf, --pf; "": none */
	const char *near, *max_distance; /* alloc: the device to be near, and how far at most */
	struct vfctl_partitions partitions; /* every --socket and --url, for partitions write */
	int argc;
	char **argv;
};

struct command {
	const char *name, *args;
	int min_args, max_args;
	int (*run)(struct vfctl *c);
};

/* The longest a request waits for the agent's answer by default: a release of many VFs each
 * waiting on libvirt (5 s) and a reset stays well inside it; a hung agent does not. */
#define VFCTL_TIMEOUT 120

static const struct command commands[];

static void usage(FILE *out)
{
	fprintf(out, "Usage: vfctl [OPTIONS] COMMAND [ARGS]\n\nCommands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(out, "  %-8s %s\n", c->name, c->args);
	fprintf(out,
		"\nOptions:\n"
		"  -o, --output FORMAT     table (default) or json\n"
		"      --socket PATH       the agent's socket (default $VFAGENT_SOCKET or\n"
		"                          /run/vfagent/vfagent.sock)\n"
		"      --url URL           the agent's TCP listener instead (http://host:port)\n"
		"      --token-file FILE   bearer token for --url\n"
		"      --timeout SECONDS   give up on an agent that has not answered by then\n"
		"                          (default 120; 0: wait for ever; events never ends)\n"
		"      --local             list/show/doctor: read sysfs here, without the agent\n"
		"  -r, --sysfs-root DIR    with --local: sysfs under DIR\n"
		"  -n, --count N          alloc: how many VFs (default 1)\n"
		"      --owner OWNER       alloc, allocations: vm:NAME, netns:NAME or pid:N\n"
		"      --pool P, --state S allocations: only these\n"
		"      --mac, --vlan, --guid, --ip   alloc: requested VF settings (set: --vlan)\n"
		"      --spoofchk on|off, --trust on|off, --link-state auto|enable|disable,\n"
		"      --max-tx-rate MBPS, --min-tx-rate MBPS   alloc, set: the VFs' settings on the PF\n"
		"      --pack              alloc: as few PFs as possible (default: spread)\n"
		"      --idempotency-key K alloc: a retry with K returns the same allocation\n"
		"      --dry-run           numvfs: only say what would happen\n"
		"      --persist           numvfs: also keep it in the agent's state, so\n"
		"                          the PF has that many VFs again after a reboot\n"
		"      --forget            numvfs: drop the count persisted for the PF\n"
		"      --netns NS          attach: a /run/netns name or path, or pid:N\n"
		"      --ifname NAME       attach: the name inside (several VFs: NAME0, NAME1…)\n"
		"      --address A/P       attach: an address for the first VF; repeatable\n"
		"      --mtu N, --gateway GW   attach: MTU, and a default route via GW\n"
		"      --domain NAME       attach: a libvirt domain, by name or UUID\n"
		"      --live, --config    attach: the running domain and/or its config\n"
		"                          (default: live while it runs, else its config)\n"
		"      --config-file FILE  doctor --local: the agent's config (default\n"
		"                          " VFAGENT_CONFIG_FILE ")\n"
		"      --proc-root DIR, --modules-dir DIR   doctor --local: /proc and the\n"
		"                          kernel's modules elsewhere (a test tree)\n"
		"      --file PATH         partitions write: OpenSM's partitions.conf\n"
		"      --opensm-pid FILE   partitions write: SIGHUP to that OpenSM on a change\n"
		"      --follow            partitions write: again on each agent's change\n"
		"  -h, --help, -V, --version\n");
}

struct text_buf {
	char *data;
	size_t len, size;
};

/* jansson's dump callback: one token more in @userdata, a struct text_buf. */
static int text_buf_append(const char *s, size_t n, void *userdata)
{
	struct text_buf *b = userdata;

	if (b->len + n + 1 > b->size) {
		size_t size = (b->len + n + 1) * 2;
		char *d = realloc(b->data, size);

		if (!d)
			return -1;
		b->data = d;
		b->size = size;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	return 0;
}

/*
 * @o indented, then a newline. The text is built in memory and written at
 * once: a listing of a thousand VFs is some 100,000 tokens, and a stdio call
 * per token cost more than building the text. (json_dumps() builds it too,
 * then copies it whole once more: 2 M instructions more for that listing.)
 */
static int print_json(json_t *o)
{
	struct text_buf b = { 0 };
	int ret = EXIT_FAILURE;

	if (json_dump_callback(o, text_buf_append, &b, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
	    text_buf_append("\n", 1, &b) == 0 && fwrite(b.data, 1, b.len, stdout) == b.len)
		ret = EXIT_SUCCESS;
	free(b.data);
	return ret;
}

static __attribute__((format(printf, 6, 0))) void
log_stderr(void *userdata, int priority, const char *file, int line, const char *fn,
	   const char *format, va_list args)
{
	fprintf(stderr, "vfctl: %s: ", priority <= LOG_ERR ? "error" : "warning");
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
}

/* A library context on this host's sysfs (or --sysfs-root). */
static int local_ctx(const struct vfctl *c, struct vfp_ctx **ret)
{
	struct vfp_ctx *ctx = NULL;
	int r = vfp_ctx_new(&ctx);

	if (r < 0)
		return r;
	vfp_ctx_set_log_fn(ctx, log_stderr, NULL);
	if (c->sysfs_root && vfp_ctx_set_sysfs_root(ctx, c->sysfs_root) < 0) {
		vfctl_error("--sysfs-root %s: must be an absolute path", c->sysfs_root);
		vfp_ctx_unref(ctx);
		return -EINVAL;
	}
	*ret = ctx;
	return 0;
}

/* {"pfs":[…]} read from sysfs here, as the agent would serve it (without ledger fields). */
static int local_pfs(const struct vfctl *c, json_t **ret)
{
	struct vfp_ctx *ctx = NULL;
	struct vfp_inventory *inv = NULL;
	int r = local_ctx(c, &ctx);

	if (r >= 0) {
		r = vfp_inventory_scan(ctx, &inv);
		if (r < 0)
			vfctl_error("cannot read %s/bus/pci/devices: %s",
				    vfp_ctx_get_sysfs_root(ctx), strerror(-r));
	}
	if (r >= 0)
		*ret = vfp_inventory_to_json(inv);
	vfp_inventory_unref(inv);
	vfp_ctx_unref(ctx);
	return r;
}

static int get_pfs(struct vfctl *c, json_t **ret)
{
	return c->local ? local_pfs(c, ret) : vfctl_request(&c->http, "GET", "/v1/pfs", NULL, NULL, ret);
}

static int cmd_list(struct vfctl *c)
{
	json_t *o = NULL, *holders = NULL;
	int ret;

	if (get_pfs(c, &o) < 0)
		return EXIT_FAILURE;
	ret = EXIT_SUCCESS;
	if (c->json) {
		ret = print_json(o);
	} else {
		holders = c->local ? NULL : vfctl_holders(&c->http);
		vfctl_print_table(stdout, json_object_get(o, "pfs"), holders);
	}
	json_decref(holders);
	json_decref(o);
	return ret;
}

/* `vfctl allocations [--pool P] [--state S] [--owner O]`: who holds what. */
static int cmd_allocations(struct vfctl *c)
{
	json_t *o = NULL;
	int ret = EXIT_SUCCESS;

	if (vfctl_get_allocations(&c->http, c->pool, c->state, c->owner, &o) < 0)
		return EXIT_FAILURE;
	if (c->json)
		ret = print_json(o);
	else
		vfctl_print_allocations(stdout, json_object_get(o, "allocations"));
	json_decref(o);
	return ret;
}

static bool is_allocation_id(const char *cmd, const char *s)
{
	if (strlen(s) == 36 && strspn(s, "0123456789abcdef-") == 36)
		return true;
	vfctl_error("%s: \"%s\" is not an allocation id", cmd, s);
	return false;
}

static bool looks_like_id(const char *s)
{
	return strlen(s) == 36 && s[8] == '-' && s[13] == '-';
}

/* `vfctl show ID`: one allocation, with its owner and where each VF is. */
static int show_allocation(struct vfctl *c, const char *id)
{
	char path[128];
	json_t *o = NULL;
	int ret = EXIT_SUCCESS;

	if (!is_allocation_id("show", id))
		return EXIT_USAGE;
	snprintf(path, sizeof(path), "/v1/allocations/%s", id);
	if (vfctl_request(&c->http, "GET", path, NULL, NULL, &o) < 0)
		return EXIT_FAILURE;
	if (c->json) {
		ret = print_json(o);
	} else {
		json_t *list = json_pack("[O]", o);

		vfctl_print_allocations(stdout, list);
		json_decref(list);
	}
	json_decref(o);
	return ret;
}

/* The PF or VF at @pci in the {"pfs":[…]} view, and which it is. */
static json_t *find(json_t *pfs, const char *pci, const char **kind)
{
	size_t i, j;
	json_t *pf, *vf;

	json_array_foreach(json_object_get(pfs, "pfs"), i, pf) {
		if (strcmp(json_string_value(json_object_get(pf, "pci")), pci) == 0) {
			*kind = "pf";
			return pf;
		}
		json_array_foreach(json_object_get(pf, "vfs"), j, vf)
			if (strcmp(json_string_value(json_object_get(vf, "pci")), pci) == 0) {
				*kind = "vf";
				return vf;
			}
	}
	return NULL;
}

static int cmd_show(struct vfctl *c)
{
	const char *kind = NULL;
	char pci[VFP_PCI_ADDR_LEN + 1];
	json_t *o = NULL, *found;
	int ret = EXIT_SUCCESS;

	if (looks_like_id(c->argv[0]) && !c->local)
		return show_allocation(c, c->argv[0]);
	if (vfp_pci_addr_normalize(c->argv[0], pci) < 0) {
		vfctl_error("show: \"%s\" is neither a PCI address (0000:3b:00.1 or "
			    "3b:00.1) nor an allocation id", c->argv[0]);
		return EXIT_USAGE;
	}
	if (get_pfs(c, &o) < 0)
		return EXIT_FAILURE;
	found = find(o, pci, &kind);
	if (found && !c->local && strcmp(kind, "vf") == 0) {
		/* one VF from the agent has what lists leave out: its settings on the PF,
		 * its IOMMU group's devices, its RDMA port */
		char path[64];
		json_t *vf = NULL;

		snprintf(path, sizeof(path), "/v1/vfs/%s", pci);
		if (vfctl_request(&c->http, "GET", path, NULL, NULL, &vf) >= 0) {
			json_object_set_new(o, "shown", vf);
			found = vf;
		}
	}
	if (!found) {
		vfctl_error("show: no SR-IOV PF or VF at %s", pci);
		ret = EXIT_FAILURE;
	} else if (c->json) {
		ret = print_json(found);
	} else {
		vfctl_print_fields(stdout, kind, found);
	}
	json_decref(o);
	return ret;
}

static int cmd_pools(struct vfctl *c)
{
	json_t *o = NULL;
	int ret = EXIT_SUCCESS;

	if (vfctl_request(&c->http, "GET", "/v1/pools", NULL, NULL, &o) < 0)
		return EXIT_FAILURE;
	if (c->json)
		ret = print_json(o);
	else
		vfctl_print_pools(stdout, json_object_get(o, "pools"));
	json_decref(o);
	return ret;
}

/* GET /v1/pcie, or the same read from sysfs here with --local. */
static int get_pcie(struct vfctl *c, json_t **ret)
{
	struct vfp_inventory *inv = NULL;
	struct vfp_pcie_topo *t = NULL;
	struct vfp_ctx *ctx = NULL;
	int r;

	if (!c->local)
		return vfctl_request(&c->http, "GET", "/v1/pcie", NULL, NULL, ret);
	r = local_ctx(c, &ctx);
	if (r >= 0)
		r = vfp_inventory_scan(ctx, &inv);
	if (r >= 0)
		r = vfp_pcie_topo_scan(ctx, &t);
	if (r >= 0) {
		*ret = vfp_pcie_topo_to_json(t, inv);
		r = *ret ? 0 : -ENOMEM;
	}
	if (r < 0)
		vfctl_error("reading the PCIe tree: %s", strerror(-r));
	vfp_pcie_topo_unref(t);
	vfp_inventory_unref(inv);
	vfp_ctx_unref(ctx);
	return r;
}

static int cmd_topo(struct vfctl *c)
{
	json_t *o = NULL;
	int ret = EXIT_SUCCESS;

	if (get_pcie(c, &o) < 0)
		return EXIT_FAILURE;
	if (c->json)
		ret = print_json(o);
	else
		vfctl_print_topo(stdout, o);
	json_decref(o);
	return ret;
}

/* "vm:one-42" → {"kind":"vm","name":"one-42"}; "netns:/run/netns/x"; "pid:1234". */
static json_t *parse_owner(const char *s)
{
	if (!s)
		return NULL;
	if (strncmp(s, "vm:", 3) == 0 && s[3])
		return json_pack("{s:s, s:s}", "kind", "vm", "name", s + 3);
	if (strncmp(s, "netns:", 6) == 0 && s[6])
		return json_pack("{s:s, s:s}", "kind", "container", "netns", s + 6);
	if (strncmp(s, "pid:", 4) == 0 && atoi(s + 4) > 0)
		return json_pack("{s:s, s:i}", "kind", "container", "pid", atoi(s + 4));
	return NULL;
}

static json_t *domain_target(const struct vfctl *c);
static json_t *netns_target(const struct vfctl *c);

/* --spoofchk, --trust, --link-state and the rates into a claim's @body. */
static void alloc_pf_settings(const struct vfctl *c, json_t *body)
{
	if (c->spoofchk >= 0)
		json_object_set_new(body, "spoofchk", json_boolean(c->spoofchk));
	if (c->trust >= 0)
		json_object_set_new(body, "trust", json_boolean(c->trust));
	if (c->link_state)
		json_object_set_new(body, "link_state", json_string(c->link_state));
	if (c->max_tx_rate >= 0)
		json_object_set_new(body, "max_tx_rate", json_integer(c->max_tx_rate));
	if (c->min_tx_rate >= 0)
		json_object_set_new(body, "min_tx_rate", json_integer(c->min_tx_rate));
}

/* alloc POOL --owner O [--netns NS … | --domain D …]: claimed, and attached in the same request. */
static int cmd_alloc(struct vfctl *c)
{
	json_t *owner = parse_owner(c->owner), *body, *o = NULL;
	int ret = EXIT_SUCCESS;

	if (!owner || (c->netns && c->domain)) {
		vfctl_error("alloc: %s",
			    owner ? "--netns or --domain, not both"
				  : "--owner vm:NAME, netns:PATH or pid:N is required");
		json_decref(owner);
		return EXIT_USAGE;
	}
	body = json_pack("{s:s, s:i, s:o, s:s}", "pool", c->argv[0], "count", (int)c->count,
			 "owner", owner, "placement", c->pack ? "pack" : "spread");
	if (c->mac)
		json_object_set_new(body, "mac", json_string(c->mac));
	if (c->vlan >= 0)
		json_object_set_new(body, "vlan", json_integer(c->vlan));
	if (c->guid)
		json_object_set_new(body, "guid", json_string(c->guid));
	if (c->ip)
		json_object_set_new(body, "ip", json_string(c->ip));
	if (c->near) /* the agent checks both, naming the field */
		json_object_set_new(body, "near", json_string(c->near));
	if (c->max_distance)
		json_object_set_new(body, "max_distance", json_string(c->max_distance));
	alloc_pf_settings(c, body);
	if (c->netns || c->domain)
		json_object_set_new(body, "attach", c->netns ? netns_target(c) : domain_target(c));
	if (vfctl_request(&c->http, "POST", "/v1/allocations", body, c->key, &o) < 0)
		ret = EXIT_FAILURE;
	else if (c->json)
		ret = print_json(o);
	else
		vfctl_print_allocation(stdout, o);
	json_decref(body);
	json_decref(o);
	return ret;
}

/* Prints the allocation a POST or a PATCH answered with, as JSON or a table. */
static int send_allocation(struct vfctl *c, const char *method, const char *path, json_t *body)
{
	json_t *o = NULL;
	int ret = EXIT_SUCCESS;

	if (vfctl_request(&c->http, method, path, body, NULL, &o) < 0)
		ret = EXIT_FAILURE;
	else if (c->json)
		ret = print_json(o);
	else
		vfctl_print_allocation(stdout, o);
	json_decref(o);
	return ret;
}

static int post_allocation(struct vfctl *c, const char *path, json_t *body)
{
	return send_allocation(c, "POST", path, body);
}

static json_t *domain_target(const struct vfctl *c)
{
	json_t *body = json_pack("{s:s}", "domain", c->domain);

	if (c->live)
		json_object_set_new(body, "live", json_true());
	if (c->config)
		json_object_set_new(body, "config", json_true());
	return body;
}

static json_t *netns_target(const struct vfctl *c)
{
	json_t *body, *addrs = json_array();

	for (size_t i = 0; i < c->n_addresses; i++)
		json_array_append_new(addrs, json_string(c->addresses[i]));
	body = json_pack("{s:s, s:o}", "netns", c->netns, "addresses", addrs);
	if (c->ifname)
		json_object_set_new(body, "ifname", json_string(c->ifname));
	if (c->gateway)
		json_object_set_new(body, "gateway", json_string(c->gateway));
	if (c->mtu)
		json_object_set_new(body, "mtu", json_integer(c->mtu));
	return body;
}

static int cmd_attach(struct vfctl *c)
{
	char path[128];
	json_t *body;
	int ret;

	if (!is_allocation_id("attach", c->argv[0]))
		return EXIT_USAGE;
	if (!c->netns == !c->domain) {
		vfctl_error("attach: one of --netns NAME, PATH or pid:N and --domain "
			    "NAME is required");
		return EXIT_USAGE;
	}
	body = c->domain ? domain_target(c) : netns_target(c);
	snprintf(path, sizeof(path), "/v1/allocations/%s/attach", c->argv[0]);
	ret = post_allocation(c, path, body);
	json_decref(body);
	return ret;
}

static int cmd_detach(struct vfctl *c)
{
	char path[128];

	if (!is_allocation_id("detach", c->argv[0]))
		return EXIT_USAGE;
	snprintf(path, sizeof(path), "/v1/allocations/%s/detach", c->argv[0]);
	return post_allocation(c, path, NULL);
}

/* set ID --vlan N, --spoofchk, --trust, --link-state, the rates: a live allocation's new settings. */
static int cmd_set(struct vfctl *c)
{
	char path[128];
	json_t *body;
	int ret;

	if (!is_allocation_id("set", c->argv[0]))
		return EXIT_USAGE;
	if (c->mac || c->guid || c->ip) {
		vfctl_error("set: --mac, --guid and --ip cannot change once claimed "
			    "(claim anew)");
		return EXIT_USAGE;
	}
	body = json_object();
	if (c->vlan >= 0)
		json_object_set_new(body, "vlan", json_integer(c->vlan));
	alloc_pf_settings(c, body);
	if (json_object_size(body) == 0) {
		vfctl_error("set: give --vlan, --spoofchk, --trust, --link-state, "
			    "--max-tx-rate or --min-tx-rate");
		json_decref(body);
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/v1/allocations/%s", c->argv[0]);
	ret = send_allocation(c, "PATCH", path, body);
	json_decref(body);
	return ret;
}

/*
 * Idempotent, for hooks and scripts: an allocation released already is
 * said so, with success; an unknown one is an error.
 */
static int cmd_release(struct vfctl *c)
{
	char path[128];
	json_t *a = NULL;
	bool released;

	if (!is_allocation_id("release", c->argv[0]))
		return EXIT_USAGE;
	snprintf(path, sizeof(path), "/v1/allocations/%s", c->argv[0]);
	if (vfctl_request(&c->http, "GET", path, NULL, NULL, &a) < 0)
		return EXIT_FAILURE;
	released = json_is_string(json_object_get(a, "state")) &&
		   strcmp(json_string_value(json_object_get(a, "state")), "released") == 0;
	json_decref(a);
	a = NULL;
	if (released) {
		printf("allocation %s was released already\n", c->argv[0]);
		return EXIT_SUCCESS;
	}
	if (vfctl_request(&c->http, "DELETE", path, NULL, NULL, &a) < 0)
		return EXIT_FAILURE;
	/* 202: released, but a guest still holds a VF, quarantined until it lets go */
	if (json_is_string(json_object_get(a, "message")))
		vfctl_error("%s", json_string_value(json_object_get(a, "message")));
	else if (!c->json)
		printf("allocation %s released\n", c->argv[0]);
	if (c->json && a)
		json_dumpf(a, stdout, JSON_INDENT(2)), putchar('\n');
	json_decref(a);
	return EXIT_SUCCESS;
}

/* numvfs PF --forget: the count persisted for PF dropped; its VFs stay. */
static int forget_numvfs(struct vfctl *c)
{
	char path[64];
	json_t *o = NULL;
	int r;

	if (c->argc != 1 || !vfp_pci_addr_is_valid(c->argv[0]) || c->dry_run || c->persist) {
		vfctl_error("numvfs: usage: numvfs PF-PCI --forget");
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/v1/pfs/%s/numvfs", c->argv[0]);
	r = vfctl_request(&c->http, "DELETE", path, NULL, NULL, &o);
	if (o && c->json)
		print_json(o);
	else if (o)
		printf(json_is_true(json_object_get(o, "forgotten"))
		       ? "%s: its persisted count dropped; the config's numvfs rules decide its VFs "
			 "from the next start or reload (it keeps its VFs now)\n"
		       : "%s: no count was persisted for it\n", c->argv[0]);
	json_decref(o);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int cmd_numvfs(struct vfctl *c)
{
	char path[64], *end;
	long n;
	json_t *body, *o = NULL;
	int r, ret;

	if (c->forget)
		return forget_numvfs(c);
	n = c->argc == 2 ? strtol(c->argv[1], &end, 10) : -1;
	if (c->argc != 2 || !vfp_pci_addr_is_valid(c->argv[0]) || *end || n < 0 || n > 65535) {
		vfctl_error("numvfs: usage: numvfs PF-PCI N");
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/v1/pfs/%s/numvfs", c->argv[0]);
	body = json_pack("{s:i, s:b, s:b}", "numvfs", (int)n, "dry_run", c->dry_run, "persist",
			 c->persist);
	r = vfctl_request(&c->http, "PUT", path, body, NULL, &o);
	json_decref(body);
	if (o && c->json)
		print_json(o);
	else if (o && r == 0)
		vfctl_print_plan(stdout, o);
	else if (o) /* a refusal: the message is printed; name the blockers too */
		vfctl_print_plan(stderr, o);
	ret = r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	json_decref(o);
	return ret;
}

/*
 * bind PCI DRIVER|-|none: rebind a device through sysfs here, as the agent
 * binds unmanaged hostdevs (driver_override, unbind, drivers_probe); "-"
 * gives it back to its own driver, "none" leaves it unbound. A maintenance
 * tool: the ledger is not asked.
 */
static int cmd_bind(struct vfctl *c)
{
	const char *pci = c->argv[0], *driver = c->argv[1];
	struct vfp_ctx *ctx = NULL;
	char now[64] = "";
	int r;

	if (!vfp_pci_addr_is_valid(pci)) {
		vfctl_error("bind: \"%s\" is not a PCI address like 0000:3b:00.1", pci);
		return EXIT_USAGE;
	}
	if (strcmp(driver, "-") == 0)
		driver = NULL;
	else if (strcmp(driver, "none") == 0)
		driver = "";
	r = local_ctx(c, &ctx);
	if (r >= 0)
		r = vfp_device_bind_driver(ctx, pci, driver);
	if (r >= 0 || r == -ENXIO)
		vfp_device_read_driver(ctx, pci, now, sizeof(now));
	vfp_ctx_unref(ctx);
	if (r == -ENXIO)
		vfctl_error("bind: no driver took %s%s%s", pci, driver ? " as " : "",
			    driver ? driver : "");
	else if (r < 0)
		vfctl_error("bind %s: %s", pci, strerror(-r));
	else
		printf("%s: %s\n", pci, now[0] ? now : "(no driver)");
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* repair PCI: a quarantined VF reset, checked and free again (or why not). */
static int cmd_repair(struct vfctl *c)
{
	char path[64], pci[VFP_PCI_ADDR_LEN + 1];
	json_t *o = NULL;

	if (vfp_pci_addr_normalize(c->argv[0], pci) < 0) {
		vfctl_error("repair: \"%s\" is not a PCI address like 0000:3b:00.2",
			    c->argv[0]);
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/v1/vfs/%s/repair", pci);
	if (vfctl_request(&c->http, "POST", path, NULL, NULL, &o) < 0)
		return EXIT_FAILURE;
	if (c->json)
		print_json(o);
	else
		printf("VF %s repaired: %s\n", pci,
		       json_string_value(json_object_get(o, "state")) ?: "?");
	json_decref(o);
	return EXIT_SUCCESS;
}

/* A PCI address as the agent writes it (3b:00.1 will do). */
static int parse_pci(const char *opt, const char *s, char out[VFP_PCI_ADDR_LEN + 1])
{
	if (vfp_pci_addr_normalize(s, out) >= 0)
		return 0;
	fprintf(stderr, "vfctl: %s: \"%s\" is not a PCI address like 0000:3b:00.2\n", opt, s);
	return -EINVAL;
}

/* swap ID [--vf PCI] [--pf PF]: a failover NIC onto another VF while its guest runs. */
static int cmd_swap(struct vfctl *c)
{
	if (!is_allocation_id("swap", c->argv[0]))
		return EXIT_USAGE;
	return vfctl_swap(&c->http, c->argv[0], c->vf[0] ? c->vf : NULL, c->pf[0] ? c->pf : NULL,
			  c->json) < 0
		       ? EXIT_FAILURE
		       : EXIT_SUCCESS;
}

/* drain PF: every failover NIC off the PF; exit 1 when an allocation cannot move. */
static int cmd_drain(struct vfctl *c)
{
	char pf[VFP_PCI_ADDR_LEN + 1];

	if (parse_pci("drain", c->argv[0], pf) < 0)
		return EXIT_USAGE;
	return vfctl_drain(&c->http, pf, c->json) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* doctor: the host's preflight; exit 0 all passed, 1 a warning, 2 a failure. */
static int cmd_doctor(struct vfctl *c)
{
	struct vfp_ctx *ctx = NULL;
	json_t *report = NULL;
	int r, ret;

	if (c->local) {
		r = local_ctx(c, &ctx);
		if (r >= 0)
			r = vfctl_doctor_local(ctx, &c->host, &report);
		vfp_ctx_unref(ctx);
	} else
		r = vfctl_request(&c->http, "GET", "/v1/host/checks", NULL, NULL, &report);
	if (r == -ECONNREFUSED)
		vfctl_error("without the agent, `vfctl doctor --local` checks this host "
			    "from here (as root: it reads sysfs and the config)");
	if (r < 0)
		return EXIT_USAGE; /* a failure: the host could not be checked */
	if (c->json)
		print_json(report);
	else
		vfctl_print_checks(stdout, report);
	ret = vfctl_doctor_exit_status(report);
	json_decref(report);
	return ret;
}

static int cmd_partitions(struct vfctl *c)
{
	if (strcmp(c->argv[0], "write") != 0) {
		vfctl_error("partitions: unknown action \"%s\" (write)", c->argv[0]);
		return EXIT_USAGE;
	}
	if (c->partitions.n_sources == 0) /* the agent of this host, as every other command */
		c->partitions.sources[c->partitions.n_sources++] = c->http;
	return vfctl_partitions_write(&c->partitions);
}

static int cmd_events(struct vfctl *c)
{
	return vfctl_follow_events(&c->http, c->json) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

static const struct command commands[] = {
	{ "list", "every SR-IOV PF with its VFs", 0, 0, cmd_list },
	{ "show", "PCI|ID   one PF or VF (3b:00.1 will do), or one allocation", 1, 1, cmd_show },
	{ "allocations", "[--pool P] [--state S] [--owner O]   who holds what, and where", 0, 0,
	  cmd_allocations },
	{ "pools", "the pools and their VFs per state", 0, 0, cmd_pools },
	{ "topo", "[--local]   where PFs sit in the PCIe tree, and their distance (PIX PXB PHB\n"
		  "           NODE SYS) to GPUs, accelerators and NVMe drives", 0, 0, cmd_topo },
	{ "alloc", "POOL --owner OWNER [-n N] [--netns NS … | --domain D …]   reserve VFs\n"
		   "           (and attach them in the same request); --near PCI [--max-distance\n"
		   "           PIX|PXB|PHB|NODE|SYS]: the free VFs closest to that device", 1, 1,
	  cmd_alloc },
	{ "attach", "ID --netns NS [--ifname N] [--address A/P]... [--mtu N] [--gateway GW]\n"
		    "           VFs into a container's network namespace\n"
		    "  attach   ID --domain NAME [--live] [--config]   VFs into a libvirt domain",
	  1, 1, cmd_attach },
	{ "detach", "ID   VFs back to the host, as they were", 1, 1, cmd_detach },
	{ "set", "ID [--vlan N] [--spoofchk on|off] [--trust on|off] [--link-state S]\n"
		 "          [--max-tx-rate MBPS] [--min-tx-rate MBPS]   new settings, on the PF at once\n"
		 "          for the VFs in use (a network update)", 1, 1, cmd_set },
	{ "release", "ID   restore and free an allocation's VFs", 1, 1, cmd_release },
	{ "swap", "ID [--vf PCI] [--pf PF]   a running guest's failover NIC onto another VF\n"
		  "           (on PF, else on another PF than its own) while its standby carries\n"
		  "           the traffic", 1, 1, cmd_swap },
	{ "drain", "PF   every failover NIC off the PF; says which cannot move and why (exit 1)",
	  1, 1, cmd_drain },
	{ "numvfs", "PF N [--dry-run | --persist]   resize a PF (--persist: again after a "
		    "reboot)\n"
		    "  numvfs   PF --forget   drop PF's persisted count (the config's rules decide)",
	  1, 2, cmd_numvfs },
	{ "events", "follow inventory and allocation changes (through agent restarts)", 0, 0,
	  cmd_events },
	{ "partitions", "write --file PATH [--socket S | --url U --token-file F]... [--opensm-pid\n"
			"           PIDFILE] [--follow]   every agent's InfiniBand partition members into\n"
			"           OpenSM's partitions.conf (its own block; SIGHUP on a change)",
	  1, 1, cmd_partitions },
	{ "repair", "PCI   a quarantined VF: reset, checked, and free again", 1, 1, cmd_repair },
	{ "doctor", "[--local]   check the host: IOMMU, vfio-pci, SR-IOV firmware, IB ports, "
		    "RDMA\n           netns mode, config, socket group, pools (exit 0/1/2: "
		    "pass/warn/fail)",
	  0, 0, cmd_doctor },
	{ "bind", "PCI DRIVER|-|none   rebind a device here through sysfs ('-': its own driver)", 2, 2,
	  cmd_bind },
	{}
};

/* One per --token-file: partitions write names an agent per --url, each with its own. */
static char token_bufs[VFCTL_MAX_SOURCES + 1][512];
static size_t n_tokens;

static int read_token(const char *path, const char **ret)
{
	FILE *f = fopen(path, "re");
	char *token_buf = token_bufs[n_tokens];

	if (n_tokens == VFCTL_MAX_SOURCES) {
		vfctl_error("--token-file: at most %d", VFCTL_MAX_SOURCES);
		if (f)
			fclose(f);
		return -EINVAL;
	}
	if (!f || !fgets(token_buf, sizeof(token_bufs[0]), f)) {
		vfctl_error("--token-file %s: %s", path, f ? "empty" : strerror(errno));
		if (f)
			fclose(f);
		return -EINVAL;
	}
	fclose(f);
	token_buf[strcspn(token_buf, "\r\n")] = '\0';
	n_tokens++;
	*ret = token_buf;
	return 0;
}

static int parse_on_off(const char *opt, const char *s, int *ret)
{
	if (strcmp(s, "on") != 0 && strcmp(s, "off") != 0) {
		vfctl_error("%s: \"%s\" is not on or off", opt, s);
		return -EINVAL;
	}
	*ret = strcmp(s, "on") == 0;
	return 0;
}

static int parse_link_state(const char *s, const char **ret)
{
	if (strcmp(s, "auto") != 0 && strcmp(s, "enable") != 0 && strcmp(s, "disable") != 0) {
		vfctl_error("--link-state: \"%s\" is not auto, enable or disable", s);
		return -EINVAL;
	}
	*ret = s;
	return 0;
}

static int parse_number(const char *opt, const char *s, long min, long max, long *ret)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > max) {
		vfctl_error("%s: \"%s\" is not a number in [%ld, %ld]", opt, s, min, max);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

enum { O_SOCKET = 256, O_URL, O_TOKEN, O_LOCAL, O_OWNER, O_MAC, O_VLAN, O_GUID, O_IP,
       O_PACK, O_KEY, O_DRY, O_NETNS, O_IFNAME, O_ADDRESS, O_MTU, O_GATEWAY, O_DOMAIN,
       O_LIVE, O_CONFIG, O_POOL, O_STATE, O_CONFIG_FILE, O_PROC_ROOT, O_MODULES_DIR, O_PERSIST, O_FORGET,
       O_SPOOFCHK, O_TRUST, O_LINK_STATE, O_MAX_RATE, O_MIN_RATE, O_TIMEOUT, O_VF, O_PF, O_NEAR,
       O_MAX_DISTANCE, O_FILE, O_OPENSM_PID, O_FOLLOW };
static const struct option options[] = {
	{ "sysfs-root", required_argument, NULL, 'r' }, { "output", required_argument, NULL, 'o' },
	{ "count", required_argument, NULL, 'n' },	{ "socket", required_argument, NULL, O_SOCKET },
	{ "url", required_argument, NULL, O_URL },	{ "token-file", required_argument, NULL, O_TOKEN },
	{ "local", no_argument, NULL, O_LOCAL },	{ "owner", required_argument, NULL, O_OWNER },
	{ "mac", required_argument, NULL, O_MAC },	{ "vlan", required_argument, NULL, O_VLAN },
	{ "guid", required_argument, NULL, O_GUID },	{ "ip", required_argument, NULL, O_IP },
	{ "pack", no_argument, NULL, O_PACK },		{ "idempotency-key", required_argument, NULL, O_KEY },
	{ "dry-run", no_argument, NULL, O_DRY },	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },		{ "netns", required_argument, NULL, O_NETNS },
	{ "ifname", required_argument, NULL, O_IFNAME }, { "address", required_argument, NULL, O_ADDRESS },
	{ "mtu", required_argument, NULL, O_MTU },	{ "gateway", required_argument, NULL, O_GATEWAY },
	{ "domain", required_argument, NULL, O_DOMAIN }, { "live", no_argument, NULL, O_LIVE },
	{ "config", no_argument, NULL, O_CONFIG },	{ "pool", required_argument, NULL, O_POOL },
	{ "state", required_argument, NULL, O_STATE },
	{ "config-file", required_argument, NULL, O_CONFIG_FILE },
	{ "proc-root", required_argument, NULL, O_PROC_ROOT },
	{ "modules-dir", required_argument, NULL, O_MODULES_DIR },
	{ "persist", no_argument, NULL, O_PERSIST },
	{ "forget", no_argument, NULL, O_FORGET },
	{ "spoofchk", required_argument, NULL, O_SPOOFCHK },
	{ "trust", required_argument, NULL, O_TRUST },
	{ "link-state", required_argument, NULL, O_LINK_STATE },
	{ "max-tx-rate", required_argument, NULL, O_MAX_RATE },
	{ "min-tx-rate", required_argument, NULL, O_MIN_RATE },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "vf", required_argument, NULL, O_VF },
	{ "pf", required_argument, NULL, O_PF },
	{ "near", required_argument, NULL, O_NEAR },
	{ "max-distance", required_argument, NULL, O_MAX_DISTANCE },
	{ "file", required_argument, NULL, O_FILE },
	{ "opensm-pid", required_argument, NULL, O_OPENSM_PID },
	{ "follow", no_argument, NULL, O_FOLLOW },
	{}
};

/* Each --socket and --url is one more agent for partitions write; the last is every command's. */
static int add_source(struct vfctl *c)
{
	if (c->partitions.n_sources == VFCTL_MAX_SOURCES) {
		vfctl_error("--socket, --url: at most %d agents", VFCTL_MAX_SOURCES);
		return -EINVAL;
	}
	c->partitions.sources[c->partitions.n_sources++] = c->http;
	return 0;
}

/* One option of the command line into @c. */
static int apply_option(struct vfctl *c, int o)
{
	int r = 0;

	switch (o) {
	case 'r': c->sysfs_root = optarg; c->local = true; break;
	case 'o':
		if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0) {
			vfctl_error("--output: \"%s\" is not table or json", optarg);
			r = -EINVAL;
		}
		c->json = strcmp(optarg, "json") == 0;
		break;
	case 'n': r = parse_number("--count", optarg, 1, 64, &c->count); break;
	case O_SOCKET:
		c->http.socket = c->host.socket_path = optarg;
		r = add_source(c);
		if (r >= 0) /* this agent by its socket, whatever --url said before */
			c->partitions.sources[c->partitions.n_sources - 1].url = NULL;
		break;
	case O_TIMEOUT: r = parse_number("--timeout", optarg, 0, 86400, &c->http.timeout); break;
	case O_VF: r = parse_pci("--vf", optarg, c->vf); break;
	case O_PF: r = parse_pci("--pf", optarg, c->pf); break;
	case O_URL:
		c->http.url = optarg;
		r = add_source(c);
		break;
	case O_TOKEN:
		r = read_token(optarg, &c->http.token);
		if (r >= 0 && c->partitions.n_sources) /* the --url before it */
			c->partitions.sources[c->partitions.n_sources - 1].token = c->http.token;
		break;
	case O_FILE: c->partitions.file = optarg; break;
	case O_OPENSM_PID: c->partitions.opensm_pid = optarg; break;
	case O_FOLLOW: c->partitions.follow = true; break;
	case O_LOCAL: c->local = true; break;
	case O_OWNER: c->owner = optarg; break;
	case O_MAC: c->mac = optarg; break;
	case O_VLAN: r = parse_number("--vlan", optarg, 0, 4094, &c->vlan); break;
	case O_GUID: c->guid = optarg; break;
	case O_IP: c->ip = optarg; break;
	case O_PACK: c->pack = true; break;
	case O_NEAR: c->near = optarg; break;
	case O_MAX_DISTANCE: c->max_distance = optarg; break;
	case O_KEY: c->key = optarg; break;
	case O_DRY: c->dry_run = true; break;
	case O_PERSIST: c->persist = true; break;
	case O_FORGET: c->forget = true; break;
	case O_SPOOFCHK: r = parse_on_off("--spoofchk", optarg, &c->spoofchk); break;
	case O_TRUST: r = parse_on_off("--trust", optarg, &c->trust); break;
	case O_LINK_STATE: r = parse_link_state(optarg, &c->link_state); break;
	case O_MAX_RATE:
		r = parse_number("--max-tx-rate", optarg, 0, UINT32_MAX, &c->max_tx_rate);
		break;
	case O_MIN_RATE:
		r = parse_number("--min-tx-rate", optarg, 0, UINT32_MAX, &c->min_tx_rate);
		break;
	case O_NETNS: c->netns = optarg; break;
	case O_DOMAIN: c->domain = optarg; break;
	case O_LIVE: c->live = true; break;
	case O_CONFIG: c->config = true; break;
	case O_POOL: c->pool = optarg; break;
	case O_STATE: c->state = optarg; break;
	case O_CONFIG_FILE: c->host.config_path = optarg; break;
	case O_PROC_ROOT: c->host.proc_root = optarg; break;
	case O_MODULES_DIR: c->host.modules_dir = optarg; break;
	case O_IFNAME: c->ifname = optarg; break;
	case O_GATEWAY: c->gateway = optarg; break;
	case O_MTU: r = parse_number("--mtu", optarg, 68, 65535, &c->mtu); break;
	case O_ADDRESS:
		if (c->n_addresses == ELEMENTSOF(c->addresses)) {
			vfctl_error("--address: at most %zu", ELEMENTSOF(c->addresses));
			r = -EINVAL;
		} else
			c->addresses[c->n_addresses++] = optarg;
		break;
	case 'h': usage(stdout); exit(EXIT_SUCCESS);
	case 'V': printf("vfctl %s\n", PACKAGE_VERSION); exit(EXIT_SUCCESS);
	default: fprintf(stderr, "Try 'vfctl --help'.\n"); r = -EINVAL;
	}
	return r;
}

static int parse_options(struct vfctl *c, int argc, char **argv)
{
	int o, r = 0;

	while (r >= 0 && (o = getopt_long(argc, argv, "r:o:n:hV", options, NULL)) >= 0)
		r = apply_option(c, o);
	return r;
}

int main(int argc, char **argv)
{
	struct vfctl c = { .count = 1, .vlan = -1, .max_tx_rate = -1, .min_tx_rate = -1,
			   .spoofchk = -1, .trust = -1 };
	const struct command *cmd;
	int ret;

	c.http.socket = getenv("VFAGENT_SOCKET") ?: "/run/vfagent/vfagent.sock";
	c.http.timeout = VFCTL_TIMEOUT;
	c.host.config_path = VFAGENT_CONFIG_FILE;
	c.host.socket_path = c.http.socket;
	if (parse_options(&c, argc, argv) < 0)
		return EXIT_USAGE;
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (cmd = commands; cmd->name && strcmp(cmd->name, argv[optind]) != 0; cmd++)
		;
	if (!cmd->name) {
		vfctl_error("unknown command \"%s\"; see 'vfctl --help'", argv[optind]);
		return EXIT_USAGE;
	}
	c.argc = argc - optind - 1;
	c.argv = argv + optind + 1;
	if (c.argc < cmd->min_args || c.argc > cmd->max_args) {
		vfctl_error("%s: wrong number of arguments; see 'vfctl --help'", cmd->name);
		return EXIT_USAGE;
	}
	if (c.local && strcmp(cmd->name, "list") != 0 && strcmp(cmd->name, "show") != 0 &&
	    strcmp(cmd->name, "bind") != 0 && strcmp(cmd->name, "doctor") != 0 &&
	    strcmp(cmd->name, "topo") != 0) {
		vfctl_error("--local works with list, show, topo, doctor and bind only");
		return EXIT_USAGE;
	}
	ret = cmd->run(&c);
	vfctl_curl_close();
	return ret;
}
