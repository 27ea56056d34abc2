/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the container sees: the plugin steps into the namespace to read the
 * VF netdev's MAC and MTU for the result (ADD) and to find the interface and
 * its addresses (CHECK), then steps back. The agent did the moving.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cni.h"
#include "libvfpool/macro.h"

/* Into @netns; the namespace we came from in *@ret_home. */
int cni_netns_enter(const char *netns, int *ret_home, struct cni_error *e)
{
	_cleanup_close_ int fd = open(netns, O_RDONLY | O_CLOEXEC);
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || home < 0 || setns(fd, CLONE_NEWNET) < 0) {
		int err = errno;

		if (home >= 0)
			close(home);
		return cni_fail(e, err == ENOENT ? CNI_ERR_UNKNOWN_CONTAINER : CNI_ERR_NETNS,
				"the namespace cannot be entered", "CNI_NETNS %s: %s", netns,
				strerror(err));
	}
	*ret_home = home;
	return 0;
}

void cni_netns_leave(int home)
{
	if (setns(home, CLONE_NEWNET) < 0)
		fprintf(stderr, "vfagent: returning to the host's namespace: %s\n", strerror(errno));
	close(home);
}

/**
 * cni_netns_link() - MAC and MTU of @ifname inside @netns
 */
int cni_netns_link(const char *netns, const char *ifname, char mac[static 18], unsigned *ret_mtu,
		   struct cni_error *e)
{
	struct ifreq ifr = { 0 };
	int home, fd, r = 0;

	if (cni_netns_enter(netns, &home, e) < 0)
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cni_netns_leave(home);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		r = cni_fail(e, CNI_ERR_NETNS, "the interface is not in the container",
			     "%s in %s: %s", ifname, netns, strerror(errno));
	if (r >= 0) {
		const unsigned char *b = (const unsigned char *)ifr.ifr_hwaddr.sa_data;

		snprintf(mac, 18, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4],
			 b[5]);
		*ret_mtu = ioctl(fd, SIOCGIFMTU, &ifr) == 0 ? (unsigned)ifr.ifr_mtu : 0;
	}
	if (fd >= 0)
		close(fd);
	return r;
}

/* Whether @ifname in @list carries "@addr/@prefix". */
static bool has_address(struct ifaddrs *list, const char *ifname, const char *cidr)
{
	char want[INET6_ADDRSTRLEN], got[INET6_ADDRSTRLEN];
	const char *slash = strchr(cidr, '/');

	snprintf(want, sizeof(want), "%.*s", slash ? (int)(slash - cidr) : (int)strlen(cidr), cidr);
	for (struct ifaddrs *i = list; i; i = i->ifa_next) {
		const void *a;

		if (!i->ifa_addr || strcmp(i->ifa_name, ifname) != 0)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			a = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		else if (i->ifa_addr->sa_family == AF_INET6)
			a = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		else
			continue;
		if (inet_ntop(i->ifa_addr->sa_family, a, got, sizeof(got)) &&
		    strcmp(got, want) == 0)
			return true;
	}
	return false;
}

/**
 * cni_netns_check() - @ifname is in @netns with each of @addresses
 */
int cni_netns_check(const char *netns, const char *ifname, json_t *addresses,
		    struct cni_error *e)
{
	struct ifaddrs *list = NULL;
	unsigned index;
	int home, r = 0;
	json_t *a;
	size_t i;

	if (cni_netns_enter(netns, &home, e) < 0)
		return -1;
	index = if_nametoindex(ifname);
	if (index && getifaddrs(&list) < 0)
		list = NULL;
	cni_netns_leave(home);
	if (!index)
		return cni_fail(e, CNI_ERR_NETNS, "the interface is not in the container",
				"%s is not in %s", ifname, netns);
	json_array_foreach(addresses, i, a)
		if (r >= 0 && !has_address(list, ifname, json_string_value(a)))
			r = cni_fail(e, CNI_ERR_NETNS, "an address is missing",
				     "%s in %s does not have %s", ifname, netns,
				     json_string_value(a));
	freeifaddrs(list);
	return r;
}
