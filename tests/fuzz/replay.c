/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main() for a harness outside libFuzzer: runs LLVMFuzzerTestOneInput over
 * every file named, and every file in every directory named. A crash is a
 * failed test; under ASan a leak or an overflow is too.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		if (f)
			fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int run_path(const char *path, unsigned *count)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int r = 0;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		++*count;
		return run_file(path);
	}
	d = opendir(path);
	while (d && (e = readdir(d))) {
		char sub[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		r |= run_path(sub, count);
	}
	if (d)
		closedir(d);
	return r;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int r = 0;

	for (int i = 1; i < argc; i++)
		r |= run_path(argv[i], &count);
	printf("%s: %u inputs replayed\n", argv[0], count);
	return r;
}
