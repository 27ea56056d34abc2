/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

int listen_parse_and_open(const char *spec, const char *group, int *ret_fd, bool *ret_is_tcp);
int listen_from_systemd(int *fds, bool *is_tcp, int max, int *ret_cni_fd);
int listen_check_systemd_unix(int fd, const char *group, char *path, size_t size);
int listen_read_token(const char *path, char **ret);
int listen_open_seqpacket(const char *path, int *ret_fd);
