/* Control decoding: flags in their three forms, the false/true values of
 * the config (not just 0/1), sizes, correlation IDs of every type, STRING
 * IDs that are and are not integers. */
#include "backends/sequence/seq_control.h"

#include <string.h>

#include "backends/common/bytes.h"
#include "test/unit/unit.h"

static seq_flag_t int32_flag(int32_t f, int32_t t) {
  seq_flag_t flag = {.datatype = TRITONSERVER_TYPE_INT32};
  flag.values[0].i32 = f;
  flag.values[1].i32 = t;
  return flag;
}

static void int32_flags(void) {
  seq_flag_t flag = int32_flag(0, 1);
  int32_t v = 1;
  bool out = false;
  CHECK(seq_flag_decode(&flag, &v, sizeof v, &out) && out);
  v = 0;
  CHECK(seq_flag_decode(&flag, &v, sizeof v, &out) && !out);
  v = 2; /* neither value: the server never writes it */
  out = true;
  CHECK(!seq_flag_decode(&flag, &v, sizeof v, &out) && out);
  CHECK(!seq_flag_decode(&flag, &v, 8, &out)); /* two elements */
  CHECK(!seq_flag_decode(&flag, &v, 0, &out));
}

/* A config may say [ 5, -3 ]: -3 is true, 5 false, 1 nothing. */
static void configured_values(void) {
  seq_flag_t flag = int32_flag(5, -3);
  bool out = false;
  int32_t v = -3;
  CHECK(seq_flag_decode(&flag, &v, sizeof v, &out) && out);
  v = 5;
  CHECK(seq_flag_decode(&flag, &v, sizeof v, &out) && !out);
  v = 1;
  CHECK(!seq_flag_decode(&flag, &v, sizeof v, &out));
}

static void fp32_and_bool_flags(void) {
  seq_flag_t f = {.datatype = TRITONSERVER_TYPE_FP32};
  f.values[0].f32 = 0.0f;
  f.values[1].f32 = 1.0f;
  float one = 1.0f, half = 0.5f;
  bool out = false;
  CHECK(seq_flag_decode(&f, &one, sizeof one, &out) && out);
  CHECK(!seq_flag_decode(&f, &half, sizeof half, &out));
  seq_flag_t b = {.datatype = TRITONSERVER_TYPE_BOOL};
  b.values[0].b = false;
  b.values[1].b = true;
  uint8_t t = 1, z = 0;
  CHECK(seq_flag_decode(&b, &t, 1, &out) && out);
  CHECK(seq_flag_decode(&b, &z, 1, &out) && !out);
  CHECK(!seq_flag_decode(&b, &t, 4, &out));
  /* Unaligned data, as tensors inside a protobuf message often are. */
  unsigned char raw[5] = {0};
  int32_t v = 1;
  memcpy(raw + 1, &v, sizeof v);
  seq_flag_t i = int32_flag(0, 1);
  CHECK(seq_flag_decode(&i, raw + 1, 4, &out) && out);
}

static void integer_ids(void) {
  char err[128];
  uint64_t key = 0;
  uint64_t u64 = 1000;
  CHECK(seq_corrid_decode(TRITONSERVER_TYPE_UINT64, &u64, 8, &key, err, sizeof err));
  CHECK_EQ_U64(key, 1000);
  CHECK(seq_corrid_int32(key) == 1000);
  int64_t i64 = -7;
  CHECK(seq_corrid_decode(TRITONSERVER_TYPE_INT64, &i64, 8, &key, err, sizeof err));
  CHECK(seq_corrid_int32(key) == -7);
  uint32_t u32 = 0xffffffffu; /* stays positive as a key */
  CHECK(seq_corrid_decode(TRITONSERVER_TYPE_UINT32, &u32, 4, &key, err, sizeof err));
  CHECK_EQ_U64(key, 0xffffffffu);
  int32_t i32 = -1; /* sign-extended */
  CHECK(seq_corrid_decode(TRITONSERVER_TYPE_INT32, &i32, 4, &key, err, sizeof err));
  CHECK_EQ_U64(key, UINT64_MAX);
  /* The END term keeps the low 32 bits, as Triton's (int32_t)corrid. */
  u64 = 0x100000005ull;
  CHECK(seq_corrid_decode(TRITONSERVER_TYPE_UINT64, &u64, 8, &key, err, sizeof err));
  CHECK(seq_corrid_int32(key) == 5);
  CHECK(!seq_corrid_decode(TRITONSERVER_TYPE_UINT64, &u64, 4, &key, err, sizeof err));
  CHECK(!seq_corrid_decode(TRITONSERVER_TYPE_FP32, &u32, 4, &key, err, sizeof err));
  CHECK(!seq_corrid_type_ok(TRITONSERVER_TYPE_FP32));
  CHECK(seq_corrid_type_ok(TRITONSERVER_TYPE_BYTES));
}

/* Serializes one BYTES element. */
static size_t one_string(uint8_t *buf, const char *s) {
  return (size_t)(bk_bytes_put(buf, s, (uint32_t)strlen(s)) - buf);
}

static void string_ids(void) {
  uint8_t buf[64];
  char err[160] = "";
  uint64_t key = 0;
  size_t n = one_string(buf, "1002");
  CHECK(seq_corrid_decode(TRITONSERVER_TYPE_BYTES, buf, n, &key, err, sizeof err));
  CHECK(seq_corrid_int32(key) == 1002);
  n = one_string(buf, "-12");
  CHECK(seq_corrid_decode(TRITONSERVER_TYPE_BYTES, buf, n, &key, err, sizeof err));
  CHECK(seq_corrid_int32(key) == -12);
  n = one_string(buf, "0d5cf0a2-uuid");
  CHECK(!seq_corrid_decode(TRITONSERVER_TYPE_BYTES, buf, n, &key, err, sizeof err));
  CHECK(strstr(err, "0d5cf0a2-uuid") != NULL);
  n = one_string(buf, "99999999999"); /* beyond int32, like std::stoi */
  CHECK(!seq_corrid_decode(TRITONSERVER_TYPE_BYTES, buf, n, &key, err, sizeof err));
  /* Two elements, and a length that runs past the end. */
  n = one_string(buf, "1");
  n += one_string(buf + n, "2");
  CHECK(!seq_corrid_decode(TRITONSERVER_TYPE_BYTES, buf, n, &key, err, sizeof err));
  n = one_string(buf, "1234");
  CHECK(!seq_corrid_decode(TRITONSERVER_TYPE_BYTES, buf, n - 1, &key, err, sizeof err));
}

UNIT_MAIN("seq_control", UNIT_CASE(int32_flags), UNIT_CASE(configured_values),
          UNIT_CASE(fp32_and_bool_flags), UNIT_CASE(integer_ids), UNIT_CASE(string_ids))
