/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A ledger statement and its parameters in one call: the prepare, bind and
 * step each query wrote out by hand. The parameters are typed, bound to ?1,
 * ?2, ... in order: ARG_TEXT(s) (NULL binds SQL NULL; the string must last
 * until the statement is stepped) or ARG_INT(n).
 *
 *	r = vfp_ledger_run(l, sql, "swap end", LEDGER_ARGS(ARG_TEXT(id)));
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ledger-private.h"

struct ledger_arg {
	bool is_text;
	const char *text;
	int64_t n;
};

#define ARG_TEXT(s) ((struct ledger_arg){ .is_text = true, .text = (s) })
#define ARG_INT(v) ((struct ledger_arg){ .n = (v) })
#define LEDGER_ARGS(...)                                                                           \
	(const struct ledger_arg[]){ __VA_ARGS__ },                                                \
		ELEMENTSOF(((const struct ledger_arg[]){ __VA_ARGS__ }))

int vfp_ledger_bind(struct vfp_ledger *l, const char *sql, sqlite3_stmt **ret,
		    const struct ledger_arg *args, size_t n);
int vfp_ledger_run(struct vfp_ledger *l, const char *sql, const char *what,
		   const struct ledger_arg *args, size_t n);
