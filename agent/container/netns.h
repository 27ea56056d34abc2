/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Network namespaces as requests name them: /run/netns names and paths, or
 * pid:N. Opened only where a namespace may be, checked to be one, and
 * compared by inode and cookie, so that a name reused for another namespace is not
 * mistaken for the one a VF went into.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "libvfpool/libvfpool.h"

int netns_open(const char *spec, int *ret_fd, char *err, size_t err_size);
int netns_open_if_same(const char *spec, ino_t inode, unsigned long long cookie, int *ret_fd);
int netns_inode(int fd, ino_t *ret);
int netns_cookie(int fd, unsigned long long *ret);
void netns_cookie_disable(void);
int netns_alive(const char *spec, ino_t inode, unsigned long long cookie);
bool netns_is_host(int fd);
