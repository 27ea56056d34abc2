/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CNI plugin's socket: AF_UNIX, SOCK_SEQPACKET, one JSON request per
 * datagram and one answer (api/cni.c). A datagram is a message: no framing
 * and no HTTP to parse on either side, so the plugin links jansson and libc
 * only and starts like a static binary. Only root may ask (SO_PEERCRED): a
 * runtime runs its plugins as root, and an ADD moves netdevs between
 * namespaces. A thread per connection, as the HTTP server has: an ADD waits
 * for the kernel to move a netdev, and others must not wait behind it.
 * Connections are counted as the HTTP listener counts them (api/admission.c),
 * at accept, before a thread or a read: CNI_PER_PID a process, CNI_TOTAL in
 * all; beyond, the answer is an EBUSY error and the connection is closed at
 * once, so that idle connections cannot take the descriptors the REST API
 * and the agent's own work need.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "libvfpool/macro.h"

#define CNI_PER_PID 8 /* a plugin process asks one thing at a time */
#define CNI_TOTAL 128

struct api_cni_server {
	struct agent *agent;
	int fd, stop[2];
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	unsigned busy; /* connections being answered */
	pid_t pids[CNI_TOTAL]; /* their peers, 0 in a free slot */
	time_t logged;	       /* the last refusal logged: one line a second at most */
};

struct conn {
	struct api_cni_server *s;
	int fd;
	unsigned slot;
};

static json_t *answer(struct api_cni_server *s, int fd, const char *buf, ssize_t n)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	json_error_t jerr;
	json_t *msg, *reply;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != 0)
		return api_error_body(-EPERM, "the CNI socket answers root only");
	msg = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(msg)) {
		json_decref(msg);
		return api_error_body(-EINVAL, "the request is not a JSON object");
	}
	reply = api_cni_handle(s->agent, msg);
	json_decref(msg);
	return reply;
}

static void *serve_conn(void *arg)
{
	struct conn *c = arg;
	struct api_cni_server *s = c->s;
	struct timeval tv = { .tv_sec = 10 }; /* a plugin that connects and says nothing */
	char *buf = malloc(API_CNI_MSG_MAX), *out = NULL;
	ssize_t n;
	json_t *reply;

	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = buf ? recv(c->fd, buf, API_CNI_MSG_MAX, MSG_TRUNC) : -1;

	if (n > API_CNI_MSG_MAX)
		reply = api_error_body(-E2BIG, "the request is larger than 64 KiB");
	else if (n > 0)
		reply = answer(s, c->fd, buf, n);
	else
		reply = NULL; /* the plugin went away */
	if (reply && (out = json_dumps(reply, JSON_COMPACT)))
		(void)send(c->fd, out, strlen(out), MSG_NOSIGNAL);
	json_decref(reply);
	free(out);
	free(buf);
	close(c->fd);
	pthread_mutex_lock(&s->lock);
	s->pids[c->slot] = 0;
	free(c);
	if (--s->busy == 0)
		pthread_cond_signal(&s->idle);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* A connection refused at accept: the reason as the plugin reads errors, and closed. */
static void refuse(struct api_cni_server *s, int fd, int r, const char *why)
{
	json_t *reply = api_error_body(r, why);
	char *out = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
	time_t now = time(NULL);

	if (out)
		(void)send(fd, out, strlen(out), MSG_NOSIGNAL | MSG_DONTWAIT);
	free(out);
	json_decref(reply);
	close(fd);
	pthread_mutex_lock(&s->lock);
	if (now != s->logged)
		log_warning("CNI socket: %s", why);
	s->logged = now;
	pthread_mutex_unlock(&s->lock);
}

/*
 * Under the lock: a slot for a connection of @pid, or -1 when the process
 * has CNI_PER_PID already, or all CNI_TOTAL are taken.
 */
static int take_slot(struct api_cni_server *s, pid_t pid)
{
	unsigned same = 0;
	int free_slot = -1;

	for (unsigned i = 0; i < CNI_TOTAL; i++) {
		same += s->pids[i] == pid;
		if (!s->pids[i] && free_slot < 0)
			free_slot = (int)i;
	}
	if (same >= CNI_PER_PID || free_slot < 0)
		return -1;
	s->pids[free_slot] = pid;
	s->busy++;
	return free_slot;
}

static void spawn(struct api_cni_server *s, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	pthread_attr_t attr;
	pthread_t t;
	int slot;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != 0 ||
	    cred.pid <= 0) {
		refuse(s, fd, -EPERM, "the CNI socket answers root only");
		return;
	}
	pthread_mutex_lock(&s->lock);
	slot = take_slot(s, cred.pid);
	pthread_mutex_unlock(&s->lock);
	if (slot < 0) {
		char why[128];

		snprintf(why, sizeof(why), "refusing connections of pid %d: %d a process, %d in all",
			 (int)cred.pid, CNI_PER_PID, CNI_TOTAL);
		refuse(s, fd, -EBUSY, why);
		return;
	}
	c = malloc(sizeof(*c));
	if (!c) {
		close(fd);
		pthread_mutex_lock(&s->lock);
		s->pids[slot] = 0;
		s->busy--;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	*c = (struct conn){ .s = s, .fd = fd, .slot = (unsigned)slot };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, serve_conn, c) != 0) {
		log_error("CNI socket: no thread for a request: %s", strerror(errno));
		c->fd = -1;
		close(fd);
		pthread_mutex_lock(&s->lock);
		s->pids[slot] = 0;
		s->busy--;
		pthread_mutex_unlock(&s->lock);
		free(c);
	}
	pthread_attr_destroy(&attr);
}

static void *accept_loop(void *arg)
{
	struct api_cni_server *s = arg;
	struct pollfd p[2] = { { .fd = s->fd, .events = POLLIN },
			       { .fd = s->stop[0], .events = POLLIN } };

	for (;;) {
		int fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			spawn(s, fd);
		else if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
			poll(NULL, 0, 100); /* kept: the next accept may have room */
	}
	return NULL;
}

/**
 * api_cni_server_start() - answers the CNI plugin on listening socket @fd
 * (taken, closed by api_cni_server_stop())
 */
int api_cni_server_start(struct agent *a, int fd, struct api_cni_server **ret)
{
	struct api_cni_server *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	*s = (struct api_cni_server){ .agent = a, .fd = fd };
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	if (pipe2(s->stop, O_CLOEXEC) < 0 ||
	    pthread_create(&s->thread, NULL, accept_loop, s) != 0) {
		int r = negative_errno();

		close(s->stop[0]);
		close(s->stop[1]);
		free(s);
		return r < 0 ? r : -EAGAIN;
	}
	*ret = s;
	return 0;
}

/* Stops accepting and waits for the requests being answered. */
void api_cni_server_stop(struct api_cni_server *s)
{
	if (!s)
		return;
	(void)write(s->stop[1], "x", 1);
	pthread_join(s->thread, NULL);
	pthread_mutex_lock(&s->lock);
	while (s->busy > 0)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
	close(s->fd);
	close(s->stop[0]);
	close(s->stop[1]);
	free(s);
}
