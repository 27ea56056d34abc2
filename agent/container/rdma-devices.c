/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's verbs devices, listed once per inventory. libibverbs lists
 * them anew on every call (sysfs files per device, and the RDMA netlink
 * socket), while a device comes or goes, or is renamed, only with the
 * uevents (pci, infiniband) that make the agent scan a new inventory. The
 * facts of a port stay live: each request opens the device and asks it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvfpool/macro.h"
#include "agent/container/rdma-devices.h"

struct devices {
	unsigned refs; /* atomic */
	struct ibv_device **list; /* NULL when the kernel has no RDMA */
	int n;
};

static struct {
	pthread_mutex_t lock;
	struct vfp_inventory *inv; /* a reference, so its address names it */
	struct devices *devs;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void devices_unref(struct devices *d)
{
	if (!d || __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	if (d->list)
		ibv_free_device_list(d->list);
	free(d);
}

/* The devices listed for @inv (listed now if it is new), a reference; NULL on ENOMEM. */
static struct devices *devices_get(struct vfp_inventory *inv)
{
	struct devices *d;

	pthread_mutex_lock(&cache.lock);
	if (cache.inv != inv || !cache.devs) {
		struct devices *fresh = calloc(1, sizeof(*fresh));

		if (fresh) {
			fresh->refs = 1;
			fresh->list = ibv_get_device_list(&fresh->n);
			if (!fresh->list)
				fresh->n = 0;
			devices_unref(cache.devs);
			cache.devs = fresh;
			vfp_inventory_unref(cache.inv);
			cache.inv = vfp_inventory_ref(inv);
		}
	}
	d = cache.devs;
	if (d)
		__atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cache.lock);
	return d;
}

static int read_port(struct ibv_context *ctx, struct rdma_port *p)
{
	static const char *const layers[] = { [IBV_LINK_LAYER_UNSPECIFIED] = "unspecified",
					      [IBV_LINK_LAYER_INFINIBAND] = "infiniband",
					      [IBV_LINK_LAYER_ETHERNET] = "ethernet" };
	struct ibv_port_attr pa;
	union ibv_gid gid;

	if (ibv_query_port(ctx, 1, &pa) != 0)
		return -EIO;
	*p = (struct rdma_port){ .lid = pa.lid, .active_mtu = 128 << pa.active_mtu };
	snprintf(p->state, sizeof(p->state), "%s", ibv_port_state_str(pa.state));
	snprintf(p->link_layer, sizeof(p->link_layer), "%s",
		 pa.link_layer < ELEMENTSOF(layers) ? layers[pa.link_layer] : "unknown");
	if (ibv_query_gid(ctx, 1, 0, &gid) == 0)
		inet_ntop(AF_INET6, gid.raw, p->gid0, sizeof(p->gid0));
	return 0;
}

/**
 * rdma_port_facts() - port 1 of @dev: state, LID, link layer, GID 0, active MTU
 * @inv: the inventory the device was found in (its verbs devices are listed once)
 *
 * -ENODEV when this kernel has no RDMA or no such device: not an error to
 * report, only a fact that is not there.
 */
int rdma_port_facts(struct vfp_inventory *inv, const char *dev, struct rdma_port *ret)
{
	struct devices *d = dev ? devices_get(inv) : NULL;
	int r = -ENODEV;

	for (int i = 0; d && i < d->n && r < 0; i++) {
		struct ibv_context *ctx;

		if (strcmp(ibv_get_device_name(d->list[i]), dev) != 0)
			continue;
		ctx = ibv_open_device(d->list[i]);
		if (ctx) {
			r = read_port(ctx, ret);
			ibv_close_device(ctx);
		}
	}
	devices_unref(d);
	return r;
}

/* Forget the list and its inventory (at shutdown). */
void rdma_devices_clear(void)
{
	pthread_mutex_lock(&cache.lock);
	devices_unref(cache.devs);
	cache.devs = NULL;
	vfp_inventory_unref(cache.inv);
	cache.inv = NULL;
	pthread_mutex_unlock(&cache.lock);
}
