/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The result of each ADD, kept until its DEL, so that a repeated ADD of an
 * attachment the agent still has attached answers as the first did without
 * running IPAM again (host-local refuses a second allocation for the same
 * container and interface). One file per attachment under "cacheDir"
 * (/var/lib/cni/vfagent, beside sriov-cni's /var/lib/cni/sriov), named by a
 * tag of its key, holding the key, the config and CNI_ARGS of the ADD and
 * its result. The agent's ledger stays the truth: the cache is read only
 * when the agent says the attachment is there as asked.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cni.h"

#define CNI_CACHE_DIR "/var/lib/cni/vfagent"

/* The cache's directory: "cacheDir", an absolute path, or the default. */
static const char *cache_dir(const struct cni_call *call)
{
	const char *dir = json_string_value(json_object_get(call->conf, "cacheDir"));

	return dir && dir[0] == '/' ? dir : CNI_CACHE_DIR;
}

static void cache_path(const struct cni_call *call, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%016llx.json", cache_dir(call), cni_tag(call->key));
}

/* What makes two ADDs the same: the config (its prevResult aside) and CNI_ARGS. */
static json_t *request_of(const struct cni_call *call)
{
	json_t *conf = json_deep_copy(call->conf);

	json_object_del(conf, "prevResult");
	return json_pack("{s:s, s:o, s:s}", "key", call->key, "config", conf, "args",
			 call->args ? call->args : "");
}

/**
 * cni_cache_read() - the result of the ADD that made the attachment, when
 * this ADD is the same (@ret, a new reference): 1; 0 when there is none;
 * -1 with a CNI error when that ADD had another config
 */
int cni_cache_read(const struct cni_call *call, json_t **ret, struct cni_error *e)
{
	char path[4096];
	json_t *entry, *now;
	int same;

	cache_path(call, path, sizeof(path));
	entry = json_load_file(path, 0, NULL);
	if (!json_is_object(entry) || !json_is_object(json_object_get(entry, "result")) ||
	    strcmp(json_string_value(json_object_get(entry, "key")) ?: "", call->key) != 0) {
		json_decref(entry);
		return 0;
	}
	now = request_of(call);
	same = json_equal(json_object_get(entry, "config"), json_object_get(now, "config")) &&
	       json_equal(json_object_get(entry, "args"), json_object_get(now, "args"));
	json_decref(now);
	if (!same) {
		json_decref(entry);
		return cni_fail(e, CNI_ERR_EXISTS, "the attachment exists with other settings",
				"attachment %s was added with another config or CNI_ARGS: DEL it "
				"first", call->key);
	}
	*ret = json_incref(json_object_get(entry, "result"));
	json_decref(entry);
	return 1;
}

/* @dir and the directories above it that are missing (/var/lib/cni on a host without one). */
static int make_dirs(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = strchr(path + 1, '/');; p = strchr(p + 1, '/')) {
		if (p)
			*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return -1;
		if (!p)
			return 0;
		*p = '/';
	}
}

/* cni_cache_write() - @result kept for the attachment; a failure is logged, not fatal. */
void cni_cache_write(const struct cni_call *call, json_t *result)
{
	char path[4096], tmp[4200];
	json_t *entry = request_of(call);

	cache_path(call, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	json_object_set(entry, "result", result);
	if (make_dirs(cache_dir(call)) < 0)
		cni_log(CNI_LOG_WARNING, "cache %s: %s", cache_dir(call), strerror(errno));
	else if (json_dump_file(entry, tmp, JSON_COMPACT) < 0 || rename(tmp, path) < 0)
		cni_log(CNI_LOG_WARNING, "cache %s: %s", path, strerror(errno)), unlink(tmp);
	json_decref(entry);
}

/* cni_cache_forget() - the attachment's entry gone (DEL). */
void cni_cache_forget(const struct cni_call *call)
{
	char path[4096];

	cache_path(call, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		cni_log(CNI_LOG_WARNING, "cache %s: %s", path, strerror(errno));
}

static bool kept(json_t *keep, const char *key)
{
	json_t *v;
	size_t i;

	json_array_foreach(keep, i, v)
		if (strcmp(json_string_value(v) ?: "", key) == 0)
			return true;
	return false;
}

/**
 * cni_cache_gc() - the entries of the network's attachments (keys starting
 * with @prefix) that are not in @keep removed, as GC releases them
 */
void cni_cache_gc(const struct cni_call *call, const char *prefix, json_t *keep)
{
	DIR *d = opendir(cache_dir(call));
	struct dirent *de;
	char path[4096];

	while (d && (de = readdir(d))) {
		json_t *entry;
		const char *key;

		if (!strstr(de->d_name, ".json") || strlen(de->d_name) != 21)
			continue;
		snprintf(path, sizeof(path), "%s/%s", cache_dir(call), de->d_name);
		entry = json_load_file(path, 0, NULL);
		key = json_string_value(json_object_get(entry, "key"));
		if (key && strncmp(key, prefix, strlen(prefix)) == 0 && !kept(keep, key) &&
		    unlink(path) < 0)
			cni_log(CNI_LOG_WARNING, "cache %s: %s", path, strerror(errno));
		json_decref(entry);
	}
	if (d)
		closedir(d);
}
