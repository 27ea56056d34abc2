/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libvirt.so.0 loaded once, every function the agent calls checked at load
 * (the soname is libvirt's ABI, as systemd loads its optional libraries).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "agent/vm/libvirt-api.h"

#define LIBVIRT_SONAME "libvirt.so.0"
#define LIBVIRT_API_SYMBOL(name) { #name, offsetof(struct libvirt_api, name) },

static const struct {
	const char *name;
	size_t offset;
} symbols[] = { LIBVIRT_API_FUNCTIONS(LIBVIRT_API_SYMBOL) };

static struct libvirt_api api;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *handle = dlopen(LIBVIRT_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!handle) {
		snprintf(load_error, sizeof(load_error), "%s", dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		void *p = dlsym(handle, symbols[i].name);

		if (!p) {
			snprintf(load_error, sizeof(load_error), "%s has no %s", LIBVIRT_SONAME,
				 symbols[i].name);
			memset(&api, 0, sizeof(api));
			return; /* the handle stays: libvirt's libraries do not unload cleanly */
		}
		/* POSIX: a data pointer from dlsym() holds a function's address */
		memcpy((char *)&api + symbols[i].offset, &p, sizeof(p));
	}
}

/**
 * libvirt_api_load() - libvirt's functions, loaded on the first call
 *
 * -ENOPKG, with dlopen's reason in @err, when libvirt cannot be loaded.
 */
int libvirt_api_load(const struct libvirt_api **ret, char *err, size_t err_size)
{
	pthread_once(&once, load);
	if (!api.virConnectOpen) {
		snprintf(err, err_size, "cannot load libvirt: %s", load_error);
		return -ENOPKG;
	}
	*ret = &api;
	return 0;
}

/**
 * libvirt_api_load_error() - why libvirt could not be loaded; NULL when it
 * was, or when nothing asked for it ("libvirt": false in the config)
 */
const char *libvirt_api_load_error(void)
{
	return load_error[0] ? load_error : NULL;
}
