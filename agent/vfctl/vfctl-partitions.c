/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `vfctl partitions write`, on the subnet manager's host: every agent's
 * members of InfiniBand partitions (GET /v1/partitions) into the block of
 * OpenSM's partitions.conf that vfctl owns (partitions-conf.c), the file
 * replaced atomically and OpenSM sent SIGHUP only when its text changed.
 *
 * An agent that does not answer keeps the members it listed last (a cache
 * beside the file, .NAME.vfagent-members): a running tenant does not lose
 * its partition because its host is slow or restarting. What is left out
 * (a malformed member, a GUID two agents give different keys) is said on
 * stderr, and the exit status is 1 though the file is written with the rest.
 * Two agents whose GUID ranges overlap may give one GUID to two tenants:
 * both are named with their ranges, and neither's new members are written
 * until one range moves (each keeps those it listed before and still lists),
 * exit status 1. --follow does it again on each
 * agent's "partitions" event, when an agent comes back, and every minute.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/vfctl/partitions-conf.h"
#include "agent/vfctl/vfctl-error.h"
#include "agent/vfctl/vfctl.h"

#define RESYNC_SECONDS 60

/* "unix:/run/vfagent/vfagent.sock" or the URL: how an agent is known in the cache. */
static void source_name(const struct vfctl_http *h, char *buf, size_t size)
{
	if (h->url)
		snprintf(buf, size, "%s", h->url);
	else
		snprintf(buf, size, "unix:%s", h->socket);
}

static char *read_text(const char *path, int *ret)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t cap = 0, n = 0, got;

	*ret = 0;
	if (!f) {
		*ret = -errno;
		return NULL;
	}
	do {
		char *more = n + 65536 + 1 > cap ? realloc(text, cap = n + 65536 + 1) : text;

		if (!more) {
			*ret = -ENOMEM;
			break;
		}
		text = more;
		got = fread(text + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0 && n < (64u << 20));
	if (ferror(f) && *ret == 0)
		*ret = -EIO;
	fclose(f);
	if (*ret < 0) {
		free(text);
		return NULL;
	}
	if (!text && !(text = calloc(1, 1)))
		*ret = -ENOMEM;
	else
		text[n] = '\0';
	return text;
}

/*
 * @text into @path through a temp file beside it and rename(): readers see
 * old or new. The new file's fd comes back for sync_file(), after OpenSM
 * was told: the disk's flush is no part of the wait for the table (a crash
 * before it, the next run writes the file again).
 */
static int replace_file(const char *path, const char *text, mode_t mode, int *ret_fd)
{
	char tmp[4096];
	int fd, r = 0;
	size_t n = strlen(text);

	errno = 0;
	if (snprintf(tmp, sizeof(tmp), "%s.vfagent-XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode) < 0 || write(fd, text, n) != (ssize_t)n)
		r = errno ? -errno : -EIO;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* The file replaced by replace_file() on the disk, and its directory's entry. */
static void sync_file(const char *path, int fd)
{
	char *d = strdup(path);
	int dfd = d ? open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fsync(fd) < 0 || (dfd >= 0 && fsync(dfd) < 0))
		vfctl_error("partitions: %s on the disk: %m", path);
	if (dfd >= 0)
		close(dfd);
	close(fd);
	free(d);
}

/* The cache of each agent's last answer: .NAME.vfagent-members beside @file. */
static void cache_path(const char *file, char *buf, size_t size)
{
	char *d = strdup(file), *b = strdup(file);

	snprintf(buf, size, "%s/.%s.vfagent-members", d ? dirname(d) : ".",
		 b ? basename(b) : "partitions.conf");
	free(d);
	free(b);
}

/*
 * Each agent asked; its answer into @fresh (by source name), or its entry in
 * @cache kept when it does not answer, said on stderr. The number that did not.
 */
static unsigned gather(const struct vfctl_partitions *o, json_t *cache, json_t *fresh)
{
	unsigned down = 0;

	for (size_t i = 0; i < o->n_sources; i++) {
		struct vfctl_http h = o->sources[i];
		char name[1100], when[32] = "never";
		json_t *reply = NULL, *old;
		int r;

		h.quiet = true;
		h.timeout = 10;
		source_name(&h, name, sizeof(name));
		r = vfctl_request(&h, "GET", "/v1/partitions", NULL, NULL, &reply);
		if (r >= 0 && json_is_object(reply)) {
			json_object_set_new(reply, "time", json_integer((json_int_t)time(NULL)));
			json_object_set_new(fresh, name, reply);
			continue;
		}
		json_decref(reply);
		down++;
		old = json_object_get(cache, name);
		if (old) {
			time_t t = (time_t)json_integer_value(json_object_get(old, "time"));

			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		}
		vfctl_error("partitions: %s does not answer (%s): %s", name,
			    strerror(-r),
			    old ? "keeping the members it listed last" : "no members known for it");
		if (old)
			vfctl_error("partitions: %s: %zu members as of %s", name,
				    json_array_size(json_object_get(old, "members")), when);
	}
	return down;
}

static bool range_of(json_t *entry, unsigned long long *first, unsigned long long *count)
{
	json_t *r = json_object_get(entry, "guid_range");

	return vfp_guid_parse(json_string_value(json_object_get(r, "first")), first) == 0 &&
	       json_integer_value(json_object_get(r, "count")) > 0 &&
	       (*count = (unsigned long long)json_integer_value(json_object_get(r, "count")));
}

/* Whether [fa, fa + na) and [fb, fb + nb) meet, without overflowing. */
static bool ranges_meet(unsigned long long fa, unsigned long long na, unsigned long long fb,
			unsigned long long nb)
{
	return fa >= fb ? fa - fb < nb : fb - fa < na;
}

/* What is known of source @name now: its answer, or else its cached entry. */
static json_t *latest(json_t *cache, json_t *fresh, const char *name)
{
	json_t *e = json_object_get(fresh, name);

	return e ? e : json_object_get(cache, name);
}

/*
 * Agents whose GUID ranges overlap (two hosts may hand one GUID to two
 * tenants): each pair said, both marked in @shared; how many pairs.
 */
static unsigned overlapping_ranges(const struct vfctl_partitions *o, json_t *cache,
				   json_t *fresh, bool *shared)
{
	unsigned pairs = 0;

	for (size_t i = 0; i < o->n_sources; i++)
		for (size_t j = i + 1; j < o->n_sources; j++) {
			char a[1100], b[1100];
			unsigned long long fa, na, fb, nb;

			source_name(&o->sources[i], a, sizeof(a));
			source_name(&o->sources[j], b, sizeof(b));
			if (!range_of(latest(cache, fresh, a), &fa, &na) ||
			    !range_of(latest(cache, fresh, b), &fb, &nb) ||
			    !ranges_meet(fa, na, fb, nb))
				continue;
			vfctl_error("partitions: %s and %s hand out GUIDs of one range "
				    "(0x%016llx+%llu, 0x%016llx+%llu): refused, neither's new "
				    "members written (those it listed last and still lists are "
				    "kept); give each host a range of its own (\"guids\" in "
				    "vfagent.json)", a, b, fa, na, fb, nb);
			shared[i] = shared[j] = true;
			pairs++;
		}
	return pairs;
}

/* The members of @old that @now lists too (the same GUID, key and membership). */
static json_t *still_listed(json_t *old, json_t *now)
{
	json_t *keep = json_array(), *m, *n;
	size_t i, j;

	json_array_foreach(old, i, m) {
		bool found = false;

		json_array_foreach(now, j, n)
			found = found || pconf_same_member(m, n);
		if (found)
			json_array_append(keep, m);
	}
	return keep;
}

/*
 * The answers into @cache: as they are, or for an agent that shares a range,
 * its last members less those it no longer lists (a release still takes a
 * GUID out; nothing new comes in); the number of new members withheld said.
 */
static void take_answers(const struct vfctl_partitions *o, json_t *cache, json_t *fresh,
			 const bool *shared)
{
	for (size_t i = 0; i < o->n_sources; i++) {
		char name[1100];
		json_t *now, *old, *keep;

		source_name(&o->sources[i], name, sizeof(name));
		now = json_object_get(fresh, name);
		old = json_object_get(cache, name);
		if (!now)
			continue;
		if (!shared[i]) {
			json_object_set(cache, name, now);
			continue;
		}
		keep = still_listed(json_object_get(old, "members"), json_object_get(now, "members"));
		vfctl_error("partitions: %s: %zu of its %zu members not written while its GUID "
			    "range is shared", name,
			    json_array_size(json_object_get(now, "members")) - json_array_size(keep),
			    json_array_size(json_object_get(now, "members")));
		if (old)
			json_object_set_new(old, "members", keep);
		else
			json_decref(keep);
	}
}

/*
 * The block for the members of this command line's agents, as the cache has
 * them; the answers of those that share a range claim their GUIDs too.
 */
static int build_block(const struct vfctl_partitions *o, json_t *cache, json_t *fresh,
		       const bool *shared, struct pconf *p, char **ret)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < o->n_sources; i++) {
		char name[1100];
		json_t *entry;

		source_name(&o->sources[i], name, sizeof(name));
		entry = json_object_get(cache, name);
		if (entry)
			r = pconf_add_members(p, name, json_object_get(entry, "members"));
		entry = shared[i] ? json_object_get(fresh, name) : NULL;
		if (r >= 0 && entry)
			r = pconf_add_claims(p, name, json_object_get(entry, "members"));
	}
	if (r < 0)
		return r;
	pconf_resolve(p);
	r = pconf_render(p, ret);
	if (r >= 0 && !pconf_block_is_valid(*ret)) {
		vfctl_error("partitions: the block made fails its own check; not written");
		free(*ret);
		r = -EINVAL;
	}
	return r;
}

/* SIGHUP to the OpenSM whose pid @pidfile holds, once /proc says it is opensm. */
static int signal_opensm(const char *pidfile)
{
	char comm[64] = "", path[64];
	long pid = 0;
	FILE *f = fopen(pidfile, "re");
	int ok = f && fscanf(f, "%ld", &pid) == 1 && pid > 1;

	if (f)
		fclose(f);
	if (!ok) {
		vfctl_error("partitions: --opensm-pid %s: no pid in it", pidfile);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "re");
	if (f && fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = '\0';
	if (f)
		fclose(f);
	if (strcmp(comm, "opensm") != 0) {
		vfctl_error("partitions: --opensm-pid %s: process %ld is %s, not opensm; "
			    "not signalled", pidfile, pid, comm[0] ? comm : "gone");
		return -ESRCH;
	}
	if (kill((pid_t)pid, SIGHUP) < 0) {
		vfctl_error("partitions: SIGHUP to opensm %ld: %m", pid);
		return -errno;
	}
	return 0;
}

/* The file with @block in place; written and OpenSM signalled only when its text changed. */
static int write_file(const struct vfctl_partitions *o, const char *block, bool *ret_changed)
{
	struct stat st;
	const char *why = NULL;
	char *old, *text = NULL;
	int r, fd = -1;

	old = read_text(o->file, &r);
	if (r == -ENOENT) /* OpenSM's own rule when it has no file: keep it, in the operator's part */
		old = strdup("# The default partition, as OpenSM has it without this file. For tenants\n"
			     "# kept apart on it too: Default=0x7fff, ipoib : ALL=limited, SELF=full ;\n"
			     "Default=0x7fff, ipoib : ALL=full ;\n");
	if (!old) {
		vfctl_error("partitions: reading %s: %s", o->file,
			    strerror(r ? -r : ENOMEM));
		return r ? r : -ENOMEM;
	}
	r = pconf_splice(old, block, &text, &why);
	if (r == -EINVAL)
		vfctl_error("partitions: %s: %s", o->file, why);
	*ret_changed = r >= 0 && strcmp(old, text) != 0;
	if (*ret_changed) {
		r = replace_file(o->file, text, stat(o->file, &st) == 0 ? st.st_mode & 07777 : 0644,
				 &fd);
		if (r < 0)
			vfctl_error("partitions: writing %s: %s", o->file, strerror(-r));
	}
	if (r >= 0 && *ret_changed && o->opensm_pid)
		r = signal_opensm(o->opensm_pid);
	if (fd >= 0)
		sync_file(o->file, fd);
	free(old);
	free(text);
	return r;
}

/* @cache into @path as the file is: atomically, so a crash never leaves half of it. */
static void save_cache(json_t *cache, const char *path)
{
	char *text = json_dumps(cache, JSON_COMPACT);
	int fd = -1, r = text ? replace_file(path, text, 0600, &fd) : -ENOMEM;

	if (r >= 0)
		sync_file(path, fd);
	else
		vfctl_error("partitions: cannot keep the members in %s: %s", path,
			    strerror(-r));
	free(text);
}

/* One gathering and writing; 0, 1 when written with something left out or kept, <0 failed. */
static int write_once(const struct vfctl_partitions *o)
{
	struct pconf p = { .report = stderr };
	char cpath[4200], *block = NULL;
	json_t *cache, *fresh = json_object();
	bool *shared = calloc(o->n_sources, sizeof(*shared));
	unsigned down, overlaps;
	bool changed = false;
	int r;

	if (!fresh || !shared) {
		json_decref(fresh);
		free(shared);
		return -ENOMEM;
	}
	cache_path(o->file, cpath, sizeof(cpath));
	cache = json_load_file(cpath, 0, NULL);
	if (!json_is_object(cache)) {
		json_decref(cache);
		cache = json_object();
	}
	down = gather(o, cache, fresh);
	overlaps = overlapping_ranges(o, cache, fresh, shared);
	take_answers(o, cache, fresh, shared);
	r = build_block(o, cache, fresh, shared, &p, &block);
	if (r >= 0)
		r = write_file(o, block, &changed);
	if (r >= 0)
		save_cache(cache, cpath);
	if (r >= 0) {
		unsigned n_shared = 0;
		char also[64] = "";

		for (size_t i = 0; i < o->n_sources; i++)
			n_shared += shared[i];
		if (n_shared)
			snprintf(also, sizeof(also), ", %u sharing a GUID range", n_shared);
		printf("%s: %zu members from %zu agents (%u not answering%s)%s%s\n", o->file, p.n,
		       o->n_sources, down, also, changed ? ": written" : ": unchanged",
		       changed && o->opensm_pid ? ", OpenSM signalled" : "");
	}
	fflush(stdout);
	if (r >= 0 && (down || overlaps || p.refused || p.conflicts))
		r = 1;
	pconf_free(&p);
	free(block);
	free(shared);
	json_decref(fresh);
	json_decref(cache);
	return r;
}

struct follower {
	struct vfctl_http h;
	int wake; /* the pipe's write end */
	char tail[32];
};

static size_t on_events(char *data, size_t size, size_t n, void *userdata)
{
	struct follower *f = userdata;
	size_t len = size * n, keep = sizeof(f->tail) - 1;
	char look[64 + 4096];

	/* "event: partitions" may straddle two chunks: look at the last bytes too */
	snprintf(look, sizeof(look), "%s%.*s", f->tail, (int)(len < 4096 ? len : 4096), data);
	if (strstr(look, "event: partitions") && write(f->wake, "p", 1) < 0)
		return 0;
	n = strlen(look);
	memcpy(f->tail, n > keep ? look + n - keep : look, (n > keep ? keep : n) + 1);
	return len;
}

/* One agent's events, followed for ever: a write again on each change, and when it is back. */
static void *follow(void *userdata)
{
	struct follower *f = userdata;
	bool was_down = false;

	for (;;) {
		json_t *health = NULL;

		if (vfctl_request(&f->h, "GET", "/v1/health", NULL, NULL, &health) < 0) {
			if (!was_down && write(f->wake, "d", 1) < 0)
				return NULL;
			was_down = true;
			sleep(1);
			continue;
		}
		json_decref(health);
		if (was_down && write(f->wake, "u", 1) < 0)
			return NULL;
		was_down = false;
		f->tail[0] = '\0';
		vfctl_stream(&f->h, "/v1/events", NULL, on_events, f);
		sleep(1);
	}
	return NULL;
}

static int follow_all(const struct vfctl_partitions *o)
{
	struct follower *fs = calloc(o->n_sources, sizeof(*fs));
	int pipefd[2];

	if (!fs || pipe2(pipefd, O_CLOEXEC) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < o->n_sources; i++) {
		pthread_t t;

		fs[i] = (struct follower){ .h = o->sources[i], .wake = pipefd[1] };
		fs[i].h.quiet = true;
		fs[i].h.timeout = 0;
		if (pthread_create(&t, NULL, follow, &fs[i]) != 0 || pthread_detach(t) != 0)
			return -EAGAIN;
	}
	for (;;) {
		struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
		char drain[256];
		int n = poll(&pfd, 1, RESYNC_SECONDS * 1000);

		if (n < 0)
			return -errno;
		/* what came meanwhile is seen by this write: one for a burst, no waiting */
		while (n > 0 && poll(&pfd, 1, 0) > 0 && read(pipefd[0], drain, sizeof(drain)) > 0)
			;
		write_once(o);
	}
}

/**
 * vfctl_partitions_write() - the command; exit status 0, or 1 when
 * something was left out, kept from the cache, or failed (stderr says)
 */
int vfctl_partitions_write(const struct vfctl_partitions *o)
{
	int r;

	if (!o->file) {
		vfctl_error("partitions write: --file PATH is required");
		return 2;
	}
	if (o->n_sources == 0) {
		vfctl_error("partitions write: name the agents (--socket or --url)");
		return 2;
	}
	r = write_once(o);
	if (o->follow)
		r = follow_all(o);
	return r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
