/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A scan's syscalls as a list: built by bench/scan from the inventory it
 * found, replayed by bench/scan (in process), saved as one "R|L|D path"
 * line per step for bench/syscall-replay (a whole process).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/syscall-plan.h"

static const char op_letter[] = { [OP_READ] = 'R', [OP_READLINK] = 'L', [OP_LISTDIR] = 'D' };

static void add_path(struct syscall_plan *p, enum syscall_op op, const char *path)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->steps = realloc(p->steps, p->cap * sizeof(*p->steps));
		if (!p->steps)
			abort();
	}
	p->steps[p->n].op = op;
	p->steps[p->n].path = strdup(path);
	if (!p->steps[p->n++].path)
		abort();
}

/* One step: @fmt names a path under @root. */
void plan_add(struct syscall_plan *p, enum syscall_op op, const char *root, const char *fmt, ...)
{
	char rel[PATH_MAX], path[2 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	add_path(p, op, path);
}

void plan_run(const struct syscall_plan *p)
{
	char buf[256];

	for (size_t i = 0; i < p->n; i++) {
		const char *path = p->steps[i].path;
		int fd;
		DIR *d;

		switch (p->steps[i].op) {
		case OP_READ:
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				if (read(fd, buf, sizeof(buf)) < 0)
					buf[0] = 0;
				close(fd);
			}
			break;
		case OP_READLINK:
			if (readlink(path, buf, sizeof(buf)) < 0)
				buf[0] = 0;
			break;
		case OP_LISTDIR:
			d = opendir(path);
			if (d) {
				while (readdir(d))
					;
				closedir(d);
			}
			break;
		}
	}
}

void plan_write(const struct syscall_plan *p, FILE *out)
{
	for (size_t i = 0; i < p->n; i++)
		fprintf(out, "%c %s\n", op_letter[p->steps[i].op], p->steps[i].path);
}

void plan_free(struct syscall_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->steps[i].path);
	free(p->steps);
	p->steps = NULL;
	p->n = p->cap = 0;
}
