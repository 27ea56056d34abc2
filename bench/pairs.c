/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/pairs N CMD-A... -- CMD-B...: runs each command N times as a whole
 * process (fork, exec, wait; stdout to /dev/null), A then B, pair by pair,
 * so both see the same machine. Prints both medians and their ratio A/B.
 * Exit 1 when a run fails: a figure of a failing command means nothing.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One run of @argv; its wall time in ms, or -1 when it did not exit 0. */
static double run(char **argv)
{
	double t0 = now_ms();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return now_ms() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0, sep = 0;
	double *a, *b, ma, mb;

	for (int i = 2; i < argc && !sep; i++)
		if (strcmp(argv[i], "--") == 0)
			sep = i;
	if (n < 1 || n > 10000 || sep < 3 || sep == argc - 1) {
		fprintf(stderr, "usage: pairs N CMD-A [ARG...] -- CMD-B [ARG...]\n");
		return 2;
	}
	argv[sep] = NULL;
	a = calloc((size_t)n, sizeof(*a));
	b = calloc((size_t)n, sizeof(*b));
	if (!a || !b)
		return 1;
	for (int i = 0; i < n; i++) {
		a[i] = run(argv + 2);
		b[i] = run(argv + sep + 1);
		if (a[i] < 0 || b[i] < 0) {
			fprintf(stderr, "pairs: run %d of %s failed\n", i + 1,
				a[i] < 0 ? argv[2] : argv[sep + 1]);
			return 1;
		}
	}
	ma = median(a, n);
	mb = median(b, n);
	printf("A %.2f ms  B %.2f ms  A/B %.2f  (medians of %d pairs)\n", ma, mb, ma / mb, n);
	free(a);
	free(b);
	return 0;
}
