/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The deployment-XML rewrite's parser: any bytes give a domain or an error
 * with line and column; a domain's SR-IOV NICs are found, a UUID ensured,
 * a VF put in place of each NIC and the result formatted; the hostdev
 * addresses of any text are read.
 */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vm/domain-xml.h"
#include "agent/vm/hostdev-xml.h"
#include "fuzz.h"

static struct vfp_config *config(void)
{
	static struct vfp_config *c;
	json_t *j;

	if (c)
		return c;
	j = json_loads("{\"pools\": [{\"name\": \"ib\", \"selector\": {\"vendors\": [\"15b3\"]}}],"
		       " \"networks\": [{\"bridge\": \"sriov_ib0\", \"pool\": \"ib\"},"
		       " {\"network\": \"fast\", \"pool\": \"ib\"}]}", 0, NULL);
	if (vfp_config_load_json(j, &c, NULL) < 0)
		abort();
	json_decref(j);
	return c;
}

static void rewrite(xmlDocPtr doc)
{
	static const unsigned char prefix[2] = { 0x02, 0x1b };
	struct domxml_nic *nics = NULL;
	char err[512], uuid[37], *out;
	size_t n = 0;

	if (domxml_sriov_nics(doc, config(), &nics, &n, err, sizeof(err)) < 0) {
		if (!strstr(err, "devices/interface["))
			abort(); /* an error that does not name the NIC */
		return;
	}
	domxml_ensure_uuid(doc, uuid);
	free(domxml_get_name(doc));
	for (size_t i = 0; i < n; i++) {
		struct hostdev_spec s = { .pci = "0000:3b:00.1", .ethernet = i % 2, .managed = true,
					  .has_mac = nics[i].has_mac, .vlan = nics[i].vlan };

		memcpy(s.mac, nics[i].mac, sizeof(s.mac));
		domxml_replace_nic(&nics[i], hostdev_xml_node(&s));
		if (nics[i].has_ip)
			domxml_append_device(doc, hostdev_xml_dummy_nic(prefix, nics[i].ip));
	}
	out = domxml_format(doc);
	free(out);
	free(nics);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "", *s = fuzz_string(data, size);
	xmlDocPtr doc = NULL;

	if (domxml_parse((const char *)data, size, &doc, err, sizeof(err)) >= 0) {
		rewrite(doc);
		xmlFreeDoc(doc);
	} else if (strncmp(err, "body: ", 6) != 0) {
		abort(); /* every refusal names the body */
	}
	if (s)
		domxml_has_pci_hostdev(s, "0000:3b:00.1");
	free(s);
	return 0;
}
