/* Helpers shared by the backend tests: library paths in the runfiles tree,
 * loading with a printed error, one-call execution, reading BYTES outputs,
 * and timeouts scaled for sanitizer builds. Test thread only. */
#ifndef NEREID_TEST_BACKENDS_TESTING_H
#define NEREID_TEST_BACKENDS_TESTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "test/backends/harness/mock_server.h"

/* Tests run in the runfiles root, where each library keeps its package path. */
#define LIB_ADDSUB "backends/addsub/libtriton_addsub.so"
#define LIB_ADDSUB_STRING "backends/addsub_string/libtriton_addsub_string.so"
#define LIB_IDENTITY "backends/identity/libtriton_identity.so"
#define LIB_REPEAT "backends/repeat/libtriton_repeat.so"
#define LIB_RECORDER "test/backends/recorder/libtriton_recorder.so"
#define LIB_CPP_MINIMAL "test/backends/cpp_minimal/libtriton_cpp_minimal.so"

/** mock_load that prints why it failed; true when everything came up. */
bool bt_load(mock_loaded_t *m, const char *lib, const char *backend, const char *model,
             const char *config_json);

/** Runs Execute on `count` requests; true when it returned success. */
bool bt_execute(mock_loaded_t *m, TRITONBACKEND_Request **requests, uint32_t count);

/** Element i of a BYTES output copied into buf as a C string; false when
 * there is no element i. */
bool bt_bytes_at(const struct TRITONBACKEND_Output *out, size_t i, char *buf, size_t len);

/** Serializes C strings as a BYTES tensor into buf; returns the size. */
size_t bt_bytes_make(uint8_t *buf, const char *const *elems, size_t count);

/** Milliseconds scaled by $NEREID_TEST_SLOWDOWN (sanitizer builds run slower). */
int bt_ms(int ms);

/** Reads a whole file into a malloc'd string (NULL when missing). */
char *bt_read_file(const char *path);

#endif
