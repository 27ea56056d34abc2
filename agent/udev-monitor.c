/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hotplug without polling: a libudev monitor on PCI and net devices. The
 * main loop polls its fd; every burst of events (a numvfs change brings
 * one per VF and per netdev) becomes one rescan.
 */
#include "config.h"

#include <errno.h>
#include <libudev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/udev-monitor.h"

struct udev_watch {
	struct udev *udev;
	struct udev_monitor *mon;
};

int udev_watch_new(struct udev_watch **ret, int *ret_fd)
{
	struct udev_watch *w = calloc(1, sizeof(*w));
	int r = -ENOMEM;

	if (!w)
		return r;
	w->udev = udev_new();
	if (w->udev)
		w->mon = udev_monitor_new_from_netlink(w->udev, "udev");
	if (w->mon) {
		r = udev_monitor_filter_add_match_subsystem_devtype(w->mon, "pci", NULL);
		if (r >= 0)
			r = udev_monitor_filter_add_match_subsystem_devtype(w->mon, "net", NULL);
		if (r >= 0)
			r = udev_monitor_filter_add_match_subsystem_devtype(w->mon, "infiniband",
									     NULL);
		if (r >= 0)
			r = udev_monitor_enable_receiving(w->mon);
	}
	if (r < 0 || !w->mon) {
		udev_watch_free(w);
		return r < 0 ? r : -EIO;
	}
	*ret = w;
	*ret_fd = udev_monitor_get_fd(w->mon);
	return 0;
}

void udev_watch_free(struct udev_watch *w)
{
	if (!w)
		return;
	udev_monitor_unref(w->mon);
	udev_unref(w->udev);
	free(w);
}

/* Reads every pending event; describes the first in @why. Returns how many were read. */
int udev_watch_drain(struct udev_watch *w, char *why, unsigned long why_size)
{
	struct udev_device *d;
	int n = 0;

	while ((d = udev_monitor_receive_device(w->mon))) {
		if (n++ == 0)
			snprintf(why, why_size, "udev %s %s/%s", udev_device_get_action(d) ?: "?",
				 udev_device_get_subsystem(d) ?: "?", udev_device_get_sysname(d));
		udev_device_unref(d);
	}
	if (n > 1)
		snprintf(why + strlen(why), why_size - strlen(why), " and %d more", n - 1);
	return n;
}
