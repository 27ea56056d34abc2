/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's one connection to libvirt (libvirt's C API only).
 *
 * Opened at start; when it drops (libvirtd restarted, killed) a timer in
 * the connection's own event thread reopens it with backoff, 1 s doubling to
 * 60 s, and a call made meanwhile tries once at once. Domain lifecycle
 * events, device-removed events and every reconnect make event_fd readable:
 * the main loop then checks the leases of the VM allocations and finishes
 * the detaches a guest held up. A detach waiting for its device to leave a
 * domain sleeps on the device events (libvirt_conn_wait_device_event()).
 *
 * libvirt itself is loaded with the first connection (libvirt-api.c). An
 * agent configured without libvirt has no connection: every function here
 * takes NULL for it and answers as for a libvirt that is not there (calls
 * that need a domain fail with -ENOTCONN and say why).
 */
#pragma once

#include <libvirt/libvirt.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct libvirt_conn;

enum {
	LIBVIRT_LIVE = 1 << 0,	 /* the running domain */
	LIBVIRT_CONFIG = 1 << 1, /* its persistent definition */
};

struct libvirt_domain {
	char name[256];
	char uuid[VIR_UUID_STRING_BUFLEN];
	bool active, persistent;
};

int libvirt_conn_new(const char *uri, struct libvirt_conn **ret);
void libvirt_conn_free(struct libvirt_conn *c);
void libvirt_conn_set_detach_handler(struct libvirt_conn *c,
				     int (*fn)(void *userdata, const char *uuid, const char *xml),
				     void *userdata);
const char *libvirt_missing(void);
const char *libvirt_conn_get_uri(const struct libvirt_conn *c);
bool libvirt_conn_is_connected(struct libvirt_conn *c);
int libvirt_conn_get_event_fd(const struct libvirt_conn *c);
void libvirt_conn_drain(struct libvirt_conn *c);
bool libvirt_conn_was_seen(struct libvirt_conn *c, const char *uuid);
unsigned libvirt_conn_device_events(struct libvirt_conn *c);
int libvirt_conn_wait_device_event(struct libvirt_conn *c, unsigned seen,
				   const struct timespec *deadline);

int libvirt_lookup(struct libvirt_conn *c, const char *name_or_uuid, struct libvirt_domain *ret,
		   char *err, size_t err_size);
int libvirt_attach(struct libvirt_conn *c, const char *uuid, const char *xml, unsigned flags,
		   char *err, size_t err_size);
int libvirt_detach(struct libvirt_conn *c, const char *uuid, const char *xml, unsigned flags,
		   char *err, size_t err_size);
/* A domain and its XML (NULL when libvirt would not give it). */
struct libvirt_domain_desc {
	struct libvirt_domain d;
	char *xml;
};

int libvirt_domain_xml(struct libvirt_conn *c, const char *uuid, char **ret_xml, char *err,
		       size_t err_size);
int libvirt_list_domains(struct libvirt_conn *c, struct libvirt_domain_desc **ret_list,
			 size_t *ret_n, char *err, size_t err_size);
void libvirt_domain_descs_free(struct libvirt_domain_desc *list, size_t n);
