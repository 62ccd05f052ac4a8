/* The libFuzzer entry point that each fuzz target defines; fuzz_driver.c
 * calls it on files when the target is built without libFuzzer.
 * Single-threaded. */
#ifndef NEREID_TEST_FUZZ_FUZZ_H
#define NEREID_TEST_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/** Runs one input; returns 0. Crashes (abort) when a property fails. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
