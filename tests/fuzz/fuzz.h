/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The libFuzzer entry point every harness defines. Built with clang
 * -fsanitize=fuzzer for `make fuzz`; built with replay.c's main() for
 * `make check`, which replays the corpus and every crash input kept.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* @data as a NUL-terminated string (free() it); NULL on a NUL inside or no memory. */
char *fuzz_string(const uint8_t *data, size_t size);

/* A scratch directory under /dev/shm, removed at exit; once per process. */
const char *fuzz_tmpdir(const char *name);
