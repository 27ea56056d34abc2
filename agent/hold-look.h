/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether a reservation's hold file (a detach's "hold_while", a path the
 * client names) exists, looked at off the caller's thread: a stat() of a
 * path on a hung NFS server or a FUSE filesystem whose daemon stopped
 * never returns, and the main loop (sweeps, signals) must not wait on it.
 */
#pragma once

int hold_look(const char *path);
