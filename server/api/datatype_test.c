/* Tests of the type tables: TRITONSERVER_DataType in its three spellings,
 * checked against the enum generated from model_config.proto. Main thread. */
#include "server/api/datatype.h"

#include <string.h>

#include "model_config.upb.h"
#include "test/unit/unit.h"

/* The config name is the generated constant's own spelling, so a name that
 * model_config.proto does not define fails to compile. */
#define ROW(t, proto, cfg) TRITONSERVER_TYPE_##t, proto, inference_##cfg, #cfg

static const struct {
  TRITONSERVER_DataType dtype;
  const char *protocol;
  int32_t config_value;
  const char *config_name;
  uint32_t size;
} rows[] = {
    {ROW(BOOL, "BOOL", TYPE_BOOL), 1},       {ROW(UINT8, "UINT8", TYPE_UINT8), 1},
    {ROW(UINT16, "UINT16", TYPE_UINT16), 2}, {ROW(UINT32, "UINT32", TYPE_UINT32), 4},
    {ROW(UINT64, "UINT64", TYPE_UINT64), 8}, {ROW(INT8, "INT8", TYPE_INT8), 1},
    {ROW(INT16, "INT16", TYPE_INT16), 2},    {ROW(INT32, "INT32", TYPE_INT32), 4},
    {ROW(INT64, "INT64", TYPE_INT64), 8},    {ROW(FP16, "FP16", TYPE_FP16), 2},
    {ROW(FP32, "FP32", TYPE_FP32), 4},       {ROW(FP64, "FP64", TYPE_FP64), 8},
    {ROW(BYTES, "BYTES", TYPE_STRING), 0},   {ROW(BF16, "BF16", TYPE_BF16), 2},
};

#define NROWS (sizeof rows / sizeof rows[0])

static void enum_values_match_triton(void) {
  CHECK_EQ_U64(TRITONSERVER_TYPE_INVALID, 0);
  CHECK_EQ_U64(TRITONSERVER_TYPE_BOOL, 1);
  CHECK_EQ_U64(TRITONSERVER_TYPE_BYTES, 13);
  CHECK_EQ_U64(TRITONSERVER_TYPE_BF16, 14);
  CHECK_EQ_U64(inference_TYPE_INVALID, 0);
}

static void protocol_names_round_trip(void) {
  for (size_t i = 0; i < NROWS; i++) {
    CHECK_STREQ(TRITONSERVER_DataTypeString(rows[i].dtype), rows[i].protocol);
    CHECK_STREQ(api_datatype_protocol_name(rows[i].dtype), rows[i].protocol);
    CHECK_EQ_U64(TRITONSERVER_StringToDataType(rows[i].protocol), rows[i].dtype);
    CHECK_EQ_U64(api_datatype_from_protocol(rows[i].protocol, strlen(rows[i].protocol)),
                 rows[i].dtype);
  }
  CHECK_STREQ(TRITONSERVER_DataTypeString(TRITONSERVER_TYPE_INVALID), "<invalid>");
  CHECK_STREQ(TRITONSERVER_DataTypeString((TRITONSERVER_DataType)99), "<invalid>");
  CHECK(api_datatype_protocol_name(TRITONSERVER_TYPE_INVALID) == NULL);
}

static void protocol_parse_is_exact(void) {
  const char *bad[] = {"",       "INT",        "int32",  "INT33",   "INT32 ",   "FP",
                       "STRING", "TYPE_INT32", "BYTESX", "INVALID", "<invalid>"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_EQ_U64(TRITONSERVER_StringToDataType(bad[i]), TRITONSERVER_TYPE_INVALID);
  }
  CHECK_EQ_U64(TRITONSERVER_StringToDataType(NULL), TRITONSERVER_TYPE_INVALID);
  /* Length-delimited: a prefix of a longer buffer, as a upb string view. */
  const char *view = "FP16garbage";
  CHECK_EQ_U64(api_datatype_from_protocol(view, 4), TRITONSERVER_TYPE_FP16);
  CHECK_EQ_U64(api_datatype_from_protocol(view, 3), TRITONSERVER_TYPE_INVALID);
  CHECK_EQ_U64(api_datatype_from_protocol(NULL, 0), TRITONSERVER_TYPE_INVALID);
}

/* The parser compares by length and whole words: every name with one byte
 * changed, cut short or made longer must parse exactly as a scan of the
 * names above says (INVALID, or the one name it now spells). */
static TRITONSERVER_DataType scan(const char *s, size_t len) {
  for (size_t i = 0; i < NROWS; i++)
    if (strlen(rows[i].protocol) == len && memcmp(rows[i].protocol, s, len) == 0)
      return rows[i].dtype;
  return TRITONSERVER_TYPE_INVALID;
}

static void protocol_parse_near_misses(void) {
  for (size_t i = 0; i < NROWS; i++) {
    char buf[16];
    size_t len = strlen(rows[i].protocol);
    for (size_t k = 0; k < len; k++) {
      for (int c = 0; c < 256; c++) {
        memcpy(buf, rows[i].protocol, len);
        buf[k] = (char)c;
        CHECK_EQ_U64(api_datatype_from_protocol(buf, len), scan(buf, len));
      }
    }
    memcpy(buf, rows[i].protocol, len);
    buf[len] = buf[len - 1];
    CHECK_EQ_U64(api_datatype_from_protocol(buf, len + 1), scan(buf, len + 1));
    CHECK_EQ_U64(api_datatype_from_protocol(buf, len - 1), scan(buf, len - 1));
  }
}

static void config_enum_matches_proto(void) {
  for (size_t i = 0; i < NROWS; i++) {
    CHECK_EQ_U64(api_datatype_config_value(rows[i].dtype), rows[i].config_value);
    CHECK_EQ_U64(api_datatype_from_config_value(rows[i].config_value), rows[i].dtype);
    CHECK_STREQ(api_datatype_config_name(rows[i].dtype), rows[i].config_name);
    CHECK_EQ_U64(
        api_datatype_from_config_name(rows[i].config_name, strlen(rows[i].config_name)),
        rows[i].dtype);
  }
  CHECK_EQ_U64(api_datatype_config_value(TRITONSERVER_TYPE_INVALID),
               inference_TYPE_INVALID);
  CHECK_EQ_U64(api_datatype_config_value((TRITONSERVER_DataType)77), 0);
  CHECK_EQ_U64(api_datatype_from_config_value(0), TRITONSERVER_TYPE_INVALID);
  CHECK_EQ_U64(api_datatype_from_config_value(15), TRITONSERVER_TYPE_INVALID);
  CHECK_EQ_U64(api_datatype_from_config_value(-1), TRITONSERVER_TYPE_INVALID);
  CHECK_STREQ(api_datatype_config_name(TRITONSERVER_TYPE_INVALID), "TYPE_INVALID");
  CHECK_EQ_U64(api_datatype_from_config_name("TYPE_INVALID", 12),
               TRITONSERVER_TYPE_INVALID);
  CHECK_EQ_U64(api_datatype_from_config_name("TYPE_BYTES", 10),
               TRITONSERVER_TYPE_INVALID);
  CHECK_EQ_U64(api_datatype_from_config_name("INT32", 5), TRITONSERVER_TYPE_INVALID);
}

static void byte_sizes(void) {
  for (size_t i = 0; i < NROWS; i++) {
    CHECK_EQ_U64(TRITONSERVER_DataTypeByteSize(rows[i].dtype), rows[i].size);
    CHECK_EQ_U64(api_datatype_byte_size(rows[i].dtype), rows[i].size);
  }
  CHECK_EQ_U64(TRITONSERVER_DataTypeByteSize(TRITONSERVER_TYPE_INVALID), 0);
  CHECK_EQ_U64(TRITONSERVER_DataTypeByteSize((TRITONSERVER_DataType)1000), 0);
}

static void memory_and_instance_kind_names(void) {
  CHECK_STREQ(TRITONSERVER_MemoryTypeString(TRITONSERVER_MEMORY_CPU), "CPU");
  CHECK_STREQ(TRITONSERVER_MemoryTypeString(TRITONSERVER_MEMORY_CPU_PINNED),
              "CPU_PINNED");
  CHECK_STREQ(TRITONSERVER_MemoryTypeString(TRITONSERVER_MEMORY_GPU), "GPU");
  CHECK_STREQ(TRITONSERVER_MemoryTypeString((TRITONSERVER_MemoryType)3), "<invalid>");
  CHECK_STREQ(TRITONSERVER_InstanceGroupKindString(TRITONSERVER_INSTANCEGROUPKIND_AUTO),
              "AUTO");
  CHECK_STREQ(TRITONSERVER_InstanceGroupKindString(TRITONSERVER_INSTANCEGROUPKIND_CPU),
              "CPU");
  CHECK_STREQ(TRITONSERVER_InstanceGroupKindString(TRITONSERVER_INSTANCEGROUPKIND_GPU),
              "GPU");
  CHECK_STREQ(TRITONSERVER_InstanceGroupKindString(TRITONSERVER_INSTANCEGROUPKIND_MODEL),
              "MODEL");
  CHECK_STREQ(TRITONSERVER_InstanceGroupKindString((TRITONSERVER_InstanceGroupKind)4),
              "<invalid>");
}

UNIT_MAIN("api_datatype", UNIT_CASE(enum_values_match_triton),
          UNIT_CASE(protocol_names_round_trip), UNIT_CASE(protocol_parse_is_exact),
          UNIT_CASE(protocol_parse_near_misses), UNIT_CASE(config_enum_matches_proto),
          UNIT_CASE(byte_sizes), UNIT_CASE(memory_and_instance_kind_names))
