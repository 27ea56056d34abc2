/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <strings.h>

#include "agent/vm/one-attrs.h"

int one_flag(const char *word, int *ret)
{
	if (!strcasecmp(word, "yes") || !strcasecmp(word, "on"))
		*ret = 1;
	else if (!strcasecmp(word, "no") || !strcasecmp(word, "off"))
		*ret = 0;
	else
		return -EINVAL;
	return 0;
}

int one_rate(long long kbytes, uint32_t *ret_mbits)
{
	if (kbytes < 0 || kbytes > ONE_RATE_KBYTES_MAX)
		return -ERANGE;
	*ret_mbits = (uint32_t)((kbytes * 8 + 999) / 1000);
	return 0;
}
