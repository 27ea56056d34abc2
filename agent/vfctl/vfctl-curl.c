/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcurl, loaded the first time vfctl talks to the agent. libcurl brings
 * some thirty libraries (TLS, HTTP/2, LDAP, Kerberos, SSH); loading them
 * costs more than a whole `list --local` scan of 1,024 VFs, and the --local
 * commands never need them. As systemd does for its optional libraries, the
 * soname is the ABI's (libcurl.so.4) and every symbol is checked at load.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "agent/vfctl/vfctl-curl.h"
#include "agent/vfctl/vfctl-error.h"

#define LIBCURL_SONAME "libcurl.so.4"

static const struct {
	const char *name;
	size_t offset;
} symbols[] = {
	{ "curl_global_init", offsetof(struct vfctl_curl, global_init) },
	{ "curl_global_cleanup", offsetof(struct vfctl_curl, global_cleanup) },
	{ "curl_easy_init", offsetof(struct vfctl_curl, easy_init) },
	{ "curl_easy_setopt", offsetof(struct vfctl_curl, easy_setopt) },
	{ "curl_easy_perform", offsetof(struct vfctl_curl, easy_perform) },
	{ "curl_easy_getinfo", offsetof(struct vfctl_curl, easy_getinfo) },
	{ "curl_easy_cleanup", offsetof(struct vfctl_curl, easy_cleanup) },
	{ "curl_easy_strerror", offsetof(struct vfctl_curl, easy_strerror) },
	{ "curl_easy_escape", offsetof(struct vfctl_curl, easy_escape) },
	{ "curl_free", offsetof(struct vfctl_curl, free) },
	{ "curl_slist_append", offsetof(struct vfctl_curl, slist_append) },
	{ "curl_slist_free_all", offsetof(struct vfctl_curl, slist_free_all) },
};

static struct vfctl_curl curl;
static void *handle;

/* Every symbol into its slot; false (and why, printed) when one is missing. */
static bool resolve(void)
{
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		void *p = dlsym(handle, symbols[i].name);

		if (!p) {
			vfctl_error("%s has no %s: %s", LIBCURL_SONAME,
				    symbols[i].name, dlerror());
			return false;
		}
		/* POSIX: a data pointer from dlsym() holds a function's address */
		memcpy((char *)&curl + symbols[i].offset, &p, sizeof(p));
	}
	return true;
}

/**
 * vfctl_curl() - libcurl's functions, loaded and initialized on first use
 *
 * NULL when libcurl cannot be loaded; the reason is printed (one line).
 */
const struct vfctl_curl *vfctl_curl(void)
{
	if (curl.easy_init)
		return &curl;
	if (!handle)
		handle = dlopen(LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		vfctl_error("talking to the agent needs libcurl: %s", dlerror());
		return NULL;
	}
	if (!resolve() || curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		memset(&curl, 0, sizeof(curl));
		return NULL;
	}
	return &curl;
}

/* libcurl's global state released and the library unloaded, if it was loaded. */
void vfctl_curl_close(void)
{
	if (curl.global_cleanup)
		curl.global_cleanup();
	memset(&curl, 0, sizeof(curl));
	if (handle)
		dlclose(handle);
	handle = NULL;
}
