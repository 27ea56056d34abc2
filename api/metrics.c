/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GET /metrics in the Prometheus text format: VFs per pool and state,
 * allocations, the last scan's duration, and per route the request count
 * by status and a latency histogram.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent-facts.h"
#include "api/api.h"

#define MAX_CODES 12

static const double buckets[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
				  0.5, 1, 2.5, 5 };
#define N_BUCKETS (sizeof(buckets) / sizeof(buckets[0]))

struct route_stats {
	unsigned codes[MAX_CODES];
	unsigned long long by_code[MAX_CODES];
	unsigned long long in_bucket[N_BUCKETS], count;
	double sum;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct route_stats stats[64]; /* api_routes, then "unmatched" */

/* A route by its entry in api_routes (one per method and pattern); NULL: unmatched. */
static size_t route_index(const struct api_route *route)
{
	if (route && route >= api_routes && route < api_routes + api_n_routes)
		return (size_t)(route - api_routes);
	return api_n_routes;
}

void api_metrics_observe(const struct api_route *route, unsigned status, double seconds)
{
	struct route_stats *s = &stats[route_index(route)];

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_CODES; i++) {
		if (s->codes[i] == 0)
			s->codes[i] = status;
		if (s->codes[i] == status) {
			s->by_code[i]++;
			break;
		}
	}
	for (size_t b = 0; b < N_BUCKETS; b++)
		if (seconds <= buckets[b])
			s->in_bucket[b]++;
	s->count++;
	s->sum += seconds;
	pthread_mutex_unlock(&lock);
}

/* "GET /v1/vfs/{pci}": a pattern may appear with several methods, the label says which. */
static const char *route_label(size_t i, char buf[static 96])
{
	if (i == api_n_routes)
		return "unmatched";
	snprintf(buf, 96, "%s %s", api_routes[i].method, api_routes[i].pattern);
	return buf;
}

static void render_http(FILE *f)
{
	char label[96];

	fputs("# HELP vfagent_http_requests_total HTTP requests by route and status.\n"
	      "# TYPE vfagent_http_requests_total counter\n", f);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i <= api_n_routes; i++)
		for (size_t c = 0; c < MAX_CODES && stats[i].codes[c]; c++)
			fprintf(f, "vfagent_http_requests_total{route=\"%s\",code=\"%u\"} %llu\n",
				route_label(i, label), stats[i].codes[c], stats[i].by_code[c]);
	fputs("# HELP vfagent_http_request_duration_seconds HTTP request latency by route.\n"
	      "# TYPE vfagent_http_request_duration_seconds histogram\n", f);
	for (size_t i = 0; i <= api_n_routes; i++) {
		const char *r = route_label(i, label);

		if (!stats[i].count)
			continue;
		for (size_t b = 0; b < N_BUCKETS; b++)
			fprintf(f, "vfagent_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
				r, buckets[b], stats[i].in_bucket[b]);
		fprintf(f, "vfagent_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n"
			   "vfagent_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n"
			   "vfagent_http_request_duration_seconds_count{route=\"%s\"} %llu\n",
			r, stats[i].count, r, stats[i].sum, r, stats[i].count);
	}
	pthread_mutex_unlock(&lock);
}

static void render_ledger(FILE *f, struct agent *a)
{
	unsigned by_state[_VFP_ALLOCATION_STATE_MAX] = { 0 };
	struct vfp_allocation **allocs = NULL;
	struct vfp_pool_count *counts = NULL;
	size_t n_allocs = 0, n_counts = 0;

	if (ledger_counts(a, &counts, &n_counts) < 0)
		n_counts = 0;
	if (ledger_list_allocations(a, NULL, false, &allocs, &n_allocs, NULL, 0) < 0)
		n_allocs = 0;
	fputs("# HELP vfagent_vfs VFs by pool and state (pool \"\" is in no pool).\n"
	      "# TYPE vfagent_vfs gauge\n", f);
	for (size_t i = 0; i < n_counts; i++)
		for (int s = 0; s < _VFP_VF_STATE_MAX; s++)
			if (counts[i].vfs[s])
				fprintf(f, "vfagent_vfs{pool=\"%s\",state=\"%s\"} %u\n", counts[i].pool,
					vfp_vf_state_to_string(s), counts[i].vfs[s]);
	fputs("# HELP vfagent_vfs_unhealthy VFs a pool's health policy keeps back, by pool.\n"
	      "# TYPE vfagent_vfs_unhealthy gauge\n", f);
	for (size_t i = 0; i < n_counts; i++)
		if (counts[i].pool[0])
			fprintf(f, "vfagent_vfs_unhealthy{pool=\"%s\"} %u\n", counts[i].pool,
				counts[i].unhealthy);
	for (size_t i = 0; i < n_allocs; i++)
		by_state[vfp_allocation_get_state(allocs[i])]++;
	fprintf(f, "# HELP vfagent_allocations Live allocations by state.\n"
		   "# TYPE vfagent_allocations gauge\n"
		   "vfagent_allocations{state=\"reserved\"} %u\n"
		   "vfagent_allocations{state=\"attached\"} %u\n"
		   "vfagent_allocations{state=\"releasing\"} %u\n",
		by_state[VFP_ALLOCATION_RESERVED], by_state[VFP_ALLOCATION_ATTACHED],
		by_state[VFP_ALLOCATION_RELEASING]);
	free(counts);
	vfp_allocation_list_free(allocs, n_allocs);
}

int api_metrics_render(struct agent *a, char **ret_text)
{
	struct agent_counters n;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	render_ledger(f, a);
	agent_get_counters(a, &n);
	fprintf(f, "# HELP vfagent_scan_duration_seconds Duration of the last inventory scan.\n"
		   "# TYPE vfagent_scan_duration_seconds gauge\n"
		   "vfagent_scan_duration_seconds %.6f\n",
		agent_scan_seconds(a));
	fprintf(f, "# HELP vfagent_vf_resets_total VF resets between tenants (and their checks).\n"
		   "# TYPE vfagent_vf_resets_total counter\n"
		   "vfagent_vf_resets_total{result=\"ok\"} %lu\n"
		   "vfagent_vf_resets_total{result=\"failed\"} %lu\n"
		   "# HELP vfagent_vf_repairs_total Repairs of quarantined VFs.\n"
		   "# TYPE vfagent_vf_repairs_total counter\n"
		   "vfagent_vf_repairs_total{result=\"ok\"} %lu\n"
		   "vfagent_vf_repairs_total{result=\"failed\"} %lu\n",
		n.resets_ok, n.resets_failed, n.repairs_ok, n.repairs_failed);
	fprintf(f, "# HELP vfagent_lease_check_errors_total Looks at an owner's namespace that "
		   "failed for another reason than its absence (EMFILE, ENOMEM, EACCES); the "
		   "allocation was kept.\n"
		   "# TYPE vfagent_lease_check_errors_total counter\n"
		   "vfagent_lease_check_errors_total %lu\n",
		n.lease_errors);
	render_http(f);
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	*ret_text = text;
	return 0;
}

int api_get_metrics(struct api_request *req)
{
	int r = api_metrics_render(req->agent, &req->text);

	if (r < 0)
		return api_fail(req, r, "rendering metrics");
	req->content_type = "text/plain; version=0.0.4; charset=utf-8";
	return 0;
}
