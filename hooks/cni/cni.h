/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CNI plugin "vfagent": what its files share. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The CNI spec's error codes (SPEC.md, "Error"); 100 and up are ours. */
enum {
	CNI_ERR_VERSION = 1,
	CNI_ERR_UNSUPPORTED_FIELD = 2,
	CNI_ERR_UNKNOWN_CONTAINER = 3,
	CNI_ERR_ENV = 4,
	CNI_ERR_IO = 5,
	CNI_ERR_DECODE = 6,
	CNI_ERR_CONFIG = 7,
	CNI_ERR_TRY_AGAIN = 11,
	CNI_ERR_NOT_AVAILABLE = 50,
	CNI_ERR_LIMITED = 51,
	CNI_ERR_AGENT = 100, /* the agent refused or failed; the message is its own */
	CNI_ERR_NO_VF = 101, /* no free VF in the pool, or the VF asked for is taken */
	CNI_ERR_NETNS = 102, /* the namespace is not as the ADD left it */
	CNI_ERR_ROUTE = 103, /* a route of the result could not be set (the message names it) */
	CNI_ERR_EXISTS = 104, /* the attachment exists with other settings: DEL it first */
};

#define CNI_DEFAULT_SOCKET "/run/vfagent/vfagent-cni.sock"
#define CNI_KEY_MAX 128
#define CNI_NAME_PART 54 /* the longest network name kept whole in a key */

/* ib-sriov-cni's switches, read from the config (cni-compat.c). */
struct cni_compat {
	bool rdma_isolation; /* rdmaIsolation */
	bool ib_kubernetes;  /* ibKubernetesEnabled: the runtime must give a GUID */
	bool userspace;	     /* vfioPciMode: the VF stays on vfio-pci, no netdev moves */
};

/* One invocation: the environment and the config, as the runtime gave them. */
struct cni_call {
	const char *command, *container_id, *netns, *ifname, *path, *args;
	char *stdin_data; /* the config as read, handed to IPAM as it is */
	size_t stdin_len;
	json_t *conf;
	const char *version; /* the config's cniVersion */
	const char *name;    /* the network's */
	const char *socket;  /* the agent's CNI socket */
	json_t *ipam;	     /* the "ipam" object, or NULL */
	char key[CNI_KEY_MAX + 1];
	struct cni_compat compat;
	bool userspace; /* the agent's answer: the VF went in userspace mode, no netdev */
};

/* An error for the runtime: code, message, details. */
struct cni_error {
	int code;
	char msg[256];
	char details[512];
};

int cni_fail(struct cni_error *e, int code, const char *msg, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* cni-conf.c */
int cni_version_cmp(const char *a, const char *b);
bool cni_version_supported(const char *v);
int cni_call_load(struct cni_call *call, struct cni_error *e);
unsigned long long cni_tag(const char *s);
void cni_key_prefix(const char *name, char buf[static CNI_KEY_MAX + 1]);
void cni_attachment_key(const char *name, const char *container_id, const char *ifname,
			char buf[static CNI_KEY_MAX + 1]);
int cni_call_need_attachment(struct cni_call *call, bool need_netns, struct cni_error *e);
int cni_agent_config(struct cni_call *call, json_t **ret, const char **ret_pci,
		     struct cni_error *e);

/* cni-route.c */
int cni_netns_routes(const char *netns, const char *ifname, json_t *ipam, struct cni_error *e);
int cni_netns_check_routes(const char *netns, const char *ifname, json_t *routes, json_t *ips,
			   struct cni_error *e);

/* cni-cache.c */
int cni_cache_read(const struct cni_call *call, json_t **ret, struct cni_error *e);
void cni_cache_write(const struct cni_call *call, json_t *result);
void cni_cache_forget(const struct cni_call *call);
void cni_cache_gc(const struct cni_call *call, const char *prefix, json_t *keep);

/* cni-compat.c */
int cni_compat_config(json_t *out, struct cni_compat *c, struct cni_error *e);

/* cni-wishes.c */
int cni_wishes(const struct cni_call *call, json_t *out, struct cni_error *e);
int cni_wished_ips(const struct cni_call *call, json_t **ret, struct cni_error *e);

/* cni-log.c: sriov-cni's levels */
enum { CNI_LOG_PANIC, CNI_LOG_ERROR, CNI_LOG_WARNING, CNI_LOG_INFO, CNI_LOG_DEBUG };
int cni_log_setup(const struct cni_call *call, struct cni_error *e);
void cni_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cni-agent.c */
int cni_agent_ask(const char *socket, json_t *req, json_t **ret, struct cni_error *e);

/* cni-ipam.c */
int cni_ipam_exec(const struct cni_call *call, const char *command, json_t **ret,
		  struct cni_error *e);

/* cni-result.c */
json_t *cni_result(const struct cni_call *call, json_t *ipam, const char *mac, unsigned mtu,
		   const char *pci);
int cni_ipam_addresses(json_t *ipam, json_t *addresses, struct cni_error *e);
void cni_print(json_t *j);
void cni_print_error(const char *version, const struct cni_error *e);

/* cni-netns.c */
int cni_netns_enter(const char *netns, int *ret_home, struct cni_error *e);
void cni_netns_leave(int home);
int cni_netns_link(const char *netns, const char *ifname, char mac[static 18], unsigned *ret_mtu,
		   struct cni_error *e);
int cni_netns_check(const char *netns, const char *ifname, json_t *addresses,
		    struct cni_error *e);
