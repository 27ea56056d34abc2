/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent/vm/domain-xml.c, hostdev-xml.c and failover-xml.c: the XML a VM gets, and the XML it
 * comes with; libvfpool/failover.c: a failover NIC's standby as the config and a claim say it.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vm/domain-xml.h"
#include "agent/vm/failover-xml.h"
#include "agent/vm/hostdev-xml.h"
#include "agent/vm/one-attrs.h"
#include "check-suites.h"

START_TEST(test_hostdev_ethernet)
{
	struct hostdev_spec s = { .pci = "0000:af:01.3", .ethernet = true, .managed = true,
				  .has_mac = true, .mac = { 2, 0, 0xc0, 0xa8, 2, 0x2a }, .vlan = 120 };
	char *xml = hostdev_xml_string(&s);

	ck_assert_str_eq(xml, "<interface type=\"hostdev\" managed=\"yes\"><mac address=\"02:00:c0:"
			      "a8:02:2a\"/><source><address type=\"pci\" domain=\"0x0000\" bus="
			      "\"0xaf\" slot=\"0x01\" function=\"0x3\"/></source><vlan><tag id="
			      "\"120\"/></vlan></interface>");
	free(xml);
}
END_TEST

START_TEST(test_hostdev_ib_unmanaged)
{
	struct hostdev_spec s = { .pci = "0001:3b:1f.7", .managed = false, .has_mac = true,
				  .vlan = 5 }; /* MAC and VLAN mean nothing to a plain hostdev */
	char *xml = hostdev_xml_string(&s);

	ck_assert_str_eq(xml, "<hostdev mode=\"subsystem\" type=\"pci\" managed=\"no\"><source>"
			      "<address domain=\"0x0001\" bus=\"0x3b\" slot=\"0x1f\" function="
			      "\"0x7\"/></source></hostdev>");
	free(xml);
}
END_TEST

/* An address's digits as libvirt's <address> has them: lower-case, whatever form it came in. */
START_TEST(test_hostdev_address_forms)
{
	static const struct {
		const char *pci, *address;
	} cases[] = {
		{ "0000:AF:0A.3", "domain=\"0x0000\" bus=\"0xaf\" slot=\"0x0a\" function=\"0x3\"" },
		{ "ABCD:00:1f.0", "domain=\"0xabcd\" bus=\"0x00\" slot=\"0x1f\" function=\"0x0\"" },
		{ "0:3b:1.2", "domain=\"0x0000\" bus=\"0x3b\" slot=\"0x01\" function=\"0x2\"" },
		{ "0000:3b:00.1x", "domain=\"0x0000\" bus=\"0x3b\" slot=\"0x00\" function=\"0x1\"" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hostdev_spec s = { .pci = cases[i].pci, .managed = true };
		char *xml = hostdev_xml_string(&s);

		ck_assert_msg(strstr(xml, cases[i].address), "%s: %s", cases[i].pci, xml);
		free(xml);
	}
}
END_TEST

START_TEST(test_ipoib_mac)
{
	static const unsigned char prefix[2] = { 0x02, 0x1b };
	unsigned char mac[6];
	uint32_t ip;

	ck_assert_int_eq(domxml_parse_ipv4("10.1.0.5", &ip), 0);
	hostdev_xml_ipoib_mac(prefix, ip, mac);
	ck_assert_mem_eq(mac, ((unsigned char[]){ 0x02, 0x1b, 0x0a, 0x01, 0x00, 0x05 }), 6);
	ck_assert_int_eq(domxml_parse_ipv4("255.255.255.254", &ip), 0);
	hostdev_xml_ipoib_mac(prefix, ip, mac);
	ck_assert_mem_eq(mac, ((unsigned char[]){ 0x02, 0x1b, 0xff, 0xff, 0xff, 0xfe }), 6);
	ck_assert_int_eq(domxml_parse_ipv4("10.1.0", &ip), -EINVAL);
	ck_assert_int_eq(domxml_parse_ipv4("10.1.0.256", &ip), -EINVAL);
	ck_assert_int_eq(domxml_parse_ipv4(NULL, &ip), -EINVAL);
}
END_TEST

START_TEST(test_stable_mac)
{
	unsigned char a[6], b[6], c[6];

	hostdev_xml_stable_mac("6cbf7e4b-7e67-4ffe-99a6-9a8fd7b60f20", 0, a);
	hostdev_xml_stable_mac("6cbf7e4b-7e67-4ffe-99a6-9a8fd7b60f20", 0, b);
	hostdev_xml_stable_mac("6cbf7e4b-7e67-4ffe-99a6-9a8fd7b60f20", 1, c);
	ck_assert_mem_eq(a, b, 6);
	ck_assert(memcmp(a, c, 6) != 0);
	ck_assert_uint_eq(a[0] & 1, 0); /* unicast */
	ck_assert_uint_eq(a[0] & 2, 2); /* locally administered */
}
END_TEST

static const struct {
	const char *xml, *error;
} bad[] = {
	{ "", "body: empty; expected a libvirt domain XML" },
	{ "<domain>\n <name>x</name>\n <devices></domain>",
	  "body: line 3, column 20: Opening and ending tag mismatch: devices line 3 and domain" },
	{ "not xml", "body: line 1, column 1: Start tag expected, '<' not found" },
	{ "<network/>", "body: the root element is <network>, not <domain>" },
	{ "<!DOCTYPE d [<!ENTITY a \"aa\"><!ENTITY b \"&a;&a;&a;\">]><domain>&b;</domain>",
	  "body: a DTD is not accepted in a domain XML" },
	{ "<!DOCTYPE d SYSTEM \"file:///etc/passwd\"><domain/>",
	  "body: a DTD is not accepted in a domain XML" },
};

START_TEST(test_parse_errors)
{
	char err[512] = "";
	xmlDocPtr doc = NULL;

	ck_assert_int_eq(domxml_parse(bad[_i].xml, strlen(bad[_i].xml), &doc, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_null(doc);
	ck_assert_str_eq(err, bad[_i].error);
}
END_TEST

static struct vfp_config *config(void)
{
	json_t *j = json_loads("{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": "
			       "[\"15b3\"]}}, {\"name\": \"eth\", \"selector\": {\"vendors\": "
			       "[\"8086\"]}}], \"networks\": [{\"bridge\": \"sriov_ib0\", \"pool\": "
			       "\"ib\"}, {\"network\": \"fast\", \"pool\": \"eth\"}]}", 0, NULL);
	struct vfp_config *c = NULL;
	char *err = NULL;

	ck_assert_int_eq(vfp_config_load_json(j, &c, &err), 0);
	json_decref(j);
	return c;
}

static xmlDocPtr parse(const char *xml)
{
	xmlDocPtr doc = NULL;
	char err[512];

	ck_assert_int_eq(domxml_parse(xml, strlen(xml), &doc, err, sizeof(err)), 0);
	return doc;
}

START_TEST(test_sriov_nics)
{
	xmlDocPtr doc = parse(
		"<domain><name>one-7</name><devices>"
		"<interface type='bridge'><source bridge='br0'/></interface>"
		"<interface type='bridge'><source bridge='sriov_ib0'/>"
		"<mac address='02:00:0A:01:00:05'/></interface>"
		"<disk/>"
		"<interface type='network'><source network='fast'/><mac address='52:54:00:00:00:01'/>"
		"<vlan><tag id='7'/></vlan></interface>"
		"</devices></domain>");
	struct vfp_config *c = config();
	struct domxml_nic *nics = NULL;
	char err[512] = "", *name = domxml_get_name(doc);
	size_t n = 0;

	ck_assert_str_eq(name, "one-7");
	ck_assert_int_eq(domxml_sriov_nics(doc, c, &nics, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(nics[0].pool, "ib");
	ck_assert_uint_eq(nics[0].position, 1);
	ck_assert(nics[0].has_ip);
	ck_assert_uint_eq(nics[0].ip, 0x0a010005);
	ck_assert_int_eq(nics[0].vlan, -1);
	ck_assert_str_eq(nics[1].pool, "eth");
	ck_assert_uint_eq(nics[1].position, 2);
	ck_assert(!nics[1].has_ip); /* not an OpenNebula 02:00 MAC */
	ck_assert_int_eq(nics[1].vlan, 7);
	free(nics);
	free(name);
	vfp_config_unref(c);
	xmlFreeDoc(doc);
}
END_TEST

/* tests/one/NAME, the table the hooks and the agent are both held to */
static FILE *one_table(const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/one/%s",
		 getenv("top_srcdir") ? getenv("top_srcdir") : ".", name);
	f = fopen(path, "re");
	ck_assert_msg(f, "%s: %m", path);
	return f;
}

/*
 * A NIC's <bandwidth><outbound average> (kilobytes a second, oned's OUTBOUND_AVG_BW) as its
 * VF's max_tx_rate, row by row of tests/one/rates.txt, the table the hooks are held to too.
 */
START_TEST(test_rates_as_oned)
{
	struct vfp_config *c = config();
	char line[128];
	unsigned rows = 0;
	FILE *f;

	f = one_table("rates.txt");
	while (fgets(line, sizeof(line), f)) {
		long long kbytes, mbits;
		char xml[512], err[512] = "";
		struct domxml_nic *nics = NULL;
		xmlDocPtr doc;
		size_t n = 0;

		if (line[0] == '#' || sscanf(line, "%lld %lld", &kbytes, &mbits) != 2)
			continue;
		snprintf(xml, sizeof(xml), "<domain><devices><interface type='network'>"
			 "<source network='fast'/><mac address='02:00:c0:a8:02:2a'/><bandwidth>"
			 "<outbound average='%lld'/></bandwidth></interface></devices></domain>",
			 kbytes);
		doc = parse(xml);
		ck_assert_int_eq(domxml_sriov_nics(doc, c, &nics, &n, err, sizeof(err)), 0);
		ck_assert_uint_eq(n, 1);
		ck_assert_msg(nics[0].max_tx_rate == mbits, "%lld KB/s: %lld Mbit/s, not %lld",
			      kbytes, nics[0].max_tx_rate, mbits);
		rows++;
		free(nics);
		xmlFreeDoc(doc);
	}
	fclose(f);
	ck_assert_uint_ge(rows, 5);
	vfp_config_unref(c);
}
END_TEST

/*
 * OpenNebula's SPOOFCHK and TRUST words (a deployment's ?spoofchk=, a claim's "opennebula"),
 * row by row of tests/one/flags.txt; any other word refused. And a rate's bounds: the largest
 * whose Mbit/s fit a VF's max_tx_rate, no more.
 */
START_TEST(test_flags_as_oned)
{
	char line[128], word[32], value[8];
	unsigned rows = 0;
	uint32_t mbits = 0;
	int on = -1;
	FILE *f;

	f = one_table("flags.txt");
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || sscanf(line, "%31s %7s", word, value) != 2)
			continue;
		ck_assert_int_eq(one_flag(word, &on), 0);
		ck_assert_msg(on == !strcmp(value, "true"), "%s: %d, not %s", word, on, value);
		rows++;
	}
	fclose(f);
	ck_assert_uint_ge(rows, 4);
	ck_assert_int_eq(one_flag("maybe", &on), -EINVAL);
	ck_assert_int_eq(one_flag("true", &on), -EINVAL);
	ck_assert_int_eq(one_flag("", &on), -EINVAL);
	ck_assert_int_eq(one_rate(ONE_RATE_KBYTES_MAX, &mbits), 0);
	ck_assert_uint_eq(mbits, UINT32_MAX);
	ck_assert_int_eq(one_rate(ONE_RATE_KBYTES_MAX + 1, &mbits), -ERANGE);
	ck_assert_int_eq(one_rate(-1, &mbits), -ERANGE);
	ck_assert_int_eq(one_rate(0, &mbits), 0);
	ck_assert_uint_eq(mbits, 0);
}
END_TEST

START_TEST(test_sriov_nic_errors)
{
	static const char *const cases[][2] = {
		{ "<interface type='bridge'><source bridge='sriov_ib0'/><mac address='02:00'/>",
		  "devices/interface[0]/mac: \"02:00\" is not a unicast MAC address" },
		{ "<interface type='bridge'><source bridge='sriov_ib0'/><vlan><tag id='4095'/></vlan>",
		  "devices/interface[0]/vlan/tag: id \"4095\" is not a VLAN in [0, 4094]" },
		{ "<interface type='bridge'><source bridge='sriov_ib0'/><vlan><tag id='1x'/></vlan>",
		  "devices/interface[0]/vlan/tag: id \"1x\" is not a VLAN in [0, 4094]" },
	};
	struct vfp_config *c = config();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char xml[512], err[512] = "";
		struct domxml_nic *nics = NULL;
		size_t n = 0;
		xmlDocPtr doc;

		snprintf(xml, sizeof(xml), "<domain><devices>%s</interface></devices></domain>",
			 cases[i][0]);
		doc = parse(xml);
		ck_assert_int_eq(domxml_sriov_nics(doc, c, &nics, &n, err, sizeof(err)), -EINVAL);
		ck_assert_str_eq(err, cases[i][1]);
		xmlFreeDoc(doc);
	}
	vfp_config_unref(c);
}
END_TEST

START_TEST(test_uuid)
{
	xmlDocPtr doc = parse("<domain><name>a</name></domain>");
	char uuid[37], again[37], *out;

	ck_assert_int_eq(domxml_ensure_uuid(doc, uuid), 0);
	ck_assert_uint_eq(strlen(uuid), 36);
	ck_assert_int_eq(uuid[14], '4');
	ck_assert_int_eq(domxml_ensure_uuid(doc, again), 0); /* kept, not made twice */
	ck_assert_str_eq(uuid, again);
	out = domxml_format(doc);
	ck_assert_ptr_nonnull(strstr(out, "<name>a</name><uuid>"));
	free(out);
	xmlFreeDoc(doc);
	doc = parse("<domain><uuid>8F6FD3C5-8A5E-4C19-9E0E-3C2D1F0A4B43</uuid></domain>");
	ck_assert_int_eq(domxml_ensure_uuid(doc, uuid), 0);
	ck_assert_str_eq(uuid, "8f6fd3c5-8a5e-4c19-9e0e-3c2d1f0a4b43");
	xmlFreeDoc(doc);
	doc = parse("<domain><uuid>8f6fd3c5</uuid></domain>");
	ck_assert_int_eq(domxml_ensure_uuid(doc, uuid), -EINVAL);
	xmlFreeDoc(doc);
}
END_TEST

START_TEST(test_pci_hostdevs)
{
	static const char xml[] =
		"<domain><devices>"
		"<hostdev mode='subsystem' type='pci'><source><address domain='0x0000' bus='0x3b' "
		"slot='0x00' function='0x1'/></source></hostdev>"
		"<interface type='hostdev'><source><address type='pci' domain='0' bus='175' "
		"slot='1' function='3'/></source></interface>"
		"<hostdev mode='subsystem' type='usb'><source><vendor id='0x1'/></source></hostdev>"
		"<hostdev mode='subsystem' type='pci'><source><address domain='0x0000' bus='0x3b' "
		"slot='0x20' function='0x1'/></source></hostdev>" /* slot out of range: skipped */
		"<interface type='bridge'><source bridge='br0'/></interface>"
		"</devices></domain>";
	char **a = NULL;
	size_t n = 99;

	ck_assert_int_eq(domxml_pci_hostdevs(xml, &a, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(a[0], "0000:3b:00.1");
	ck_assert_str_eq(a[1], "0000:af:01.3");
	domxml_strv_free(a, n);
	ck_assert_int_eq(domxml_has_pci_hostdev(xml, "0000:af:01.3"), 1);
	ck_assert_int_eq(domxml_has_pci_hostdev(xml, "0000:3b:20.1"), 0);
	a = NULL;
	ck_assert_int_eq(domxml_pci_hostdevs("garbage", &a, &n), 0);
	ck_assert_uint_eq(n, 0);
	domxml_strv_free(a, n);
}
END_TEST

/* As libvirt reads them: a missing attribute or address is 0, and every <devices> counts. */
START_TEST(test_pci_hostdevs_as_libvirt)
{
	static const char xml[] =
		"<domain><devices>"
		"<interface type='hostdev'><source><address type='pci' bus='0xaf' slot='0x01'/>"
		"</source></interface>"
		"<hostdev type='pci'><source><address bus=' 0X3B' function='+2'/></source></hostdev>"
		"</devices><on_crash>destroy</on_crash><devices>"
		"<hostdev mode='subsystem' type='pci'><source><address domain='0x0000' bus='0xd8' "
		"slot='0x00' function='0x4'/></source></hostdev>"
		"<hostdev type='pci'><source><address bus='-1'/></source></hostdev>"
		"<hostdev type='pci'><source></source><source/></hostdev>" /* no address: all 0 */
		"<interface type='hostdev'><mac address='52:54:00:00:00:01'/></interface>" /* refused */
		"</devices></domain>";
	char **a = NULL;
	size_t n = 99;

	ck_assert_int_eq(domxml_pci_hostdevs(xml, &a, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(a[0], "0000:af:01.0");
	ck_assert_str_eq(a[1], "0000:3b:00.2");
	ck_assert_str_eq(a[2], "0000:d8:00.4");
	ck_assert_str_eq(a[3], "0000:00:00.0");
	domxml_strv_free(a, n);
}
END_TEST

START_TEST(test_replace_and_append)
{
	xmlDocPtr doc = parse("<domain><devices>\n  <interface type='bridge'><source "
			      "bridge='sriov_ib0'/></interface>\n  <disk/>\n</devices></domain>");
	struct vfp_config *c = config();
	struct hostdev_spec s = { .pci = "0000:3b:00.1", .managed = true };
	static const unsigned char prefix[2] = { 0x02, 0x1b };
	struct domxml_nic *nics = NULL;
	char err[512], *out;
	size_t n = 0;

	ck_assert_int_eq(domxml_sriov_nics(doc, c, &nics, &n, err, sizeof(err)), 0);
	domxml_replace_nic(&nics[0], hostdev_xml_node(&s));
	domxml_append_device(doc, hostdev_xml_dummy_nic(prefix, 0x0a010005));
	out = domxml_format(doc);
	ck_assert_str_eq(out, "<domain><devices>\n  <hostdev mode=\"subsystem\" type=\"pci\" "
			      "managed=\"yes\"><source><address domain=\"0x0000\" bus=\"0x3b\" "
			      "slot=\"0x00\" function=\"0x1\"/></source></hostdev>\n  <disk/>\n  "
			      "<interface type=\"ethernet\"><mac address=\"02:1b:0a:01:00:05\"/>"
			      "<model type=\"virtio\"/><link state=\"down\"/></interface>\n"
			      "</devices></domain>\n");
	free(out);
	free(nics);
	vfp_config_unref(c);
	xmlFreeDoc(doc);
}
END_TEST

/* A failover pair as libvirt's formatdomain has it: one MAC, the VF's teaming names the alias. */
START_TEST(test_failover_pair)
{
	struct vfp_failover f = { .kind = VFP_STANDBY_BRIDGE, .source = "onebr.{vlan}" };
	struct hostdev_spec s = { .pci = "0000:af:01.3", .ethernet = true, .managed = true,
				  .has_mac = true, .mac = { 2, 0, 0xc0, 0xa8, 2, 0x2a }, .vlan = 120 };
	char alias[FAILOVER_ALIAS_LEN], source[64], err[256] = "", *xml;

	failover_xml_alias(s.mac, alias);
	ck_assert_str_eq(alias, "ua-failover-0200c0a8022a");
	ck_assert_int_eq(vfp_failover_standby_source(&f, 120, source, sizeof(source), err,
						     sizeof(err)), 0);
	ck_assert_str_eq(source, "onebr.120");
	xml = failover_xml_standby_string(&f, source, s.mac, s.vlan);
	ck_assert_str_eq(xml, "<interface type=\"bridge\"><mac address=\"02:00:c0:a8:02:2a\"/>"
			      "<source bridge=\"onebr.120\"/><model type=\"virtio\"/><teaming type="
			      "\"persistent\"/><alias name=\"ua-failover-0200c0a8022a\"/></interface>");
	free(xml);
	s.teaming = alias;
	xml = hostdev_xml_string(&s);
	ck_assert_str_eq(xml, "<interface type=\"hostdev\" managed=\"yes\"><mac address=\"02:00:c0:"
			      "a8:02:2a\"/><source><address type=\"pci\" domain=\"0x0000\" bus="
			      "\"0xaf\" slot=\"0x01\" function=\"0x3\"/></source><vlan><tag id="
			      "\"120\"/></vlan><teaming type=\"transient\" persistent=\"ua-failover-"
			      "0200c0a8022a\"/><alias name=\"ua-failover-0200c0a8022a-vf\"/>"
			      "</interface>");
	free(xml);
}
END_TEST

/* Open vSwitch: libvirt tags the VLAN on the standby itself; macvtap: the VLAN's own device. */
START_TEST(test_failover_standby_kinds)
{
	struct vfp_failover ovs = { .kind = VFP_STANDBY_OPENVSWITCH, .source = "ovs0" };
	struct vfp_failover mv = { .kind = VFP_STANDBY_MACVTAP, .source = "ens1f0.{vlan}" };
	unsigned char mac[6] = { 0x52, 0x54, 0, 0, 0x12, 0x53 };
	char source[64], err[256] = "", *xml;

	ck_assert_int_eq(vfp_failover_standby_source(&ovs, 7, source, sizeof(source), err,
						     sizeof(err)), 0);
	xml = failover_xml_standby_string(&ovs, source, mac, 7);
	ck_assert_str_eq(xml, "<interface type=\"bridge\"><mac address=\"52:54:00:00:12:53\"/>"
			      "<source bridge=\"ovs0\"/><virtualport type=\"openvswitch\"/><vlan>"
			      "<tag id=\"7\"/></vlan><model type=\"virtio\"/><teaming type="
			      "\"persistent\"/><alias name=\"ua-failover-525400001253\"/></interface>");
	free(xml);
	ck_assert_int_eq(vfp_failover_standby_source(&mv, 4094, source, sizeof(source), err,
						     sizeof(err)), 0);
	xml = failover_xml_standby_string(&mv, source, mac, 4094);
	ck_assert_str_eq(xml, "<interface type=\"direct\"><mac address=\"52:54:00:00:12:53\"/>"
			      "<source dev=\"ens1f0.4094\" mode=\"bridge\"/><model type=\"virtio\"/>"
			      "<teaming type=\"persistent\"/><alias name=\"ua-failover-525400001253\"/>"
			      "</interface>");
	free(xml);
}
END_TEST

/* A standby that would not reach the NIC's VLAN is refused, saying why. */
START_TEST(test_failover_vlan_refused)
{
	struct vfp_failover br = { .kind = VFP_STANDBY_BRIDGE, .source = "br0" };
	struct vfp_failover marked = { .kind = VFP_STANDBY_MACVTAP, .source = "eth0.{vlan}" };
	char source[64] = "", err[256] = "";

	ck_assert_int_eq(vfp_failover_standby_source(&br, 0, source, sizeof(source), err,
						     sizeof(err)), 0);
	ck_assert_str_eq(source, "br0");
	ck_assert_int_eq(vfp_failover_standby_source(&br, 120, source, sizeof(source), err,
						     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "would not be on VLAN 120"));
	ck_assert_int_eq(vfp_failover_standby_source(&marked, -1, source, sizeof(source), err,
						     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "needs a VLAN"));
}
END_TEST

static const struct {
	const char *json, *error;
} failover_bad[] = {
	{ "\"br0\"", "failover: must be an object" },
	{ "{}", "failover: needs exactly one of \"bridge\" or \"macvtap\"" },
	{ "{\"bridge\": \"a\", \"macvtap\": \"b\"}", "failover: needs exactly one of" },
	{ "{\"bridge\": \"has space\"}", "failover.bridge: must be a network device name" },
	{ "{\"bridge\": \"sixteen-bytes-xx\"}", "failover.bridge: must be a network device name" },
	{ "{\"macvtap\": \"eth0.{vlan}.{vlan}\"}", "failover.macvtap: must be a network device" },
	{ "{\"macvtap\": 7}", "failover.macvtap: must be a network device name" },
	{ "{\"macvtap\": \"eth0\", \"openvswitch\": true}", "failover.openvswitch: only a \"bridge\"" },
	{ "{\"bridge\": \"ovs0\", \"openvswitch\": 1}", "failover.openvswitch: must be true or false" },
	{ "{\"bridge\": \"br0\", \"standby\": \"x\"}", "failover: unknown key \"standby\"" },
};

START_TEST(test_failover_json_errors)
{
	json_t *o = json_loads(failover_bad[_i].json, JSON_DECODE_ANY, NULL);
	struct vfp_failover f = { .kind = VFP_STANDBY_NONE };
	char *err = NULL;

	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(vfp_failover_from_json(o, "failover", &f, &err), -EINVAL);
	ck_assert_msg(err && strstr(err, failover_bad[_i].error), "%s: got \"%s\"",
		      failover_bad[_i].json, err);
	ck_assert_int_eq(f.kind, VFP_STANDBY_NONE);
	free(err);
	json_decref(o);
}
END_TEST

/* Read back as written: the ledger keeps a claim's standby in its settings. */
START_TEST(test_failover_json_round_trip)
{
	json_t *o = json_loads("{\"bridge\": \"ovs0\", \"openvswitch\": true}", 0, NULL), *back;
	struct vfp_failover f = { 0 };
	char *err = NULL, *text;

	ck_assert_int_eq(vfp_failover_from_json(o, "failover", &f, &err), 0);
	ck_assert_int_eq(f.kind, VFP_STANDBY_OPENVSWITCH);
	ck_assert_str_eq(f.source, "ovs0");
	back = vfp_failover_to_json(&f);
	text = json_dumps(back, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(text, "{\"bridge\":\"ovs0\",\"openvswitch\":true}");
	free(text);
	json_decref(back);
	json_decref(o);
}
END_TEST

/* The config gives each network's NICs its standby; a network without one gives none. */
START_TEST(test_failover_for_network)
{
	json_t *j = json_loads("{\"pools\": [{\"name\": \"eth\", \"selector\": {\"vendors\": "
			       "[\"8086\"]}}], \"networks\": [{\"bridge\": \"sriov_eth0\", \"pool\": "
			       "\"eth\"}, {\"network\": \"fast\", \"pool\": \"eth\", \"failover\": "
			       "{\"macvtap\": \"ens1f0\"}}]}", 0, NULL);
	const struct vfp_failover *f;
	struct vfp_config *c = NULL;
	char *err = NULL;

	ck_assert_int_eq(vfp_config_load_json(j, &c, &err), 0);
	ck_assert_ptr_null(vfp_config_failover_for_network(c, "sriov_eth0", NULL));
	f = vfp_config_failover_for_network(c, NULL, "fast");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->kind, VFP_STANDBY_MACVTAP);
	ck_assert_str_eq(f->source, "ens1f0");
	vfp_config_unref(c);
	json_decref(j);
}
END_TEST

/* A swap's new VF: the old VF's device with its source changed, all else as it was. */
START_TEST(test_hostdev_with_source)
{
	char alias[FAILOVER_ALIAS_LEN];
	struct hostdev_spec s = { .pci = "0000:af:01.3", .ethernet = true, .managed = false,
				  .has_mac = true, .mac = { 2, 0, 0xc0, 0xa8, 2, 0x2a }, .vlan = 120,
				  .teaming = alias };
	char *old, *moved;

	failover_xml_alias(s.mac, alias);
	old = hostdev_xml_string(&s);
	moved = hostdev_xml_with_source(old, "0000:b0:02.1");
	ck_assert_str_eq(moved, "<interface type=\"hostdev\" managed=\"no\"><mac address=\"02:00:"
				"c0:a8:02:2a\"/><vlan><tag id=\"120\"/></vlan><teaming type=\"transient"
				"\" persistent=\"ua-failover-0200c0a8022a\"/><alias name=\"ua-failover-"
				"0200c0a8022a-vf\"/><source><address type=\"pci\" domain=\"0x0000\" "
				"bus=\"0xb0\" slot=\"0x02\" function=\"0x1\"/></source></interface>");
	ck_assert_ptr_null(hostdev_xml_with_source("<interface type='hostdev'/>", "0000:b0:02.1"));
	ck_assert_ptr_null(hostdev_xml_with_source("not xml", "0000:b0:02.1"));
	free(old);
	free(moved);
}
END_TEST

Suite *suite_domxml(void)
{
	Suite *s = suite_create("domxml");
	TCase *tc = tcase_create("domxml");

	tcase_add_test(tc, test_hostdev_ethernet);
	tcase_add_test(tc, test_rates_as_oned);
	tcase_add_test(tc, test_flags_as_oned);
	tcase_add_test(tc, test_hostdev_ib_unmanaged);
	tcase_add_test(tc, test_hostdev_address_forms);
	tcase_add_test(tc, test_ipoib_mac);
	tcase_add_test(tc, test_stable_mac);
	tcase_add_loop_test(tc, test_parse_errors, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_sriov_nics);
	tcase_add_test(tc, test_sriov_nic_errors);
	tcase_add_test(tc, test_uuid);
	tcase_add_test(tc, test_pci_hostdevs);
	tcase_add_test(tc, test_pci_hostdevs_as_libvirt);
	tcase_add_test(tc, test_replace_and_append);
	tcase_add_test(tc, test_failover_pair);
	tcase_add_test(tc, test_failover_standby_kinds);
	tcase_add_test(tc, test_failover_vlan_refused);
	tcase_add_loop_test(tc, test_failover_json_errors, 0,
			    (int)(sizeof(failover_bad) / sizeof(failover_bad[0])));
	tcase_add_test(tc, test_failover_json_round_trip);
	tcase_add_test(tc, test_failover_for_network);
	tcase_add_test(tc, test_hostdev_with_source);
	suite_add_tcase(s, tc);
	return s;
}
