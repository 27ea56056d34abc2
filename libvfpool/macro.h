/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scope-bound cleanup helpers shared by every part of vfagent. A variable
 * declared _cleanup_free_ is freed when it goes out of scope; TAKE_PTR()
 * hands ownership on and leaves NULL behind so nothing is freed twice.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _ptr_ = (p);                                                         \
		(p) = NULL;                                                                        \
		_ptr_;                                                                             \
	})

#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _fd_ = (fd);                                                                   \
		(fd) = -1;                                                                         \
		_fd_;                                                                              \
	})

/* @p grown (doubling) to hold at least @need elements of @size; NULL, @p untouched, when out of memory. */
static inline void *vfp_greedy_realloc(void *p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 8;
	void *q;

	if (need <= *cap)
		return p;
	while (c < need)
		c *= 2;
	q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

/* Room for @need elements in @array (of @cap): true, or false when out of memory. */
#define GREEDY_REALLOC(array, cap, need)                                                           \
	({                                                                                         \
		__typeof__(array) _a_ = vfp_greedy_realloc((array), &(cap), (need),              \
							     sizeof(*(array)));                  \
		if (_a_)                                                                           \
			(array) = _a_;                                                             \
		_a_ != NULL;                                                                       \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/*
 * Reference counts: objects are shared between the agent's threads (an
 * inventory is ref'd by every request that reads it), so counts are atomic.
 */
static inline void vfp_ref_inc(int *ref)
{
	__atomic_add_fetch(ref, 1, __ATOMIC_RELAXED);
}

static inline int vfp_ref_dec(int *ref)
{
	return __atomic_sub_fetch(ref, 1, __ATOMIC_ACQ_REL);
}
