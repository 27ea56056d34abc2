#include "config.h"
#include "check-suites.h"
Suite *suite_garbage(void) { return suite_create("garbage"); }
