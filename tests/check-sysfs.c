#include "config.h"
#include "check-suites.h"
Suite *suite_sysfs(void) { return suite_create("sysfs"); }
