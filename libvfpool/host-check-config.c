/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host checks of the configuration against the host: it parses, its
 * socket group exists, and every pool matches at least one VF, which its
 * health policy lets it offer.
 */
#include "config.h"

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "health.h"
#include "host-checks.h"

/* Who may connect to the socket as it is: its owner, and its group when the mode lets it. */
static void check_socket_file(const struct vfp_host_check_run *run, const char *path,
			      const struct stat *st, const char *name)
{
	struct group *has = getgrgid(st->st_gid);
	char gname[64], fix[256];

	snprintf(gname, sizeof(gname), "%s", has ? has->gr_name : "(unknown)");
	if (name && (!has || strcmp(gname, name) != 0)) {
		snprintf(fix, sizeof(fix), "SocketGroup=%s in a drop-in of vfagentd.socket "
			 "(systemctl edit vfagentd.socket), or socket_group \"%s\"", name, gname);
		check_add(run, VFP_CHECK_FAIL, "socket-group", name, fix,
			  "%s is in group %s, not socket_group %s", path, gname, name);
		return;
	}
	if (st->st_gid == 0 || !(st->st_mode & 0060)) {
		check_add(run, VFP_CHECK_PASS, "socket-group", gname, NULL,
			  "%s (mode %03o): only root may use the agent's socket", path,
			  (unsigned)(st->st_mode & 0777));
		return;
	}
	check_add(run, VFP_CHECK_PASS, "socket-group", gname, NULL,
		  "%s (mode %03o, group %s, gid %u): root and members of %s may use it "
		  "(usermod -a -G %s USER)", path, (unsigned)(st->st_mode & 0777), gname,
		  (unsigned)st->st_gid, gname, gname);
}

/*
 * The socket's group: as the socket file has it when there is one (made by
 * the agent or by systemd's socket unit, checked against socket_group), else
 * as the config says it will be.
 */
static void check_socket_group(const struct vfp_host_check_run *run)
{
	const char *name = vfp_config_get_socket_group(run->config);
	const char *path = run->env->socket_path;
	char fix[160];
	struct group *g;
	struct stat st;

	if (path && stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		check_socket_file(run, path, &st, name);
		return;
	}
	if (!name) {
		check_add(run, VFP_CHECK_PASS, "socket-group", NULL, NULL,
			  "none configured: only root may use the agent's socket");
		return;
	}
	g = getgrnam(name);
	if (g) {
		check_add(run, VFP_CHECK_PASS, "socket-group", name, NULL, "group %s is gid %u",
			  name, (unsigned)g->gr_gid);
		return;
	}
	snprintf(fix, sizeof(fix), "systemd-sysusers (vfagentd's sysusers.d entry), or groupadd "
		 "--system %s", name);
	check_add(run, VFP_CHECK_FAIL, "socket-group", name, fix,
		  "no group %s: the agent cannot give its socket to it", name);
}

/* Per pool: its VFs, how many its health policy keeps back, and why the first is. */
struct pool_tally {
	size_t vfs, unhealthy;
	char first[192];
};

static void tally_vf(const struct vfp_host_check_run *run, const struct vfp_vf *vf,
		     struct pool_tally *t)
{
	const char *pool = vfp_config_pool_for_vf(run->config, vf);
	int p = pool ? vfp_config_find_pool(run->config, pool) : -1;
	char why[128];

	if (p < 0 || vfp_config_is_excluded(run->config, vf))
		return;
	t[p].vfs++;
	if (vfp_config_pool_health(run->config, pool, vf, why, sizeof(why)) && !t[p].unhealthy++)
		snprintf(t[p].first, sizeof(t[p].first), "%s: %s", vfp_vf_get_pci(vf), why);
}

static void report_pool(const struct vfp_host_check_run *run, const char *name,
			const struct pool_tally *t)
{
	if (!t->vfs)
		check_add(run, VFP_CHECK_WARN, "pool", name,
			  "compare the pool's selector with `vfctl list`, or give its PFs VFs "
			  "(vfctl numvfs PF N --persist)",
			  "its selector matches no VF of this host");
	else if (t->unhealthy)
		check_add(run, VFP_CHECK_WARN, "pool", name,
			  "fix what the reason names, or relax the pool's \"health\" policy",
			  "%zu VFs, %zu not offered by its health policy (first: %s)", t->vfs,
			  t->unhealthy, t->first);
	else
		check_add(run, VFP_CHECK_PASS, "pool", name, NULL, "%zu VFs", t->vfs);
}

static void check_pools(const struct vfp_host_check_run *run)
{
	size_t n_pools = vfp_config_get_pool_count(run->config);
	struct pool_tally *t = calloc(n_pools ? n_pools : 1, sizeof(*t));

	if (!t)
		return;
	for (size_t i = 0; i < vfp_inventory_get_pf_count(run->inv); i++) {
		const struct vfp_pf *pf = vfp_inventory_get_pf(run->inv, i);

		for (size_t j = 0; j < vfp_pf_get_vf_count(pf); j++)
			tally_vf(run, vfp_pf_get_vf(pf, j), t);
	}
	for (size_t p = 0; p < n_pools; p++)
		report_pool(run, vfp_config_get_pool_name(run->config, p), &t[p]);
	free(t);
}

void vfp_host_check_config(const struct vfp_host_check_run *run)
{
	const char *path = run->env->config_path ? run->env->config_path : "the configuration";

	if (!run->config) {
		const char *error = run->env->config_error ? run->env->config_error : "not loaded";

		if (strncmp(error, path, strlen(path)) == 0) /* it names the file already */
			path = "";
		check_add(run, VFP_CHECK_FAIL, "config", NULL,
			  strstr(error, "No such file")
				  ? "write it (vfagent.json(5); `make install` puts an example there)"
				  : "correct it (vfagent.json(5) describes every key)",
			  "%s%s%s", path, path[0] ? ": " : "", error);
		return;
	}
	check_add(run, VFP_CHECK_PASS, "config", NULL, NULL, "%s: %zu pools", path,
		  vfp_config_get_pool_count(run->config));
	check_socket_group(run);
	check_pools(run);
}
