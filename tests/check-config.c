/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vfagent.json: every selector and VF-range form, and every config error, by exact message. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/sim/sim-host.h"
#include "check-suites.h"
#include "fixtures.h"
#include "libvfpool/selector.h"

static struct vfp_config *load(const char *text, int *ret, char **ret_error)
{
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);
	struct vfp_config *c = NULL;

	ck_assert_msg(root, "test JSON does not parse: %s: %s", text, jerr.text);
	*ret = vfp_config_load_json(root, &c, ret_error);
	json_decref(root);
	return c;
}

static const struct {
	const char *json, *error;
} bad[] = {
	{ "[]", "(top level): must be a JSON object" },
	{ "{\"pools\": [{\"name\": \"a\", \"selector\": {\"vendors\": [\"15b3\"]}, \"owners\": []}]}",
	  "pools[0].owners: must be a list of \"vm\" and/or \"container\"" },
	{ "{\"pools\": [{\"name\": \"a\", \"selector\": {\"vendors\": [\"15b3\"]}, \"owners\": [\"vm\", \"pod\"]}]}",
	  "pools[0].owners[1]: must be \"vm\" or \"container\"" },
	/* every error in one pass, one a line; a near-miss key gets a hint, another none */
	{ "{\"socket_grup\": \"x\", \"pools\": [{\"name\": \"eth\", \"selector\": {\"pfNames\":"
	  " [\"ens1\"]}}, {\"name\": 5}, {\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"]},"
	  " \"colour\": 1}], \"numvfs\": [{\"pf\": 3}]}",
	  "(top level): unknown key \"socket_grup\" (did you mean \"socket_group\"?)\n"
	  "pools[0].selector: unknown key \"pfNames\" (did you mean \"pf_names\"?)\n"
	  "pools[1].name: missing or not a string\n"
	  "pools[2]: unknown key \"colour\"\n"
	  "numvfs[0]: pf: must be a PCI address or a netdev name" },
	{ "{\"pool\": []}", "(top level): unknown key \"pool\" (did you mean \"pools\"?)" },
	{ "{\"pools\": {}}", "pools: must be a list" },
	{ "{\"pools\": [1]}", "pools[0]: must be an object with a name and a selector" },
	{ "{\"pools\": [{\"selector\": {\"vendors\": [\"15b3\"]}}]}", "pools[0].name: missing or not a string" },
	{ "{\"pools\": [{\"name\": \"IB\", \"selector\": {\"vendors\": [\"15b3\"]}}]}",
	  "pools[0].name: bad pool name \"IB\" (a-z, 0-9, '-', '_', at most 32)" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"]}},"
	  " {\"name\": \"ib\", \"selector\": {\"vendors\": [\"8086\"]}}]}",
	  "pools[1].name: duplicate pool \"ib\"" },
	{ "{\"pools\": [{\"name\": \"ib\"}]}", "pools[0].selector: missing" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {}}]}",
	  "pools[0].selector: empty selector would take every VF" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendor\": [\"15b3\"]}}]}",
	  "pools[0].selector: unknown key \"vendor\" (did you mean \"vendors\"?)" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": \"15b3\"}}]}",
	  "pools[0].selector.vendors: must be a list" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": []}}]}",
	  "pools[0].selector.vendors: empty list matches nothing" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": [\"15B3\"]}}]}",
	  "pools[0].selector.vendors[0]: bad PCI vendor id (4 lower-case hex digits) \"15B3\"" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"devices\": [4124]}}]}",
	  "pools[0].selector.devices[0]: must be a string (PCI device id (4 lower-case hex digits))" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"drivers\": [\"mlx5 core\"]}}]}",
	  "pools[0].selector.drivers[0]: bad driver name \"mlx5 core\"" },
	{ "{\"pools\": [{\"name\": \"a\", \"selector\": {\"vendors\": [\"15b3\"]}}, {\"name\": \"eth\","
	  " \"selector\": {\"pf_names\": [\"ens2f0#5-2\"]}}]}",
	  "pools[1].selector.pf_names[0]: bad VF range \"ens2f0#5-2\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"pf_names\": [\"ens2f0#\"]}}]}",
	  "pools[0].selector.pf_names[0]: bad VF range \"ens2f0#\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"pf_names\": [\"ens2f0#1,\"]}}]}",
	  "pools[0].selector.pf_names[0]: bad VF range \"ens2f0#1,\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"pf_names\": [\"#0-3\"]}}]}",
	  "pools[0].selector.pf_names[0]: bad VF range \"#0-3\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"pf_names\": [\"ens2f0#0-65536\"]}}]}",
	  "pools[0].selector.pf_names[0]: bad VF range \"ens2f0#0-65536\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"pf_names\": [\"ens2f0#a\"]}}]}",
	  "pools[0].selector.pf_names[0]: bad VF range \"ens2f0#a\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"pf_names\": [\"a-very-long-name0#1\"]}}]}",
	  "pools[0].selector.pf_names[0]: bad VF range \"a-very-long-name0#1\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"pci_addresses\": [\"0000:3B:00.1\"]}}]}",
	  "pools[0].selector.pci_addresses[0]: bad PCI address (dddd:bb:ss.f) \"0000:3B:00.1\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"link_types\": [\"roce\"]}}]}",
	  "pools[0].selector.link_types[0]: must be \"ethernet\" or \"infiniband\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"numa_nodes\": [\"0\"]}}]}",
	  "pools[0].selector.numa_nodes[0]: must be an integer NUMA node" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"numa_nodes\": [-2]}}]}",
	  "pools[0].selector.numa_nodes[0]: NUMA node -2 out of range [-1, 4095]" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"is_rdma\": 1}}]}",
	  "pools[0].selector: is_rdma: must be true or false" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"is_rdma\": true}, \"grow\": {\"step\": 0}}]}",
	  "pools[0].grow: step: must be an integer in [1, 65535]" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"is_rdma\": true}, \"grow\": {\"steps\": 1}}]}",
	  "pools[0].grow: unknown key \"steps\" (did you mean \"step\"?)" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"pf_names\": [\"ens2f0#0-3\"]}, \"reset\": 1}]}",
	  "pools[0].reset: must be \"flr\" or \"none\"" },
	{ "{\"pools\": [{\"name\": \"e\", \"selector\": {\"pf_names\": [\"ens2f0#0-3\"],"
	  " \"vendors\": [\"8086\"]}, \"health\": []}]}",
	  "pools[0].health: must be an object (drivers, pf_link, iommu_group)" },
	{ "{\"exclude\": [\"3b:00.1\"]}", "exclude[0]: bad PCI address \"3b:00.1\" (dddd:bb:ss.f)" },
	{ "{\"exclude\": [7]}", "exclude[0]: bad PCI address (not a string) (dddd:bb:ss.f)" },
	{ "{\"networks\": [{\"bridge\": \"sriov_ib0\", \"pool\": \"ib\"}]}",
	  "networks[0].pool: no pool named \"ib\"" },
	{ "{\"networks\": [{\"pool\": \"ib\"}]}",
	  "networks[0]: needs exactly one of \"bridge\" or \"network\" (a string)" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"is_rdma\": true}}], \"networks\": "
	  "[{\"bridge\": \"b\", \"network\": \"n\", \"pool\": \"ib\"}]}",
	  "networks[0]: needs exactly one of \"bridge\" or \"network\" (a string)" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"is_rdma\": true}}], \"networks\": "
	  "[{\"network\": \"n\", \"pool\": \"ib\", \"pkey\": \"0x7fff\"}]}",
	  "networks[0].pkey: the default partition (0x7fff/0xffff) is every port's, no tenant's own" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"is_rdma\": true}}], \"networks\": "
	  "[{\"network\": \"n\", \"pool\": \"ib\", \"pkey\": \"0x1\\n0x2\"}]}",
	  "networks[0].pkey: must be a P_Key like \"0x8001\" (16 bits)" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"is_rdma\": true}}], \"networks\": "
	  "[{\"network\": \"n\", \"pool\": \"ib\", \"pkey\": 2, \"membership\": \"both\"}]}",
	  "networks[0].membership: must be \"full\" or \"limited\"" },
	{ "{\"pools\": [{\"name\": \"ib\", \"selector\": {\"is_rdma\": true}}], \"networks\": "
	  "[{\"network\": \"n\", \"pool\": \"ib\", \"membership\": \"full\"}]}",
	  "networks[0].membership: needs a \"pkey\"" },
	{ "{\"guids\": {\"first\": \"02:c9:03:00:00:00:00\", \"count\": 4}}",
	  "guids.first: must be a GUID like \"02:c9:03:00:00:00:00:01\"" },
	{ "{\"guids\": {\"first\": \"02:c9:03:00:00:00:00:01\", \"count\": 0}}",
	  "guids.count: must be an integer in [1, 16777216]" },
	{ "{\"guids\": {\"first\": \"ff:ff:ff:ff:ff:ff:ff:f0\", \"count\": 100}}",
	  "guids.count: range from ff:ff:ff:ff:ff:ff:ff:f0 of 100 GUIDs overflows" },
	{ "{\"guids\": {\"first\": \"ff:ff:ff:ff:ff:ff:ff:f0\", \"count\": 16}}",
	  "guids.count: the range holds the all-F GUID" },
	{ "{\"guids\": {\"first\": \"00:00:00:00:00:00:00:00\", \"count\": 16}}",
	  "guids.first: the range holds the all-zero GUID" },
	{ "{\"guids\": {\"first\": \"02:c9:03:00:00:00:00:01\", \"count\": 16, "
	  "\"quarantine_seconds\": -1}}",
	  "guids.quarantine_seconds: must be an integer in [0, 604800]" },
	{ "{\"guids\": {\"first\": \"02:c9:03:00:00:00:00:01\", \"count\": 16, "
	  "\"quarantine_seconds\": \"1h\"}}",
	  "guids.quarantine_seconds: must be an integer in [0, 604800]" },
	{ "{\"guids\": {\"first\": \"02:c9:03:00:00:00:00:01\", \"count\": 4, \"last\": 1}}",
	  "guids: unknown key \"last\"" },
	{ "{\"ipoib_mac_prefix\": \"02:1\"}", "ipoib_mac_prefix: must be two MAC bytes like \"02:1b\"" },
	{ "{\"ipoib_mac_prefix\": \"03:1b\"}",
	  "ipoib_mac_prefix: \"03:1b\" is a multicast MAC prefix; a NIC cannot carry it" },
	{ "{\"ipoib_mac_prefix\": \"02:00\"}",
	  "ipoib_mac_prefix: \"02:00\" is OpenNebula's NIC MAC prefix (opennebula_mac_prefix); "
	  "the guest would take real NICs for dummies" },
	{ "{\"opennebula_mac_prefix\": \"0a:0b\", \"ipoib_mac_prefix\": \"0a:0b\"}",
	  "ipoib_mac_prefix: \"0a:0b\" is OpenNebula's NIC MAC prefix (opennebula_mac_prefix); "
	  "the guest would take real NICs for dummies" },
	{ "{\"opennebula_mac_prefix\": \"0a-0b\"}",
	  "opennebula_mac_prefix: must be two MAC bytes like \"02:1b\"" },
	{ "{\"opennebula_mac_prefix\": 2}",
	  "opennebula_mac_prefix: must be two MAC bytes like \"02:1b\"" },
	{ "{\"libvirt\": \"qemu:///system\"}",
	  "libvirt: must be false (no VMs on this host) or an object like {\"uri\": "
	  "\"qemu:///system\"}" },
	{ "{\"libvirt\": true}",
	  "libvirt: must be false (no VMs on this host) or an object like {\"uri\": "
	  "\"qemu:///system\"}" },
	{ "{\"libvirt\": {\"uri\": \"qemu\"}}",
	  "libvirt.uri: must be a libvirt URI like \"qemu:///system\"" },
	{ "{\"libvirt\": {\"uri\": 7}}", "libvirt.uri: must be a libvirt URI like \"qemu:///system\"" },
	{ "{\"libvirt\": {\"managed\": \"yes\"}}", "libvirt.managed: must be true or false" },
	{ "{\"libvirt\": {\"detach_wait\": 0}}", "libvirt.detach_wait: must be an integer in [1, 600]" },
	{ "{\"libvirt\": {\"detach_wait\": \"9\"}}", "libvirt.detach_wait: must be an integer in [1, 600]" },
	{ "{\"libvirt\": {\"steer_hold\": -1}}", "libvirt.steer_hold: must be an integer in [0, 600]" },
	{ "{\"libvirt\": {\"steer_hold\": 1.5}}", "libvirt.steer_hold: must be an integer in [0, 600]" },
	{ "{\"libvirt\": {\"url\": \"qemu:///system\"}}", "libvirt: unknown key \"url\" (did you mean \"uri\"?)" },
	{ "{\"retention\": 7}", "retention: must be an object like {\"released_seconds\": 604800}" },
	{ "{\"retention\": {\"released_seconds\": -1}}",
	  "retention: released_seconds: must be an integer in [0, 315360000]" },
	{ "{\"retention\": {\"audit_max\": 10}}",
	  "retention: audit_max: must be an integer in [100, 100000000]" },
	{ "{\"retention\": {\"released_max\": \"5\"}}",
	  "retention: released_max: must be an integer in [0, 10000000]" },
	{ "{\"retention\": {\"days\": 7}}", "retention: unknown key \"days\"" },
	{ "{\"reservations\": {\"orphan_seconds\": 1.5}}",
	  "reservations: orphan_seconds: must be an integer in [0, 31536000]" },
	{ "{\"reservations\": []}", "reservations: must be an object like {\"orphan_seconds\": 300}" },
};

START_TEST(test_config_errors)
{
	char *err = NULL;
	int r;
	struct vfp_config *c = load(bad[_i].json, &r, &err);

	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(err);
	ck_assert_str_eq(err, bad[_i].error);
	free(err);
}
END_TEST

static const char *const good_config =
	"{\"pools\": ["
	" {\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"], \"link_types\": [\"infiniband\"],"
	"  \"drivers\": [\"mlx5_core\", \"vfio-pci\"]}, \"grow\": {\"step\": 2}},"
	" {\"name\": \"ib-any\", \"selector\": {\"is_rdma\": true}},"
	" {\"name\": \"e810\", \"selector\": {\"pf_names\": [\"ens5f0#0-1,3\"]}},"
	" {\"name\": \"x520\", \"selector\": {\"devices\": [\"10ed\"], \"numa_nodes\": [-1]}},"
	" {\"name\": \"one\", \"selector\": {\"pci_addresses\": [\"0000:af:01.2\"]}}],"
	" \"exclude\": [\"0000:3b:00.4\", \"0000:5e:00.0\"],"
	" \"networks\": [{\"bridge\": \"sriov_ib0\", \"pool\": \"ib\"}, {\"network\": \"fast\", \"pool\": \"e810\"}],"
	" \"guids\": {\"first\": \"02:c9:03:00:00:00:00:01\", \"count\": 4096},"
	" \"ipoib_mac_prefix\": \"02:1c\", \"opennebula_mac_prefix\": \"02:0a\","
	" \"libvirt\": {\"uri\": \"qemu+ssh://kvm1/system\", \"managed\": false,"
	" \"detach_wait\": 40, \"steer_hold\": 0}}";

START_TEST(test_config_selectors_first_match)
{
	static const struct {
		const char *vf, *pool;
		bool excluded;
	} want[] = {
		{ "0000:3b:00.1", "ib", false },    /* mlx5_core */
		{ "0000:3b:00.2", "ib", false },    /* vfio-pci */
		{ "0000:3b:00.3", "ib-any", false }, /* unbound: not in "ib", but its PF has RDMA */
		{ "0000:3b:00.4", "ib", true },     /* excluded by its address */
		{ "0000:5e:00.1", "ib-any", true }, /* mlx4_core: excluded with its PF */
		{ "0000:af:01.0", "e810", false },  { "0000:af:01.1", "e810", false },
		{ "0000:af:01.2", "one", false },   /* not in e810's ranges */
		{ "0000:af:01.3", "e810", false },  { "0000:d8:10.0", "x520", false },
	};
	struct fixture fx;
	struct vfp_inventory *inv;
	struct vfp_config *c;
	char *err = NULL;
	unsigned long long first = 0, count = 0;
	int r;

	fixture_setup(&fx);
	ck_assert_int_eq(sim_host_build_default(fx.root), 0);
	inv = fixture_scan(&fx);
	c = load(good_config, &r, &err);
	ck_assert_msg(r == 0, "%s", err);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct vfp_vf *vf = vfp_inventory_find_vf(inv, want[i].vf);
		const char *pool = vfp_config_pool_for_vf(c, vf);

		ck_assert_msg(pool && strcmp(pool, want[i].pool) == 0, "%s: pool %s, wanted %s",
			      want[i].vf, pool ? pool : "(none)", want[i].pool);
		ck_assert_int_eq(vfp_config_is_excluded(c, vf), want[i].excluded);
	}
	ck_assert_str_eq(vfp_config_pool_for_network(c, "sriov_ib0", NULL), "ib");
	ck_assert_str_eq(vfp_config_pool_for_network(c, NULL, "fast"), "e810");
	ck_assert_ptr_null(vfp_config_pool_for_network(c, "br0", "default"));
	ck_assert(vfp_config_get_guid_range(c, &first, &count));
	ck_assert_uint_eq(first, 0x02c9030000000001ULL);
	ck_assert_uint_eq(count, 4096);
	ck_assert_uint_eq(vfp_config_get_ipoib_mac_prefix(c)[1], 0x1c);
	ck_assert_uint_eq(vfp_config_get_opennebula_mac_prefix(c)[1], 0x0a);
	ck_assert_uint_eq(vfp_config_get_pool_grow_step(c, 0), 2);
	ck_assert_uint_eq(vfp_config_get_pool_count(c), 5);
	ck_assert_str_eq(vfp_config_get_libvirt_uri(c), "qemu+ssh://kvm1/system");
	ck_assert(!vfp_config_get_libvirt_managed(c));
	ck_assert_int_eq(vfp_config_get_detach_wait(c), 40);
	ck_assert_int_eq(vfp_config_get_steer_hold(c), 0);
	ck_assert(vfp_config_get_libvirt_enabled(c));
	vfp_config_unref(c);
	vfp_inventory_unref(inv);
	fixture_teardown(&fx);
}
END_TEST

START_TEST(test_vf_range_forms)
{
	static const struct {
		const char *s;
		size_t n;
		unsigned lo0, hi0, lolast, hilast;
	} forms[] = {
		{ "ens2f0", 0, 0, 0, 0, 0 },	     { "ens2f0#3", 1, 3, 3, 3, 3 },
		{ "ens2f0#0-3", 1, 0, 3, 0, 3 },     { "ens2f0#0-3,6", 2, 0, 3, 6, 6 },
		{ "ib0#1,3,5-7", 3, 1, 1, 5, 7 },    { "ib0#0-65535", 1, 0, 65535, 0, 65535 },
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct vfp_pf_name p;

		ck_assert_int_eq(vfp_pf_name_parse(forms[i].s, &p), 0);
		ck_assert_uint_eq(p.n_ranges, forms[i].n);
		if (p.n_ranges) {
			ck_assert_uint_eq(p.ranges[0].lo, forms[i].lo0);
			ck_assert_uint_eq(p.ranges[0].hi, forms[i].hi0);
			ck_assert_uint_eq(p.ranges[p.n_ranges - 1].lo, forms[i].lolast);
			ck_assert_uint_eq(p.ranges[p.n_ranges - 1].hi, forms[i].hilast);
		}
		free(p.name);
		free(p.ranges);
	}
}
END_TEST

/* ib-sriov-cni's "pkey" forms and a membership; the key as a port's table shows it. */
START_TEST(test_pkey_forms)
{
	static const struct { const char *pkey, *membership; int want; } cases[] = {
		{ "\"0x8001\"", NULL, 0x8001 },   { "\"0x0001\"", NULL, 0x8001 },
		{ "\"0x1\"", "\"limited\"", 0x0001 }, { "\"32770\"", NULL, 0x8002 },
		{ "3", "\"full\"", 0x8003 },	      { "\"0X7FFE\"", NULL, 0xfffe },
		{ "\"0x7fff\"", NULL, -1 },	      { "65535", NULL, -1 },
		{ "\"0x8000\"", NULL, -1 },	      { "0", NULL, -1 },
		{ "\"0x18001\"", NULL, -1 },	      { "\"0x\"", NULL, -1 },
		{ "\"8001x\"", NULL, -1 },	      { "65536", NULL, -1 },
		{ "-1", NULL, -1 },		      { "\"0x8001\"", "\"limited\"", -1 },
		{ "\" 0x8001\"", NULL, -1 },	      { "1.5", NULL, -1 },
		{ "\"0x8001=full\"", NULL, -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *p = json_loads(cases[i].pkey, JSON_DECODE_ANY, NULL);
		json_t *m = cases[i].membership ? json_loads(cases[i].membership, JSON_DECODE_ANY,
							     NULL)
						: NULL;
		const char *why = NULL;
		int got = -2, r = vfp_pkey_from_json(p, m, &got, &why);

		ck_assert_msg(p, "%s", cases[i].pkey);
		if (cases[i].want < 0)
			ck_assert_msg(r == -EINVAL && why, "%s: %d", cases[i].pkey, got);
		else
			ck_assert_msg(r == 0 && got == cases[i].want, "%s: %d %#x", cases[i].pkey, r,
				      got);
		json_decref(p);
		json_decref(m);
	}
}
END_TEST

/* A GUID as the kernel's sysfs files and the ledger have it, and back. */
START_TEST(test_guid_format)
{
	static const unsigned long long guids[] = { 0, 0x0002c90300000001ULL, 0xfedcba9876543210ULL,
						    ~0ULL };
	static const char *const texts[] = { "00:00:00:00:00:00:00:00", "00:02:c9:03:00:00:00:01",
					     "fe:dc:ba:98:76:54:32:10", "ff:ff:ff:ff:ff:ff:ff:ff" };

	for (size_t i = 0; i < sizeof(guids) / sizeof(guids[0]); i++) {
		char buf[24];
		unsigned long long back = 1;

		vfp_guid_format(guids[i], buf);
		ck_assert_str_eq(buf, texts[i]);
		ck_assert_int_eq(vfp_guid_parse(buf, &back), 0);
		ck_assert(back == guids[i]);
	}
}
END_TEST

START_TEST(test_config_file)
{
	char path[] = "/tmp/vfagent-config-XXXXXX";
	int fd = mkstemp(path);
	struct vfp_config *c = NULL;
	char *err = NULL;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "{\n  \"pools\": [,]\n}\n", 19), 19);
	close(fd);
	ck_assert_int_eq(vfp_config_load_file(path, &c, &err), -EINVAL);
	ck_assert_msg(strstr(err, ":2:") != NULL, "no line number in \"%s\"", err);
	free(err);
	err = NULL;
	ck_assert_int_eq(vfp_config_load_file("/nonexistent/vfagent.json", &c, &err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/vfagent.json"));
	free(err);
	unlink(path);
}
END_TEST

START_TEST(test_config_empty_and_defaults)
{
	char *err = NULL;
	int r;
	struct vfp_config *c = load("{}", &r, &err);
	struct vfp_retention keep;
	unsigned long long a, b;

	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(vfp_config_get_pool_count(c), 0);
	ck_assert(!vfp_config_get_guid_range(c, &a, &b));
	ck_assert_uint_eq(vfp_config_get_ipoib_mac_prefix(c)[0], 0x02);
	ck_assert_uint_eq(vfp_config_get_ipoib_mac_prefix(c)[1], 0x1b);
	ck_assert_uint_eq(vfp_config_get_opennebula_mac_prefix(c)[0], 0x02);
	ck_assert_uint_eq(vfp_config_get_opennebula_mac_prefix(c)[1], 0x00);
	ck_assert_ptr_null(vfp_config_get_libvirt_uri(c));
	ck_assert(vfp_config_get_libvirt_managed(c));
	ck_assert_int_eq(vfp_config_get_detach_wait(c), 3);
	ck_assert_int_eq(vfp_config_get_steer_hold(c), 5);
	ck_assert(vfp_config_get_libvirt_enabled(c));
	vfp_config_get_retention(c, &keep);
	ck_assert_int_eq(keep.seconds, 7 * 86400);
	ck_assert_uint_eq(keep.allocations, 10000);
	ck_assert_uint_eq(keep.audit, 100000);
	ck_assert_int_eq(vfp_config_get_orphan_seconds(c), 300);
	ck_assert_ptr_nonnull(vfp_config_ref(c));
	vfp_config_unref(c);
	ck_assert_ptr_null(vfp_config_unref(c));
}
END_TEST

/* The example config the project ships, with every key set, parses. */
/* A host without VMs: "libvirt": false, and nothing else of libvirt's is read. */
START_TEST(test_config_libvirt_off)
{
	char *err = NULL;
	int r;
	struct vfp_config *c = load("{\"libvirt\": false}", &r, &err);

	ck_assert_int_eq(r, 0);
	ck_assert(!vfp_config_get_libvirt_enabled(c));
	ck_assert_ptr_null(vfp_config_get_libvirt_uri(c));
	vfp_config_unref(c);
}
END_TEST

START_TEST(test_config_example)
{
	char path[512], *err = NULL;
	struct vfp_config *c = NULL;
	struct vfp_retention keep;

	snprintf(path, sizeof(path), "%s/contrib/vfagent.json",
		 getenv("top_srcdir") ? getenv("top_srcdir") : ".");
	ck_assert_msg(vfp_config_load_file(path, &c, &err) == 0, "%s: %s", path, err);
	vfp_config_get_retention(c, &keep);
	ck_assert_uint_eq(keep.allocations, 10000);
	ck_assert_int_eq(vfp_config_get_orphan_seconds(c), 300);
	vfp_config_unref(c);
}
END_TEST

Suite *suite_config(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_config_errors, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_config_selectors_first_match);
	tcase_add_test(tc, test_vf_range_forms);
	tcase_add_test(tc, test_pkey_forms);
	tcase_add_test(tc, test_guid_format);
	tcase_add_test(tc, test_config_file);
	tcase_add_test(tc, test_config_empty_and_defaults);
	tcase_add_test(tc, test_config_libvirt_off);
	tcase_add_test(tc, test_config_example);
	suite_add_tcase(s, tc);
	return s;
}
