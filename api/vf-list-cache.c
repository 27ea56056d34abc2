/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The whole GET /v1/vfs answer, rendered once for each state of the host
 * and the ledger and served from a sealed memfd with sendfile, as a static
 * file is. The state is the inventory (a rescan makes a new one; the cache
 * holds a reference, so its address names it) and the ledger's count of
 * changed rows (every claim, intent, health mark and sweep changes rows).
 * The rendering goes VF by VF into the file, so no JSON tree of the whole
 * host is ever built.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent-facts.h"
#include "api/api.h"

static struct {
	pthread_mutex_t lock;
	const struct agent_ledger *ledger;
	struct vfp_inventory *inv; /* a reference */
	uint64_t ledger_changes;
	int fd; /* the body, or -1 */
	size_t size;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* {"vfs":[…]} as json_dumps(…, JSON_COMPACT) writes it, from the ledger's @views. */
static int render(const struct vfp_inventory *inv, const struct ledger_vf_view *views, size_t n,
		  FILE *f)
{
	bool first = true;
	size_t k = 0;

	fputs("{\"vfs\":[", f);
	for (size_t i = 0; i < vfp_inventory_get_pf_count(inv); i++) {
		const struct vfp_pf *p = vfp_inventory_get_pf(inv, i);

		for (size_t j = 0; j < vfp_pf_get_vf_count(p) && k < n; j++, k++) {
			json_t *vf = api_vf_json(vfp_pf_get_vf(p, j), &views[k]);
			int r;

			if (!vf)
				return -ENOMEM;
			if (!first)
				fputc(',', f);
			first = false;
			r = json_dumpf(vf, f, JSON_COMPACT);
			json_decref(vf);
			if (r < 0)
				return -EIO;
		}
	}
	fputs("]}", f);
	return fflush(f) == 0 ? 0 : -errno;
}

/* A sealed memfd holding the rendering of @inv and the ledger's @views of its VFs. */
static int render_file(const struct vfp_inventory *inv, const struct ledger_vf_view *views,
		       size_t n, int *ret_fd, size_t *ret_size)
{
	int fd = memfd_create("vfagent-vfs", MFD_CLOEXEC | MFD_ALLOW_SEALING), w, r;
	struct stat st;
	FILE *f = NULL;

	if (fd < 0)
		return -errno;
	w = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (w >= 0 && !(f = fdopen(w, "w")))
		close(w);
	r = f ? render(inv, views, n, f) : -errno;
	if (f && fclose(f) != 0 && r >= 0)
		r = -errno;
	if (r >= 0 && (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK |
					      F_SEAL_SEAL) < 0 ||
		       fstat(fd, &st) < 0))
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	*ret_size = (size_t)st.st_size;
	return 0;
}

static bool fresh(const struct agent *a, const struct vfp_inventory *inv, uint64_t changes)
{
	return cache.fd >= 0 && cache.inv == inv && cache.ledger == agent_ledger(a) &&
	       cache.ledger_changes == changes;
}

static void forget(void)
{
	if (cache.fd >= 0)
		close(cache.fd);
	vfp_inventory_unref(cache.inv);
	cache.fd = -1;
	cache.inv = NULL;
}

/*
 * A new descriptor of the body for @inv and the ledger as they are,
 * rendering it if needed. The count of changes is read before the ledger's
 * view: a change in between makes the next request render again, never
 * serves an older view as a newer one.
 */
static int body_fd(struct api_request *req, struct vfp_inventory *inv, size_t *ret_size)
{
	struct agent *a = req->agent;
	struct ledger_vf_view *views = NULL;
	int fd = -1, r = 0;
	uint64_t changes;
	size_t n = 0;

	pthread_mutex_lock(&cache.lock);
	changes = ledger_changes(a);
	if (!fresh(a, inv, changes)) {
		forget();
		r = ledger_get_vf_views(a, inv, &views, &n);
		if (r >= 0)
			r = render_file(inv, views, n, &cache.fd, &cache.size);
		free(views);
		if (r >= 0) {
			cache.inv = vfp_inventory_ref(inv);
			cache.ledger = agent_ledger(a);
			cache.ledger_changes = changes;
		}
	}
	if (r >= 0 && (fd = fcntl(cache.fd, F_DUPFD_CLOEXEC, 0)) < 0)
		r = -errno;
	*ret_size = cache.size;
	pthread_mutex_unlock(&cache.lock);
	return r < 0 ? r : fd;
}

/**
 * api_vf_list_reply() - answer with every VF of @inv, from the cache
 *
 * The response takes the descriptor: libmicrohttpd sends it with sendfile
 * and closes it when the response is done.
 */
int api_vf_list_reply(struct api_request *req, struct vfp_inventory *inv)
{
	size_t size = 0;
	int fd = body_fd(req, inv, &size);

	if (fd < 0)
		return api_fail(req, fd, "rendering the VF list: %s", strerror(-fd));
	req->stream = MHD_create_response_from_fd64(size, fd);
	if (!req->stream) {
		close(fd);
		return api_fail(req, -ENOMEM, "out of memory");
	}
	MHD_add_response_header(req->stream, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	req->status = 200;
	return 0;
}

/* At exit: the rendering and the inventory it holds. */
void api_vf_list_cache_clear(void)
{
	pthread_mutex_lock(&cache.lock);
	forget();
	pthread_mutex_unlock(&cache.lock);
}
