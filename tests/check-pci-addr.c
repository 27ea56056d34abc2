#include "config.h"
#include "check-suites.h"
Suite *suite_pci_addr(void) { return suite_create("pci_addr"); }
