/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* The syscalls a scan makes, as a list to replay with no parsing and no allocation. */
enum syscall_op { OP_READ, OP_READLINK, OP_LISTDIR };

struct syscall_step {
	enum syscall_op op;
	char *path;
};

struct syscall_plan {
	struct syscall_step *steps;
	size_t n, cap;
};

void plan_add(struct syscall_plan *p, enum syscall_op op, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void plan_run(const struct syscall_plan *p);
void plan_write(const struct syscall_plan *p, FILE *out);
void plan_free(struct syscall_plan *p);
