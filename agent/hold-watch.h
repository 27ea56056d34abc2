/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The files reservations are held on (hold_while: a suspended VM's
 * checkpoint, a powered-off VM's directory), watched with inotify so that
 * one removed (OpenNebula terminates or moves the VM: its epilog deletes
 * them) releases its VFs within moments, not at the next quiet minute. A
 * thread of its own resolves the paths and adds the watches: a path that
 * hangs (a hung NFS mount) stops only the watching, never the main loop. Its
 * fd becomes readable when a watched file went: the main loop then sweeps.
 */
#pragma once

struct agent;
struct hold_watch;

int hold_watch_new(struct agent *a, struct hold_watch **ret, int *ret_fd);
void hold_watch_free(struct hold_watch *w);
void hold_watch_changed(struct hold_watch *w);
int hold_watch_drain(struct hold_watch *w);
