/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PCI addresses: whatever comes in, a verdict; an accepted one has the canonical shape. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "libvfpool/libvfpool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);

	if (s && vfp_pci_addr_is_valid(s) && (strlen(s) != 12 || s[4] != ':' || s[7] != ':' ||
					      s[10] != '.'))
		abort(); /* accepted something that is not DDDD:BB:SS.F */
	free(s);
	return 0;
}
