/* Type names and sizes (see datatype.h). Constant tables only: any thread. */
#include "server/api/datatype.h"

#include <string.h>

/* One row per TRITONSERVER_DataType, indexed by its value. The config value
 * column is spelled out although it equals the index today: the two enums
 * are separate ABIs (tritonserver.h vs model_config.proto) and the table is
 * where a divergence would be fixed. */
typedef struct {
  const char *protocol;
  const char *config_name;
  int32_t config_value;
  uint32_t byte_size;
} dtype_row_t;

static const dtype_row_t rows[] = {
    [TRITONSERVER_TYPE_INVALID] = {NULL, "TYPE_INVALID", 0, 0},
    [TRITONSERVER_TYPE_BOOL] = {"BOOL", "TYPE_BOOL", 1, 1},
    [TRITONSERVER_TYPE_UINT8] = {"UINT8", "TYPE_UINT8", 2, 1},
    [TRITONSERVER_TYPE_UINT16] = {"UINT16", "TYPE_UINT16", 3, 2},
    [TRITONSERVER_TYPE_UINT32] = {"UINT32", "TYPE_UINT32", 4, 4},
    [TRITONSERVER_TYPE_UINT64] = {"UINT64", "TYPE_UINT64", 5, 8},
    [TRITONSERVER_TYPE_INT8] = {"INT8", "TYPE_INT8", 6, 1},
    [TRITONSERVER_TYPE_INT16] = {"INT16", "TYPE_INT16", 7, 2},
    [TRITONSERVER_TYPE_INT32] = {"INT32", "TYPE_INT32", 8, 4},
    [TRITONSERVER_TYPE_INT64] = {"INT64", "TYPE_INT64", 9, 8},
    [TRITONSERVER_TYPE_FP16] = {"FP16", "TYPE_FP16", 10, 2},
    [TRITONSERVER_TYPE_FP32] = {"FP32", "TYPE_FP32", 11, 4},
    [TRITONSERVER_TYPE_FP64] = {"FP64", "TYPE_FP64", 12, 8},
    [TRITONSERVER_TYPE_BYTES] = {"BYTES", "TYPE_STRING", 13, 0},
    [TRITONSERVER_TYPE_BF16] = {"BF16", "TYPE_BF16", 14, 2},
};

#define ROW_COUNT (sizeof rows / sizeof rows[0])

static const dtype_row_t *row_of(TRITONSERVER_DataType dtype) {
  return (unsigned)dtype < ROW_COUNT ? &rows[dtype] : &rows[TRITONSERVER_TYPE_INVALID];
}

/* Exact match of a length-delimited name against a C string. */
static int name_is(const char *s, size_t len, const char *name) {
  return name != NULL && strlen(name) == len && memcmp(s, name, len) == 0;
}

const char *api_datatype_protocol_name(TRITONSERVER_DataType dtype) {
  return row_of(dtype)->protocol;
}

/* Whether the 'len' bytes at s spell the literal; len is the literal's
 * length in every use below, so the compiler compares a word or two inline
 * instead of calling memcmp. */
#define SPELLS(lit) (memcmp(s, lit, sizeof lit - 1) == 0)

/* Every request names each input's type: a switch on the length, then
 * whole-word comparisons with the names of that length (a scan of the
 * table with strlen and memcmp per row was about 300 instructions per
 * input, docs/perf.md "Issue 21: second pass"). The table stays the
 * reference: datatype_test checks this against it, row by row. */
TRITONSERVER_DataType api_datatype_from_protocol(const char *s, size_t len) {
  if (s == NULL) return TRITONSERVER_TYPE_INVALID;
  switch (len) {
    case 4:
      if (SPELLS("FP32")) return TRITONSERVER_TYPE_FP32;
      if (SPELLS("FP16")) return TRITONSERVER_TYPE_FP16;
      if (SPELLS("FP64")) return TRITONSERVER_TYPE_FP64;
      if (SPELLS("BF16")) return TRITONSERVER_TYPE_BF16;
      if (SPELLS("INT8")) return TRITONSERVER_TYPE_INT8;
      if (SPELLS("BOOL")) return TRITONSERVER_TYPE_BOOL;
      break;
    case 5:
      if (SPELLS("INT32")) return TRITONSERVER_TYPE_INT32;
      if (SPELLS("INT64")) return TRITONSERVER_TYPE_INT64;
      if (SPELLS("BYTES")) return TRITONSERVER_TYPE_BYTES;
      if (SPELLS("UINT8")) return TRITONSERVER_TYPE_UINT8;
      if (SPELLS("INT16")) return TRITONSERVER_TYPE_INT16;
      break;
    case 6:
      if (SPELLS("UINT32")) return TRITONSERVER_TYPE_UINT32;
      if (SPELLS("UINT64")) return TRITONSERVER_TYPE_UINT64;
      if (SPELLS("UINT16")) return TRITONSERVER_TYPE_UINT16;
      break;
  }
  return TRITONSERVER_TYPE_INVALID;
}

#undef SPELLS

int32_t api_datatype_config_value(TRITONSERVER_DataType dtype) {
  return row_of(dtype)->config_value;
}

TRITONSERVER_DataType api_datatype_from_config_value(int32_t value) {
  for (unsigned i = 1; i < ROW_COUNT; i++) {
    if (rows[i].config_value == value) return (TRITONSERVER_DataType)i;
  }
  return TRITONSERVER_TYPE_INVALID;
}

const char *api_datatype_config_name(TRITONSERVER_DataType dtype) {
  return row_of(dtype)->config_name;
}

TRITONSERVER_DataType api_datatype_from_config_name(const char *s, size_t len) {
  if (s == NULL) return TRITONSERVER_TYPE_INVALID;
  for (unsigned i = 1; i < ROW_COUNT; i++) {
    if (name_is(s, len, rows[i].config_name)) return (TRITONSERVER_DataType)i;
  }
  return TRITONSERVER_TYPE_INVALID;
}

uint32_t api_datatype_byte_size(TRITONSERVER_DataType dtype) {
  return row_of(dtype)->byte_size;
}

/* ---- Exported API --------------------------------------------------------- */

const char *TRITONSERVER_DataTypeString(TRITONSERVER_DataType datatype) {
  const char *name = api_datatype_protocol_name(datatype);
  return name ? name : "<invalid>";
}

TRITONSERVER_DataType TRITONSERVER_StringToDataType(const char *dtype) {
  return dtype ? api_datatype_from_protocol(dtype, strlen(dtype))
               : TRITONSERVER_TYPE_INVALID;
}

uint32_t TRITONSERVER_DataTypeByteSize(TRITONSERVER_DataType datatype) {
  return api_datatype_byte_size(datatype);
}

const char *TRITONSERVER_MemoryTypeString(TRITONSERVER_MemoryType memtype) {
  switch (memtype) {
    case TRITONSERVER_MEMORY_CPU:
      return "CPU";
    case TRITONSERVER_MEMORY_CPU_PINNED:
      return "CPU_PINNED";
    case TRITONSERVER_MEMORY_GPU:
      return "GPU";
  }
  return "<invalid>";
}

const char *TRITONSERVER_InstanceGroupKindString(TRITONSERVER_InstanceGroupKind kind) {
  switch (kind) {
    case TRITONSERVER_INSTANCEGROUPKIND_AUTO:
      return "AUTO";
    case TRITONSERVER_INSTANCEGROUPKIND_CPU:
      return "CPU";
    case TRITONSERVER_INSTANCEGROUPKIND_GPU:
      return "GPU";
    case TRITONSERVER_INSTANCEGROUPKIND_MODEL:
      return "MODEL";
  }
  return "<invalid>";
}
