/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A harness's scratch directory, removed when the process exits (libFuzzer and replay alike). */
#include "config.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"

static char dir[64];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void remove_dir(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new directory "/dev/shm/vfagent-fuzz-@name-XXXXXX" for the process; abort()s on failure. */
const char *fuzz_tmpdir(const char *name)
{
	if (dir[0])
		abort(); /* one per process */
	snprintf(dir, sizeof(dir), "/dev/shm/vfagent-fuzz-%.16s-XXXXXX", name);
	if (!mkdtemp(dir) || atexit(remove_dir) != 0)
		abort();
	return dir;
}
