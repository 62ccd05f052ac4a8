/* Datatype tables: config names, protocol names, element sizes. Any thread;
 * read-only data. */
#include "backends/common/datatype.h"

#include <string.h>

typedef struct {
  TRITONSERVER_DataType type;
  const char *config_name;
  const char *name;
  size_t size;
} datatype_row_t;

/* Indexed by TRITONSERVER_DataType, whose values are fixed by the ABI. */
static const datatype_row_t rows[] = {
    {TRITONSERVER_TYPE_INVALID, "TYPE_INVALID", "INVALID", 0},
    {TRITONSERVER_TYPE_BOOL, "TYPE_BOOL", "BOOL", 1},
    {TRITONSERVER_TYPE_UINT8, "TYPE_UINT8", "UINT8", 1},
    {TRITONSERVER_TYPE_UINT16, "TYPE_UINT16", "UINT16", 2},
    {TRITONSERVER_TYPE_UINT32, "TYPE_UINT32", "UINT32", 4},
    {TRITONSERVER_TYPE_UINT64, "TYPE_UINT64", "UINT64", 8},
    {TRITONSERVER_TYPE_INT8, "TYPE_INT8", "INT8", 1},
    {TRITONSERVER_TYPE_INT16, "TYPE_INT16", "INT16", 2},
    {TRITONSERVER_TYPE_INT32, "TYPE_INT32", "INT32", 4},
    {TRITONSERVER_TYPE_INT64, "TYPE_INT64", "INT64", 8},
    {TRITONSERVER_TYPE_FP16, "TYPE_FP16", "FP16", 2},
    {TRITONSERVER_TYPE_FP32, "TYPE_FP32", "FP32", 4},
    {TRITONSERVER_TYPE_FP64, "TYPE_FP64", "FP64", 8},
    {TRITONSERVER_TYPE_BYTES, "TYPE_STRING", "BYTES", 0},
    {TRITONSERVER_TYPE_BF16, "TYPE_BF16", "BF16", 2},
};

#define ROW_COUNT (sizeof rows / sizeof rows[0])

static const datatype_row_t *row(TRITONSERVER_DataType t) {
  return ((size_t)t < ROW_COUNT) ? &rows[t] : &rows[0];
}

TRITONSERVER_DataType bk_datatype_from_config(const char *config_name) {
  if (config_name == NULL) return TRITONSERVER_TYPE_INVALID;
  for (size_t i = 1; i < ROW_COUNT; i++) {
    if (strcmp(rows[i].config_name, config_name) == 0) return rows[i].type;
  }
  return TRITONSERVER_TYPE_INVALID;
}

const char *bk_datatype_name(TRITONSERVER_DataType datatype) {
  return row(datatype)->name;
}

size_t bk_datatype_size(TRITONSERVER_DataType datatype) { return row(datatype)->size; }
