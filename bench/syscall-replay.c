/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/syscall-replay PLAN BYTES: the floor of a whole `vfctl list --local`
 * process. Makes the syscalls of PLAN (bench/scan --plan: "R|L|D path"
 * lines; read a file, read a link, list a directory) as they come, then
 * writes BYTES bytes to stdout, as vfctl writes its answer. Links libc only,
 * parses nothing but the lines, allocates nothing but the plan's one buffer.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void step(char op, const char *path)
{
	char buf[256];
	int fd;
	DIR *d;

	if (op == 'R') {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				buf[0] = 0;
			close(fd);
		}
	} else if (op == 'L') {
		if (readlink(path, buf, sizeof(buf)) < 0)
			buf[0] = 0;
	} else if (op == 'D') {
		d = opendir(path);
		if (d) {
			while (readdir(d))
				;
			closedir(d);
		}
	}
}

/* The whole file in one buffer, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *data = NULL;

	if (fd >= 0 && fstat(fd, &st) == 0 && (data = malloc((size_t)st.st_size + 1)) &&
	    read(fd, data, (size_t)st.st_size) == st.st_size)
		data[st.st_size] = '\0';
	else if (data) {
		free(data);
		data = NULL;
	}
	if (fd >= 0)
		close(fd);
	return data;
}

int main(int argc, char **argv)
{
	static char out[4096]; /* stdio's buffer for /dev/null, as vfctl's writes */
	char *plan = argc == 3 ? slurp(argv[1]) : NULL, *line, *nl;
	long left = argc == 3 ? atol(argv[2]) : -1;

	if (!plan || left < 0) {
		fprintf(stderr, "usage: syscall-replay PLAN BYTES (PLAN from bench/scan --plan)\n");
		return 2;
	}
	for (line = plan; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		if (nl - line > 2)
			step(line[0], line + 2);
	}
	memset(out, ' ', sizeof(out));
	for (; left > 0; left -= (long)sizeof(out))
		if (write(STDOUT_FILENO, out, left < (long)sizeof(out) ? (size_t)left : sizeof(out)) < 0)
			return 1;
	free(plan);
	return 0;
}
