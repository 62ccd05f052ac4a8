/* The parameters of a ModelInferRequest as srv_infer_request_build reads
 * them for ModelInfer and ModelStreamInfer: the sequence ones (Triton's
 * sequence extension: the correlation ID as int64, uint64 or string, the
 * START and END flags, Triton's texts for a parameter of the wrong type,
 * and our bounds on string ids), and those handed on to the backend (the
 * types Triton hands on, the keys it keeps, its refusals, our bounds). Each request is encoded, then decoded
 * with aliased strings as the RPCs decode it; the received bytes are
 * overwritten once the request is built, so a string id that still
 * pointed into them would show. One thread. */
#include "server/grpc/infer_request.h"

#include <stdlib.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "server/model/model_bare.h"
#include "test/unit/unit.h"
#include "upb/decode.h"

static srv_model_t *model;
static srv_model_desc_t desc;

/* A parameter to set on a request: its key and kind, then its value. */
typedef enum { P_BOOL, P_INT64, P_UINT64, P_STRING, P_DOUBLE, P_NONE } kind_t;
typedef struct {
  const char *key;
  kind_t kind;
  int64_t i;
  const char *s;
  size_t s_len; /* bytes of s; 0: strlen(s) */
} param_t;

/* Parameters, by kind. */
#define BOOL_P(k, v) \
  { .key = (k), .kind = P_BOOL, .i = (v) }
#define INT64_P(k, v) \
  { .key = (k), .kind = P_INT64, .i = (v) }
#define UINT64_P(k, v) \
  { .key = (k), .kind = P_UINT64, .i = (int64_t)(v) }
#define STRING_P(k, v) \
  { .key = (k), .kind = P_STRING, .s = (v) }
#define DOUBLE_P(k) \
  { .key = (k), .kind = P_DOUBLE }
#define NONE_P(k) \
  { .key = (k), .kind = P_NONE }

/* What a build gave: the request's sequence fields, or the error. */
typedef struct {
  bool ok;
  uint64_t id;
  char id_string[512];
  bool has_id_string;
  uint32_t flags;
  grpc_status_code code;
  char message[SRV_STATUS_MESSAGE_MAX];
  uint32_t param_count;
  char params[1024]; /* "key=T:value," per parameter, sorted */
} built_t;

static void param_add(inference_ModelInferRequest *req, const param_t *p, upb_Arena *a) {
  inference_InferParameter *v = inference_InferParameter_new(a);
  switch (p->kind) {
    case P_BOOL:
      inference_InferParameter_set_bool_param(v, p->i != 0);
      break;
    case P_INT64:
      inference_InferParameter_set_int64_param(v, p->i);
      break;
    case P_UINT64:
      inference_InferParameter_set_uint64_param(v, (uint64_t)p->i);
      break;
    case P_STRING:
      inference_InferParameter_set_string_param(
          v, upb_StringView_FromDataAndSize(p->s, p->s_len ? p->s_len : strlen(p->s)));
      break;
    case P_DOUBLE:
      inference_InferParameter_set_double_param(v, 1.5);
      break;
    case P_NONE: /* no value chosen at all */
      break;
  }
  inference_ModelInferRequest_parameters_set(req, upb_StringView_FromString(p->key), v,
                                             a);
}

/* The inputs `encode` sends, by name, and how many raw_input_contents:
 * one input IN and its data unless a test sets them. */
static const char *const *input_names;
static size_t input_count = 1, raw_count = 1;

/* The bytes of a request for model "m" (input IN, one INT32) with params. */
static char *encode(const param_t *params, size_t n, size_t *len) {
  upb_Arena *a = upb_Arena_New();
  inference_ModelInferRequest *req = inference_ModelInferRequest_new(a);
  inference_ModelInferRequest_set_model_name(req, upb_StringView_FromString("m"));
  for (size_t i = 0; i < input_count; i++) {
    inference_ModelInferRequest_InferInputTensor *in =
        inference_ModelInferRequest_add_inputs(req, a);
    inference_ModelInferRequest_InferInputTensor_set_name(
        in, upb_StringView_FromString(input_names != NULL ? input_names[i] : "IN"));
    inference_ModelInferRequest_InferInputTensor_set_datatype(
        in, upb_StringView_FromString("INT32"));
    inference_ModelInferRequest_InferInputTensor_add_shape(in, 1, a);
  }
  static const int32_t value = 7;
  for (size_t i = 0; i < raw_count; i++)
    inference_ModelInferRequest_add_raw_input_contents(
        req, upb_StringView_FromDataAndSize((const char *)&value, sizeof value), a);
  for (size_t i = 0; i < n; i++) param_add(req, &params[i], a);
  char *bytes = inference_ModelInferRequest_serialize(req, a, len);
  char *copy = malloc(*len ? *len : 1);
  if (bytes == NULL || copy == NULL) abort();
  memcpy(copy, bytes, *len);
  upb_Arena_Free(a);
  return copy;
}

static int text_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The request's parameters as text, sorted (a map's order is the hash's). */
static void params_text(const TRITONBACKEND_Request *r, built_t *out) {
  char items[8][128];
  const char *sorted[8];
  uint32_t n = r->param_count < 8 ? r->param_count : 8;
  for (uint32_t i = 0; i < n; i++) {
    const struct srv_request_param *p = &r->params[i];
    switch (p->type) {
      case TRITONSERVER_PARAMETER_STRING:
        snprintf(items[i], sizeof items[i], "%s=s:%s,", p->key, p->value.s);
        break;
      case TRITONSERVER_PARAMETER_INT:
        snprintf(items[i], sizeof items[i], "%s=i:%lld,", p->key, (long long)p->value.i);
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        snprintf(items[i], sizeof items[i], "%s=b:%d,", p->key, p->value.b);
        break;
      default:
        snprintf(items[i], sizeof items[i], "%s=d:%g,", p->key, p->value.d);
    }
    sorted[i] = items[i];
  }
  qsort(sorted, n, sizeof *sorted, text_cmp);
  out->param_count = r->param_count;
  for (uint32_t i = 0; i < n; i++) strcat(out->params, sorted[i]);
}

static built_t build(const param_t *params, size_t n) {
  built_t out;
  memset(&out, 0, sizeof out);
  size_t len;
  char *bytes = encode(params, n, &len);
  upb_Arena *a = upb_Arena_New();
  inference_ModelInferRequest *req = inference_ModelInferRequest_new(a);
  if (upb_Decode(bytes, len, req, &inference_ModelInferRequest_msginit, NULL,
                 kUpb_DecodeOption_AliasString, a) != kUpb_DecodeStatus_Ok)
    abort();
  TRITONBACKEND_Request *r = NULL;
  srv_shm_uses_t *uses = NULL;
  srv_shm_t *shm = srv_shm_new(true);
  srv_status_t *st = srv_infer_request_build(model, &desc, req, shm, a, &r, &uses);
  srv_shm_uses_free(uses);
  srv_shm_free(shm);
  memset(bytes, 'X', len); /* the received bytes are gone; the request stays */
  if (st != NULL) {
    out.code = srv_status_code(st);
    snprintf(out.message, sizeof out.message, "%s", srv_status_message(st));
    srv_status_free(st);
  } else {
    out.ok = true;
    CHECK_STREQ(r->id, ""); /* no id sent */
    CHECK_EQ_U64(r->input_count, 1);
    CHECK_EQ_U64(r->inputs[0].buffers[0].memory_type, TRITONSERVER_MEMORY_CPU);
    CHECK_EQ_U64(r->inputs[0].buffers[0].memory_type_id, 0);
    CHECK_EQ_U64(r->inputs[0].byte_size, 4);
    params_text(r, &out);
    out.id = r->correlation_id;
    out.flags = r->flags;
    if (r->correlation_id_string != NULL) {
      out.has_id_string = true;
      snprintf(out.id_string, sizeof out.id_string, "%s", r->correlation_id_string);
    }
  }
  upb_Arena_Free(a);
  free(bytes);
  return out;
}

#define BUILD(...)                          \
  ({                                        \
    const param_t ps_[] = {__VA_ARGS__};    \
    build(ps_, sizeof ps_ / sizeof ps_[0]); \
  })

static void test_no_sequence(void) {
  built_t b = build(NULL, 0);
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.id, 0);
  CHECK(!b.has_id_string);
  CHECK_EQ_U64(b.flags, 0);
}

static void test_integer_ids(void) {
  built_t b = BUILD(INT64_P("sequence_id", 42));
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.id, 42);
  CHECK(!b.has_id_string);
  b = BUILD(UINT64_P("sequence_id", UINT64_MAX));
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.id, UINT64_MAX);
  /* A negative int64 is its bits, as Triton hands it to the uint64 API. */
  b = BUILD(INT64_P("sequence_id", -2));
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.id, (uint64_t)-2);
}

static void test_string_ids(void) {
  built_t b = BUILD(STRING_P("sequence_id", "conversation-7"));
  REQUIRE(b.ok);
  CHECK(b.has_id_string);
  CHECK_STREQ(b.id_string, "conversation-7"); /* a copy: the bytes were overwritten */
  CHECK_EQ_U64(b.id, 0);
  b = BUILD(STRING_P("sequence_id", "")); /* "no sequence", left to the scheduler */
  REQUIRE(b.ok);
  CHECK(b.has_id_string);
  CHECK_STREQ(b.id_string, "");
  char id[SRV_GRPC_SEQUENCE_ID_MAX + 2];
  memset(id, 'q', sizeof id - 1);
  id[SRV_GRPC_SEQUENCE_ID_MAX] = '\0';
  b = BUILD(STRING_P("sequence_id", id));
  REQUIRE(b.ok);
  CHECK_EQ_U64(strlen(b.id_string), SRV_GRPC_SEQUENCE_ID_MAX);
  id[SRV_GRPC_SEQUENCE_ID_MAX] = 'q';
  id[SRV_GRPC_SEQUENCE_ID_MAX + 1] = '\0';
  b = BUILD(STRING_P("sequence_id", id));
  CHECK(!b.ok);
  CHECK_EQ_U64(b.code, GRPC_STATUS_INVALID_ARGUMENT);
  CHECK_STREQ(b.message,
              "model 'm': parameter 'sequence_id' is a string of 257 bytes, above the "
              "limit of 256");
  b = BUILD({.key = "sequence_id", .kind = P_STRING, .s = "a\0b", .s_len = 3});
  CHECK(!b.ok);
  CHECK_EQ_U64(b.code, GRPC_STATUS_INVALID_ARGUMENT);
  CHECK_STREQ(b.message, "model 'm': parameter 'sequence_id' holds a NUL byte");
}

static void test_flags(void) {
  built_t b = BUILD(INT64_P("sequence_id", 5), BOOL_P("sequence_start", 1));
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.flags, TRITONSERVER_REQUEST_FLAG_SEQUENCE_START);
  b = BUILD(INT64_P("sequence_id", 5), BOOL_P("sequence_end", 1));
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.flags, TRITONSERVER_REQUEST_FLAG_SEQUENCE_END);
  b = BUILD(STRING_P("sequence_id", "s"), BOOL_P("sequence_start", 1),
            BOOL_P("sequence_end", 1));
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.flags, TRITONSERVER_REQUEST_FLAG_SEQUENCE_START |
                            TRITONSERVER_REQUEST_FLAG_SEQUENCE_END);
  CHECK_STREQ(b.id_string, "s");
  b = BUILD(BOOL_P("sequence_start", 0), BOOL_P("sequence_end", 0));
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.flags, 0);
}

/* A request with one parameter, refused with a text. */
typedef struct {
  param_t p;
  const char *message;
} refusal_t;

static void refusals_check(const refusal_t *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    built_t b = build(&cases[i].p, 1);
    CHECK(!b.ok);
    CHECK_EQ_U64(b.code, GRPC_STATUS_INVALID_ARGUMENT);
    CHECK_STREQ(b.message, cases[i].message);
  }
}

/* Triton's texts, word for word, after the model's name: clients may
 * match them. */
static void test_wrong_types(void) {
  static const char id_msg[] =
      "model 'm': invalid value type for 'sequence_id' parameter, expected "
      "int64_param or string_param.";
  static const char start_msg[] =
      "model 'm': invalid value type for 'sequence_start' parameter, expected "
      "bool_param.";
  static const char end_msg[] =
      "model 'm': invalid value type for 'sequence_end' parameter, expected "
      "bool_param.";
  static const refusal_t cases[] = {
      {BOOL_P("sequence_id", 1), id_msg},
      {DOUBLE_P("sequence_id"), id_msg},
      {NONE_P("sequence_id"), id_msg},
      {INT64_P("sequence_start", 1), start_msg},
      {STRING_P("sequence_start", "true"), start_msg},
      {NONE_P("sequence_start"), start_msg},
      {UINT64_P("sequence_end", 1), end_msg},
      {DOUBLE_P("sequence_end"), end_msg},
  };
  refusals_check(cases, sizeof cases / sizeof cases[0]);
}

/* Every key Triton's gRPC frontend does not keep goes to the backend, with
 * its type; the server's own keys do not. */
static void test_handed_on(void) {
  built_t b = build(NULL, 0);
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.param_count, 0);
  b = BUILD(STRING_P("s", "text"), INT64_P("n", -3), BOOL_P("b", 1), DOUBLE_P("d"),
            INT64_P("priority", 2), INT64_P("timeout", 5), INT64_P("sequence_id", 9),
            BOOL_P("sequence_start", 1), BOOL_P("sequence_end", 0),
            BOOL_P("triton_enable_empty_final_response", 1),
            BOOL_P("nereid_aggregate_responses", 1));
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.param_count, 4);
  CHECK_STREQ(b.params, "b=b:1,d=d:1.5,n=i:-3,s=s:text,"); /* copies: bytes overwritten */
  b = BUILD(STRING_P("", "")); /* an empty key and value are a parameter too */
  REQUIRE(b.ok);
  CHECK_STREQ(b.params, "=s:,");
}

/* Triton's refusals, after the model's name. */
static void test_refused(void) {
  static const char triton_msg[] =
      "model 'm': parameter keys starting with 'triton_' are reserved for Triton usage. "
      "Only the following keys starting with 'triton_' are allowed: "
      "triton_enable_empty_final_response";
  static const refusal_t cases[] = {
      {UINT64_P("u", 1), "model 'm': invalid value type for 'u' parameter, expected "
                         "int64_param, bool_param, or string_param."},
      {NONE_P("x"), "model 'm': invalid value type for 'x' parameter, expected "
                    "int64_param, bool_param, or string_param."},
      {STRING_P("triton_x", "1"), triton_msg},
      {BOOL_P("triton_", 1), triton_msg},
      {INT64_P("triton_enable_empty_final_response", 1),
       "model 'm': invalid value type for 'triton_enable_empty_final_response' "
       "parameter, expected bool_param."},
  };
  refusals_check(cases, sizeof cases / sizeof cases[0]);
}

/* Our bounds: count, key length, string length, NUL bytes. */
static void test_bounds(void) {
  static char keys[SRV_REQUEST_PARAMS_MAX + 1][8];
  param_t ps[SRV_REQUEST_PARAMS_MAX + 1];
  for (size_t i = 0; i <= SRV_REQUEST_PARAMS_MAX; i++) {
    snprintf(keys[i], sizeof keys[i], "k%zu", i);
    ps[i] = (param_t)INT64_P(keys[i], (int64_t)i);
  }
  built_t b = build(ps, SRV_REQUEST_PARAMS_MAX);
  REQUIRE(b.ok);
  CHECK_EQ_U64(b.param_count, SRV_REQUEST_PARAMS_MAX);
  /* Reserved keys do not count. */
  ps[SRV_REQUEST_PARAMS_MAX] = (param_t)INT64_P("priority", 1);
  CHECK(build(ps, SRV_REQUEST_PARAMS_MAX + 1).ok);
  ps[SRV_REQUEST_PARAMS_MAX] = (param_t)INT64_P(keys[SRV_REQUEST_PARAMS_MAX], 1);
  b = build(ps, SRV_REQUEST_PARAMS_MAX + 1);
  CHECK(!b.ok);
  CHECK_STREQ(b.message, "model 'm': more than 128 request parameters");
  static char key[SRV_REQUEST_PARAM_KEY_MAX + 2];
  memset(key, 'k', SRV_REQUEST_PARAM_KEY_MAX);
  CHECK(BUILD(INT64_P(key, 1)).ok);
  key[SRV_REQUEST_PARAM_KEY_MAX] = 'k';
  b = BUILD(INT64_P(key, 1));
  CHECK(!b.ok);
  CHECK_STREQ(b.message, "model 'm': a parameter key of 257 bytes is above the limit of 256");
  static char value[SRV_REQUEST_PARAM_STRING_MAX + 2];
  memset(value, 'v', SRV_REQUEST_PARAM_STRING_MAX);
  CHECK(BUILD(STRING_P("s", value)).ok);
  value[SRV_REQUEST_PARAM_STRING_MAX] = 'v';
  b = BUILD(STRING_P("s", value));
  CHECK(!b.ok);
  CHECK_STREQ(b.message,
              "model 'm': parameter 's' is a string of 65537 bytes, above the limit of 65536");
  b = BUILD({.key = "s", .kind = P_STRING, .s = "a\0b", .s_len = 3});
  CHECK(!b.ok);
  CHECK_STREQ(b.message, "model 'm': parameter 's' holds a NUL byte");
}

/* The inputs' first checks, in Triton's order: where each input's data is
 * (every input), then a name sent twice, then the count. */
static built_t build_inputs(const char *const *names, size_t n, size_t nraw) {
  input_names = names;
  input_count = n;
  raw_count = nraw;
  built_t b = build(NULL, 0);
  input_names = NULL;
  input_count = raw_count = 1;
  return b;
}

/* One refused set of inputs and the text it is refused with. */
static void inputs_refused(const char *const *names, size_t n, size_t nraw,
                           const char *message) {
  built_t b = build_inputs(names, n, nraw);
  CHECK(!b.ok);
  CHECK_STREQ(b.message, message);
}

static void test_inputs_order(void) {
  static const char *const twice[2] = {"IN", "IN"}, *const other[2] = {"IN", "X"};
  /* The second IN has no data: that comes first. */
  inputs_refused(twice, 2, 1,
                 "unable to find data for input tensor 'IN' for model 'm' in request.");
  inputs_refused(twice, 2, 3, "model 'm': 3 raw_input_contents given for 2 inputs");
  inputs_refused(twice, 2, 2, "input 'IN' already exists in request for model 'm'");
  inputs_refused(
      other, 2, 2,
      "expected 1 inputs but got 2 inputs for model 'm'. Got inputs ['IN','X'], "
      "but missing required inputs []. Please provide all required inputs.");
  inputs_refused(other + 1, 1, 1, "unexpected inference input 'X' for model 'm'");
  inputs_refused(other, 0, 0,
                 "expected 1 inputs but got 0 inputs for model 'm'. Got inputs [], but "
                 "missing required inputs ['IN']. Please provide all required inputs.");
}

int main(void) {
  static const char text[] =
      "name: 'm' backend: 'none' max_batch_size: 0\n"
      "input [{ name: 'IN' data_type: TYPE_INT32 dims: [1] }]\n"
      "output [{ name: 'OUT' data_type: TYPE_INT32 dims: [1] }]";
  if (srv_model_bare_from_text("m", text, &model) != NULL) return 1;
  srv_model_describe(model, &desc);
  static const unit_case_t cases[] = {
      UNIT_CASE(test_no_sequence), UNIT_CASE(test_integer_ids),
      UNIT_CASE(test_string_ids),  UNIT_CASE(test_flags),
      UNIT_CASE(test_wrong_types), UNIT_CASE(test_handed_on),
      UNIT_CASE(test_refused),     UNIT_CASE(test_bounds),
      UNIT_CASE(test_inputs_order),
  };
  int rc = unit_run("infer_request", cases, sizeof cases / sizeof cases[0]);
  srv_model_bare_free(model);
  return rc;
}
