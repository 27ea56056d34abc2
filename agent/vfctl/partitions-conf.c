/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The block of OpenSM's partitions.conf that `vfctl partitions write` owns:
 * the members every agent lists, checked one by one, merged, written as
 * OpenSM's grammar has it (opensm/osm_prtn_config.c, doc/partition-config.txt):
 *
 *   vfagent_0001=0x0001,ipoib : 0x02c9030000000001=full, 0x02c9030000000002=limited ;
 *
 * One partition per low 15 bits of the key (OpenSM takes only those; the
 * membership is the port's), its GUIDs in hex with 0x (OpenSM's strtoull
 * reads them so), a line closed by ';' every MEMBERS_PER_LINE GUIDs: OpenSM
 * reads 4095 bytes a line, merges definitions of one P_Key, and takes an
 * empty port name for ALL, so no line ever ends in ',' or holds an empty
 * entry. Nothing a client sent goes into the file as text: GUIDs and keys
 * are parsed into numbers and printed back. The operator's lines outside
 * the markers are kept byte for byte.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vfctl/partitions-conf.h"

#define MEMBERS_PER_LINE 64

const char pconf_begin[] = "# BEGIN vfagent partitions: written by vfctl partitions write, "
			   "edits here are lost\n";
const char pconf_end[] = "# END vfagent partitions\n";

void pconf_free(struct pconf *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->m[i].source);
		free(p->m[i].allocation);
	}
	free(p->m);
	*p = (struct pconf){ .report = p->report };
}

static int add(struct pconf *p, unsigned long long guid, int pkey, const char *source,
	       const char *allocation, bool claim_only)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct pconf_member *m = realloc(p->m, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		p->m = m;
		p->cap = cap;
	}
	p->m[p->n] = (struct pconf_member){ guid, pkey, strdup(source),
					    strdup(allocation ? allocation : ""), claim_only };
	if (!p->m[p->n].source || !p->m[p->n].allocation)
		return -ENOMEM;
	p->n++;
	return 0;
}

/* A member's GUID and key, parsed as the agent would: 0, or -EINVAL with @ret_why. */
static int parse_member(json_t *m, unsigned long long *ret_guid, int *ret_pkey,
			const char **ret_why)
{
	const char *guid = json_string_value(json_object_get(m, "guid"));

	*ret_why = NULL;
	*ret_pkey = VFP_UNSET;
	if (vfp_pkey_from_json(json_object_get(m, "pkey"), json_object_get(m, "membership"),
			       ret_pkey, ret_why) < 0 || *ret_pkey < 0)
		*ret_why = *ret_why ? *ret_why : "pkey: missing";
	else if (vfp_guid_parse(guid, ret_guid) < 0 || *ret_guid == 0 || *ret_guid == ~0ULL)
		*ret_why = "guid: not a port GUID";
	return *ret_why ? -EINVAL : 0;
}

/* Whether members @a and @b are one port GUID in one partition with one membership. */
bool pconf_same_member(json_t *a, json_t *b)
{
	unsigned long long ga = 0, gb = 0;
	const char *why;
	int ka, kb;

	return parse_member(a, &ga, &ka, &why) == 0 && parse_member(b, &gb, &kb, &why) == 0 &&
	       ga == gb && ka == kb;
}

static int add_all(struct pconf *p, const char *source, json_t *members, bool claim_only)
{
	json_t *m;
	size_t i;

	if (!json_is_array(members)) {
		fprintf(p->report, "vfctl: partitions: %s: no list of members\n", source);
		p->refused++;
		return 0;
	}
	json_array_foreach(members, i, m) {
		const char *alloc = json_string_value(json_object_get(m, "allocation")), *why;
		unsigned long long g = 0;
		int pkey;

		if (parse_member(m, &g, &pkey, &why) < 0) {
			fprintf(p->report, "vfctl: partitions: %s: member %zu refused: %s\n", source,
				i, why);
			p->refused++;
			continue;
		}
		if (add(p, g, pkey, source, alloc, claim_only) < 0)
			return -ENOMEM;
	}
	return 0;
}

/**
 * pconf_add_members() - the "members" of one agent's GET /v1/partitions
 *
 * Each member's key and GUID are parsed as the agent would (a valid GUID,
 * not all 0 or all F; a tenant's P_Key); one that fails is reported and
 * left out (p->refused counts it), the others are taken.
 */
int pconf_add_members(struct pconf *p, const char *source, json_t *members)
{
	return add_all(p, source, members, false);
}

/**
 * pconf_add_claims() - members of an agent that are not written (it shares
 * a GUID range with another), but still claim their GUIDs: a GUID one of
 * them gives another key than a written member is in no partition
 */
int pconf_add_claims(struct pconf *p, const char *source, json_t *members)
{
	return add_all(p, source, members, true);
}

static int by_guid(const void *x, const void *y)
{
	const struct pconf_member *a = x, *b = y;

	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	if (a->pkey != b->pkey)
		return a->pkey < b->pkey ? -1 : 1;
	return strcmp(a->source, b->source);
}

/*
 * One member per GUID: the same GUID with the same key from several agents
 * (a VM migrating: both hosts hold it) is written once; with different keys
 * it is written for none, and each claim is reported (p->conflicts). Claims
 * only (pconf_add_claims()) count for the keys, and are never written.
 */
void pconf_resolve(struct pconf *p)
{
	size_t out = 0;

	qsort(p->m, p->n, sizeof(*p->m), by_guid);
	for (size_t i = 0, j; i < p->n; i = j) {
		bool clash = false;

		for (j = i + 1; j < p->n && p->m[j].guid == p->m[i].guid; j++)
			clash = clash || p->m[j].pkey != p->m[i].pkey;
		for (size_t k = i; clash && k < j; k++)
			fprintf(p->report, "vfctl: partitions: GUID 0x%016llx claimed for 0x%04x by "
				"%s (allocation %s) and for another key elsewhere: refused, in "
				"no partition\n", p->m[k].guid, (unsigned)p->m[k].pkey,
				p->m[k].source, p->m[k].allocation);
		if (clash) {
			p->conflicts++;
			for (size_t k = i; k < j; k++) {
				free(p->m[k].source);
				free(p->m[k].allocation);
			}
			continue;
		}
		for (size_t k = i; k < j; k++) { /* the first written member of the GUID is kept */
			if (!p->m[k].claim_only && (out == 0 || p->m[out - 1].guid != p->m[k].guid)) {
				p->m[out++] = p->m[k];
				continue;
			}
			free(p->m[k].source);
			free(p->m[k].allocation);
		}
	}
	p->n = out;
}

static int by_partition(const void *x, const void *y)
{
	const struct pconf_member *a = x, *b = y;

	if ((a->pkey & 0x7fff) != (b->pkey & 0x7fff))
		return (a->pkey & 0x7fff) < (b->pkey & 0x7fff) ? -1 : 1;
	return a->guid < b->guid ? -1 : a->guid > b->guid;
}

static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	char *more;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if ((size_t)n < *cap - *len)
			break;
		more = realloc(*buf, *cap * 2 + (size_t)n);

		if (!more)
			return -ENOMEM;
		*buf = more;
		*cap = *cap * 2 + (size_t)n;
	}
	*len += (size_t)n;
	return 0;
}

/* The block, markers included, for the resolved members (sorted here by partition, GUID). */
int pconf_render(struct pconf *p, char **ret)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int r;

	if (!buf)
		return -ENOMEM;
	buf[0] = '\0';
	qsort(p->m, p->n, sizeof(*p->m), by_partition);
	r = append(&buf, &len, &cap, "%s", pconf_begin);
	for (size_t i = 0, on_line = 0; r >= 0 && i < p->n; i++) {
		unsigned part = (unsigned)p->m[i].pkey & 0x7fff;
		bool first = i == 0 || part != ((unsigned)p->m[i - 1].pkey & 0x7fff) ||
			     on_line == MEMBERS_PER_LINE;
		bool last = i + 1 == p->n || part != ((unsigned)p->m[i + 1].pkey & 0x7fff) ||
			    on_line + 1 == MEMBERS_PER_LINE;

		if (first) {
			on_line = 0;
			r = append(&buf, &len, &cap, "vfagent_%04x=0x%04x,ipoib : ", part, part);
		}
		if (r >= 0)
			r = append(&buf, &len, &cap, "0x%016llx=%s%s", p->m[i].guid,
				   p->m[i].pkey & 0x8000 ? "full" : "limited", last ? " ;\n" : ", ");
		on_line++;
	}
	if (r >= 0)
		r = append(&buf, &len, &cap, "%s", pconf_end);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	return 0;
}

/* Whether @line (without its newline) is one pconf_render() makes: each field printed back. */
static bool line_is_ours(const char *line, size_t n)
{
	char want[64];
	unsigned part = 0;
	const char *s = line;
	int k;

	if (sscanf(s, "vfagent_%4x", &part) != 1 || part == 0 || part >= 0x7fff)
		return false;
	k = snprintf(want, sizeof(want), "vfagent_%04x=0x%04x,ipoib : ", part, part);
	if ((size_t)k > n || strncmp(s, want, (size_t)k) != 0)
		return false;
	for (s += k; s < line + n;) {
		unsigned long long g = 0;
		char what[8] = "";

		if (sscanf(s, "0x%16llx=%7[a-z]", &g, what) != 2 || g == 0 || g == ~0ULL ||
		    (strcmp(what, "full") != 0 && strcmp(what, "limited") != 0))
			return false;
		k = snprintf(want, sizeof(want), "0x%016llx=%s", g, what);
		if (s + k > line + n || strncmp(s, want, (size_t)k) != 0)
			return false;
		s += k;
		if (s + 2 == line + n && strncmp(s, " ;", 2) == 0)
			return true;
		if (s + 2 >= line + n || strncmp(s, ", ", 2) != 0)
			return false;
		s += 2;
	}
	return false;
}

/**
 * pconf_block_is_valid() - @block as pconf_render() makes it, and nothing
 * else: the markers, then lines of one partition's members each. A last
 * check before the file is replaced.
 */
bool pconf_block_is_valid(const char *block)
{
	size_t nb = strlen(pconf_begin), ne = strlen(pconf_end), n = strlen(block);
	const char *s, *end;

	if (n < nb + ne || strncmp(block, pconf_begin, nb) != 0 ||
	    strcmp(block + n - ne, pconf_end) != 0)
		return false;
	for (s = block + nb, end = block + n - ne; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));

		if (!nl || nl - s > 4000 || !line_is_ours(s, (size_t)(nl - s)))
			return false;
		s = nl + 1;
	}
	return true;
}

/* Where a line equal to @marker starts in @text, or NULL; -1 in @ret_count when twice. */
static const char *find_line(const char *text, const char *marker, int *ret_count)
{
	const char *found = NULL;
	size_t n = strlen(marker);

	*ret_count = 0;
	for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (strncmp(s, marker, n) == 0) {
			found = found ? found : s;
			++*ret_count;
		}
	return found;
}

/**
 * pconf_splice() - @old (the file as it is; "" for none) with its block
 * replaced by @block, or @block appended when it has none
 *
 * -EINVAL (@ret_why says) when the markers are not one BEGIN before one END:
 * someone edited them, and which lines are whose is no longer known.
 */
int pconf_splice(const char *old, const char *block, char **ret, const char **ret_why)
{
	int nb, ne;
	const char *b = find_line(old, pconf_begin, &nb), *e = find_line(old, pconf_end, &ne);
	size_t head, tail_at;
	char *out;

	if (nb > 1 || ne > 1 || !b != !e || (b && e < b)) {
		*ret_why = "its vfagent block's markers are broken (not one BEGIN then one END "
			   "line); fix them by hand";
		return -EINVAL;
	}
	head = b ? (size_t)(b - old) : strlen(old);
	tail_at = e ? (size_t)(e - old) + strlen(pconf_end) : strlen(old);
	out = malloc(strlen(old) + strlen(block) + 2);
	if (!out)
		return -ENOMEM;
	memcpy(out, old, head);
	out[head] = '\0';
	if (head && out[head - 1] != '\n')
		strcat(out, "\n");
	strcat(out, block);
	strcat(out, old + tail_at);
	*ret = out;
	return 0;
}
