#!/bin/sh
# Runs one .bats file for automake's test driver; 77 (skipped) without bats.
command -v bats >/dev/null || { echo "SKIP: bats is not installed"; exit 77; }
exec bats "$1"
