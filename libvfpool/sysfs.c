/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The only file of vfagent that touches sysfs paths directly. Every helper
 * takes a path relative to the context's sysfs root, so the whole library
 * runs unchanged against /sys or a fake tree in a temporary directory.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysfs.h"

#define SYSFS_DEFAULT_ROOT "/sys"

const char *vfp_sysfs_default_root(void)
{
	return SYSFS_DEFAULT_ROOT;
}

/* @n bytes of @s at @off in @buf; the new length, or -ENAMETOOLONG (so too when @off is). */
static int append_str(char *buf, size_t size, int off, const char *s, size_t n)
{
	if (off < 0 || (size_t)off + n >= size)
		return -ENAMETOOLONG;
	memcpy(buf + off, s, n);
	buf[off + n] = '\0';
	return off + (int)n;
}

/*
 * @fmt (NULL: nothing) after the @off bytes @buf holds; the length, or
 * -ENAMETOOLONG. A full scan builds tens of thousands of paths, most of them
 * "%s" or a plain name: those are copied, not formatted.
 */
_printf_(4, 0) static int append_v(char *buf, size_t size, int off, const char *fmt, va_list ap)
{
	const char *s;
	int m;

	if (off < 0 || (size_t)off >= size)
		return -ENAMETOOLONG;
	if (!fmt)
		return off;
	if (strcmp(fmt, "%s") == 0) {
		s = va_arg(ap, const char *);
		return append_str(buf, size, off, s, strlen(s));
	}
	if (!strchr(fmt, '%'))
		return append_str(buf, size, off, fmt, strlen(fmt));
	m = vsnprintf(buf + off, size - off, fmt, ap);
	return m < 0 || (size_t)m >= size - off ? -ENAMETOOLONG : off + m;
}

int vfp_sysfs_path(const struct vfp_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = append_str(buf, size, 0, ctx->sysfs_root, strlen(ctx->sysfs_root));
	r = append_str(buf, size, r, "/", 1);
	r = append_v(buf, size, r, fmt, ap);
	va_end(ap);
	return r;
}

/**
 * vfp_sysfs_dev() - the path of PCI device @pci's sysfs entry, relative to
 * the root, with @fmt (may be NULL) below it: "bus/pci/devices/<pci>/<fmt>"
 *
 * -ENAMETOOLONG when it does not fit @size.
 */
int vfp_sysfs_dev(char *buf, size_t size, const char *pci, const char *fmt, ...)
{
	static const char dir[] = "bus/pci/devices/";
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = append_str(buf, size, 0, dir, sizeof(dir) - 1);
	r = append_str(buf, size, r, pci, strlen(pci));
	if (fmt)
		r = append_str(buf, size, r, "/", 1);
	r = append_v(buf, size, r, fmt, ap);
	va_end(ap);
	return r;
}

/* "class/<cls>/<name>/<attr>" relative to the root; @attr may be NULL. */
int vfp_sysfs_class(char *buf, size_t size, const char *cls, const char *name, const char *attr)
{
	int n = snprintf(buf, size, "class/%s/%s%s%s", cls, name, attr ? "/" : "",
			 attr ? attr : "");

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}

static void strip_newline(char *s, size_t *len)
{
	while (*len > 0 && (s[*len - 1] == '\n' || s[*len - 1] == '\r'))
		s[--*len] = '\0';
}

/**
 * vfp_sysfs_read() - read a small attribute file
 *
 * Reads at most @size - 1 bytes; a file that does not fit is -E2BIG rather
 * than a silently cut value. An empty file is not an error: @buf is "".
 */
int vfp_sysfs_read(const struct vfp_ctx *ctx, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	size_t len;
	int r;

	r = vfp_sysfs_path(ctx, path, sizeof(path), "%s", rel);
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	n = read(fd, buf, size - 1);
	if (n < 0)
		return negative_errno();
	if ((size_t)n == size - 1) {
		char extra;

		if (read(fd, &extra, 1) > 0)
			return -E2BIG;
	}
	buf[n] = '\0';
	len = (size_t)n;
	strip_newline(buf, &len);
	return (int)len;
}

int vfp_sysfs_readlink(const struct vfp_ctx *ctx, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int r;

	r = vfp_sysfs_path(ctx, path, sizeof(path), "%s", rel);
	if (r < 0)
		return r;
	n = readlink(path, buf, size - 1);
	if (n < 0)
		return negative_errno();
	if ((size_t)n == size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return (int)n;
}

/* The last component of a link's target: "mlx5_core" for a driver link. */
int vfp_sysfs_link_basename(const struct vfp_ctx *ctx, const char *rel, char *buf, size_t size)
{
	char target[PATH_MAX];
	const char *base;
	size_t len;
	int r;

	r = vfp_sysfs_readlink(ctx, rel, target, sizeof(target));
	if (r < 0)
		return r;
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	len = strlen(base);
	if (len == 0)
		return -EINVAL;
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, base, len + 1);
	return (int)len;
}

/* 1 when the path exists (following links), 0 when it does not, -errno otherwise. */
int vfp_sysfs_exists(const struct vfp_ctx *ctx, const char *rel)
{
	char path[PATH_MAX];
	int r;

	r = vfp_sysfs_path(ctx, path, sizeof(path), "%s", rel);
	if (r < 0)
		return r;
	if (access(path, F_OK) == 0)
		return 1;
	return errno == ENOENT || errno == ENOTDIR ? 0 : negative_errno();
}

/*
 * Writes @value in one write(2), as the kernel expects for sysfs stores.
 * O_TRUNC as a shell's '>' does: sysfs ignores it, and a fake sysfs of
 * regular files then holds the value written, not the tail of an older one.
 */
int vfp_sysfs_write(const struct vfp_ctx *ctx, const char *rel, const char *value)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	size_t len = strlen(value);
	ssize_t n;
	int r;

	if (ctx->write_fn && ctx->write_fn(ctx->write_data, ctx->sysfs_root, rel, value, &r))
		return r;
	r = vfp_sysfs_path(ctx, path, sizeof(path), "%s", rel);
	if (r < 0)
		return r;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	n = write(fd, value, len);
	if (n < 0)
		return negative_errno();
	if ((size_t)n != len)
		return -EIO;
	if (close(TAKE_FD(fd)) < 0)
		return negative_errno();
	return 0;
}

void vfp_strv_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of a directory except "." and "..", sorted; an empty dir gives 0 names. */
int vfp_sysfs_list_dir(const struct vfp_ctx *ctx, const char *rel, char ***ret_names,
		       size_t *ret_count)
{
	char path[PATH_MAX];
	_cleanup_closedir_ DIR *d = NULL;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int r;

	r = vfp_sysfs_path(ctx, path, sizeof(path), "%s", rel);
	if (r < 0)
		return r;
	d = opendir(path);
	if (!d)
		return negative_errno();
	while ((errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			char **nv = realloc(names, ncap * sizeof(*nv));

			if (!nv)
				goto oom;
			names = nv;
			cap = ncap;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto oom;
		n++;
	}
	if (errno) {
		r = negative_errno();
		vfp_strv_free(names, n);
		return r;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	*ret_names = names;
	*ret_count = n;
	return 0;
oom:
	vfp_strv_free(names, n);
	return -ENOMEM;
}

/**
 * vfp_parse_int() - parse a whole string as an integer in [@min, @max]
 *
 * Leading or trailing junk, an empty string and overflow are -EINVAL or
 * -ERANGE; base 16 accepts an optional "0x" as sysfs prints it.
 */
int vfp_parse_int(const char *s, int base, int min, int max, int *ret)
{
	char *end;
	long v;

	if (!s || !*s || *s == ' ' || *s == '\t' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == s || *end != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = (int)v;
	return 0;
}

/**
 * vfp_iommu_group_devices() - the PCI devices in IOMMU group @group
 * ("kernel/iommu_groups/<group>/devices"), sorted
 * @ret_list: free with vfp_iommu_group_devices_free()
 */
VFP_EXPORT int vfp_iommu_group_devices(const struct vfp_ctx *ctx, int group, char ***ret_list,
				       size_t *ret_n)
{
	char rel[64];

	if (group < 0)
		return -EINVAL;
	snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices", group);
	return vfp_sysfs_list_dir(ctx, rel, ret_list, ret_n);
}

VFP_EXPORT void vfp_iommu_group_devices_free(char **list, size_t n)
{
	vfp_strv_free(list, n);
}

/*
 * "devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0" for @pci: where its
 * bus/pci/devices link leads, relative to the root, resolved by text (the
 * kernel's links are relative and point straight into devices/), so one
 * readlink serves where realpath(3) would lstat every component. -EINVAL
 * when the entry is no such link (a tree that flattened it).
 */
int vfp_sysfs_pci_device_path(const struct vfp_ctx *ctx, const char *pci, char *buf, size_t size)
{
	char rel[64], target[PATH_MAX], out[PATH_MAX] = "bus/pci/devices";
	size_t len = strlen(out);
	char *save = NULL;
	int r;

	r = vfp_sysfs_dev(rel, sizeof(rel), pci, NULL);
	if (r >= 0)
		r = vfp_sysfs_readlink(ctx, rel, target, sizeof(target));
	if (r < 0)
		return r == -ENOENT ? r : -EINVAL;
	if (target[0] == '/')
		return -EINVAL;
	for (char *c = strtok_r(target, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *slash = memrchr(out, '/', len);

			if (len == 0)
				return -EINVAL; /* above the root */
			len = slash ? (size_t)(slash - out) : 0;
			out[len] = '\0';
			continue;
		}
		r = append_str(out, sizeof(out), (int)len, len ? "/" : "", len ? 1 : 0);
		r = append_str(out, sizeof(out), r, c, strlen(c));
		if (r < 0)
			return r;
		len = (size_t)r;
	}
	if (strncmp(out, "devices/", 8) != 0)
		return -EINVAL;
	return append_str(buf, size, 0, out, len);
}

/*
 * Up to @size bytes of a binary attribute (a device's config space); the
 * count read. A short file is not an error: without CAP_SYS_ADMIN the
 * kernel gives only the first 64 bytes of config.
 */
int vfp_sysfs_read_bin(const struct vfp_ctx *ctx, const char *rel, void *buf, size_t size)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	size_t got = 0;
	int r;

	r = vfp_sysfs_path(ctx, path, sizeof(path), "%s", rel);
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	while (got < size) {
		ssize_t n = read(fd, (char *)buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (int)got;
}

/**
 * vfp_sysfs_read_vpd() - the "SN" and "V3" keywords of PCI device @pci's VPD
 *
 * Reads at most 4 KiB of bus/pci/devices/<pci>/vpd (the read-only keywords
 * come first; the kernel reads VPD a dword at a time). -ENOENT when the
 * device has none; -EBADMSG, logged naming the file, when it is no VPD.
 */
int vfp_sysfs_read_vpd(struct vfp_ctx *ctx, const char *pci, struct vfp_vpd_ids *ret)
{
	unsigned char buf[4096];
	char rel[96];
	int n, r;

	memset(ret, 0, sizeof(*ret));
	r = vfp_sysfs_dev(rel, sizeof(rel), pci, "vpd");
	n = r < 0 ? r : vfp_sysfs_read_bin(ctx, rel, buf, sizeof(buf));
	if (n < 0)
		return n;
	r = vfp_vpd_parse(buf, (size_t)n, ret);
	if (r < 0)
		vfp_warn(ctx, "%s/%s: not VPD (no Identifier String, an item past the end, or a "
			      "keyword not printable)", ctx->sysfs_root, rel);
	return r;
}
