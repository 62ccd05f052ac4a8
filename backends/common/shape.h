/* Tensor shapes: element counts, matching against config dims (-1 is a
 * wildcard) and printing for error messages. Any thread; pure functions. */
#ifndef NEREID_BACKENDS_COMMON_SHAPE_H
#define NEREID_BACKENDS_COMMON_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Product of the dims (1 for a scalar, dims_count 0). False when a dim is
 * negative or the product overflows uint64. */
bool bk_shape_elements(const int64_t *shape, uint32_t dims_count, uint64_t *count);

/** True when `shape` has `dims_count` dims equal to `want`, where a -1 in
 * `want` matches any non-negative dim. */
bool bk_shape_matches(const int64_t *want, uint32_t want_count, const int64_t *shape,
                      uint32_t dims_count);

/** Whether two shapes are the same (NULL is fine with a count of 0). */
bool bk_shape_equal(const int64_t *a, uint32_t a_count, const int64_t *b,
                    uint32_t b_count);

/** Prints "[2,16]" into buf (always terminated, truncated with "..." when it
 * does not fit) and returns buf, so it can be used inside a printf call. */
const char *bk_shape_format(const int64_t *shape, uint32_t dims_count, char *buf,
                            size_t len);

#endif
