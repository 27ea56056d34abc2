/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/udev: how long a hotplugged VF takes to be visible in GET /v1/vfs,
 * under umockdev (run by umockdev-wrapper: it fakes /sys, the udev
 * database and uevents for this process and its children). vfagentd runs
 * on a testbed with one PF; VFs are added one by one, each announced with
 * an "add" uevent, and the API is asked (libcurl, every 0.5 ms) until it
 * lists the new VF. The floor, per event and in the same run: when a
 * libudev monitor of this process receives the same uevent. Prints the
 * median and the 99th percentile of both over BENCH_EVENTS (200) events.
 */
#include "config.h"

#include <curl/curl.h>
#include <ftw.h>
#include <libudev.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <umockdev.h>
#include <unistd.h>

#include "tests/umockdev-vf.h"

struct body {
	char *data;
	size_t len;
};

static char sock[128];
static char *pf;

static pid_t agent; /* vfagentd, once started: a failure stops it too */

static void die(const char *msg)
{
	fprintf(stderr, "bench/udev: %s\n", msg);
	if (agent > 0)
		kill(agent, SIGTERM);
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static size_t collect(char *ptr, size_t size, size_t n, void *userdata)
{
	struct body *b = userdata;
	char *d = realloc(b->data, b->len + size * n + 1);

	if (!d)
		return 0;
	memcpy(d + b->len, ptr, size * n);
	b->len += size * n;
	d[b->len] = '\0';
	b->data = d;
	return size * n;
}

/* How many VFs GET /v1/vfs lists, or -1. */
static int api_vf_count(CURL *c)
{
	struct body b = { 0 };
	int n = -1;

	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	if (curl_easy_perform(c) == CURLE_OK && b.data) {
		n = 0;
		for (const char *p = b.data; (p = strstr(p, "\"pci\":")); p++)
			n++;
	}
	free(b.data);
	return n;
}

static char *add_vf(UMockdevTestbed *tb, unsigned index)
{
	char name[32];

	snprintf(name, sizeof(name), "0000:3c:%02x.%u", index / 8, index % 8);
	return testbed_add_vf(tb, pf, name, index);
}

static pid_t start_agent(const char *state)
{
	char listen[160], cfg[160];
	pid_t pid;
	FILE *f;

	snprintf(cfg, sizeof(cfg), "%s/vfagent.json", state);
	f = fopen(cfg, "w");
	if (!f)
		die("writing the config");
	fputs("{\"pools\":[{\"name\":\"ib\",\"selector\":{\"vendors\":[\"15b3\"]}}]}", f);
	fclose(f);
	snprintf(listen, sizeof(listen), "unix:%s", sock);
	pid = fork();
	if (pid == 0) {
		char log[200];

		snprintf(log, sizeof(log), "%s/agent.log", state);
		if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0)
			_exit(126);
		execl(getenv("VFAGENTD"), "vfagentd", "--config", cfg, "--state-dir", state,
		      "--listen", listen, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(const char *what, double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	printf("  %-40s median %7.2f ms   p99 %7.2f ms   max %7.2f ms\n", what, v[n / 2],
	       v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1], v[n - 1]);
}

/* One VF more, announced; when the monitor and then the API saw it. */
static void one_event(UMockdevTestbed *tb, struct udev_monitor *mon, CURL *c, unsigned i,
		      double *floor, double *api)
{
	struct pollfd p = { .fd = udev_monitor_get_fd(mon), .events = POLLIN };
	char *vf = add_vf(tb, i), num[16];
	struct udev_device *d;
	double t0;

	snprintf(num, sizeof(num), "%u", i + 1);
	umockdev_testbed_set_attribute(tb, pf, "sriov_numvfs", num);
	/* umockdev announces a device it adds: that one is not timed */
	while (poll(&p, 1, 0) == 1 && (d = udev_monitor_receive_device(mon)))
		udev_device_unref(d);
	t0 = now_ms();
	umockdev_testbed_uevent(tb, vf, "add");
	if (poll(&p, 1, 5000) != 1 || !(d = udev_monitor_receive_device(mon)))
		die("the monitor did not see the uevent");
	*floor = now_ms() - t0;
	udev_device_unref(d);
	while (api_vf_count(c) != (int)i + 1)
		if (now_ms() - t0 > 10000)
			die("the agent did not list the new VF within 10 s");
		else
			usleep(500);
	*api = now_ms() - t0;
	g_free(vf);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	unsigned n = getenv("BENCH_EVENTS") ? (unsigned)atoi(getenv("BENCH_EVENTS")) : 200;
	UMockdevTestbed *tb = umockdev_testbed_new();
	char state[] = "/tmp/vfagent-bench-udev-XXXXXX", url[] = "http://x/v1/vfs";
	double *floor, *api;
	struct udev *udev;
	struct udev_monitor *mon;
	CURL *c;

	if (!umockdev_in_mock_environment()) {
		fprintf(stderr, "bench/udev: run it under umockdev-wrapper\n");
		return 77;
	}
	if (n < 1 || n > 240)
		die("BENCH_EVENTS must be in [1, 240]");
	floor = calloc(n, sizeof(double));
	api = calloc(n, sizeof(double));
	udev = udev_new();
	if (!floor || !api || !udev || !mkdtemp(state))
		die("out of memory, or no temporary directory");
	snprintf(sock, sizeof(sock), "%s/sock", state);
	pf = umockdev_testbed_add_device(tb, "pci", "0000:3b:00.0", NULL, "vendor", "0x15b3",
					 "device", "0x101b", "class", "0x020700", "numa_node", "0",
					 "sriov_totalvfs", "240", "sriov_numvfs", "0", NULL,
					 "PCI_SLOT_NAME", "0000:3b:00.0", NULL);
	mon = udev_monitor_new_from_netlink(udev, "udev");
	if (!pf || !mon || udev_monitor_filter_add_match_subsystem_devtype(mon, "pci", NULL) < 0 ||
	    udev_monitor_enable_receiving(mon) < 0)
		die("setting up the testbed and the monitor");
	agent = start_agent(state);
	c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	for (int i = 0; i < 100 && api_vf_count(c) != 0; i++)
		usleep(100000);
	if (api_vf_count(c) != 0)
		die("the agent does not answer");
	for (unsigned i = 0; i < n; i++)
		one_event(tb, mon, c, i, &floor[i], &api[i]);
	printf("bench/udev: %u VF hotplug uevents (umockdev), one at a time, up to %u VFs\n", n, n);
	report("a libudev monitor receives it (floor)", floor, n);
	report("the new VF in GET /v1/vfs", api, n);
	kill(agent, SIGTERM);
	waitpid(agent, NULL, 0);
	curl_easy_cleanup(c);
	udev_monitor_unref(mon);
	udev_unref(udev);
	nftw(state, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	g_object_unref(tb);
	free(floor);
	free(api);
	return 0;
}
