/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "libvfpool/libvfpool.h"

/* One port GUID in one partition, and who listed it. */
struct pconf_member {
	unsigned long long guid;
	int pkey; /* as a port's table shows it: 0x8000 for a full member */
	char *source, *allocation;
	bool claim_only; /* not written: only refuses a GUID it gives another key */
};

struct pconf {
	struct pconf_member *m;
	size_t n, cap;
	unsigned refused;   /* members left out: a bad GUID or key */
	unsigned conflicts; /* GUIDs left out: claimed for two keys */
	FILE *report;	    /* where each is said */
};

extern const char pconf_begin[], pconf_end[];

void pconf_free(struct pconf *p);
int pconf_add_members(struct pconf *p, const char *source, json_t *members);
int pconf_add_claims(struct pconf *p, const char *source, json_t *members);
bool pconf_same_member(json_t *a, json_t *b);
void pconf_resolve(struct pconf *p);
int pconf_render(struct pconf *p, char **ret);
bool pconf_block_is_valid(const char *block);
int pconf_splice(const char *old, const char *block, char **ret, const char **ret_why);
