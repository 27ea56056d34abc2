/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

struct udev_watch;

int udev_watch_new(struct udev_watch **ret, int *ret_fd);
void udev_watch_free(struct udev_watch *w);
int udev_watch_drain(struct udev_watch *w, char *why, unsigned long why_size);
