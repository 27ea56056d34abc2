/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/log.h"
#include "agent/hold-watch.h"
#include "agent/ledger.h"

/* The hold files watched at most; more are seen by the minute's sweep. */
#define MAX_HOLDS 1024
#define EVENTS (IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

struct hold {
	int wd;
	char *name; /* the file's name in the watched directory */
};

struct hold_watch {
	struct agent *agent;
	int ino;  /* inotify, the thread's alone */
	int wake; /* eventfd: the holds changed (or stop) */
	int out;  /* eventfd: a held file went; the main loop reads it */
	bool stop;
	pthread_t thread;
	struct hold holds[MAX_HOLDS];
	size_t n;
};

static void signal_fd(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warning("hold watch: %s", strerror(errno));
}

static void forget(struct hold_watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->holds[i].name);
	w->n = 0;
	if (w->ino >= 0)
		close(w->ino); /* every watch goes with it */
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ino < 0)
		log_warning("hold watch: inotify: %s: held files are seen at the minute's sweep",
			    strerror(errno));
}

/* The directory of @path watched for it; false when the file is not there (or unknown). */
static bool watch_one(struct hold_watch *w, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;
	int wd;

	if (!slash || w->n >= MAX_HOLDS || w->ino < 0)
		return true;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	wd = inotify_add_watch(w->ino, dir, EVENTS);
	if (wd < 0)
		return errno != ENOENT && errno != ENOTDIR;
	w->holds[w->n].wd = wd;
	w->holds[w->n].name = strdup(slash + 1);
	if (w->holds[w->n].name)
		w->n++;
	return stat(path, &st) == 0 || errno != ENOENT; /* after the watch: no gap */
}

/* Every hold path of the ledger watched anew; a file already gone asks for a sweep. */
static void rebuild(struct hold_watch *w)
{
	struct vfp_allocation **list = NULL;
	size_t count = 0;
	bool gone = false;
	int r;

	forget(w);
	r = ledger_list_allocations(w->agent, NULL, false, &list, &count, NULL, 0);
	if (r < 0)
		return;
	for (size_t i = 0; i < count; i++) {
		const char *path = vfp_allocation_get_hold_path(list[i]);

		if (path && !watch_one(w, path))
			gone = true;
	}
	vfp_allocation_list_free(list, count);
	if (gone)
		signal_fd(w->out);
}

/* Whether an event says a held file (or its directory) went. */
static bool held_file_went(const struct hold_watch *w, const struct inotify_event *e)
{
	if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW | IN_UNMOUNT))
		return true;
	for (size_t i = 0; i < w->n; i++)
		if (w->holds[i].wd == e->wd && e->len && !strcmp(w->holds[i].name, e->name))
			return true;
	return false;
}

static bool read_events(struct hold_watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool went = false;
	ssize_t len;

	while ((len = read(w->ino, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			went |= held_file_went(w, e);
			p += sizeof(*e) + e->len;
		}
	return went;
}

static void *run(void *arg)
{
	struct hold_watch *w = arg;
	bool changed = true;

	for (;;) {
		struct pollfd p[2] = { { .fd = w->wake, .events = POLLIN },
				       { .fd = w->ino, .events = POLLIN } };
		uint64_t v;

		if (changed)
			rebuild(w);
		changed = false;
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN) {
			if (read(w->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
			if (__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
				break;
			changed = true;
		}
		if (p[1].revents & POLLIN && read_events(w)) {
			signal_fd(w->out);
			changed = true; /* a directory that went took its watch */
		}
	}
	return NULL;
}

/**
 * hold_watch_new() - watch the ledger's hold files from a thread of their own
 * @ret_fd: readable when a held file went (hold_watch_drain() it, then sweep)
 *
 * Without inotify it still starts: the quiet minute's sweep sees them.
 */
int hold_watch_new(struct agent *a, struct hold_watch **ret, int *ret_fd)
{
	struct hold_watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->agent = a;
	w->ino = -1;
	w->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->out = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->wake < 0 || w->out < 0) {
		r = -errno;
		goto fail;
	}
	r = -pthread_create(&w->thread, NULL, run, w);
	if (r < 0)
		goto fail;
	*ret = w;
	*ret_fd = w->out;
	return 0;
fail:
	if (w->wake >= 0)
		close(w->wake);
	if (w->out >= 0)
		close(w->out);
	free(w);
	return r;
}

/* The ledger's holds changed: watch them anew. NULL is fine. */
void hold_watch_changed(struct hold_watch *w)
{
	if (w)
		signal_fd(w->wake);
}

/* 1 when a held file went since the last call. */
int hold_watch_drain(struct hold_watch *w)
{
	uint64_t v = 0;

	return read(w->out, &v, sizeof(v)) == sizeof(v) && v > 0;
}

void hold_watch_free(struct hold_watch *w)
{
	struct timespec until;

	if (!w)
		return;
	__atomic_store_n(&w->stop, true, __ATOMIC_RELEASE);
	signal_fd(w->wake);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	if (pthread_timedjoin_np(w->thread, NULL, &until) != 0) {
		/* its stat or watch of a path that hangs (a hung NFS or FUSE mount) never
		 * returns: the thread and what it uses are left to the process's end */
		log_warning("hold watch: a held path does not answer: not waited for");
		return;
	}
	for (size_t i = 0; i < w->n; i++)
		free(w->holds[i].name);
	if (w->ino >= 0)
		close(w->ino);
	close(w->wake);
	close(w->out);
	free(w);
}
