/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A claim's or a network update's "opennebula": the NIC's attributes as oned
 * keeps them, {"SPOOFCHK": "YES", "TRUST": "on", "OUTBOUND_AVG_BW": 12500}
 * (kilobytes a second), each optional, read into the VF's spoofchk, trust and
 * max_tx_rate by agent/vm/one-attrs.h, the one place that knows OpenNebula's
 * words and units: the hooks hand them over as they are. A setting given both
 * ways ("trust" and "opennebula.TRUST") is refused.
 */
#include "config.h"

#include <errno.h>

#include "agent/vm/one-attrs.h"
#include "api/one-attrs.h"

static int flag(struct api_request *req, json_t *one, const char *attr, const char *key, int *ret)
{
	const char *word = NULL;
	int r = api_get_string(req, one, attr, false, &word);

	if (r < 0 || !word)
		return r;
	if (*ret != VFP_UNSET)
		return api_fail(req, -EINVAL, "%s, opennebula.%s: give one of the two", key, attr);
	if (one_flag(word, ret) < 0)
		return api_fail(req, -EINVAL, "opennebula.%s: \"%.16s\" is not YES, NO, ON or OFF",
				attr, word);
	return 0;
}

static int rate(struct api_request *req, json_t *one, long long *ret)
{
	long long kbytes = -1;
	uint32_t mbits;
	int r = api_get_int(req, one, "OUTBOUND_AVG_BW", 0, ONE_RATE_KBYTES_MAX, false, &kbytes);

	if (r < 0 || kbytes < 0)
		return r;
	if (*ret != VFP_UNSET)
		return api_fail(req, -EINVAL, "max_tx_rate, opennebula.OUTBOUND_AVG_BW: give one of "
					      "the two");
	r = one_rate(kbytes, &mbits);
	*ret = mbits;
	return r;
}

/* After the typed knobs: "opennebula", if given, into @s. */
int api_parse_one_attrs(struct api_request *req, json_t *body, struct vfp_settings *s)
{
	static const char *const attrs[] = { "SPOOFCHK", "TRUST", "OUTBOUND_AVG_BW", NULL };
	json_t *one = json_object_get(body, "opennebula");
	int r;

	if (!one)
		return 0;
	if (!json_is_object(one))
		return api_fail(req, -EINVAL, "opennebula: must be an object of the NIC's "
					      "attributes (SPOOFCHK, TRUST, OUTBOUND_AVG_BW)");
	req->field_prefix = "opennebula.";
	r = api_check_keys(req, one, attrs);
	if (r >= 0)
		r = flag(req, one, "SPOOFCHK", "spoofchk", &s->spoofchk);
	if (r >= 0)
		r = flag(req, one, "TRUST", "trust", &s->trust);
	if (r >= 0)
		r = rate(req, one, &s->max_tx_rate);
	req->field_prefix = NULL;
	return r;
}
