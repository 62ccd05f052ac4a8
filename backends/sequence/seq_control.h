/* Sequence control values as the sequence batcher delivers them: each
 * control is an ordinary one-element input of the request, a START, END or
 * READY flag written as the config's false or true value (int32, fp32 or
 * bool "false_true"), or the correlation ID (UINT64, INT64, UINT32, INT32 or
 * a STRING that holds a decimal integer). Any thread; pure functions over
 * caller-owned buffers, which may be unaligned. */
#ifndef NEREID_BACKENDS_SEQUENCE_SEQ_CONTROL_H
#define NEREID_BACKENDS_SEQUENCE_SEQ_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

/** How a START/END/READY flag is written: the datatype of its
 *  `<type>_false_true` list and the two values, [false, true]. */
typedef struct {
  TRITONSERVER_DataType datatype; /* INT32, FP32 or BOOL */
  union {
    int32_t i32;
    float f32;
    bool b;
  } values[2];
} seq_flag_t;

/** Decodes one element of a flag: *out is false for the false value and
 *  true for the true value. False when `size` is not one element of the
 *  flag's datatype or the value is neither (the server writes only those
 *  two, so anything else is a broken request). */
bool seq_flag_decode(const seq_flag_t *flag, const void *data, uint64_t size, bool *out);

/** Whether `datatype` can carry a correlation ID (UINT64, INT64, UINT32,
 *  INT32 or BYTES, which the config calls TYPE_STRING). */
bool seq_corrid_type_ok(TRITONSERVER_DataType datatype);

/** Decodes a one-element correlation ID tensor into *key, the ID as a
 *  64-bit pattern: unsigned values as they are, signed ones sign-extended,
 *  a STRING by its decimal value (ASCII blanks around and a sign allowed,
 *  int32 range, like Triton's dyna_sequence backend, so "7" and "07" are
 *  one key there too). False with a reason in err (NUL-terminated) when
 *  the bytes do not hold exactly one element or the string is no integer. */
bool seq_corrid_decode(TRITONSERVER_DataType datatype, const void *data, uint64_t size,
                       uint64_t *key, char *err, size_t err_len);

/** The ID as the accumulating models add it at END: its low 32 bits as a
 *  signed int32 (Triton's backends truncate the same way). */
static inline int32_t seq_corrid_int32(uint64_t key) { return (int32_t)(uint32_t)key; }

#endif
