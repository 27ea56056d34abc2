/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of a failover NIC's standby as pure logic: what a recorded standby stands on
 * (agent/vm/standby-reach.c, read back from failover-xml.c's XML), whether a bridge or a
 * macvtap lower device reaches the VF's VLAN, the FDB requests (agent/netlink/fdbmsg.c) as the
 * kernel reads them, and a link's kind and VLAN id (agent/netlink/nlmsg.c).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "agent/netlink/fdbmsg.h"
#include "agent/netlink/nlmsg.h"
#include "agent/vm/failover-xml.h"
#include "agent/vm/hostdev-xml.h"
#include "agent/vm/standby-reach.h"
#include "check-suites.h"

static const unsigned char mac[6] = { 0x02, 0x00, 0xc0, 0xa8, 0x02, 0x2a };

static void parsed(enum vfp_standby_kind kind, const char *source, const char *want_source)
{
	struct vfp_failover f = { .kind = kind };
	struct standby_source s;
	char *xml;

	snprintf(f.source, sizeof(f.source), "%s", source);
	xml = failover_xml_standby_string(&f, want_source, mac, 120);
	ck_assert_int_eq(standby_source_parse(xml, &s), 0);
	ck_assert_int_eq(s.kind, kind);
	ck_assert_str_eq(s.source, want_source);
	ck_assert_mem_eq(s.mac, mac, 6);
	free(xml);
}

START_TEST(test_source_of_each_kind)
{
	parsed(VFP_STANDBY_BRIDGE, "onebr.{vlan}", "onebr.120");
	parsed(VFP_STANDBY_OPENVSWITCH, "ovs0", "ovs0");
	parsed(VFP_STANDBY_MACVTAP, "ens1f0.{vlan}", "ens1f0.120");
}
END_TEST

START_TEST(test_source_refused)
{
	struct standby_source s = { .kind = VFP_STANDBY_MACVTAP };

	ck_assert_int_eq(standby_source_parse(NULL, &s), -EINVAL);
	ck_assert_int_eq(standby_source_parse("<interface type='bridge'", &s), -EINVAL);
	ck_assert_int_eq(standby_source_parse("<interface type='network'><mac address='02:00:"
					      "00:00:00:01'/><source network='x'/></interface>",
					      &s),
			 -EINVAL);
	ck_assert_int_eq(standby_source_parse("<interface type='bridge'><source bridge='br0'/>"
					      "</interface>", &s),
			 -EINVAL); /* no MAC */
	ck_assert_int_eq(standby_source_parse("<interface type='bridge'><mac address='02:00:"
					      "00:00:00:01:ff'/><source bridge='br0'/>"
					      "</interface>", &s),
			 -EINVAL);
	ck_assert_int_eq(s.kind, VFP_STANDBY_MACVTAP); /* untouched */
}
END_TEST

static struct nl_link link_of(const char *name, const char *kind, int vlan_id)
{
	struct nl_link l = { .ifindex = 7, .vlan_id = vlan_id };

	snprintf(l.name, sizeof(l.name), "%s", name);
	snprintf(l.kind, sizeof(l.kind), "%s", kind);
	return l;
}

static int verdict(enum vfp_standby_kind kind, const char *source, int vlan,
		   const struct nl_link *dev, const struct nl_link *ports, size_t n, char *err,
		   char *warn)
{
	err[0] = '\0';
	return standby_reach_verdict(kind, source, vlan, dev, ports, n, err, 256, warn, 256);
}

START_TEST(test_bridge_reach)
{
	struct nl_link br = link_of("onebr.120", "bridge", -1), dummy = link_of("br0", "dummy", -1);
	struct nl_link ports[] = { link_of("vnet3", "tun", -1), link_of("bond0.130", "vlan", 130),
				   link_of("bond0.120", "vlan", 120) };
	char err[256], warn[256];

	ck_assert_int_eq(verdict(VFP_STANDBY_BRIDGE, "onebr.120", 120, NULL, NULL, 0, err, warn),
			 -EINVAL);
	ck_assert_str_eq(err, "failover.bridge: no network device onebr.120 on this host for "
			      "the standby");
	ck_assert_int_eq(verdict(VFP_STANDBY_BRIDGE, "br0", 0, &dummy, NULL, 0, err, warn),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "failover.bridge: br0 is a dummy device, not a Linux "
				     "bridge"));
	/* a port on the NIC's VLAN: reached, whatever else is there */
	ck_assert_int_eq(verdict(VFP_STANDBY_BRIDGE, "onebr.120", 120, &br, ports, 3, err, warn),
			 0);
	ck_assert_str_eq(warn, "");
	/* VLAN ports, none on the NIC's: another VLAN's bridge */
	ck_assert_int_eq(verdict(VFP_STANDBY_BRIDGE, "onebr.120", 120, &br, ports, 2, err, warn),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "failover.bridge: bridge onebr.120 is on VLAN 130 (its "
				     "port bond0.130), not on the NIC's VLAN 120"));
	/* no VLAN port: only logged (an access port reaches it) */
	ck_assert_int_eq(verdict(VFP_STANDBY_BRIDGE, "onebr.120", 120, &br, ports, 1, err, warn),
			 0);
	ck_assert_ptr_nonnull(strstr(warn, "has no port on VLAN 120"));
	/* no VLAN asked: any bridge */
	ck_assert_int_eq(verdict(VFP_STANDBY_BRIDGE, "br0", 0, &br, ports, 2, err, warn), 0);
}
END_TEST

START_TEST(test_ovs_and_macvtap_reach)
{
	struct nl_link ovs = link_of("ovs0", "openvswitch", -1), br = link_of("ovs0", "bridge", -1);
	struct nl_link v120 = link_of("ens1f0.120", "vlan", 120), v130 = link_of("x", "vlan", 130);
	struct nl_link pf = link_of("ens1f0", "", -1);
	char err[256], warn[256];

	ck_assert_int_eq(verdict(VFP_STANDBY_OPENVSWITCH, "ovs0", 120, &ovs, NULL, 0, err, warn),
			 0);
	ck_assert_int_eq(verdict(VFP_STANDBY_OPENVSWITCH, "ovs0", 120, &br, NULL, 0, err, warn),
			 -EINVAL);
	ck_assert_str_eq(err, "failover.openvswitch: ovs0 is a Linux bridge, not an Open vSwitch "
			      "one");
	ck_assert_int_eq(verdict(VFP_STANDBY_MACVTAP, "ens1f0.120", 120, NULL, NULL, 0, err, warn),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "failover.macvtap: no network device ens1f0.120"));
	ck_assert_int_eq(verdict(VFP_STANDBY_MACVTAP, "ens1f0.120", 120, &v120, NULL, 0, err,
				 warn),
			 0);
	ck_assert_int_eq(verdict(VFP_STANDBY_MACVTAP, "x", 120, &v130, NULL, 0, err, warn),
			 -EINVAL);
	ck_assert_str_eq(err, "failover.macvtap: x is on VLAN 130, not on the NIC's VLAN 120");
	ck_assert_int_eq(verdict(VFP_STANDBY_MACVTAP, "ens1f0", 0, &pf, NULL, 0, err, warn), 0);
}
END_TEST

/* The request as the kernel's rtnl_fdb_add()/rtnl_fdb_del() read it. */
static void check_fdb(bool add, enum nl_fdb_where where, uint8_t flags, uint16_t state)
{
	char buf[NL_BUF_SIZE];
	size_t len = nl_build_fdb(buf, 9, add, 42, mac, where);
	const struct nlmsghdr *nlh = (const void *)buf;
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	bool lladdr = false;

	ck_assert_uint_eq(len, nlh->nlmsg_len);
	ck_assert_uint_eq(nlh->nlmsg_type, add ? RTM_NEWNEIGH : RTM_DELNEIGH);
	/* a device's own add is exclusive (its filter's EEXIST says: not the agent's entry) */
	ck_assert_uint_eq(nlh->nlmsg_flags,
			  NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE : 0) |
				  (add && where == NL_FDB_DEVICE ? NLM_F_EXCL : 0));
	ck_assert_uint_eq(nlh->nlmsg_seq, 9);
	ck_assert_uint_eq(ndm->ndm_family, PF_BRIDGE);
	ck_assert_int_eq(ndm->ndm_ifindex, 42);
	ck_assert_uint_eq(ndm->ndm_flags, flags);
	ck_assert_uint_eq(ndm->ndm_state, state);
	mnl_attr_for_each(attr, nlh, sizeof(*ndm)) {
		ck_assert_uint_eq(mnl_attr_get_type(attr), NDA_LLADDR);
		ck_assert_uint_eq(mnl_attr_get_payload_len(attr), 6);
		ck_assert_mem_eq(mnl_attr_get_payload(attr), mac, 6);
		lladdr = true;
	}
	ck_assert(lladdr);
}

START_TEST(test_fdb_requests)
{
	/* `bridge fdb add|del MAC dev TAP master static`: forwarded, not local (NUD_PERMANENT) */
	check_fdb(true, NL_FDB_BRIDGE_STATIC, NTF_MASTER, NUD_NOARP);
	check_fdb(false, NL_FDB_BRIDGE_STATIC, NTF_MASTER, NUD_NOARP);
	/* `bridge fdb add MAC dev DEV`: iproute2's defaults, self and permanent */
	check_fdb(true, NL_FDB_DEVICE, NTF_SELF, NUD_NOARP | NUD_PERMANENT);
	check_fdb(false, NL_FDB_DEVICE, NTF_SELF, NUD_NOARP | NUD_PERMANENT);
}
END_TEST

/* An RTM_NEWLINK of a VLAN link with IFLA_LINKINFO, as the kernel sends it. */
static size_t vlan_link(char *buf, const char *kind, int id)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;
	struct nlattr *info, *data;

	nlh->nlmsg_type = RTM_NEWLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = 12;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "bond0.120");
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, kind);
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	mnl_attr_put_u16(nlh, IFLA_VLAN_ID, (uint16_t)id);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	return nlh->nlmsg_len;
}

START_TEST(test_link_kind_and_vlan)
{
	char buf[NL_BUF_SIZE];
	struct nl_link l;

	ck_assert_int_eq(nl_parse_link(buf, vlan_link(buf, "vlan", 120), &l), 0);
	ck_assert_str_eq(l.kind, "vlan");
	ck_assert_int_eq(l.vlan_id, 120);
	/* IFLA_VLAN_ID means nothing for another kind (a macvlan's data has other types) */
	ck_assert_int_eq(nl_parse_link(buf, vlan_link(buf, "macvlan", 120), &l), 0);
	ck_assert_str_eq(l.kind, "macvlan");
	ck_assert_int_eq(l.vlan_id, -1);
}
END_TEST

START_TEST(test_vf_mac_after)
{
	struct hostdev_spec spec = { .pci = "0000:af:01.3", .ethernet = true, .managed = true,
				     .has_mac = true, .vlan = 120, .teaming = "ua-failover-x" };
	unsigned char other[6] = { 0x52, 0x54, 0, 1, 2, 3 }, got[6], again[6], zero[6] = { 0 };
	char *xml;

	memcpy(spec.mac, mac, 6);
	xml = hostdev_xml_string(&spec);
	/* still the guest's: cleared */
	memset(got, 0xaa, sizeof(got));
	ck_assert(standby_vf_mac_after(xml, mac, false, spec.pci, got));
	ck_assert_mem_eq(got, zero, 6);
	/* zero refused: a locally administered unicast MAC, the VF's own, the same each time */
	ck_assert(standby_vf_mac_after(xml, mac, true, spec.pci, got));
	ck_assert_uint_eq(got[0] & 0x03, 0x02);
	ck_assert(memcmp(got, mac, 6) != 0);
	ck_assert(standby_vf_mac_after(xml, mac, true, spec.pci, again));
	ck_assert_mem_eq(got, again, 6);
	ck_assert(standby_vf_mac_after(xml, mac, true, "0000:af:01.4", again));
	ck_assert(memcmp(got, again, 6) != 0);
	/* libvirt put another MAC back: left alone */
	ck_assert(!standby_vf_mac_after(xml, other, false, spec.pci, got));
	ck_assert(!standby_vf_mac_after(NULL, mac, false, spec.pci, got));
	ck_assert(!standby_vf_mac_after("<interface type='hostdev'/>", mac, false, spec.pci, got));
	free(xml);
}
END_TEST

Suite *suite_standby(void)
{
	Suite *s = suite_create("standby");
	TCase *tc = tcase_create("standby");

	tcase_add_test(tc, test_source_of_each_kind);
	tcase_add_test(tc, test_source_refused);
	tcase_add_test(tc, test_bridge_reach);
	tcase_add_test(tc, test_ovs_and_macvtap_reach);
	tcase_add_test(tc, test_fdb_requests);
	tcase_add_test(tc, test_link_kind_and_vlan);
	tcase_add_test(tc, test_vf_mac_after);
	suite_add_tcase(s, tc);
	return s;
}
