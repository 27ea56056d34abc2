/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfagentd — the per-host SR-IOV agent: opens the ledger, reconciles, and
 * serves the REST API; a udev monitor keeps the inventory current. SIGTERM
 * stops accepting, lets requests in flight finish and closes the ledger;
 * SIGHUP reloads the pools, rescans the host and sweeps owners that are gone.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/container/rdma.h"
#include "agent/log.h"
#include "api/api.h"
#include "agent/container/netns.h"
#include "agent/give-back.h"
#include "agent/vm/libvirt.h"
#include "agent/hold-watch.h"
#include "agent/link-watch.h"
#include "agent/listen.h"
#include "agent/partitions.h"
#include "agent/privileges.h"
#include "agent/release.h"
#include "agent/rooms.h"
#include "agent/sim/sim-host.h"
#include "agent/swap-hold.h"
#include "agent/udev-monitor.h"
#include "agent/vf-reset.h"
#include "agent/swap.h"
#include "agent/vm/vm.h"
#include "libvfpool/macro.h"

#define DEFAULT_LISTEN "unix:/run/vfagent/vfagent.sock"
#define DEFAULT_CNI_SOCKET "/run/vfagent/vfagent-cni.sock"
#define EXIT_CONFIG 78 /* sysexits.h's EX_CONFIG */

static bool check_config_only; /* --check-config */

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: vfagentd [OPTIONS]\n"
		"\n"
		"  -c, --config FILE        pools and policy (default %s)\n"
		"  -s, --state-dir DIR      where the ledger lives (default /var/lib/vfagent)\n"
		"  -r, --sysfs-root DIR     read sysfs under DIR (default $VFAGENT_SYSFS_ROOT or /sys)\n"
		"  -l, --listen SPEC        unix:PATH (default %s) or tcp:ADDR:PORT; repeatable\n"
		"  -t, --token-file FILE    bearer token for TCP listeners (required with tcp:)\n"
		"      --cni-socket PATH    the CNI plugin's socket (default: the first unix\n"
		"                           listener's with -cni.sock, %s); none: no CNI\n"
		"      --simulate DIR       run on a simulated host built in DIR\n"
		"      --once               reconcile, report, and exit\n"
		"      --check-config       load the config, say why it does not, and exit (1 when\n"
		"                           it does not: ExecReload runs it before SIGHUP)\n"
		"      --log-level LEVEL    err, warning, info (default) or debug: debug adds a line\n"
		"                           per read that succeeded (GET)\n"
		"  -h, --help               show this help\n"
		"  -V, --version            show the version\n",
		VFAGENT_CONFIG_FILE, DEFAULT_LISTEN, DEFAULT_CNI_SOCKET);
}

static int parse_options(struct agent_options *o, int argc, char **argv)
{
	enum { OPT_SIMULATE = 256, OPT_ONCE, OPT_LOG_LEVEL, OPT_CNI_SOCKET, OPT_CHECK_CONFIG };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 't' },
		{ "simulate", required_argument, NULL, OPT_SIMULATE },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "cni-socket", required_argument, NULL, OPT_CNI_SOCKET },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:s:r:l:t:hV", opts, NULL)) >= 0) {
		switch (c) {
		case 'c': o->config_path = optarg; break;
		case 's': o->state_dir = optarg; break;
		case 'r': o->sysfs_root = optarg; break;
		case 't': o->token_file = optarg; break;
		case OPT_SIMULATE: o->simulate_dir = optarg; break;
		case OPT_ONCE: o->once = true; break;
		case OPT_CHECK_CONFIG: check_config_only = true; break;
		case OPT_CNI_SOCKET: o->cni_socket = optarg; break;
		case OPT_LOG_LEVEL:
			if (agent_log_priority_from_string(optarg) < 0) {
				fprintf(stderr, "vfagentd: --log-level: \"%s\" is not err, warning, "
						"info or debug\n", optarg);
				return -EINVAL;
			}
			agent_set_log_priority(agent_log_priority_from_string(optarg));
			break;
		case 'l':
			if (o->n_listen == AGENT_MAX_LISTEN) {
				fprintf(stderr, "vfagentd: at most %d --listen\n", AGENT_MAX_LISTEN);
				return -EINVAL;
			}
			o->listen[o->n_listen++] = optarg;
			break;
		case 'h': usage(stdout); exit(EXIT_SUCCESS);
		case 'V': printf("vfagentd %s\n", PACKAGE_VERSION); exit(EXIT_SUCCESS);
		default: return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vfagentd: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int open_from_options(struct agent *a, int *fds, bool *is_tcp)
{
	const char *group = vfp_config_get_socket_group(a->config);
	int n = a->opt.n_listen ? a->opt.n_listen : 1;

	if (!a->opt.n_listen)
		mkdir("/run/vfagent", 0755);
	for (int i = 0; i < n; i++) {
		const char *spec = a->opt.n_listen ? a->opt.listen[i] : DEFAULT_LISTEN;
		int r = listen_parse_and_open(spec, group, &fds[i], &is_tcp[i]);

		if (r == -ESRCH)
			log_error("--listen %s: socket group \"%s\" does not exist (systemd-sysusers "
				  "creates it from %s/vfagent.conf, or: groupadd %s)",
				  spec, group, VFAGENT_SYSUSERSDIR, group);
		else if (r < 0)
			log_error("--listen %s: %s", spec,
				  r == -EINVAL ? "expected unix:PATH or tcp:ADDR:PORT" : strerror(-r));
		if (r < 0)
			return r;
		log_info("serving on %s", spec);
		if (!is_tcp[i] && !a->socket_path[0])
			snprintf(a->socket_path, sizeof(a->socket_path), "%s", spec + 5);
	}
	return n;
}

/*
 * Opens what --listen says, or takes what systemd passed; TCP without a token
 * is refused. @ret_cni_fd: the CNI socket systemd passed, or -1.
 */
static int open_listeners(struct agent *a, int *fds, bool *is_tcp, int *ret_cni_fd)
{
	int n = listen_from_systemd(fds, is_tcp, AGENT_MAX_LISTEN, ret_cni_fd);

	for (int i = 0; i < n; i++) {
		char path[sizeof(a->socket_path)];
		int r = is_tcp[i] ? 0 :
			listen_check_systemd_unix(fds[i], vfp_config_get_socket_group(a->config),
						  path, sizeof(path));

		if (r < 0)
			return r;
		if (!is_tcp[i] && !a->socket_path[0])
			snprintf(a->socket_path, sizeof(a->socket_path), "%s", path);
	}
	if (n > 0)
		log_info("serving on %d socket%s from systemd", n, n == 1 ? "" : "s");
	else if (n == 0)
		n = open_from_options(a, fds, is_tcp);
	for (int i = 0; i < n; i++)
		if (is_tcp[i] && !a->token) {
			log_error("a TCP listener needs --token-file");
			return -EINVAL;
		}
	return n;
}

/*
 * "<first unix listener's path, less its .sock>-cni.sock" in @buf, or NULL when
 * no listener is a unix socket; the listener is --listen's or systemd's.
 */
static const char *cni_socket_beside_listener(const struct agent *a, char *buf, size_t size)
{
	size_t len = strlen(a->socket_path);

	if (!len)
		return NULL;
	if (len > 5 && strcmp(a->socket_path + len - 5, ".sock") == 0)
		len -= 5;
	snprintf(buf, size, "%.*s-cni.sock", (int)len, a->socket_path);
	return buf;
}

/*
 * The CNI plugin's socket: --cni-socket, or the first unix listener's path
 * with "-cni.sock" for its ".sock" (/run/vfagent/vfagent-cni.sock by default
 * and under the packaged vfagentd.socket; agents that listen on sockets of
 * their own, from --listen or from systemd, get CNI sockets of their own);
 * none with only TCP listeners. -1 when there is none, and that is not an
 * error; -2 when it cannot be opened.
 */
static int open_cni_socket(const struct agent *a, int systemd_fd)
{
	const char *path = a->opt.cni_socket;
	char buf[256];
	int fd = -1, r;

	if (systemd_fd >= 0) { /* vfagentd-cni.socket: a plugin's connect started us */
		log_info("CNI plugin socket from systemd");
		return systemd_fd;
	}
	if (path && strcmp(path, "none") == 0)
		return -1;
	if (!path)
		path = cni_socket_beside_listener(a, buf, sizeof(buf));
	if (!path)
		return -1;
	r = listen_open_seqpacket(path, &fd);
	if (r < 0) {
		log_error("the CNI plugin's socket %s: %s (--cni-socket PATH to choose another, or none)",
			  path, strerror(-r));
		return -2;
	}
	log_info("CNI plugin socket on %s", path);
	return fd;
}

/*
 * Blocks the signals the main loop reads from a signalfd. It must run
 * before the first thread starts: threads inherit the mask, and a thread
 * that does not block SIGTERM would take it and die of it.
 */
static void block_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, mask, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Waits for signals and udev events until SIGTERM or SIGINT. */
static void main_loop(struct agent *a, int sfd, struct udev_watch *udev, int udev_fd,
		      struct link_watch *links, int links_fd, int holds_fd)
{
	struct pollfd p[5] = { { .fd = sfd, .events = POLLIN }, { .fd = udev_fd, .events = POLLIN },
			       { .fd = links_fd, .events = POLLIN },
			       { .fd = libvirt_conn_get_event_fd(a->libvirt), .events = POLLIN },
			       { .fd = holds_fd, .events = POLLIN } };

	for (;;) {
		struct signalfd_siginfo si;
		char why[AGENT_ERR_SIZE];
		int n = poll(p, 5, 60 * 1000);

		if (n == 0) { /* a minute of quiet: leases that expire with time, and a safety net */
			agent_record_deferred(a); /* ends a full disk kept out of the ledger */
			agent_give_back_deferred(a); /* and claims it kept from being given back */
			agent_sweep_dead_owners(a, SWEEP_ALL);
			agent_prune_ledger(a);
			agent_retry_repairs(a);
			agent_finish_detaches(a);
			agent_partitions_retry(a);
			continue;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			return;
		}
		if (p[1].revents & POLLIN && udev_watch_drain(udev, why, sizeof(why)) > 0)
			agent_rescan(a, why);
		if (p[2].revents & POLLIN && link_watch_drain(links) > 0) {
			agent_sweep_dead_owners(a, SWEEP_NETNS);
			agent_resync_health(a); /* a PF's link went up or down */
		}
		if (p[3].revents & POLLIN) { /* a domain or a device went, or libvirt came back */
			libvirt_conn_drain(a->libvirt);
			agent_sweep_dead_owners(a, SWEEP_DOMAINS);
			agent_finish_detaches(a);
			vm_report_foreign(a);
		}
		if (p[4].revents & POLLIN && hold_watch_drain(a->holds) > 0)
			agent_sweep_dead_owners(a, SWEEP_ALL); /* a held file went */
		if (!(p[0].revents & POLLIN) || read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			sd_notify(0, "RELOADING=1");
			agent_reload_config(a);
			agent_rescan(a, "SIGHUP");
			agent_sweep_dead_owners(a, SWEEP_ALL);
			agent_retry_repairs(a);
			agent_partitions_retry(a);
			sd_notify(0, "READY=1");
			continue;
		}
		log_info("signal %d: stopping", si.ssi_signo);
		return;
	}
}

static int serve(struct agent *a, const sigset_t *mask)
{
	int fds[AGENT_MAX_LISTEN], n, sfd, udev_fd = -1, links_fd = -1, holds_fd = -1;
	struct link_watch *links = NULL;
	bool is_tcp[AGENT_MAX_LISTEN] = { false };
	struct udev_watch *udev = NULL;
	struct api_server *server = NULL;
	struct api_cni_server *cni = NULL;
	int cni_fd, systemd_cni_fd = -1;

	sfd = signalfd(-1, mask, SFD_CLOEXEC);
	n = open_listeners(a, fds, is_tcp, &systemd_cni_fd);
	if (sfd < 0 || n <= 0)
		return EXIT_FAILURE;
	cni_fd = open_cni_socket(a, systemd_cni_fd);
	if (cni_fd == -2)
		return EXIT_FAILURE;
	if (privileges_drop() < 0)
		return EXIT_FAILURE;
	if (hold_watch_new(a, &a->holds, &holds_fd) < 0)
		log_warning("no hold watch: held files are seen only at the minute's sweep");
	if (udev_watch_new(&udev, &udev_fd) < 0)
		log_warning("no udev monitor: hotplug is seen only at the next start or SIGHUP");
	if (link_watch_new(&links, &links_fd) < 0)
		log_warning("no link events: dead namespaces are seen only at the next start");
	agent_sweep_dead_owners(a, SWEEP_ALL); /* owners that died while the agent was down */
	agent_swap_reconcile(a); /* swaps a crash left half done */
	vm_report_foreign(a);
	/* served only now: a request (GET /v1/health too) sees the start's reconcile done */
	if (api_server_start(a, fds, is_tcp, n, &server) < 0) {
		log_error("starting the HTTP server failed");
		return EXIT_FAILURE;
	}
	if (cni_fd >= 0 && api_cni_server_start(a, cni_fd, &cni) < 0) {
		log_error("starting the CNI socket's server failed");
		return EXIT_FAILURE;
	}
	sd_notify(0, "READY=1\nSTATUS=serving");
	log_info("ready");
	main_loop(a, sfd, udev, udev_fd, links, links_fd, holds_fd);
	sd_notify(0, "STOPPING=1");
	/* streams of events end first, so their connections do not hold the stop */
	api_server_stop_streams(a);
	api_cni_server_stop(cni);
	api_server_stop(server, 10);
	swap_hold_stop(); /* a swap's steering not taken out yet: the next start does */
	udev_watch_free(udev);
	link_watch_free(links);
	hold_watch_free(TAKE_PTR(a->holds));
	close(sfd);
	return EXIT_SUCCESS;
}

/*
 * A simulated host's stand-in links carry the names of real VFs' netdevs: the
 * agent makes a network namespace of its own for them (sim-netns.c), unless
 * VFAGENT_SIM_NETNS=inherit says its caller made one. Without CAP_SYS_ADMIN
 * it stays where it is: a process that cannot unshare cannot change links.
 */
static int isolate_simulated_host(void)
{
	const char *how = secure_getenv("VFAGENT_SIM_NETNS");
	const char *no_cookie = secure_getenv("VFAGENT_SIM_NO_NETNS_COOKIE");
	int r;

	if (no_cookie && strcmp(no_cookie, "1") == 0) { /* a kernel before 5.14, for tests */
		log_info("simulated host: network namespaces have no cookie (before Linux 5.14)");
		netns_cookie_disable();
	}
	if (how && strcmp(how, "inherit") == 0)
		return 0;
	if (how && *how) {
		log_error("VFAGENT_SIM_NETNS=%s: expected \"inherit\" or nothing", how);
		return -EINVAL;
	}
	r = sim_netns_isolate();
	if (r == -EPERM)
		return 0;
	if (r < 0) {
		log_error("simulated host: making its network namespace: %s", strerror(-r));
		return r;
	}
	log_info("simulated host: in a network namespace of its own; stand-in links go in "
		 "with nsenter --net=/proc/%d/ns/net", (int)getpid());
	return 0;
}

/* --check-config: the config file loads (exit 0, its pools said), or why not (exit 1). */
static int check_config(const struct agent *a)
{
	struct vfp_config *c = NULL;

	if (agent_load_config(a, &c) < 0)
		return EXIT_FAILURE;
	log_info("config %s: %zu pools", agent_config_path(a) ?: "of the simulated host",
		 vfp_config_get_pool_count(c));
	vfp_config_unref(c);
	return EXIT_SUCCESS;
}

/* Once at start: the host's RDMA devices, and a libibverbs without the drivers to list them. */
static void say_missing_verbs(struct agent *a)
{
	struct vfp_inventory *inv;
	char why[AGENT_ERR_SIZE];

	if (a->opt.simulate_dir) /* a simulated host's RDMA devices are not libibverbs' */
		return;
	inv = agent_get_inventory(a);
	if (rdma_verbs_missing(inv, why, sizeof(why)))
		log_warning("%s", why);
	vfp_inventory_unref(inv);
}

/*
 * An agent that cannot start says why where systemctl status shows it: its
 * STATUS= (kept after the exit), and exit status 78 (EX_CONFIG, "CONFIG" to
 * systemd) when the config does not load; the journal has each error.
 */
static int not_started(const struct agent *a)
{
	const char *path = agent_config_path(a);
	struct vfp_config *c = NULL;
	char *err = NULL;
	bool config = path && vfp_config_load_file(path, &c, &err) < 0; /* said already */

	vfp_config_unref(c);
	free(err);
	if (config)
		sd_notifyf(0, "STATUS=not started: %s does not load (journalctl -u vfagentd names "
			   "the field; vfagentd --check-config)", path);
	else
		sd_notify(0, "STATUS=not started: see journalctl -u vfagentd");
	sd_notify_barrier(0, 5 * 1000000ULL); /* read before the exit, while systemd knows our PID */
	return config ? EXIT_CONFIG : EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	struct agent a = { 0 };
	sigset_t mask;
	int r, ret;

	if (parse_options(&a.opt, argc, argv) < 0)
		return 2;
	if (a.opt.simulate_dir) { /* the simulated host plugs in here, at the agent's edges */
		a.opt.config_json = sim_host_config();
		a.opt.libvirt_detach_handler = sim_guest_unplug_ignored;
		a.opt.libvirt_detach_userdata = (void *)a.opt.simulate_dir;
	}
	if (check_config_only)
		return check_config(&a);
	if (a.opt.simulate_dir && isolate_simulated_host() < 0)
		return EXIT_FAILURE;
	block_signals(&mask);
	if (a.opt.token_file) {
		r = listen_read_token(a.opt.token_file, &a.token);
		if (r < 0) {
			log_error("--token-file %s: %s", a.opt.token_file,
				  r == -EINVAL ? "needs a token of at least 16 characters"
					       : strerror(-r));
			return EXIT_FAILURE;
		}
	}
	agent_add_rooms(&a); /* agent/rooms.c: the attach paths, numvfs.c's and vf-reset.c's steps */
	if (agent_init(&a) < 0) {
		agent_fini(&a);
		return not_started(&a);
	}
	say_missing_verbs(&a);
	agent_partitions_watch(&a); /* "partitions" events from the first claim on */
	ret = a.opt.once ? EXIT_SUCCESS : serve(&a, &mask);
	if (agent_give_backs_pending(&a))
		log_warning("%zu claims were not given back: they stay reserved until their owners go",
			    agent_give_backs_pending(&a));
	agent_fini(&a);
	log_info("stopped");
	return ret;
}
