/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <curl/curl.h>

/* The libcurl functions vfctl calls, from the library loaded by vfctl_curl(). */
struct vfctl_curl {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode code);
	char *(*easy_escape)(CURL *c, const char *s, int length);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
};

const struct vfctl_curl *vfctl_curl(void);
void vfctl_curl_close(void);
