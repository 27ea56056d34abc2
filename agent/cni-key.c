/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CNI attachment keys (agent/cni-key.h). The plugin builds them from the
 * runtime's CNI_CONTAINERID, CNI_IFNAME and the config's "name"; libcni
 * checks the first two and the name against the spec's rule, but the
 * agent takes whatever reaches its socket, so it checks them again (a name
 * too long for the key comes abbreviated, "HEAD~TAG"): with a
 * '/' in a name, "cni:net/ctr/" (the GC of a network "net/ctr") was a
 * prefix of network net's container ctr, and an empty name's "cni:" of
 * every key.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/cni-key.h"
#include "libvfpool/ifname.h"

/*
 * The spec's name rule (network name, container ID): [a-zA-Z0-9][a-zA-Z0-9_.-]*;
 * or, for a name too long for the key, the plugin's abbreviation of it: such
 * a head, '~' and a tag of 16 hex digits (hooks/cni/cni-conf.c), which no
 * name of the spec's can be.
 */
static bool cni_name_valid(const char *s, size_t len)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t head = len;

	if (len > 18 && s[len - 17] == '~' && strspn(s + len - 16, "0123456789abcdef") >= 16)
		head = len - 17;
	if (head == 0 || len >= CNI_KEY_MAX || !strchr(alnum, s[0]))
		return false;
	for (size_t i = 1; i < head; i++)
		if (!s[i] || (!strchr(alnum, s[i]) && !strchr("_.-", s[i])))
			return false;
	return true;
}

/**
 * cni_key_parse() - @key's network, container ID and interface name, each
 * checked; -EINVAL naming "key" when it has another shape
 */
int cni_key_parse(const char *key, struct cni_key *ret, char *err, size_t err_size)
{
	const char *net = key && !strncmp(key, "cni:", 4) ? key + 4 : NULL;
	const char *ctr = net ? strchr(net, '/') : NULL;
	const char *ifname = ctr ? strchr(ctr + 1, '/') : NULL;

	if (!ifname || !cni_name_valid(net, (size_t)(ctr - net)) ||
	    !cni_name_valid(ctr + 1, (size_t)(ifname - ctr - 1)) ||
	    !vfp_ifname_valid(ifname + 1)) {
		snprintf(err, err_size, "key: \"%.80s\" is not cni:NETWORK/CONTAINERID/IFNAME "
			 "(network and container: a letter or digit, then letters, digits, "
			 "'_', '.', '-'; a valid interface name)", key ? key : "");
		return -EINVAL;
	}
	snprintf(ret->network, sizeof(ret->network), "%.*s", (int)(ctr - net), net);
	snprintf(ret->container, sizeof(ret->container), "%.*s", (int)(ifname - ctr - 1), ctr + 1);
	snprintf(ret->ifname, sizeof(ret->ifname), "%s", ifname + 1);
	return 0;
}

/** cni_gc_prefix_network() - the network a GC's "cni:NETWORK/" names; -EINVAL naming "prefix" */
int cni_gc_prefix_network(const char *prefix, char ret[static CNI_KEY_MAX], char *err,
			  size_t err_size)
{
	const char *net = prefix && !strncmp(prefix, "cni:", 4) ? prefix + 4 : NULL;
	size_t len = net ? strlen(net) : 0;

	if (!net || len < 2 || net[len - 1] != '/' || !cni_name_valid(net, len - 1)) {
		snprintf(err, err_size, "prefix: \"%.80s\" is not cni:NETWORK/ (a network name: a "
			 "letter or digit, then letters, digits, '_', '.', '-')", prefix ? prefix : "");
		return -EINVAL;
	}
	snprintf(ret, CNI_KEY_MAX, "%.*s", (int)(len - 1), net);
	return 0;
}

/** cni_key_in_network() - @key is a well-formed attachment key of @network, exactly */
bool cni_key_in_network(const char *key, const char *network)
{
	struct cni_key k;
	char ignored[8];

	return key && cni_key_parse(key, &k, ignored, sizeof(ignored)) == 0 &&
	       strcmp(k.network, network) == 0;
}
