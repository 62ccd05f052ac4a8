/* The HTTP inference codec (infer_json.h, generate_json.h) against models
 * made from real configs (model_bare.h): every datatype both ways, flat and
 * nested data, binary data in both directions, the parameters, every
 * refusal with its text, classification, shared memory, generate and its
 * events, the HTTP statuses and error bodies. One thread. */
#include "server/http/infer_json.h"
#include "server/views/http_views.h"

#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/config/model_config.h"
#include "server/http/generate_json.h"
#include "server/model/model_bare.h"
#include "test/unit/unit.h"

static srv_model_t *simple, *types, *gen;
static srv_model_desc_t simple_d, types_d, gen_d;
static srv_shm_t *shm; /* region "r": 128 bytes, see main */

/* What a parse gave. The body and the arena stay until done(). */
typedef struct {
  TRITONBACKEND_Request *r;
  srv_http_infer_opts_t opts;
  srv_shm_uses_t *uses;
  char message[SRV_STATUS_MESSAGE_MAX];
  grpc_status_code code;
  char *body;
  size_t header_len;
  upb_Arena *a;
  void *arena_mem;
} parsed_t;

/* An arena over memory that held something before, as the server's pooled
 * blocks do: a parse must set every field it hands out. */
enum { DIRTY_ARENA_BYTES = 16384 };
static upb_Arena *dirty_arena(void **mem) {
  *mem = malloc(DIRTY_ARENA_BYTES);
  memset(*mem, 0xA5, DIRTY_ARENA_BYTES);
  return upb_Arena_Init(*mem, DIRTY_ARENA_BYTES, &upb_alloc_global);
}

/* Every input of a parsed request is in host memory (the tests' shared
 * memory is system memory too). */
static void inputs_on_host(const TRITONBACKEND_Request *r) {
  for (uint32_t i = 0; i < r->input_count; i++)
    for (uint32_t b = 0; b < r->inputs[i].buffer_count; b++) {
      CHECK_EQ_U64(r->inputs[i].buffers[b].memory_type, TRITONSERVER_MEMORY_CPU);
      CHECK_EQ_U64(r->inputs[i].buffers[b].memory_type_id, 0);
    }
}

static parsed_t parse_full(srv_model_t *m, const srv_model_desc_t *d, const char *json,
                           const void *bin, size_t bin_len, size_t header_len) {
  parsed_t p;
  memset(&p, 0, sizeof p);
  size_t jl = strlen(json);
  p.body = malloc(jl + bin_len + 1);
  memcpy(p.body, json, jl);
  if (bin_len) memcpy(p.body + jl, bin, bin_len);
  p.header_len = header_len ? header_len : jl;
  p.a = dirty_arena(&p.arena_mem);
  srv_status_t *st = srv_http_infer_parse(m, d, p.body, jl + bin_len, p.header_len, shm,
                                          p.a, &p.r, &p.uses, &p.opts);
  if (st == NULL) inputs_on_host(p.r);
  if (st != NULL) {
    p.r = NULL;
    p.code = srv_status_code(st);
    snprintf(p.message, sizeof p.message, "%s", srv_status_message(st));
    srv_status_free(st);
  }
  return p;
}

/* A JSON-only request; header length = whole body. */
static parsed_t parse(srv_model_t *m, const srv_model_desc_t *d, const char *json) {
  return parse_full(m, d, json, NULL, 0, 0);
}

static void done(parsed_t *p) {
  srv_shm_uses_free(p->uses);
  upb_Arena_Free(p->a);
  free(p->arena_mem);
  free(p->body);
}

/* The refusal of `json` for model m has `message`. */
static void refused(srv_model_t *m, const srv_model_desc_t *d, const char *json,
                    const char *message) {
  parsed_t p = parse(m, d, json);
  CHECK(p.r == NULL);
  CHECK_EQ_U64(p.code, GRPC_STATUS_INVALID_ARGUMENT);
  CHECK_STREQ(p.message, message);
  done(&p);
}

static const struct TRITONBACKEND_Input *input_named(const TRITONBACKEND_Request *r,
                                                     const char *name) {
  for (uint32_t i = 0; i < r->input_count; i++)
    if (strcmp(r->inputs[i].name, name) == 0) return &r->inputs[i];
  return NULL;
}

#define SIMPLE_IN(data)                                                        \
  "{\"inputs\":[{\"name\":\"INPUT0\",\"datatype\":\"INT32\",\"shape\":[1,16]," \
  "\"data\":" data                                                             \
  "},{\"name\":\"INPUT1\",\"datatype\":\"INT32\","                             \
  "\"shape\":[1,16],\"data\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}]"

/* A valid request's start, for the cases that add to it. */
#define SIMPLE_16 SIMPLE_IN("[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]")

static void test_simple_flat_and_nested(void) {
  parsed_t p = parse(&*simple, &simple_d, SIMPLE_16 "}");
  REQUIRE(p.r != NULL);
  CHECK_EQ_U64(p.r->input_count, 2);
  CHECK_EQ_U64(p.r->batch_size, 1);
  CHECK_STREQ(p.r->id, "");
  const struct TRITONBACKEND_Input *in = input_named(p.r, "INPUT0");
  REQUIRE(in != NULL);
  CHECK_EQ_U64(in->byte_size, 64);
  CHECK_EQ_U64(in->dims_count, 2);
  CHECK_EQ_U64(((const int32_t *)in->buffers[0].base)[15], 16);
  CHECK_EQ_U64(p.r->output_count, 2); /* all of the model's */
  CHECK_EQ_U64(p.opts.output_count, 2);
  CHECK(!p.opts.outputs[0].binary);
  done(&p);
  p = parse(simple, &simple_d,
            SIMPLE_IN("[[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]]") ",\"id\":\"x7\"}");
  REQUIRE(p.r != NULL);
  CHECK_STREQ(p.r->id, "x7");
  CHECK_EQ_U64(((const int32_t *)input_named(p.r, "INPUT0")->buffers[0].base)[0], 1);
  done(&p);
  /* nesting that is not the shape's, counts that are not its */
  refused(simple, &simple_d,
          SIMPLE_IN("[[1,2,3,4,5,6,7,8],[9,10,11,12,13,14,15,16]]") "}",
          "Unable to parse 'data': Shape does not match true shape of 'data' field");
  refused(simple, &simple_d, SIMPLE_IN("[1,2,3]") "}",
          "Unable to parse 'data': Shape does not match true shape of 'data' field");
  refused(simple, &simple_d,
          SIMPLE_IN("[[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],1]") "}",
          "Unable to parse 'data': Shape does not match true shape of 'data' field");
  refused(simple, &simple_d, SIMPLE_IN("7") "}",
          "Unable to parse 'data': Shape does not match true shape of 'data' field");
}

/* One input of `types` given as JSON; its buffer's bytes. */
static void typed(const char *name, const char *dt, const char *shape, const char *data,
                  const void *want, size_t want_len) {
  char json[1024];
  snprintf(
      json, sizeof json,
      "{\"inputs\":[{\"name\":\"%s\",\"datatype\":\"%s\",\"shape\":%s,\"data\":%s}]}",
      name, dt, shape, data);
  parsed_t p = parse(types, &types_d, json);
  if (p.r == NULL) fprintf(stderr, "  %s: %s\n", name, p.message);
  CHECK(p.r != NULL);
  if (p.r != NULL) {
    const struct TRITONBACKEND_Input *in = input_named(p.r, name);
    CHECK_EQ_U64(in->byte_size, want_len);
    CHECK(in->buffers[0].size == want_len &&
          memcmp(in->buffers[0].base, want, want_len) == 0);
  }
  done(&p);
}

static void test_every_datatype_in(void) {
  static const uint8_t b[] = {1, 0};
  typed("BOOL", "BOOL", "[2]", "[true,false]", b, 2);
  static const int8_t i8[] = {-128, 127};
  typed("I8", "INT8", "[2]", "[-128,127]", i8, 2);
  static const int16_t i16[] = {-32768, 32767};
  typed("I16", "INT16", "[2]", "[-32768,32767]", i16, 4);
  static const int32_t i32[] = {INT32_MIN, INT32_MAX};
  typed("I32", "INT32", "[2]", "[-2147483648,2147483647]", i32, 8);
  static const int64_t i64[] = {INT64_MIN, INT64_MAX};
  typed("I64", "INT64", "[2]", "[-9223372036854775808,9223372036854775807]", i64, 16);
  static const uint8_t u8[] = {0, 255};
  typed("U8", "UINT8", "[2]", "[0,255]", u8, 2);
  static const uint16_t u16[] = {0, 65535};
  typed("U16", "UINT16", "[2]", "[0,65535]", u16, 4);
  static const uint32_t u32[] = {0, UINT32_MAX};
  typed("U32", "UINT32", "[2]", "[0,4294967295]", u32, 8);
  static const uint64_t u64[] = {0, INT64_MAX};
  typed("U64", "UINT64", "[2]", "[0,9223372036854775807]", u64, 16);
  static const float f32[] = {1.5f, -2.0f};
  typed("F32", "FP32", "[2]", "[1.5,-2]", f32, 8);
  static const double f64[] = {0.25, 3.0};
  typed("F64", "FP64", "[2]", "[0.25,3]", f64, 16);
  static const char str[] = "\x02\0\0\0hi\0\0\0\0\x03\0\0\0a\0b";
  typed("STR", "BYTES", "[3]", "[\"hi\",\"\",\"a\\u0000b\"]", str, sizeof str - 1);
  static const int32_t nest[] = {1, 2, 3, 4, 5, 6};
  typed("NEST", "INT32", "[2,3]", "[[1,2,3],[4,5,6]]", nest, 24);
  typed("NEST", "INT32", "[2,3]", "[1,2,3,4,5,6]", nest, 24);
}

static void test_datatype_refusals(void) {
  refused(types, &types_d,
          "{\"inputs\":[{\"name\":\"F16\",\"datatype\":\"FP16\",\"shape\":[2],"
          "\"data\":[1,2]}]}",
          "receiving FP16 data via JSON is not supported. Please use the binary data "
          "format for input F16");
  refused(types, &types_d,
          "{\"inputs\":[{\"name\":\"BF16\",\"datatype\":\"BF16\",\"shape\":[2],"
          "\"data\":[1,2]}]}",
          "receiving BF16 data via JSON is not supported. Please use the binary data "
          "format for input BF16");
  refused(types, &types_d,
          "{\"inputs\":[{\"name\":\"I8\",\"datatype\":\"INT8\",\"shape\":[2],"
          "\"data\":[1,128]}]}",
          "Unable to parse 'data': element 1 of input 'I8' is not an INT8 integer");
  refused(types, &types_d,
          "{\"inputs\":[{\"name\":\"U8\",\"datatype\":\"UINT8\",\"shape\":[2],"
          "\"data\":[-1,1]}]}",
          "Unable to parse 'data': element 0 of input 'U8' is not a UINT8 integer");
  refused(types, &types_d,
          "{\"inputs\":[{\"name\":\"I32\",\"datatype\":\"INT32\",\"shape\":[2],"
          "\"data\":[1,1.5]}]}",
          "Unable to parse 'data': element 1 of input 'I32' is not an INT32 integer");
  refused(types, &types_d,
          "{\"inputs\":[{\"name\":\"BOOL\",\"datatype\":\"BOOL\",\"shape\":[2],"
          "\"data\":[1,0]}]}",
          "Unable to parse 'data': element 0 of input 'BOOL' is not a boolean");
  refused(types, &types_d,
          "{\"inputs\":[{\"name\":\"F32\",\"datatype\":\"FP32\",\"shape\":[2],"
          "\"data\":[\"1\",0]}]}",
          "Unable to parse 'data': element 0 of input 'F32' is not a number");
  refused(types, &types_d,
          "{\"inputs\":[{\"name\":\"STR\",\"datatype\":\"BYTES\",\"shape\":[1],"
          "\"data\":[1]}]}",
          "Unable to parse 'data': element 0 of input 'STR' is not a string");
  /* the core's texts */
  refused(
      types, &types_d,
      "{\"inputs\":[{\"name\":\"I32\",\"datatype\":\"INT64\",\"shape\":[2],"
      "\"data\":[1,2]}]}",
      "inference input 'I32' data-type is 'INT64', but model 'types' expects 'INT32'");
  refused(types, &types_d,
          "{\"inputs\":[{\"name\":\"I32\",\"datatype\":\"INT32\",\"shape\":[3],"
          "\"data\":[1,2,3]}]}",
          "unexpected shape for input 'I32' for model 'types'. Expected [2], got [3]. ");
}

static void test_malformed(void) {
  refused(simple, &simple_d, "{\"inputs\":[",
          "failed to parse the request JSON buffer: "
          "']' expected near end of file at 11");
  refused(simple, &simple_d, "[1]",
          "failed to parse the request JSON buffer: not a JSON object");
  refused(simple, &simple_d, "{}", "Unable to parse 'inputs'");
  refused(simple, &simple_d, "{\"inputs\":{}}", "Unable to parse 'inputs'");
  refused(simple, &simple_d, "{\"inputs\":[7]}", "Unable to parse 'inputs'");
  refused(simple, &simple_d, "{\"inputs\":[{\"datatype\":\"INT32\"}]}",
          "Unable to parse 'name'");
  refused(simple, &simple_d, "{\"inputs\":[{\"name\":\"INPUT0\",\"shape\":[1,16]}]}",
          "Unable to parse 'datatype'");
  refused(simple, &simple_d,
          "{\"inputs\":[{\"name\":\"INPUT0\",\"datatype\":\"INT32\",\"shape\":[1,-16]}]}",
          "Unable to parse 'shape'");
  refused(simple, &simple_d,
          "{\"inputs\":[{\"name\":\"INPUT0\",\"datatype\":\"INT32\",\"shape\":\"1\"}]}",
          "Unable to parse 'shape'");
  refused(
      simple, &simple_d,
      "{\"inputs\":[{\"name\":\"INPUT0\",\"datatype\":\"INT32\",\"shape\":[1,16]}]}",
      "Input must set only one of the following fields: 'data', 'binary_data_size' in "
      "'parameters', 'shared_memory_region' in 'parameters'. But no field is set");
  refused(simple, &simple_d, SIMPLE_IN("[1]") ",\"id\":5}", "Unable to parse 'id'");
  refused(
      simple, &simple_d, "{\"inputs\":[],\"inputs\":[]}",
      "failed to parse the request JSON buffer: duplicate object key near '\"inputs\"' "
      "at 21");
  /* Triton counts the inputs before it looks them up: one unknown input
   * alone is a count error, beside a right count an unknown input. */
  refused(simple, &simple_d,
          "{\"inputs\":[{\"name\":\"NOPE\",\"datatype\":\"INT32\",\"shape\":[1],"
          "\"data\":[1]}]}",
          "expected 2 inputs but got 1 inputs for model 'simple'. Got inputs ['NOPE'], "
          "but missing required inputs ['INPUT0','INPUT1']. Please provide all required "
          "inputs.");
  refused(simple, &simple_d,
          "{\"inputs\":[{\"name\":\"NOPE\",\"datatype\":\"INT32\",\"shape\":[1],"
          "\"data\":[1]},{\"name\":\"INPUT1\",\"datatype\":\"INT32\",\"shape\":[1],"
          "\"data\":[1]}]}",
          "unexpected inference input 'NOPE' for model 'simple'");
  /* the header length is the body's at most */
  parsed_t p = parse_full(simple, &simple_d, "{}", NULL, 0, 3);
  CHECK(p.r == NULL);
  CHECK_STREQ(p.message,
              "Inference-Header-Content-Length 3 is larger than the request body of 2 "
              "bytes");
  done(&p);
}

#define BIN_INPUT(name, size)                   \
  "{\"name\":\"" name                           \
  "\",\"datatype\":\"INT32\",\"shape\":[1,16]," \
  "\"parameters\":{\"binary_data_size\":" #size "}}"

/* The thread keeps its last header (header_memo.h): the same bytes again
 * read the kept tree, and a header of the same length that differs is
 * parsed on its own, its answer its own, before and after. */
static void test_header_memo(void) {
  int32_t bin[32];
  for (int i = 0; i < 32; i++) bin[i] = i;
  const char *a = "{\"inputs\":[" BIN_INPUT("INPUT0", 64) "," BIN_INPUT("INPUT1", 64) "]}";
  const char *b = "{\"inputs\":[" BIN_INPUT("INPUT1", 64) "," BIN_INPUT("INPUT0", 64) "]}";
  const char *bad = "{\"inputs\":[" BIN_INPUT("INPUT0", 64) "," BIN_INPUT("INPUTX", 64) "]}";
  REQUIRE(strlen(a) == strlen(b) && strlen(a) == strlen(bad));
  for (int round = 0; round < 2; round++) {
    parsed_t p = parse_full(simple, &simple_d, a, bin, sizeof bin, strlen(a));
    REQUIRE(p.r != NULL);
    const struct TRITONBACKEND_Input *in = input_named(p.r, "INPUT1");
    CHECK(in->buffers[0].base == p.body + strlen(a) + 64); /* INPUT1 second */
    done(&p);
    p = parse_full(simple, &simple_d, b, bin, sizeof bin, strlen(b));
    REQUIRE(p.r != NULL);
    in = input_named(p.r, "INPUT1");
    CHECK(in->buffers[0].base == p.body + strlen(b)); /* INPUT1 first */
    done(&p);
    p = parse_full(simple, &simple_d, bad, bin, sizeof bin, strlen(bad));
    CHECK(p.r == NULL);
    CHECK(strstr(p.message, "INPUTX") != NULL);
    done(&p);
  }
}

static void test_binary_inputs(void) {
  int32_t bin[32];
  for (int i = 0; i < 32; i++) bin[i] = i;
  const char *json =
      "{\"inputs\":[" BIN_INPUT("INPUT0", 64) "," BIN_INPUT("INPUT1", 64) "]}";
  parsed_t p = parse_full(simple, &simple_d, json, bin, sizeof bin, strlen(json));
  REQUIRE(p.r != NULL);
  const struct TRITONBACKEND_Input *in = input_named(p.r, "INPUT1");
  /* no copy: the buffer is the body's own bytes */
  CHECK(in->buffers[0].base == p.body + strlen(json) + 64);
  int32_t first; /* the body's bytes keep their offset: any alignment */
  memcpy(&first, in->buffers[0].base, sizeof first);
  CHECK_EQ_U64(first, 16);
  done(&p);
  /* truncated */
  p = parse_full(simple, &simple_d, json, bin, 100, strlen(json));
  CHECK(p.r == NULL);
  CHECK_STREQ(p.message,
              "unexpected size for input 'INPUT1', expecting 28 additional bytes for "
              "model 'simple'");
  done(&p);
  /* too much */
  const char extra[200] = {0};
  p = parse_full(simple, &simple_d, json, extra, sizeof extra, strlen(json));
  CHECK(p.r == NULL);
  CHECK_STREQ(p.message, "unexpected additional input data for model 'simple'");
  done(&p);
  /* binary without Inference-Header-Content-Length */
  p = parse(simple, &simple_d, json);
  CHECK(p.r == NULL);
  CHECK_STREQ(
      p.message,
      "must specify valid 'Inference-Header-Content-Length' in request header and "
      "'binary_data_size' when passing inputs in binary data format");
  done(&p);
  /* a size that is not the shape's: the core's text */
  const char *small =
      "{\"inputs\":[" BIN_INPUT("INPUT0", 60) "," BIN_INPUT("INPUT1", 68) "]}";
  p = parse_full(simple, &simple_d, small, bin, 128, strlen(small));
  CHECK(p.r == NULL);
  CHECK(strstr(p.message, "INPUT0") != NULL);
  done(&p);
  /* both data and binary_data_size; a size that is not an integer */
  refused(
      simple, &simple_d,
      "{\"inputs\":[{\"name\":\"INPUT0\",\"datatype\":\"INT32\",\"shape\":[1,16],"
      "\"data\":[1],\"parameters\":{\"binary_data_size\":64}}]}",
      "Input must set only one of the following fields: 'data', 'binary_data_size' in "
      "'parameters', 'shared_memory_region' in 'parameters'. But set 'data' "
      "'binary_data_size'");
  refused(simple, &simple_d,
          "{\"inputs\":[{\"name\":\"INPUT0\",\"datatype\":\"INT32\",\"shape\":[1,16],"
          "\"parameters\":{\"binary_data_size\":\"64\"}}]}",
          "Unable to parse 'binary_data_size'");
  /* FP16 travels as binary */
  const char *f16 =
      "{\"inputs\":[{\"name\":\"F16\",\"datatype\":\"FP16\",\"shape\":[2],"
      "\"parameters\":{\"binary_data_size\":4}}]}";
  p = parse_full(types, &types_d, f16, "\x00\x3c\x00\x40", 4, strlen(f16));
  CHECK(p.r != NULL);
  done(&p);
}

static void test_parameters(void) {
  parsed_t p = parse(simple, &simple_d,
                     SIMPLE_16
                     ",\"parameters\":{\"sequence_id\":42,\"sequence_start\":true,"
                     "\"sequence_end\":false,\"priority\":7000000000,\"timeout\":5,"
                     "\"binary_data_output\":true,\"other\":\"x\",\"n\":-2,\"f\":false,"
                     "\"r\":0.25}}");
  REQUIRE(p.r != NULL);
  /* Every key not the server's goes to the backend, typed, in order. */
  REQUIRE(p.r->param_count == 4);
  CHECK_STREQ(p.r->params[0].key, "other");
  CHECK_EQ_U64(p.r->params[0].type, TRITONSERVER_PARAMETER_STRING);
  CHECK_STREQ(p.r->params[0].value.s, "x");
  CHECK_STREQ(p.r->params[1].key, "n");
  CHECK_EQ_U64(p.r->params[1].type, TRITONSERVER_PARAMETER_INT);
  CHECK(p.r->params[1].value.i == -2);
  CHECK_EQ_U64(p.r->params[2].type, TRITONSERVER_PARAMETER_BOOL);
  CHECK(!p.r->params[2].value.b);
  CHECK_EQ_U64(p.r->params[3].type, TRITONSERVER_PARAMETER_DOUBLE);
  CHECK(p.r->params[3].value.d == 0.25);
  CHECK_EQ_U64(p.r->correlation_id, 42);
  CHECK(p.r->correlation_id_string == NULL);
  CHECK_EQ_U64(p.r->flags, TRITONSERVER_REQUEST_FLAG_SEQUENCE_START);
  CHECK_EQ_U64(p.r->priority, UINT32_MAX);
  CHECK_EQ_U64(p.r->timeout_us, 5);
  CHECK(p.opts.binary_data_output);
  CHECK(p.opts.outputs[0].binary && p.opts.outputs[1].binary);
  done(&p);
  p = parse(simple, &simple_d,
            SIMPLE_16
            ",\"parameters\":{\"sequence_id\":\"conv-1\",\"sequence_end\":true}}");
  REQUIRE(p.r != NULL);
  CHECK_STREQ(p.r->correlation_id_string, "conv-1");
  CHECK_EQ_U64(p.r->flags, TRITONSERVER_REQUEST_FLAG_SEQUENCE_END);
  done(&p);
  static const struct {
    const char *params, *message;
  } bad[] = {
      {"{\"sequence_id\":true}", "Unable to parse 'sequence_id'"},
      {"{\"sequence_id\":1.5}", "Unable to parse 'sequence_id'"},
      {"{\"sequence_start\":1}", "Unable to parse 'sequence_start'"},
      {"{\"sequence_end\":\"true\"}", "Unable to parse 'sequence_end'"},
      {"{\"priority\":-1}",
       "model 'simple': parameter 'priority' must be a non-negative integer"},
      {"{\"timeout\":\"5\"}",
       "model 'simple': parameter 'timeout' must be a non-negative integer"},
      {"{\"binary_data_output\":1}", "Unable to parse 'binary_data_output'"},
      {"{\"sequence_id\":\"a\\u0000b\"}",
       "model 'simple': parameter 'sequence_id' holds a NUL byte"},
      {"[]", "Unable to parse 'parameters'"},
      {"{\"other\":[1]}",
       "parameter 'other' has invalid type. It should be either 'int', 'bool', or "
       "'string'."},
      {"{\"n\":null}",
       "parameter 'n' has invalid type. It should be either 'int', 'bool', or 'string'."},
      {"{\"triton_x\":1}",
       "parameter keys starting with 'triton_' are reserved for Triton usage and should "
       "not be specified."},
      {"{\"s\":\"a\\u0000b\"}", "model 'simple': parameter 's' holds a NUL byte"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char json[1024];
    snprintf(json, sizeof json, "%s,\"parameters\":%s}", SIMPLE_16, bad[i].params);
    refused(simple, &simple_d, json, bad[i].message);
  }
  char json[2048], id[SRV_SEQUENCE_ID_MAX + 2];
  memset(id, 'q', sizeof id - 1);
  id[sizeof id - 1] = '\0';
  snprintf(json, sizeof json, "%s,\"parameters\":{\"sequence_id\":\"%s\"}}", SIMPLE_16,
           id);
  refused(simple, &simple_d, json,
          "model 'simple': parameter 'sequence_id' is a string of 257 bytes, above the "
          "limit of 256");
}

/* Our bounds on the parameters handed on: count, key and string length. */
static void test_parameter_bounds(void) {
  size_t cap = 64 + 20 * (SRV_REQUEST_PARAMS_MAX + 1) + SRV_REQUEST_PARAM_STRING_MAX + 64;
  char *json = malloc(cap + strlen(SIMPLE_16));
  size_t n = (size_t)sprintf(json, "%s,\"parameters\":{", SIMPLE_16);
  for (size_t i = 0; i < SRV_REQUEST_PARAMS_MAX; i++)
    n += (size_t)sprintf(json + n, "%s\"k%zu\":%zu", i ? "," : "", i, i);
  strcpy(json + n, "}}");
  parsed_t p = parse(simple, &simple_d, json);
  CHECK(p.r != NULL && p.r->param_count == SRV_REQUEST_PARAMS_MAX);
  done(&p);
  strcpy(json + n, ",\"one_more\":1}}");
  refused(simple, &simple_d, json, "model 'simple': more than 128 request parameters");
  n = (size_t)sprintf(json, "%s,\"parameters\":{\"", SIMPLE_16);
  memset(json + n, 'k', SRV_REQUEST_PARAM_KEY_MAX + 1);
  strcpy(json + n + SRV_REQUEST_PARAM_KEY_MAX + 1, "\":1}}");
  refused(simple, &simple_d, json,
          "model 'simple': a parameter key of 257 bytes is above the limit of 256");
  n = (size_t)sprintf(json, "%s,\"parameters\":{\"s\":\"", SIMPLE_16);
  memset(json + n, 'v', SRV_REQUEST_PARAM_STRING_MAX + 1);
  strcpy(json + n + SRV_REQUEST_PARAM_STRING_MAX + 1, "\"}}");
  refused(simple, &simple_d, json,
          "model 'simple': parameter 's' is a string of 65537 bytes, above the limit of "
          "65536");
  free(json);
}

static void test_outputs(void) {
  parsed_t p = parse(simple, &simple_d,
                     SIMPLE_16
                     ",\"outputs\":[{\"name\":\"OUTPUT1\",\"parameters\":"
                     "{\"binary_data\":true}},{\"name\":\"OUTPUT0\",\"parameters\":"
                     "{\"classification\":3}}]}");
  REQUIRE(p.r != NULL);
  CHECK_EQ_U64(p.r->output_count, 2);
  CHECK_STREQ(p.r->outputs[0], "OUTPUT1");
  CHECK(p.opts.outputs[0].binary);
  CHECK_EQ_U64(p.opts.outputs[1].class_count, 3);
  CHECK(!p.opts.outputs[1].binary);
  done(&p);
  /* binary_data_output is for the outputs not listed: a listed one says */
  p = parse(simple, &simple_d,
            SIMPLE_16
            ",\"parameters\":{\"binary_data_output\":true},"
            "\"outputs\":[{\"name\":\"OUTPUT1\"}]}");
  REQUIRE(p.r != NULL);
  CHECK(!p.opts.outputs[0].binary);
  done(&p);
  refused(simple, &simple_d, SIMPLE_16 ",\"outputs\":[{\"name\":\"NOPE\"}]}",
          "unexpected inference output 'NOPE' for model 'simple'");
  refused(simple, &simple_d,
          SIMPLE_16
          ",\"outputs\":[{\"name\":\"OUTPUT0\",\"parameters\":{\"binary_data\":1}}]}",
          "Unable to parse 'binary_data'");
  refused(simple, &simple_d,
          SIMPLE_16
          ",\"outputs\":[{\"name\":\"OUTPUT0\",\"parameters\":{\"classification\":"
          "\"3\"}}]}",
          "Unable to parse 'classification'");
  refused(simple, &simple_d, SIMPLE_16 ",\"outputs\":{}}", "Unable to parse 'outputs'");
}

/* A response with the given outputs, and the request they answer. */
static TRITONBACKEND_Response response_of(struct TRITONBACKEND_Output *o, uint32_t n) {
  TRITONBACKEND_Response r;
  memset(&r, 0, sizeof r);
  r.outputs = o;
  r.output_count = r.output_cap = n;
  return r;
}

/* A request for the outputs `names`, as the parse would have made it. */
static TRITONBACKEND_Request request_for(const char **names, uint32_t n, const char *id) {
  TRITONBACKEND_Request req;
  memset(&req, 0, sizeof req);
  req.id = id;
  req.outputs = names;
  req.output_count = n;
  return req;
}

/* Tensors in region "r" (128 bytes, holding 0..31 as INT32): inputs read
 * in place, outputs placed there, Triton's refusals; a refused request
 * keeps no reference (srv_shm_uses_t only comes with success). */
#define SHM_IN(name, off, extra)                                                 \
  "{\"name\":\"" name                                                            \
  "\",\"datatype\":\"INT32\",\"shape\":[1,16],"                                  \
  "\"parameters\":{\"shared_memory_region\":\"r\",\"shared_memory_offset\":" off \
  ",\"shared_memory_byte_size\":64" extra "}}"

static void test_shared_memory(void) {
  parsed_t p = parse(simple, &simple_d,
                     "{\"inputs\":[" SHM_IN("INPUT0", "64", "") "," SHM_IN("INPUT1", "0", "")
                     "],\"outputs\":[{\"name\":\"OUTPUT1\",\"parameters\":{"
                     "\"shared_memory_region\":\"r\",\"shared_memory_byte_size\":64,"
                     "\"binary_data\":false}},{\"name\":\"OUTPUT0\"}]}");
  REQUIRE(p.r != NULL && p.uses != NULL);
  CHECK_EQ_U64(p.uses->count, 3);
  const int32_t *in0 = input_named(p.r, "INPUT0")->buffers[0].base;
  CHECK(in0[0] == 16 && in0[15] == 31 && input_named(p.r, "INPUT0")->byte_size == 64);
  CHECK(p.opts.outputs[0].shm && !p.opts.outputs[1].shm);
  CHECK(srv_shm_uses_output(p.uses, "OUTPUT1") != NULL);
  CHECK(srv_shm_uses_output(p.uses, "OUTPUT0") == NULL);
  /* The reply names the placed output and sends no data for it. */
  static int64_t shape[] = {1, 16};
  struct TRITONBACKEND_Output o[2] = {{.name = "OUTPUT1",
                                       .datatype = TRITONSERVER_TYPE_INT32,
                                       .shape = shape,
                                       .dims_count = 2,
                                       .buffer = (void *)in0,
                                       .byte_size = 64},
                                      {.name = "OUTPUT0",
                                       .datatype = TRITONSERVER_TYPE_INT32,
                                       .shape = shape,
                                       .dims_count = 2,
                                       .buffer = (void *)in0,
                                       .byte_size = 64}};
  TRITONBACKEND_Response resp = response_of(o, 2);
  srv_http_infer_reply_t out;
  REQUIRE(srv_http_infer_encode(&simple_d, p.r, &p.opts, &resp, p.a, &out) == NULL);
  CHECK(out.part_count == 0);
  CHECK(strstr(out.json,
               "{\"name\":\"OUTPUT1\",\"datatype\":\"INT32\",\"shape\":[1,16]}") != NULL);
  done(&p);
  /* Mixed: INPUT0 binary, INPUT1 in the region. */
  int32_t bin[16] = {0};
  const char *mixed =
      "{\"inputs\":[{\"name\":\"INPUT0\",\"datatype\":\"INT32\",\"shape\":"
      "[1,16],\"parameters\":{\"binary_data_size\":64}}," SHM_IN("INPUT1", "0", "") "]}";
  p = parse_full(simple, &simple_d, mixed, bin, 64, strlen(mixed));
  REQUIRE(p.r != NULL && p.uses != NULL);
  CHECK_EQ_U64(p.uses->count, 1);
  done(&p);
  refused(
      simple, &simple_d,
      "{\"inputs\":[" SHM_IN("INPUT0", "0", ",\"binary_data_size\":64") "]}",
      "Input must set only one of the following fields: 'data', 'binary_data_size' in "
      "'parameters', 'shared_memory_region' in 'parameters'. But set "
      "'binary_data_size' 'shared_memory_region'");
  refused(simple, &simple_d, "{\"inputs\":[" SHM_IN("INPUT0", "\"0\"", "") "]}",
          "Unable to parse 'shared_memory_offset'");
  refused(simple, &simple_d, "{\"inputs\":[" SHM_IN("INPUT0", "100", "") "]}",
          "Invalid offset + byte size for shared memory region: 'r'");
  /* The second input's region is missing: the first's reference goes too. */
  parsed_t q = parse(simple, &simple_d,
                     "{\"inputs\":[" SHM_IN("INPUT0", "0", "") ",{\"name\":\"INPUT1\","
                     "\"datatype\":\"INT32\",\"shape\":[1,16],\"parameters\":{"
                     "\"shared_memory_region\":\"none\",\"shared_memory_byte_size\":64}}]}");
  CHECK(q.r == NULL && q.uses == NULL && q.code == GRPC_STATUS_NOT_FOUND);
  CHECK_STREQ(q.message, "Unable to find shared memory region: 'none'");
  done(&q);
  const char *in2 =
      "{\"inputs\":[" SHM_IN("INPUT0", "0", "") "," SHM_IN("INPUT1", "64", "");
  char body[1024];
  snprintf(body, sizeof body,
           "%s],\"outputs\":[{\"name\":\"OUTPUT0\",\"parameters\":{"
           "\"shared_memory_region\":\"r\",\"binary_data\":true}}]}",
           in2);
  refused(simple, &simple_d, body,
          "Output can't set both 'shared_memory_region' and 'binary_data'");
  snprintf(body, sizeof body,
           "%s],\"outputs\":[{\"name\":\"OUTPUT0\",\"parameters\":{"
           "\"shared_memory_region\":\"r\",\"classification\":2}}]}",
           in2);
  refused(simple, &simple_d, body,
          "Output can't set both 'shared_memory_region' and 'classification'");
  snprintf(body, sizeof body,
           "%s],\"outputs\":[{\"name\":\"OUTPUT0\",\"parameters\":{"
           "\"shared_memory_region\":7}}]}",
           in2);
  refused(simple, &simple_d, body, "Unable to parse 'shared_memory_region'");
  /* A reference a refusal left behind would keep region "r" alive past
   * srv_shm_free at the end: LeakSanitizer reports it (--config=asan). */
}

static void test_encode_json_types(void) {
  static int64_t two[] = {2};
  static uint8_t b[] = {1, 0};
  static int8_t i8[] = {-1, 2};
  static uint16_t u16[] = {65535, 1};
  static int64_t i64[] = {INT64_MIN, 5};
  static uint64_t u64[] = {INT64_MAX, 0};
  static float f32[] = {1.5f, -0.25f};
  static double f64[] = {0.5, 2};
  static char str[] = "\x02\0\0\0hi\x01\0\0\0z";
  struct TRITONBACKEND_Output o[] = {
      {"BOOL", TRITONSERVER_TYPE_BOOL, two, 1, b, 2, .in_place = false},
      {"I8", TRITONSERVER_TYPE_INT8, two, 1, i8, 2, .in_place = false},
      {"U16", TRITONSERVER_TYPE_UINT16, two, 1, u16, 4, .in_place = false},
      {"I64", TRITONSERVER_TYPE_INT64, two, 1, i64, 16, .in_place = false},
      {"U64", TRITONSERVER_TYPE_UINT64, two, 1, u64, 16, .in_place = false},
      {"F32", TRITONSERVER_TYPE_FP32, two, 1, f32, 8, .in_place = false},
      {"F64", TRITONSERVER_TYPE_FP64, two, 1, f64, 16, .in_place = false},
      {"STR", TRITONSERVER_TYPE_BYTES, two, 1, str, sizeof str - 1, .in_place = false},
  };
  TRITONBACKEND_Response resp = response_of(o, 8);
  srv_response_param_t params[] = {{"n", TRITONSERVER_PARAMETER_INT, {.i = 3}}};
  resp.params = params;
  resp.param_count = 1;
  const char *names[] = {"BOOL", "I8", "U16", "I64", "U64", "F32", "F64", "STR"};
  srv_http_output_opt_t opts_o[8] = {{0}};
  srv_http_infer_opts_t opts = {opts_o, 8, false};
  TRITONBACKEND_Request req = request_for(names, 8, "r1");
  upb_Arena *a = upb_Arena_New();
  srv_http_infer_reply_t out;
  srv_status_t *st = srv_http_infer_encode(&types_d, &req, &opts, &resp, a, &out);
  REQUIRE(st == NULL);
  CHECK_EQ_U64(out.part_count, 0);
  CHECK_EQ_U64(strlen(out.json), out.json_len);
  CHECK_STREQ(
      out.json,
      "{\"model_name\":\"types\",\"model_version\":\"1\",\"id\":\"r1\","
      "\"parameters\":{\"n\":3},\"outputs\":["
      "{\"name\":\"BOOL\",\"datatype\":\"BOOL\",\"shape\":[2],\"data\":[true,false]},"
      "{\"name\":\"I8\",\"datatype\":\"INT8\",\"shape\":[2],\"data\":[-1,2]},"
      "{\"name\":\"U16\",\"datatype\":\"UINT16\",\"shape\":[2],\"data\":[65535,1]},"
      "{\"name\":\"I64\",\"datatype\":\"INT64\",\"shape\":[2],"
      "\"data\":[-9223372036854775808,5]},"
      "{\"name\":\"U64\",\"datatype\":\"UINT64\",\"shape\":[2],"
      "\"data\":[9223372036854775807,0]},"
      "{\"name\":\"F32\",\"datatype\":\"FP32\",\"shape\":[2],\"data\":[1.5,-0.25]},"
      "{\"name\":\"F64\",\"datatype\":\"FP64\",\"shape\":[2],\"data\":[0.5,2.0]},"
      "{\"name\":\"STR\",\"datatype\":\"BYTES\",\"shape\":[2],\"data\":[\"hi\",\"z\"]}]"
      "}");
  /* binary for all: parts point at the response's buffers */
  for (int i = 0; i < 8; i++) opts_o[i].binary = true;
  st = srv_http_infer_encode(&types_d, &req, &opts, &resp, a, &out);
  REQUIRE(st == NULL);
  CHECK_EQ_U64(out.part_count, 8);
  CHECK(out.parts[0].base == b && out.parts[7].base == str);
  CHECK_EQ_U64(out.parts_size, 2 + 2 + 4 + 16 + 16 + 8 + 16 + sizeof str - 1);
  CHECK(strstr(out.json,
               "{\"name\":\"F64\",\"datatype\":\"FP64\",\"shape\":[2],"
               "\"parameters\":{\"binary_data_size\":16}}") != NULL);
  /* only what was requested */
  req.output_count = 1;
  opts.output_count = 1;
  opts_o[0].binary = false;
  st = srv_http_infer_encode(&types_d, &req, &opts, &resp, a, &out);
  REQUIRE(st == NULL);
  CHECK(strstr(out.json, "\"I8\"") == NULL);
  upb_Arena_Free(a);
}

static void encode_refused(struct TRITONBACKEND_Output *o, const char *message) {
  TRITONBACKEND_Response resp = response_of(o, 1);
  const char *names[] = {o->name};
  srv_http_output_opt_t opt = {0};
  srv_http_infer_opts_t opts = {&opt, 1, false};
  TRITONBACKEND_Request req = request_for(names, 1, "");
  upb_Arena *a = upb_Arena_New();
  srv_http_infer_reply_t out;
  srv_status_t *st = srv_http_infer_encode(&types_d, &req, &opts, &resp, a, &out);
  CHECK(st != NULL);
  if (st != NULL) {
    CHECK_STREQ(srv_status_message(st), message);
    srv_status_free(st);
  }
  upb_Arena_Free(a);
}

static void test_encode_refusals(void) {
  static int64_t two[] = {2};
  static uint16_t h[] = {0x3c00, 0};
  struct TRITONBACKEND_Output o = {"F16", TRITONSERVER_TYPE_FP16, two, 1, h,
                                   4,     .in_place = false};
  encode_refused(&o,
                 "sending FP16 data via JSON is not supported. Please use the binary "
                 "data format for output");
  static int32_t i32[] = {1, 2};
  o = (struct TRITONBACKEND_Output){"I32", TRITONSERVER_TYPE_INT32, two, 1, i32,
                                    4,     .in_place = false};
  encode_refused(&o, "output tensor shape does not match size of output for 'I32'");
  static float nan2[] = {NAN, 0};
  o = (struct TRITONBACKEND_Output){"F32", TRITONSERVER_TYPE_FP32, two, 1, nan2,
                                    8,     .in_place = false};
  encode_refused(&o,
                 "output 'F32': element 0 has no JSON form (NaN, infinity, or UINT64 "
                 "above 2^63-1); request it with binary_data");
  static char bad[] = "\x02\0\0\0hi\x09\0\0\0z";
  o = (struct TRITONBACKEND_Output){"STR",          TRITONSERVER_TYPE_BYTES, two, 1, bad,
                                    sizeof bad - 1, .in_place = false};
  encode_refused(&o, "output tensor shape does not match size of output for 'STR'");
  static char latin[] = "\x01\0\0\0\xff\x01\0\0\0z";
  o = (struct TRITONBACKEND_Output){
      "STR", TRITONSERVER_TYPE_BYTES, two, 1, latin, sizeof latin - 1, .in_place = false};
  encode_refused(&o,
                 "output 'STR': element 0 is not UTF-8 text; request it with "
                 "binary_data");
}

static void test_classification(void) {
  static int64_t shape[] = {2, 4};
  static float probs[] = {0.1f, 0.7f, 0.2f, 0.7f, 5, 4, 3, 2};
  struct TRITONBACKEND_Output o = {"OUTPUT0",    TRITONSERVER_TYPE_FP32, shape, 2, probs,
                                   sizeof probs, .in_place = false};
  TRITONBACKEND_Response resp = response_of(&o, 1);
  const char *names[] = {"OUTPUT0"};
  srv_http_output_opt_t opt = {.class_count = 2};
  srv_http_infer_opts_t opts = {&opt, 1, false};
  TRITONBACKEND_Request req = request_for(names, 1, "");
  upb_Arena *a = upb_Arena_New();
  srv_http_infer_reply_t out;
  srv_status_t *st = srv_http_infer_encode(&simple_d, &req, &opts, &resp, a, &out);
  REQUIRE(st == NULL);
  CHECK_STREQ(out.json,
              "{\"model_name\":\"simple\",\"model_version\":\"1\",\"outputs\":[{\"name\":"
              "\"OUTPUT0\",\"datatype\":\"BYTES\",\"shape\":[2,2],\"data\":["
              "\"0.700000:1\",\"0.700000:3\",\"5.000000:0\",\"4.000000:1\"]}]}");
  /* k above the classes: all of them; binary: a BYTES part */
  opt.class_count = 9;
  opt.binary = true;
  st = srv_http_infer_encode(&simple_d, &req, &opts, &resp, a, &out);
  REQUIRE(st == NULL);
  CHECK(strstr(out.json, "\"shape\":[2,4]") != NULL);
  CHECK_EQ_U64(out.part_count, 1);
  CHECK_EQ_U64(out.parts[0].size, 8 * (4 + 10));
  upb_Arena_Free(a);
  /* Integer outputs print as integers (Triton's std::to_string). */
  static int32_t ints[] = {3, 9, -2, 7, -8, -6, -9, -7};
  o = (struct TRITONBACKEND_Output){"OUTPUT0",   TRITONSERVER_TYPE_INT32, shape, 2, ints,
                                    sizeof ints, .in_place = false};
  resp = response_of(&o, 1);
  opt = (srv_http_output_opt_t){.class_count = 2};
  a = upb_Arena_New();
  st = srv_http_infer_encode(&simple_d, &req, &opts, &resp, a, &out);
  REQUIRE(st == NULL);
  CHECK(strstr(out.json, "\"data\":[\"9:1\",\"7:3\",\"-6:1\",\"-7:3\"]") != NULL);
  upb_Arena_Free(a);
  static int8_t i8[] = {-128, 127, -1, 0, -3, -2, -100, -50};
  static uint64_t u64[] = {1, UINT64_MAX, 0, 2, 7, 8, 9, 10};
  o = (struct TRITONBACKEND_Output){"OUTPUT0", TRITONSERVER_TYPE_INT8, shape, 2, i8,
                                    sizeof i8, .in_place = false};
  resp = response_of(&o, 1);
  opt.class_count = 1;
  a = upb_Arena_New();
  st = srv_http_infer_encode(&simple_d, &req, &opts, &resp, a, &out);
  REQUIRE(st == NULL);
  CHECK(strstr(out.json, "\"data\":[\"127:1\",\"-2:1\"]") != NULL);
  o = (struct TRITONBACKEND_Output){"OUTPUT0",  TRITONSERVER_TYPE_UINT64, shape, 2, u64,
                                    sizeof u64, .in_place = false};
  resp = response_of(&o, 1);
  st = srv_http_infer_encode(&simple_d, &req, &opts, &resp, a, &out);
  REQUIRE(st == NULL);
  CHECK(strstr(out.json, "\"data\":[\"18446744073709551615:1\",\"10:3\"]") != NULL);
  upb_Arena_Free(a);
  static char strs[] = "\x01\0\0\0a";
  static int64_t one[] = {1};
  o = (struct TRITONBACKEND_Output){"STR", TRITONSERVER_TYPE_BYTES, one, 1, strs,
                                    5,     .in_place = false};
  TRITONBACKEND_Response r2 = response_of(&o, 1);
  names[0] = "STR";
  a = upb_Arena_New();
  st = srv_http_infer_encode(&types_d, &req, &opts, &r2, a, &out);
  REQUIRE(st != NULL);
  CHECK_STREQ(srv_status_message(st),
              "class result not available for output due to unsupported type 'BYTES'");
  srv_status_free(st);
  upb_Arena_Free(a);
}

static void test_status_and_error_body(void) {
  CHECK_EQ_U64(srv_http_status_of(TRITONSERVER_ERROR_INVALID_ARG), 400);
  CHECK_EQ_U64(srv_http_status_of(TRITONSERVER_ERROR_NOT_FOUND), 404);
  CHECK_EQ_U64(srv_http_status_of(TRITONSERVER_ERROR_INTERNAL), 500);
  CHECK_EQ_U64(srv_http_status_of(TRITONSERVER_ERROR_UNAVAILABLE), 503);
  CHECK_EQ_U64(srv_http_status_of(TRITONSERVER_ERROR_UNSUPPORTED), 501);
  CHECK_EQ_U64(srv_http_status_of(TRITONSERVER_ERROR_ALREADY_EXISTS), 400);
  CHECK_EQ_U64(srv_http_status_of(TRITONSERVER_ERROR_CANCELLED), 400);
  CHECK_EQ_U64(srv_http_status_of(TRITONSERVER_ERROR_UNKNOWN), 400);
  CHECK_EQ_U64(srv_http_code_of_grpc(GRPC_STATUS_INVALID_ARGUMENT), 400);
  CHECK_EQ_U64(srv_http_code_of_grpc(GRPC_STATUS_NOT_FOUND), 404);
  CHECK_EQ_U64(srv_http_code_of_grpc(GRPC_STATUS_UNAVAILABLE), 503);
  CHECK_EQ_U64(srv_http_code_of_grpc(GRPC_STATUS_UNIMPLEMENTED), 501);
  CHECK_EQ_U64(srv_http_code_of_grpc(GRPC_STATUS_INTERNAL), 500);
  upb_Arena *a = upb_Arena_New();
  size_t len;
  const char *body = srv_http_error_body("bad \"x\"\n", a, &len);
  CHECK_STREQ(body, "{\"error\":\"bad \\\"x\\\"\\n\"}");
  CHECK_EQ_U64(len, strlen(body));
  upb_Arena_Free(a);
}

/* generate: requests for gen, and the refusals' texts. */
static void test_generate(void) {
  void *mem;
  upb_Arena *a = dirty_arena(&mem);
  const char *json =
      "{\"text_input\":\"hello\",\"max_tokens\":[7],\"stream\":false,"
      "\"parameters\":{\"sequence_id\":9}}";
  TRITONBACKEND_Request *r = NULL;
  srv_status_t *st = srv_http_generate_parse(gen, &gen_d, json, strlen(json), a, &r);
  REQUIRE(st == NULL);
  inputs_on_host(r);
  CHECK_EQ_U64(r->input_count, 2);
  CHECK_EQ_U64(r->correlation_id, 9);
  CHECK_EQ_U64(r->batch_size, 1);
  const struct TRITONBACKEND_Input *t = input_named(r, "text_input");
  REQUIRE(t != NULL);
  CHECK_EQ_U64(t->dims_count, 2); /* [1 (batch), 1] */
  CHECK_EQ_U64(t->shape[1], 1);
  CHECK(memcmp(t->buffers[0].base, "\x05\0\0\0hello", 9) == 0);
  const struct TRITONBACKEND_Input *mt = input_named(r, "max_tokens");
  CHECK_EQ_U64(*(const int32_t *)mt->buffers[0].base, 7);
  /* a variable dimension takes the count */
  json = "{\"text_input\":\"a\",\"bad_words\":[\"x\",\"y\",\"z\"]}";
  st = srv_http_generate_parse(gen, &gen_d, json, strlen(json), a, &r);
  REQUIRE(st == NULL);
  inputs_on_host(r);
  const struct TRITONBACKEND_Input *bw = input_named(r, "bad_words");
  CHECK_EQ_U64(bw->shape[1], 3);
  static const struct {
    const char *json, *message;
  } bad[] = {
      {"{\"max_tokens\":1}",
       "expected number of inputs between 1 and 3 but got 1 inputs for model 'gen'. Got "
       "inputs ['max_tokens'], but missing required inputs ['text_input']. Please "
       "provide all required inputs."},
      {"{\"text_input\":1}",
       "Unable to parse 'data': element 0 of input 'text_input' is not a string"},
      {"{\"text_input\":[\"a\",\"b\"]}",
       "Unable to parse 'data': Shape does not match true shape of 'data' field"},
      {"{\"text_input\":[[\"a\"]]}",
       "Unable to parse 'data': Shape does not match true shape of 'data' field"},
      {"{\"text_input\":\"a\",\"parameters\":{\"sequence_start\":3}}",
       "Unable to parse 'sequence_start'"},
      {"nope",
       "failed to parse the request JSON buffer: '[' or '{' expected near 'nope' "
       "at 4"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    st = srv_http_generate_parse(gen, &gen_d, bad[i].json, strlen(bad[i].json), a, &r);
    CHECK(st != NULL);
    if (st == NULL) continue;
    if (strcmp(srv_status_message(st), bad[i].message) != 0)
      fprintf(stderr, "  generate %zu: %s\n", i, srv_status_message(st));
    CHECK_STREQ(srv_status_message(st), bad[i].message);
    srv_status_free(st);
  }
  upb_Arena_Free(a);
  free(mem);
}

/* generate's reply: one element a scalar, more an array; its event. */
static void test_generate_reply(void) {
  upb_Arena *a = upb_Arena_New();
  TRITONBACKEND_Request *r = NULL;
  srv_status_t *st;
  const char *json;
  static int64_t one[] = {1, 1}, three[] = {1, 3};
  static char text[] = "\x05\0\0\0world";
  static int32_t ids[] = {4, 5, 6};
  struct TRITONBACKEND_Output o[] = {
      {"text_output", TRITONSERVER_TYPE_BYTES, one, 2, text, sizeof text - 1,
       .in_place = false},
      {"token_ids", TRITONSERVER_TYPE_INT32, three, 2, ids, sizeof ids,
       .in_place = false},
  };
  TRITONBACKEND_Response resp = response_of(o, 2);
  const char *out;
  size_t len;
  json = "{\"text_input\":\"a\"}";
  st = srv_http_generate_parse(gen, &gen_d, json, strlen(json), a, &r);
  REQUIRE(st == NULL);
  st = srv_http_generate_encode(&gen_d, r, &resp, a, &out, &len);
  REQUIRE(st == NULL);
  CHECK_STREQ(out,
              "{\"model_name\":\"gen\",\"model_version\":\"1\","
              "\"text_output\":\"world\",\"token_ids\":[4,5,6]}");
  size_t ev_len;
  const char *ev = srv_http_sse_event(out, len, a, &ev_len);
  CHECK_EQ_U64(ev_len, len + 8);
  CHECK(strncmp(ev, "data: {\"model_name\"", 19) == 0);
  CHECK(strcmp(ev + ev_len - 3, "}\n\n") == 0);
  upb_Arena_Free(a);
}

static srv_model_t *model_make(const char *name, const char *text, srv_model_desc_t *d) {
  upb_Arena *a = upb_Arena_New();
  char err[256];
  inference_ModelConfig *c =
      cfg_model_config_parse(text, strlen(text), "config.pbtxt", a, err, sizeof err);
  srv_model_t *m = NULL;
  srv_status_t *st = c ? srv_model_bare_new(name, c, &m) : NULL;
  if (c == NULL || st != NULL) {
    fprintf(stderr, "%s: %s\n", name, c ? srv_status_message(st) : err);
    exit(1);
  }
  upb_Arena_Free(a);
  srv_model_describe(m, d);
  return m;
}

/* A table with region "r": a 128-byte object holding 0..31 as INT32,
 * unlinked at once (the mapping stays). */
static srv_shm_t *region_make(void) {
  srv_shm_t *t = srv_shm_new(true);
  char key[64];
  snprintf(key, sizeof key, "/nereid-infer-json-test-%d", (int)getpid());
  int fd = shm_open(key, O_RDWR | O_CREAT | O_EXCL, 0600);
  int32_t v[32];
  for (int i = 0; i < 32; i++) v[i] = i;
  if (fd < 0 || write(fd, v, sizeof v) != (ssize_t)sizeof v ||
      srv_shm_register_system(t, "r", 1, key, strlen(key), 0, 128) != NULL) {
    fprintf(stderr, "cannot make the shared-memory region\n");
    exit(1);
  }
  shm_unlink(key);
  close(fd);
  return t;
}

int main(void) {
  simple = model_make("simple",
                      "name: 'simple' backend: 'none' max_batch_size: 8\n"
                      "input [{name: 'INPUT0' data_type: TYPE_INT32 dims: [16]},\n"
                      "       {name: 'INPUT1' data_type: TYPE_INT32 dims: [16]}]\n"
                      "output [{name: 'OUTPUT0' data_type: TYPE_INT32 dims: [16]},\n"
                      "        {name: 'OUTPUT1' data_type: TYPE_INT32 dims: [16]}]",
                      &simple_d);
  types =
      model_make("types",
                 "name: 'types' backend: 'none' max_batch_size: 0\n"
                 "input [{name: 'BOOL' data_type: TYPE_BOOL dims: [2] optional: true},\n"
                 "  {name: 'I8' data_type: TYPE_INT8 dims: [2] optional: true},\n"
                 "  {name: 'I16' data_type: TYPE_INT16 dims: [2] optional: true},\n"
                 "  {name: 'I32' data_type: TYPE_INT32 dims: [2] optional: true},\n"
                 "  {name: 'I64' data_type: TYPE_INT64 dims: [2] optional: true},\n"
                 "  {name: 'U8' data_type: TYPE_UINT8 dims: [2] optional: true},\n"
                 "  {name: 'U16' data_type: TYPE_UINT16 dims: [2] optional: true},\n"
                 "  {name: 'U32' data_type: TYPE_UINT32 dims: [2] optional: true},\n"
                 "  {name: 'U64' data_type: TYPE_UINT64 dims: [2] optional: true},\n"
                 "  {name: 'F16' data_type: TYPE_FP16 dims: [2] optional: true},\n"
                 "  {name: 'BF16' data_type: TYPE_BF16 dims: [2] optional: true},\n"
                 "  {name: 'F32' data_type: TYPE_FP32 dims: [2] optional: true},\n"
                 "  {name: 'F64' data_type: TYPE_FP64 dims: [2] optional: true},\n"
                 "  {name: 'STR' data_type: TYPE_STRING dims: [-1] optional: true},\n"
                 "  {name: 'NEST' data_type: TYPE_INT32 dims: [2, 3] optional: true}]\n"
                 "output [{name: 'OUT' data_type: TYPE_INT32 dims: [2]}]",
                 &types_d);
  gen = model_make(
      "gen",
      "name: 'gen' backend: 'none' max_batch_size: 4\n"
      "input [{name: 'text_input' data_type: TYPE_STRING dims: [1]},\n"
      "  {name: 'max_tokens' data_type: TYPE_INT32 dims: [1] optional: true},\n"
      "  {name: 'bad_words' data_type: TYPE_STRING dims: [-1] optional: true}]\n"
      "output [{name: 'text_output' data_type: TYPE_STRING dims: [-1]},\n"
      "  {name: 'token_ids' data_type: TYPE_INT32 dims: [-1]}]",
      &gen_d);
  shm = region_make();
  static const unit_case_t cases[] = {
      UNIT_CASE(test_simple_flat_and_nested),
      UNIT_CASE(test_every_datatype_in),
      UNIT_CASE(test_datatype_refusals),
      UNIT_CASE(test_malformed),
      UNIT_CASE(test_binary_inputs),
      UNIT_CASE(test_header_memo),
      UNIT_CASE(test_parameters),
      UNIT_CASE(test_parameter_bounds),
      UNIT_CASE(test_outputs),
      UNIT_CASE(test_shared_memory),
      UNIT_CASE(test_encode_json_types),
      UNIT_CASE(test_encode_refusals),
      UNIT_CASE(test_classification),
      UNIT_CASE(test_status_and_error_body),
      UNIT_CASE(test_generate),
      UNIT_CASE(test_generate_reply),
  };
  int rc = unit_run("infer_json", cases, sizeof cases / sizeof cases[0]);
  srv_model_bare_free(simple);
  srv_model_bare_free(types);
  srv_model_bare_free(gen);
  srv_shm_free(shm);
  return rc;
}
