#!/bin/sh
# Stands in for the unit tests when configure found no Check library.
echo "FAIL: the unit tests need the Check library: apt-get install check, then run configure again" >&2
exit 1
