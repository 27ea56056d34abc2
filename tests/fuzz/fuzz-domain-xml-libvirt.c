/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The deployment-file check against libvirt's own parser as the oracle:
 * whatever libvirt would pass through, the check must have seen. Each input
 * is a domain XML (raw, when it starts with '<'; else built from the bytes
 * by a small grammar of the ways a PCI address can be spelled: several
 * <devices>, <hostdev> and <interface type='hostdev'>, attributes missing,
 * in hex, octal, decimal, with blanks or signs, several <source>s and
 * <address>es). libvirt's test driver (test:///default, in this process)
 * defines it; the PCI addresses of its own formatted XML must each be in
 * what domxml_doc_pci_hostdevs() read from the input, or this aborts.
 */
#include "config.h"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vm/domain-xml.h"
#include "fuzz.h"

struct bytes {
	const uint8_t *p;
	size_t n;
};

static unsigned take(struct bytes *b)
{
	if (!b->n)
		return 0;
	b->n--;
	return *b->p++;
}

static void quiet(void *userdata, virErrorPtr e)
{
	(void)userdata;
	(void)e;
}

static virConnectPtr conn(void)
{
	static virConnectPtr c;

	if (!c) {
		virSetErrorFunc(NULL, quiet);
		c = virConnectOpen("test:///default");
		if (!c)
			abort();
	}
	return c;
}

/* One attribute, spelled one of the ways libvirt reads (or refuses). */
static void attr(FILE *f, struct bytes *b, const char *name, unsigned max)
{
	unsigned how = take(b) % 8, v = take(b) % (max + 1);

	switch (how) {
	case 0: break; /* absent: libvirt takes 0 */
	case 1: fprintf(f, " %s='0x%x'", name, v); break;
	case 2: fprintf(f, " %s='%u'", name, v); break;
	case 3: fprintf(f, " %s='0%o'", name, v); break;
	case 4: fprintf(f, " %s=' 0x%02X'", name, v); break;
	case 5: fprintf(f, " %s='+%u'", name, v); break;
	case 6: fprintf(f, " %s='0X%x '", name, v); break;
	default: fprintf(f, " %s='%s'", name, take(b) % 2 ? "" : "0x"); break;
	}
}

static void address(FILE *f, struct bytes *b)
{
	fputs("<address", f);
	if (take(b) % 2)
		fputs(" type='pci'", f);
	attr(f, b, "domain", take(b) % 4 ? 0 : 0xff);
	attr(f, b, "bus", 0xff);
	attr(f, b, "slot", 0x1f);
	attr(f, b, "function", 7);
	fputs("/>", f);
}

static void device(FILE *f, struct bytes *b)
{
	static const char *const open[] = {
		"<hostdev mode='subsystem' type='pci' managed='yes'>", "<hostdev type='pci'>",
		"<interface type='hostdev' managed='yes'>", "<interface type='hostdev'>",
		"<hostdev mode='subsystem' type='pci' managed='no'>",
	};
	unsigned kind = take(b) % 5, sources = 1 + take(b) % 2;
	bool nic = kind == 2 || kind == 3;

	fputs(open[kind], f);
	if (nic && take(b) % 2)
		fprintf(f, "<mac address='52:54:00:00:00:%02x'/>", take(b));
	for (unsigned s = 0; s < sources; s++) {
		unsigned addrs = take(b) % 3;

		fputs("<source>", f);
		for (unsigned a = 0; a < addrs; a++)
			address(f, b);
		fputs("</source>", f);
	}
	fputs(nic ? "</interface>" : "</hostdev>", f);
}

/* A domain from the grammar (free() it). */
static char *generate(struct bytes *b)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	unsigned blocks = 1 + take(b) % 3;

	if (!f)
		abort();
	fputs("<domain type='test'><name>fz</name><memory>1024</memory>"
	      "<os><type>hvm</type></os>", f);
	for (unsigned i = 0; i < blocks; i++) {
		unsigned n = take(b) % 4;

		fputs("<devices>", f);
		for (unsigned d = 0; d < n; d++)
			device(f, b);
		fputs("</devices>", f);
		if (take(b) % 4 == 0)
			fputs("<on_crash>destroy</on_crash>", f);
	}
	fputs("</domain>", f);
	fclose(f);
	return s;
}

static bool seen(char **ours, size_t n, const char *pci)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ours[i], pci) == 0)
			return true;
	return false;
}

/* Every PCI address libvirt's definition of @xml passes through, in @ours. */
static void check(const char *xml, char **ours, size_t n_ours)
{
	virDomainPtr dom = virDomainDefineXML(conn(), xml);
	char *out, **theirs = NULL;
	size_t n = 0;

	if (!dom)
		return; /* libvirt refuses it: nothing passes through */
	out = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
	if (!out || domxml_pci_hostdevs(out, &theirs, &n) < 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!seen(ours, n_ours, theirs[i])) {
			fprintf(stderr, "libvirt passes %s through, the check did not see it:\n%s\n"
				"libvirt's:\n%s\n", theirs[i], xml, out);
			abort();
		}
	domxml_strv_free(theirs, n);
	free(out);
	virDomainUndefine(dom);
	virDomainFree(dom);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bytes b = { data, size };
	char *xml = size && data[0] == '<' ? fuzz_string(data, size) : generate(&b);
	char err[512], **ours = NULL;
	xmlDocPtr doc = NULL;
	size_t n = 0;

	if (!xml)
		return 0;
	/* a body the agent refuses (400) passes nothing through */
	if (domxml_parse(xml, strlen(xml), &doc, err, sizeof(err)) >= 0) {
		if (domxml_doc_pci_hostdevs(doc, &ours, &n) < 0)
			abort();
		check(xml, ours, n);
		domxml_strv_free(ours, n);
		xmlFreeDoc(doc);
	}
	free(xml);
	return 0;
}
