/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who is at the other end of a TCP connection from this host: every local
 * user can use every address of 127.0.0.0/8 (and ::1), so on loopback an
 * address says nothing about who connects. The kernel knows the uid that
 * owns the peer's socket (sock_diag, as `ss -e` shows it).
 */
#pragma once

#include <stdbool.h>
#include <sys/socket.h>

bool loopback_peer_is_local(const struct sockaddr_storage *peer);
int loopback_peer_uid(int fd, unsigned *ret_uid);
