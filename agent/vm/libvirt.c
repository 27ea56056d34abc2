/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <libvirt/virterror.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "agent/log.h"
#include "agent/vm/libvirt-api.h"
#include "agent/vm/libvirt.h"

#define BACKOFF_MAX 60
#define SEEN_MAX 64

struct libvirt_conn {
	char *uri;
	pthread_mutex_t lock;
	virConnectPtr conn; /* NULL while disconnected */
	virConnectPtr dead; /* dropped, closed by the next tick */
	int lifecycle_id, removed_id, removal_failed_id;
	pthread_cond_t device_changed; /* on c->lock; CLOCK_MONOTONIC */
	unsigned device_events;	       /* DEVICE_REMOVED and DEVICE_REMOVAL_FAILED seen */
	unsigned backoff;
	time_t next_try;
	bool logged_down;
	int event_fd, timer;
	pthread_t thread;
	volatile bool stop;
	char seen[SEEN_MAX][VIR_UUID_STRING_BUFLEN]; /* domains defined or started lately */
	unsigned n_seen;
	virDomainPtr recent; /* the domain looked up last, on c->conn or c->dead */
	int (*detach_handler)(void *userdata, const char *uuid, const char *xml);
	void *detach_userdata;
};

static const struct libvirt_api *lv; /* set by the first libvirt_conn_new() */

static void quiet(void *userdata, virErrorPtr e)
{
	(void)userdata;
	(void)e; /* errors are read where they happen; libvirt must not print them */
}

static void register_event_impl(void)
{
	lv->virSetErrorFunc(NULL, quiet);
	lv->virEventRegisterDefaultImpl();
}

static void signal_event(struct libvirt_conn *c)
{
	uint64_t one = 1;

	if (write(c->event_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the main loop has a wakeup pending already */
	}
}

/* libvirt's words for the last error of this thread, and an errno for HTTP. */
static int last_error(const char *what, char *err, size_t err_size)
{
	virErrorPtr e = lv->virGetLastError();
	int code = e ? e->code : VIR_ERR_INTERNAL_ERROR;

	snprintf(err, err_size, "%s: %s", what, e && e->message ? e->message : "unknown error");
	switch (code) {
	case VIR_ERR_NO_DOMAIN:
		return -ENOENT;
	case VIR_ERR_CONFIG_UNSUPPORTED:
	case VIR_ERR_OPERATION_UNSUPPORTED:
	case VIR_ERR_ARGUMENT_UNSUPPORTED:
	case VIR_ERR_OPERATION_INVALID:
	case VIR_ERR_NO_SUPPORT:
		return -EOPNOTSUPP;
	case VIR_ERR_NO_CONNECT:
	case VIR_ERR_INVALID_CONN:
	case VIR_ERR_RPC:
		return -ENOTCONN;
	default:
		return -EREMOTEIO;
	}
}

/* A ring of the domains defined or started lately: one may be gone before a sweep looks. */
static void remember(struct libvirt_conn *c, virDomainPtr dom)
{
	char uuid[VIR_UUID_STRING_BUFLEN];

	if (lv->virDomainGetUUIDString(dom, uuid) < 0)
		return;
	pthread_mutex_lock(&c->lock);
	memcpy(c->seen[c->n_seen++ % SEEN_MAX], uuid, sizeof(uuid));
	pthread_mutex_unlock(&c->lock);
}

static void on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail,
			 void *opaque)
{
	(void)conn;
	(void)detail;
	if (event == VIR_DOMAIN_EVENT_DEFINED || event == VIR_DOMAIN_EVENT_STARTED)
		remember(opaque, dom);
	signal_event(opaque);
}

/*
 * A device left a domain (libvirt's DEVICE_REMOVED: QEMU's DEVICE_DELETED
 * came, maybe long after the detach call returned), or its guest refused to
 * let it go (DEVICE_REMOVAL_FAILED). Either wakes the detaches waiting in
 * libvirt_conn_wait_device_event() and the main loop, which finishes the
 * detaches that timed out.
 */
static void device_event(struct libvirt_conn *c, virDomainPtr dom, const char *alias, bool failed)
{
	const char *name = lv->virDomainGetName(dom);

	if (failed)
		log_warning("libvirt %s: domain %s: its guest refused to release device %s", c->uri,
			    name ? name : "?", alias ? alias : "?");
	else
		log_info("libvirt %s: domain %s: device %s removed", c->uri, name ? name : "?",
			 alias ? alias : "?");
	pthread_mutex_lock(&c->lock);
	c->device_events++;
	pthread_cond_broadcast(&c->device_changed);
	pthread_mutex_unlock(&c->lock);
	signal_event(c);
}

static void on_device_removed(virConnectPtr conn, virDomainPtr dom, const char *alias,
			      void *opaque)
{
	(void)conn;
	device_event(opaque, dom, alias, false);
}

static void on_device_removal_failed(virConnectPtr conn, virDomainPtr dom, const char *alias,
				     void *opaque)
{
	(void)conn;
	device_event(opaque, dom, alias, true);
}

/* How many device events came so far: the mark for libvirt_conn_wait_device_event(). */
unsigned libvirt_conn_device_events(struct libvirt_conn *c)
{
	unsigned n;

	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	n = c->device_events;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/**
 * libvirt_conn_wait_device_event() - wait for a device event after mark @seen,
 * until @deadline (CLOCK_MONOTONIC)
 *
 * 0 when one came (any domain's: the caller looks at its own again),
 * -ETIMEDOUT when none did. Holds no lock while it waits.
 */
int libvirt_conn_wait_device_event(struct libvirt_conn *c, unsigned seen,
				   const struct timespec *deadline)
{
	int r = 0;

	if (!c)
		return -ETIMEDOUT;
	pthread_mutex_lock(&c->lock);
	while (c->device_events == seen && r == 0)
		r = pthread_cond_timedwait(&c->device_changed, &c->lock, deadline);
	pthread_mutex_unlock(&c->lock);
	return r == 0 ? 0 : -ETIMEDOUT;
}

/* Whether domain @uuid was defined or started since the connection opened (lately). */
bool libvirt_conn_was_seen(struct libvirt_conn *c, const char *uuid)
{
	bool seen = false;

	if (!c)
		return false;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < SEEN_MAX && i < c->n_seen && !seen; i++)
		seen = strcasecmp(c->seen[i], uuid) == 0;
	pthread_mutex_unlock(&c->lock);
	return seen;
}

static void on_close(virConnectPtr conn, int reason, void *opaque)
{
	struct libvirt_conn *c = opaque;

	pthread_mutex_lock(&c->lock);
	if (c->conn == conn) {
		log_warning("libvirt %s: connection lost (reason %d); reconnecting", c->uri, reason);
		c->dead = c->conn;
		c->conn = NULL;
		c->next_try = 0;
		c->backoff = 1;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Under c->lock. The handle of the domain looked up last, unless it is on @conn. */
static void forget_recent(struct libvirt_conn *c, virConnectPtr conn)
{
	if (c->recent && lv->virDomainGetConnect(c->recent) != conn) {
		lv->virDomainFree(c->recent);
		c->recent = NULL;
	}
}

static void close_dead(struct libvirt_conn *c)
{
	virConnectPtr dead = c->dead;

	c->dead = NULL;
	forget_recent(c, c->conn);
	if (!dead)
		return;
	lv->virConnectUnregisterCloseCallback(dead, on_close);
	lv->virConnectClose(dead);
}

/* Under c->lock. Subscribes to lifecycle events; failure sets the next try. */
static int connect_locked(struct libvirt_conn *c, char *err, size_t err_size)
{
	virConnectPtr conn = lv->virConnectOpen(c->uri);

	if (!conn) {
		int r = last_error(c->uri, err, err_size);

		if (!c->logged_down)
			log_warning("libvirt %s: not reachable, retrying with backoff: %s", c->uri, err);
		c->logged_down = true;
		c->next_try = time(NULL) + c->backoff;
		c->backoff = c->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : c->backoff * 2;
		return r == -EREMOTEIO ? -ENOTCONN : r;
	}
	lv->virConnectSetKeepAlive(conn, 5, 3); /* local drivers have none; that is fine */
	lv->virConnectRegisterCloseCallback(conn, on_close, c, NULL);
	c->lifecycle_id = lv->virConnectDomainEventRegisterAny(
		conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE, VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), c,
		NULL);
	c->removed_id = lv->virConnectDomainEventRegisterAny(
		conn, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
		VIR_DOMAIN_EVENT_CALLBACK(on_device_removed), c, NULL);
	c->removal_failed_id = lv->virConnectDomainEventRegisterAny(
		conn, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_REMOVAL_FAILED,
		VIR_DOMAIN_EVENT_CALLBACK(on_device_removal_failed), c, NULL);
	c->conn = conn;
	c->backoff = 1;
	c->logged_down = false;
	log_info("libvirt %s: connected", c->uri);
	signal_event(c); /* domains may have gone while we were away */
	return 0;
}

static void tick(int timer, void *opaque)
{
	struct libvirt_conn *c = opaque;
	char err[AGENT_ERR_SIZE];

	(void)timer;
	pthread_mutex_lock(&c->lock);
	close_dead(c);
	if (!c->stop && !c->conn && time(NULL) >= c->next_try)
		connect_locked(c, err, sizeof(err));
	pthread_mutex_unlock(&c->lock);
}

static void *event_thread(void *arg)
{
	struct libvirt_conn *c = arg;

	while (!c->stop)
		lv->virEventRunDefaultImpl();
	return NULL;
}

/* A condition variable whose timed waits count on CLOCK_MONOTONIC (a clock step moves no bound). */
static void init_cond(pthread_cond_t *cond)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

/**
 * libvirt_conn_new() - the connection to @uri, and its event thread
 *
 * An unreachable libvirt is not an error here: it is logged and retried.
 * -ENOPKG when libvirt's library is not installed: said once, here.
 */
int libvirt_conn_new(const char *uri, struct libvirt_conn **ret)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct libvirt_conn *c;
	char err[AGENT_ERR_SIZE];

	if (libvirt_api_load(&lv, err, sizeof(err)) < 0) {
		log_warning("libvirt %s: %s: VMs get no VFs, containers do (apt-get install %s, "
			    "then systemctl restart vfagentd; or \"libvirt\": false in the config on "
			    "a host without VMs)", uri, err, LIBVIRT_PACKAGE);
		return -ENOPKG;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->uri = strdup(uri))) {
		free(c);
		return -ENOMEM;
	}
	pthread_once(&once, register_event_impl);
	pthread_mutex_init(&c->lock, NULL);
	init_cond(&c->device_changed);
	c->backoff = 1;
	c->lifecycle_id = c->removed_id = c->removal_failed_id = -1;
	c->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->timer = lv->virEventAddTimeout(1000, tick, c, NULL);
	if (c->event_fd < 0 || c->timer < 0 ||
	    pthread_create(&c->thread, NULL, event_thread, c) != 0) {
		if (c->timer >= 0)
			lv->virEventRemoveTimeout(c->timer);
		if (c->event_fd >= 0)
			close(c->event_fd);
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->device_changed);
		free(c->uri);
		free(c);
		return -ENOMEM;
	}
	pthread_mutex_lock(&c->lock);
	connect_locked(c, err, sizeof(err));
	pthread_mutex_unlock(&c->lock);
	*ret = c;
	return 0;
}

void libvirt_conn_free(struct libvirt_conn *c)
{
	if (!c)
		return;
	c->stop = true;
	lv->virEventUpdateTimeout(c->timer, 0); /* wakes the event thread */
	pthread_join(c->thread, NULL);
	lv->virEventRemoveTimeout(c->timer);
	close_dead(c);
	forget_recent(c, NULL);
	if (c->conn) {
		const int ids[] = { c->lifecycle_id, c->removed_id, c->removal_failed_id };

		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			if (ids[i] >= 0)
				lv->virConnectDomainEventDeregisterAny(c->conn, ids[i]);
		lv->virConnectUnregisterCloseCallback(c->conn, on_close);
		lv->virConnectClose(c->conn);
	}
	close(c->event_fd);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->device_changed);
	free(c->uri);
	free(c);
}

/* The URI, or NULL when the agent runs without libvirt (@c NULL). */
/**
 * libvirt_missing() - why libvirt's library could not be loaded, or NULL
 */
const char *libvirt_missing(void)
{
	return libvirt_api_load_error();
}

const char *libvirt_conn_get_uri(const struct libvirt_conn *c)
{
	return c ? c->uri : NULL;
}

bool libvirt_conn_is_connected(struct libvirt_conn *c)
{
	bool up;

	if (!c)
		return false;
	pthread_mutex_lock(&c->lock);
	up = c->conn && lv->virConnectIsAlive(c->conn) == 1;
	pthread_mutex_unlock(&c->lock);
	return up;
}

/* Readable after a domain stopped or was undefined, and after every (re)connect. */
int libvirt_conn_get_event_fd(const struct libvirt_conn *c)
{
	return c ? c->event_fd : -1; /* poll() skips a negative fd */
}

void libvirt_conn_drain(struct libvirt_conn *c)
{
	uint64_t n;

	if (c && read(c->event_fd, &n, sizeof(n)) < 0) {
		/* nothing pending */
	}
}

/* A reference to the connection, opening it at once if it is down. */
static virConnectPtr get(struct libvirt_conn *c, char *err, size_t err_size)
{
	virConnectPtr conn;

	if (!c && libvirt_missing()) {
		snprintf(err, err_size, "this agent runs without libvirt (cannot load it: %s; install %s): VMs "
			 "cannot get VFs here", libvirt_missing(), LIBVIRT_PACKAGE);
		return NULL;
	}
	if (!c) {
		snprintf(err, err_size, "this agent runs without libvirt (\"libvirt\": false in its "
			 "config): VMs cannot get VFs here");
		return NULL;
	}
	pthread_mutex_lock(&c->lock);
	if (!c->conn)
		connect_locked(c, err, err_size);
	conn = c->conn;
	if (conn)
		lv->virConnectRef(conn);
	pthread_mutex_unlock(&c->lock);
	return conn;
}

/* Gives the reference back; a connection that died under the call is dropped. */
static void put(struct libvirt_conn *c, virConnectPtr conn)
{
	pthread_mutex_lock(&c->lock);
	if (c->conn == conn && lv->virConnectIsAlive(conn) != 1) {
		c->dead = c->conn;
		c->conn = NULL;
		c->next_try = 0;
	}
	pthread_mutex_unlock(&c->lock);
	lv->virConnectClose(conn);
}

/* Keeps a reference to @dom as the domain looked up last on @conn. */
static void remember_handle(struct libvirt_conn *c, virConnectPtr conn, virDomainPtr dom)
{
	pthread_mutex_lock(&c->lock);
	if (c->conn == conn && lv->virDomainRef(dom) == 0) {
		if (c->recent)
			lv->virDomainFree(c->recent);
		c->recent = dom;
	}
	pthread_mutex_unlock(&c->lock);
}

/*
 * Asks the daemon, by UUID first (libvirt refuses a non-UUID before asking
 * it), else by name.
 */
static virDomainPtr lookup(struct libvirt_conn *c, virConnectPtr conn, const char *name_or_uuid)
{
	virDomainPtr dom = lv->virDomainLookupByUUIDString(conn, name_or_uuid);

	if (!dom)
		dom = lv->virDomainLookupByName(conn, name_or_uuid);
	if (dom)
		remember_handle(c, conn, dom);
	return dom;
}

/*
 * Domain @uuid, as the last lookup found it when it was this one: a handle
 * names the domain by its UUID, which libvirt resolves again on every call,
 * so one from a moment ago is as good as a new lookup, without the round trip.
 */
static virDomainPtr by_uuid(struct libvirt_conn *c, virConnectPtr conn, const char *uuid)
{
	char have[VIR_UUID_STRING_BUFLEN];
	virDomainPtr dom = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->recent && lv->virDomainGetConnect(c->recent) == conn &&
	    lv->virDomainGetUUIDString(c->recent, have) == 0 && strcasecmp(have, uuid) == 0 &&
	    lv->virDomainRef(c->recent) == 0)
		dom = c->recent;
	pthread_mutex_unlock(&c->lock);
	return dom ? dom : lookup(c, conn, uuid);
}

/*
 * What a lookup or a listing of @dom says, without asking the daemon again
 * where it told already: an inactive domain has no ID and is persistent
 * (a transient one ceases to exist when it stops).
 */
static void describe(virDomainPtr dom, struct libvirt_domain *ret)
{
	const char *name = lv->virDomainGetName(dom);

	snprintf(ret->name, sizeof(ret->name), "%s", name ? name : "");
	if (lv->virDomainGetUUIDString(dom, ret->uuid) < 0)
		ret->uuid[0] = '\0';
	ret->active = lv->virDomainGetID(dom) != (unsigned)-1;
	ret->persistent = !ret->active || lv->virDomainIsPersistent(dom) == 1;
}

/**
 * libvirt_lookup() - the domain named @name_or_uuid (a name or a UUID)
 *
 * -ENOENT when there is none, -ENOTCONN when libvirt cannot be reached.
 */
int libvirt_lookup(struct libvirt_conn *c, const char *name_or_uuid, struct libvirt_domain *ret,
		   char *err, size_t err_size)
{
	virConnectPtr conn = get(c, err, err_size);
	virDomainPtr dom;
	int r = 0;

	if (!conn)
		return -ENOTCONN;
	dom = lookup(c, conn, name_or_uuid);
	if (dom)
		describe(dom, ret);
	else
		r = last_error("looking up the domain", err, err_size);
	if (r == -ENOENT)
		snprintf(err, err_size, "libvirt %s has no domain %s", c->uri, name_or_uuid);
	if (dom)
		lv->virDomainFree(dom);
	put(c, conn);
	return r;
}

static unsigned vir_flags(unsigned flags, const struct libvirt_domain *d)
{
	unsigned f = 0;

	if (flags & LIBVIRT_LIVE && d->active)
		f |= VIR_DOMAIN_AFFECT_LIVE;
	if (flags & LIBVIRT_CONFIG && d->persistent)
		f |= VIR_DOMAIN_AFFECT_CONFIG;
	return f;
}

/*
 * Without AFFECT_CONFIG on a transient domain, which has no config (libvirt
 * refuses the call): a deployment file's VF is recorded live and config, and
 * its domain is transient when OpenNebula's deploy created it (virsh create);
 * a swap plugs the new VF with the old one's flags.
 */
static int attach_device(virDomainPtr dom, const char *xml, unsigned flags)
{
	unsigned f = (flags & LIBVIRT_LIVE ? VIR_DOMAIN_AFFECT_LIVE : 0) |
		     (flags & LIBVIRT_CONFIG ? VIR_DOMAIN_AFFECT_CONFIG : 0);

	if ((f & VIR_DOMAIN_AFFECT_LIVE) && lv->virDomainIsPersistent(dom) == 0)
		f &= ~(unsigned)VIR_DOMAIN_AFFECT_CONFIG;
	return lv->virDomainAttachDeviceFlags(dom, xml, f);
}

/**
 * libvirt_attach() - attach device @xml to domain @uuid, live and/or in its config
 *
 * Errors carry libvirt's own message.
 */
int libvirt_attach(struct libvirt_conn *c, const char *uuid, const char *xml, unsigned flags,
		   char *err, size_t err_size)
{
	virConnectPtr conn = get(c, err, err_size);
	virDomainPtr dom;
	int r = 0;

	if (!conn)
		return -ENOTCONN;
	dom = by_uuid(c, conn, uuid);
	if (!dom || attach_device(dom, xml, flags) < 0)
		r = last_error(dom ? "libvirt refused the device" : "looking up the domain", err,
			       err_size);
	if (dom)
		lv->virDomainFree(dom);
	put(c, conn);
	return r;
}

/*
 * Whether domain @dom is gone, after a call that failed for another reason:
 * a driver may check what it supports before it looks the domain up.
 */
static bool gone(virDomainPtr dom)
{
	virErrorPtr e;

	if (lv->virDomainIsActive(dom) >= 0)
		return false;
	e = lv->virGetLastError();
	return e && e->code == VIR_ERR_NO_DOMAIN;
}

/*
 * One call with the flags of the attach, as virsh makes it; when libvirt
 * says they no longer apply (the domain stopped or became transient since),
 * again with those that still do. A device already gone is not an error.
 */
static int detach_device(virDomainPtr dom, const char *xml, unsigned flags, char *err,
			 size_t err_size)
{
	struct libvirt_domain d = { 0 };
	unsigned f = (flags & LIBVIRT_LIVE ? VIR_DOMAIN_AFFECT_LIVE : 0) |
		     (flags & LIBVIRT_CONFIG ? VIR_DOMAIN_AFFECT_CONFIG : 0);
	virErrorPtr e;
	int r;

	if (!f || lv->virDomainDetachDeviceFlags(dom, xml, f) == 0)
		return 0;
	e = lv->virGetLastError();
	if (e && e->code == VIR_ERR_OPERATION_INVALID) {
		d.active = lv->virDomainIsActive(dom) == 1; /* now, not when it was looked up */
		d.persistent = lv->virDomainIsPersistent(dom) == 1;
		f = vir_flags(flags, &d);
		if (!f || lv->virDomainDetachDeviceFlags(dom, xml, f) == 0)
			return 0;
		e = lv->virGetLastError();
	}
	if (e && (e->code == VIR_ERR_DEVICE_MISSING || e->code == VIR_ERR_NO_DOMAIN))
		return 0; /* gone, or the domain is gone with its devices */
	r = last_error("libvirt refused the detach", err, err_size);
	if (gone(dom)) {
		err[0] = '\0';
		r = 0;
	}
	return r;
}

/**
 * libvirt_conn_set_detach_handler() - @fn answers a detach instead of libvirt when it returns 1
 *
 * A simulated host's guest that never acknowledges an unplug (sim-guest.c):
 * libvirt is not asked, as if it had returned after its own wait with the
 * device still in the domain.
 */
void libvirt_conn_set_detach_handler(struct libvirt_conn *c,
				     int (*fn)(void *userdata, const char *uuid, const char *xml),
				     void *userdata)
{
	c->detach_handler = fn;
	c->detach_userdata = userdata;
}

/**
 * libvirt_detach() - detach device @xml from domain @uuid where it can still be
 *
 * Live only while the domain runs, config only while it is defined; a
 * domain that is gone, or a device already gone, leaves nothing to do.
 */
int libvirt_detach(struct libvirt_conn *c, const char *uuid, const char *xml, unsigned flags,
		   char *err, size_t err_size)
{
	virConnectPtr conn;
	virDomainPtr dom;
	int r = 0;

	if (c && c->detach_handler && c->detach_handler(c->detach_userdata, uuid, xml) > 0)
		return 0;
	conn = get(c, err, err_size);
	if (!conn)
		return -ENOTCONN;
	dom = by_uuid(c, conn, uuid);
	if (dom) {
		r = detach_device(dom, xml, flags, err, err_size);
		lv->virDomainFree(dom);
	} else if ((r = last_error("looking up the domain", err, err_size)) == -ENOENT) {
		r = 0; /* gone with its devices */
		err[0] = '\0';
	}
	put(c, conn);
	return r;
}

/**
 * libvirt_domain_xml() - domain @uuid's XML: live while it runs, else its config
 *
 * NULL when the domain is gone or libvirt cannot say (@err says which).
 */
int libvirt_domain_xml(struct libvirt_conn *c, const char *uuid, char **ret_xml, char *err,
		       size_t err_size)
{
	virConnectPtr conn = get(c, err, err_size);
	virDomainPtr dom;
	char *xml = NULL;
	int r = 0;

	if (!conn)
		return -ENOTCONN;
	dom = by_uuid(c, conn, uuid);
	if (dom)
		xml = lv->virDomainGetXMLDesc(dom, 0);
	if (!xml)
		r = last_error("reading the domain's XML", err, err_size);
	if (dom)
		lv->virDomainFree(dom);
	put(c, conn);
	if (r < 0)
		return r;
	*ret_xml = xml;
	return 0;
}

void libvirt_domain_descs_free(struct libvirt_domain_desc *list, size_t n)
{
	for (size_t i = 0; list && i < n; i++)
		free(list[i].xml);
	free(list);
}

/* Every domain with its XML; *@ret_list for libvirt_domain_descs_free(). */
int libvirt_list_domains(struct libvirt_conn *c, struct libvirt_domain_desc **ret_list,
			 size_t *ret_n, char *err, size_t err_size)
{
	virConnectPtr conn = get(c, err, err_size);
	virDomainPtr *doms = NULL;
	struct libvirt_domain_desc *list = NULL;
	int n;

	if (!conn)
		return -ENOTCONN;
	n = lv->virConnectListAllDomains(conn, &doms, 0);
	if (n < 0)
		n = last_error("listing domains", err, err_size);
	else if (!(list = calloc((size_t)n + 1, sizeof(*list))))
		n = -ENOMEM;
	for (int i = 0; doms && i < n; i++) {
		describe(doms[i], &list[i].d);
		list[i].xml = lv->virDomainGetXMLDesc(doms[i], 0);
	}
	for (int i = 0; doms && doms[i]; i++)
		lv->virDomainFree(doms[i]);
	free(doms);
	put(c, conn);
	if (n < 0)
		return n;
	*ret_list = list;
	*ret_n = (size_t)n;
	return 0;
}
