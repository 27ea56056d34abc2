/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hotplug without polling, under umockdev (run by umockdev-wrapper, which
 * fakes /sys, the udev database and uevents for this process and its
 * children): vfagentd starts on a testbed with one SR-IOV PF and one VF;
 * a VF is added and announced with an "add" uevent; the API must show it,
 * and the agent's log must say the uevent made it rescan (the latency is
 * bench/udev's figure, not a test's).
 */
#include "config.h"

#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <umockdev.h>
#include <unistd.h>

#include "umockdev-vf.h"


static char sock[128];
static char *pf; /* the PF's path in the testbed; VFs are its siblings */

static pid_t agent; /* vfagentd, once started: a failure stops it too */

static void die(const char *msg)
{
	fprintf(stderr, "FAIL: %s\n", msg);
	if (agent > 0)
		kill(agent, SIGTERM);
	exit(1);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* How many VFs the agent's API lists (curl and jq, as an operator would). */
static int api_vf_count(void)
{
	char cmd[512];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd),
		 "curl -sf --unix-socket %s http://x/v1/vfs 2>/dev/null | jq '.vfs | length' 2>/dev/null",
		 sock);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

/* Whether the agent logged a rescan for the uevent of @vf (not a timer, not a poll). */
static bool rescanned_for(const char *state, const char *vf)
{
	char path[200], line[512], want[64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/agent.log", state);
	snprintf(want, sizeof(want), "rescan (udev add pci/%s)", vf);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, want) != NULL;
	if (f)
		fclose(f);
	return found;
}

static char *add_vf(UMockdevTestbed *tb, unsigned index)
{
	char name[32];

	snprintf(name, sizeof(name), "0000:3b:00.%u", index + 1);
	return testbed_add_vf(tb, pf, name, index);
}

int main(void)
{
	UMockdevTestbed *tb;
	char *vf;
	double t0;
	char state[] = "/tmp/vfagent-udev-XXXXXX";

	/* true only once a testbed exists */
	tb = umockdev_testbed_new();
	if (!umockdev_in_mock_environment()) {
		fprintf(stderr, "SKIP: run under umockdev-wrapper\n");
		return 77;
	}
	if (!mkdtemp(state))
		die("mkdtemp");
	snprintf(sock, sizeof(sock), "%s/sock", state);
	pf = umockdev_testbed_add_device(tb, "pci", "0000:3b:00.0", NULL, "vendor", "0x15b3",
					 "device", "0x101b", "class", "0x020700", "numa_node", "0",
					 "sriov_totalvfs", "8", "sriov_numvfs", "1", NULL,
					 "PCI_SLOT_NAME", "0000:3b:00.0", NULL);
	if (!pf)
		die("adding the PF to the testbed");
	vf = add_vf(tb, 0);
	g_free(vf);

	agent = fork();
	if (agent == 0) {
		char listen[160], dir[160], log[160], *cfg = "{\"pools\":[{\"name\":\"ib\",\"selector\":{\"vendors\":[\"15b3\"]}}]}";
		FILE *f;

		snprintf(dir, sizeof(dir), "%s/vfagent.json", state);
		f = fopen(dir, "w");
		fputs(cfg, f);
		fclose(f);
		snprintf(listen, sizeof(listen), "unix:%s", sock);
		snprintf(log, sizeof(log), "%s/agent.log", state);
		if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0)
			_exit(126);
		execl(getenv("VFAGENTD"), "vfagentd", "--config", dir, "--state-dir", state,
		      "--listen", listen, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && api_vf_count() < 0; i++)
		usleep(100000);
	if (api_vf_count() != 1)
		die("the agent does not list the testbed's one VF");

	vf = add_vf(tb, 1);
	umockdev_testbed_set_attribute(tb, pf, "sriov_numvfs", "2");
	t0 = now_s();
	umockdev_testbed_uevent(tb, vf, "add");
	while (api_vf_count() != 2 && now_s() - t0 < 10)
		usleep(20000);
	printf("the new VF was visible over the API after %.0f ms\n", (now_s() - t0) * 1e3);
	if (api_vf_count() != 2)
		die("the new VF was not listed 10 s after its uevent");
	if (!rescanned_for(state, "0000:3b:00.2"))
		die("no rescan for the uevent in the agent's log");
	kill(agent, SIGTERM);
	waitpid(agent, NULL, 0);
	nftw(state, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	g_free(vf);
	g_free(pf);
	g_object_unref(tb);
	return 0;
}
