/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * VPD as the PCI spec lays it out and the kernel's vpd file gives it: an
 * Identifier String (large resource tag 0x82), then a VPD-R list (0x90) of
 * keywords (two ASCII letters, a length byte, the value), perhaps VPD-W
 * (0x91), then the End tag (0x78). rdma-core's rdma_topo reads "SN" (the
 * board's serial, shared by the NICs of one board) and "V3" (a UUID per
 * device, shared by a ConnectX-8's PFs and its Data Direct DMA function)
 * from it. What does not follow the layout is refused: an unprogrammed VPD
 * reads as 0xff or 0x00 bytes, and a value is only taken when printable.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "vpd.h"

#define VPD_LARGE 0x80
#define VPD_ID_STRING 0x82
#define VPD_READ_ONLY 0x90
#define VPD_END 0x78
#define MAX_ITEMS 16

/* Keyword @kw's value from @val into @out, when it is one of those kept. */
static int keep(const unsigned char *kw, const unsigned char *val, size_t n,
		struct vfp_vpd_ids *out)
{
	char *dst = memcmp(kw, "SN", 2) == 0 ? out->sn : memcmp(kw, "V3", 2) == 0 ? out->v3 : NULL;

	if (!dst)
		return 0;
	while (n > 0 && (val[n - 1] == ' ' || val[n - 1] == '\0'))
		n--; /* padding */
	if (n == 0 || n > VFP_VPD_VALUE_MAX)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++)
		if (val[i] < 0x21 || val[i] > 0x7e)
			return -EBADMSG;
	memcpy(dst, val, n);
	dst[n] = '\0';
	return 0;
}

static int read_only_keywords(const unsigned char *p, size_t len, struct vfp_vpd_ids *out)
{
	for (size_t pos = 0; pos + 3 <= len;) {
		size_t n = p[pos + 2];
		int r;

		if (pos + 3 + n > len)
			return -EBADMSG;
		r = keep(p + pos, p + pos + 3, n, out);
		if (r < 0)
			return r;
		pos += 3 + n;
	}
	return 0;
}

static int parse_items(const unsigned char *vpd, size_t len, struct vfp_vpd_ids *ret)
{
	size_t pos = 0;

	if (len < 3 || vpd[0] != VPD_ID_STRING)
		return -EBADMSG;
	for (unsigned items = 0; pos < len && vpd[pos] != VPD_END; items++) {
		unsigned tag = vpd[pos];
		size_t head = tag & VPD_LARGE ? 3 : 1, n;

		if (items == MAX_ITEMS || pos + head > len)
			return -EBADMSG;
		n = tag & VPD_LARGE ? (size_t)(vpd[pos + 1] | vpd[pos + 2] << 8) : tag & 0x07u;
		if (pos + head + n > len)
			return -EBADMSG;
		if (tag == VPD_READ_ONLY && read_only_keywords(vpd + pos + head, n, ret) < 0)
			return -EBADMSG;
		pos += head + n;
	}
	return 0;
}

/**
 * vfp_vpd_parse() - "SN" and "V3" from the @len bytes of VPD at @vpd
 *
 * A keyword not present is left empty. -EBADMSG, with both empty, when the
 * bytes are not VPD (no Identifier String first, an item running past the
 * end, a value not printable or longer than VFP_VPD_VALUE_MAX).
 */
int vfp_vpd_parse(const unsigned char *vpd, size_t len, struct vfp_vpd_ids *ret)
{
	int r;

	memset(ret, 0, sizeof(*ret));
	r = parse_items(vpd, len, ret);
	if (r < 0)
		memset(ret, 0, sizeof(*ret));
	return r;
}
