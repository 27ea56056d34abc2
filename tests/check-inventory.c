#include "config.h"
#include "check-suites.h"
Suite *suite_inventory(void) { return suite_create("inventory"); }
