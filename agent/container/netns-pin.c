/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/container/netns.h"
#include "agent/container/netns-pin.h"

struct pin {
	char id[40];
	int fd;
	struct pin *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pin *pins;
static size_t n_pins;

/**
 * netns_pin() - allocation @id's owner @o (a container's, resolved at its
 * claim) held open, when it is still the namespace of the recorded inode and
 * the kernel gave it no cookie; anything else holds nothing
 */
void netns_pin(const char *id, const struct vfp_owner *o)
{
	char spec[32];
	const char *where;
	struct pin *p;
	int fd;

	if (o->kind != VFP_OWNER_CONTAINER || o->netns_cookie || !o->netns_inode)
		return;
	pthread_mutex_lock(&lock);
	for (p = pins; p && strcmp(p->id, id) != 0; p = p->next)
		;
	pthread_mutex_unlock(&lock);
	if (p)
		return; /* held already */
	where = o->netns;
	if (!where) {
		snprintf(spec, sizeof(spec), "pid:%lld", o->pid);
		where = spec;
	}
	if (netns_open_if_same(where, (ino_t)o->netns_inode, 0, &fd) < 0)
		return; /* gone already: the orphan sweep sees it */
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return;
	}
	snprintf(p->id, sizeof(p->id), "%s", id);
	p->fd = fd;
	pthread_mutex_lock(&lock);
	p->next = pins, pins = p, n_pins++;
	pthread_mutex_unlock(&lock);
}

/* Under lock: every pin for which @drop says so, closed. */
static void drop_where(bool (*drop)(const struct pin *p, const void *arg), const void *arg)
{
	for (struct pin **pp = &pins; *pp;) {
		struct pin *p = *pp;

		if (!drop(p, arg)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		close(p->fd);
		free(p);
		n_pins--;
	}
}

static bool is_id(const struct pin *p, const void *arg)
{
	return strcmp(p->id, arg) == 0;
}

/** netns_unpin() - allocation @id's namespace let go (attached, or released) */
void netns_unpin(const char *id)
{
	pthread_mutex_lock(&lock);
	drop_where(is_id, id);
	pthread_mutex_unlock(&lock);
}

struct id_list {
	const char *const *ids;
	size_t n;
};

static bool not_listed(const struct pin *p, const void *arg)
{
	const struct id_list *l = arg;

	for (size_t i = 0; i < l->n; i++)
		if (strcmp(p->id, l->ids[i]) == 0)
			return false;
	return true;
}

/** netns_pins_keep_only() - every pin but those of @ids (the live reservations) let go */
void netns_pins_keep_only(const char *const *ids, size_t n)
{
	struct id_list l = { ids, n };

	pthread_mutex_lock(&lock);
	drop_where(not_listed, &l);
	pthread_mutex_unlock(&lock);
}

size_t netns_pins_count(void)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = n_pins;
	pthread_mutex_unlock(&lock);
	return n;
}
