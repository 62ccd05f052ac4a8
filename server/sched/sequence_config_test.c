/* sequence_batching settings (sequence_config.h) read from config texts:
 * every accepted form of controls, strategies and states with the values
 * the scheduler gets, every refusal with the exact text a client sees,
 * the slot bound at its limit and one past it, and initial state files
 * (short, missing, escaping, too large, not regular) in a folder under
 * $TEST_TMPDIR. One thread. */
#include "server/sched/sequence_config.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/config/model_config.h"
#include "server/model/config_limits.h"
#include "test/unit/unit.h"

static char dir[512];      /* the model's folder */
static srv_seq_config_t c; /* the last config read */
static upb_Arena *arena;   /* holds c; renewed by each read */

/* Reads `text` into c: NULL when accepted, else the message (static). */
static const char *seq_read(const char *text) {
  static char msg[SRV_STATUS_MESSAGE_MAX];
  if (arena != NULL) upb_Arena_Free(arena);
  arena = upb_Arena_New();
  char err[256];
  inference_ModelConfig *config =
      cfg_model_config_parse(text, strlen(text), "config.pbtxt", arena, err, sizeof err);
  if (config == NULL) {
    fprintf(stderr, "  does not parse: %s\n", err);
    return "(no parse)";
  }
  memset(&c, 0xAB, sizeof c); /* an error must leave it as it is */
  srv_seq_config_t before = c;
  srv_status_t *st = srv_seq_config_read(config, "m", "config.pbtxt", dir, arena, &c);
  if (st == NULL) return NULL;
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
  CHECK(memcmp(&before, &c, sizeof c) == 0);
  snprintf(msg, sizeof msg, "%s", srv_status_message(st));
  srv_status_free(st);
  return msg;
}

/* The message for a config with `max_batch_size: 4` and `sb` as its
 * sequence_batching body. */
static const char *sb_read(const char *sb) {
  char text[4096];
  snprintf(text, sizeof text, "max_batch_size: 4 sequence_batching { %s }", sb);
  return seq_read(text);
}

static void file_write(const char *name, const void *data, size_t size) {
  char path[1024];
  snprintf(path, sizeof path, "%s/initial_state/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL) abort();
  if (size > 0 && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
}

static void test_defaults(void) {
  REQUIRE(seq_read("sequence_batching {}") == NULL);
  CHECK_EQ_U64(c.strategy, SRV_SEQ_DIRECT);
  CHECK_EQ_U64(c.slots_per_instance, 1);  /* max(1, max_batch_size 0) */
  CHECK_EQ_U64(c.idle_ns, 1000000000ull); /* 0 reads as 1 s */
  CHECK_EQ_U64(c.direct_delay_ns, 0);
  CHECK(c.min_slot_utilization == 0.0f);
  CHECK_EQ_U64(c.control_count, 0);
  CHECK_EQ_U64(c.state_count, 0);
  CHECK_EQ_U64(c.preferred_count, 0);
  CHECK(srv_seq_config_control(&c, SRV_SEQ_CONTROL_START) == NULL);
  CHECK(srv_seq_config_state_by_output(&c, "x") == NULL);
  REQUIRE(seq_read("max_batch_size: 8 sequence_batching {"
                   " max_sequence_idle_microseconds: 5000000 }") == NULL);
  CHECK_EQ_U64(c.slots_per_instance, 8);
  CHECK_EQ_U64(c.idle_ns, 5000000000ull);
  /* The largest idle time config_limits lets through converts exactly. */
  REQUIRE(sb_read("max_sequence_idle_microseconds: 31536000000000") == NULL);
  CHECK_EQ_U64(c.idle_ns, 31536000000000ull * 1000);
  CHECK_STREQ(seq_read("max_batch_size: 4"),
              "model 'm': config.pbtxt: 'sequence_batching' is not set");
}

static void test_controls(void) {
  REQUIRE(sb_read("control_input [{ name: 'START' control [{ kind: CONTROL_SEQUENCE_START"
                  "  fp32_false_true: [0, 1] }] },"
                  " { name: 'END' control { kind: CONTROL_SEQUENCE_END"
                  "  int32_false_true: [7, -2] } },"
                  " { name: 'READY' control { kind: CONTROL_SEQUENCE_READY"
                  "  bool_false_true: [false, true] } },"
                  " { name: 'CORRID' control { kind: CONTROL_SEQUENCE_CORRID"
                  "  data_type: TYPE_UINT64 } },"
                  " { name: 'UNUSED' }]") == NULL);
  CHECK_EQ_U64(c.control_count, 4); /* an input without a control is ignored */
  const srv_seq_control_t *s = srv_seq_config_control(&c, SRV_SEQ_CONTROL_START);
  REQUIRE(s != NULL);
  CHECK_STREQ(s->name, "START");
  CHECK_EQ_U64(s->datatype, TRITONSERVER_TYPE_FP32);
  CHECK_EQ_U64(s->value_size, 4);
  float f0, f1;
  memcpy(&f0, s->false_value, 4);
  memcpy(&f1, s->true_value, 4);
  CHECK(f0 == 0.0f && f1 == 1.0f);
  const srv_seq_control_t *e = srv_seq_config_control(&c, SRV_SEQ_CONTROL_END);
  REQUIRE(e != NULL);
  CHECK_EQ_U64(e->datatype, TRITONSERVER_TYPE_INT32);
  int32_t i0, i1;
  memcpy(&i0, e->false_value, 4);
  memcpy(&i1, e->true_value, 4);
  CHECK(i0 == 7 && i1 == -2);
  const srv_seq_control_t *r = srv_seq_config_control(&c, SRV_SEQ_CONTROL_READY);
  REQUIRE(r != NULL);
  CHECK_EQ_U64(r->datatype, TRITONSERVER_TYPE_BOOL);
  CHECK_EQ_U64(r->value_size, 1);
  CHECK(r->false_value[0] == 0 && r->true_value[0] == 1);
  const srv_seq_control_t *id = srv_seq_config_control(&c, SRV_SEQ_CONTROL_CORRID);
  REQUIRE(id != NULL);
  CHECK_STREQ(id->name, "CORRID");
  CHECK_EQ_U64(id->datatype, TRITONSERVER_TYPE_UINT64);
  static const struct {
    const char *config;
    TRITONSERVER_DataType type;
  } corrid[] = {{"TYPE_INT64", TRITONSERVER_TYPE_INT64},
                {"TYPE_UINT32", TRITONSERVER_TYPE_UINT32},
                {"TYPE_INT32", TRITONSERVER_TYPE_INT32},
                {"TYPE_STRING", TRITONSERVER_TYPE_BYTES}};
  for (size_t i = 0; i < sizeof corrid / sizeof corrid[0]; i++) {
    char sb[256];
    snprintf(sb, sizeof sb,
             "control_input { name: 'ID' control { kind: CONTROL_SEQUENCE_CORRID"
             " data_type: %s } }",
             corrid[i].config);
    REQUIRE(sb_read(sb) == NULL);
    REQUIRE(c.control_count == 1);
    CHECK_EQ_U64(c.controls[0].datatype, corrid[i].type);
    CHECK_EQ_U64(c.controls[0].kind, SRV_SEQ_CONTROL_CORRID);
  }
}

#define CTL(name, body) "control_input { name: '" name "' control { " body " } }"
#define PREFIX "model 'm': config.pbtxt: "

/* `why` after the prefix every message of this test's model has. */
static const char *prefixed(const char *why) {
  static char want[SRV_STATUS_MESSAGE_MAX];
  snprintf(want, sizeof want, PREFIX "%s", why);
  return want;
}

/* Refused with exactly `why`, after the prefix. */
#define REFUSED(got, why) CHECK_STREQ(got, prefixed(why))

static void test_control_errors(void) {
  REFUSED(sb_read("control_input { control { kind: CONTROL_SEQUENCE_START"
                  " int32_false_true: [0, 1] } }"),
          "'sequence_batching.control_input[0].name' must be set");
  REFUSED(sb_read("control_input { name: 'S\\000x' }"),
          "'sequence_batching.control_input[0].name' holds a NUL byte");
  REFUSED(sb_read(CTL("S", "kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1]")
                      CTL("S", "kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1]")),
          "'sequence_batching.control_input[1].name': sequence batching control "
          "tensor 'S' is specified for multiple control kinds");
  REFUSED(sb_read("control_input { name: 'S' }" CTL(
              "S", "kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1]")),
          "'sequence_batching.control_input[1].name': sequence batching control "
          "tensor 'S' is specified for multiple control kinds");
  REFUSED(sb_read("control_input { name: 'S' control ["
                  " { kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1] },"
                  " { kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1] }] }"),
          "'sequence_batching.control_input[0].control': sequence batching "
          "control tensor 'S' is specified for multiple control kinds (2 "
          "controls)");
  REFUSED(sb_read(CTL("A", "kind: CONTROL_SEQUENCE_READY bool_false_true: [false, true]")
                      CTL("B", "kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1]")),
          "'sequence_batching.control_input[1].control[0]': sequence batching "
          "specifies multiple CONTROL_SEQUENCE_READY tensors");
  REFUSED(sb_read(CTL("A", "kind: CONTROL_SEQUENCE_START")),
          "'sequence_batching.control_input[0].control[0]': sequence "
          "batching must specify either 'int32_false_true', "
          "'fp32_false_true' or 'bool_false_true' for "
          "CONTROL_SEQUENCE_START");
  REFUSED(sb_read(CTL("A",
                      "kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1]"
                      " fp32_false_true: [0, 1]")),
          "'sequence_batching.control_input[0].control[0]': sequence "
          "batching specifies more than one from 'int32_false_true', "
          "'fp32_false_true' and 'bool_false_true' for "
          "CONTROL_SEQUENCE_END");
  REFUSED(sb_read(CTL("A", "kind: CONTROL_SEQUENCE_READY fp32_false_true: [1]")),
          "'sequence_batching.control_input[0].control[0]': sequence "
          "batching control 'fp32_false_true' must have exactly 2 entries "
          "for CONTROL_SEQUENCE_READY (it has 1)");
  REFUSED(sb_read(CTL("A", "kind: CONTROL_SEQUENCE_START bool_false_true: [0, 1, 0]")),
          "'sequence_batching.control_input[0].control[0]': sequence batching "
          "control 'bool_false_true' must have exactly 2 entries for "
          "CONTROL_SEQUENCE_START (it has 3)");
  REFUSED(sb_read(CTL("A",
                      "kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64"
                      " int32_false_true: [0, 1]")),
          "'sequence_batching.control_input[0].control[0]': sequence "
          "batching must not specify either 'int32_false_true', "
          "'fp32_false_true' or 'bool_false_true' for "
          "CONTROL_SEQUENCE_CORRID");
  REFUSED(sb_read(CTL("A", "kind: CONTROL_SEQUENCE_CORRID")),
          "'sequence_batching.control_input[0].control[0].data_type' is "
          "TYPE_INVALID: unexpected data type for control "
          "CONTROL_SEQUENCE_CORRID. Allowed data types are TYPE_UINT64, "
          "TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING");
  REFUSED(sb_read(CTL("A", "kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32")),
          "'sequence_batching.control_input[0].control[0].data_type' is "
          "TYPE_FP32: unexpected data type for control "
          "CONTROL_SEQUENCE_CORRID. Allowed data types are TYPE_UINT64, "
          "TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING");
  REFUSED(sb_read(CTL("A", "kind: 7 int32_false_true: [0, 1]")),
          "'sequence_batching.control_input[0].control[0].kind' is 7, not a "
          "known control kind");
}

static void test_direct(void) {
  REQUIRE(sb_read("direct { max_queue_delay_microseconds: 250"
                  " minimum_slot_utilization: 0.5 }") == NULL);
  CHECK_EQ_U64(c.strategy, SRV_SEQ_DIRECT);
  CHECK_EQ_U64(c.slots_per_instance, 4);
  CHECK_EQ_U64(c.direct_delay_ns, 250000);
  CHECK(c.min_slot_utilization == 0.5f);
  REQUIRE(sb_read("direct { minimum_slot_utilization: 1 }") == NULL);
  REFUSED(sb_read("direct { minimum_slot_utilization: 1.5 }"),
          "'sequence_batching.direct.minimum_slot_utilization' is 1.5: "
          "sequence batching minimum slot utilization must be in range (0.0, "
          "1.0]");
  REFUSED(sb_read("direct { minimum_slot_utilization: -0.25 }"),
          "'sequence_batching.direct.minimum_slot_utilization' is -0.25: "
          "sequence batching minimum slot utilization must be in range (0.0, "
          "1.0]");
  const char *nan_msg = sb_read("direct { minimum_slot_utilization: nan }");
  CHECK(nan_msg != NULL && strstr(nan_msg, "must be in range") != NULL);
}

static void test_oldest(void) {
  REQUIRE(seq_read("max_batch_size: 8 sequence_batching { oldest {"
                   " max_candidate_sequences: 16 preferred_batch_size: [8, 2, 4, 2]"
                   " max_queue_delay_microseconds: 100 preserve_ordering: true } }") ==
          NULL);
  CHECK_EQ_U64(c.strategy, SRV_SEQ_OLDEST);
  CHECK_EQ_U64(c.slots_per_instance, 16);
  REQUIRE(c.preferred_count == 3); /* sorted, once each */
  CHECK(c.preferred[0] == 2 && c.preferred[1] == 4 && c.preferred[2] == 8);
  CHECK_EQ_U64(c.oldest_delay_ns, 100000);
  CHECK(c.preserve_ordering);
  /* No candidates given (or none that count): max(1, max_batch_size). */
  REQUIRE(seq_read("max_batch_size: 8 sequence_batching { oldest {} }") == NULL);
  CHECK_EQ_U64(c.slots_per_instance, 8);
  CHECK_EQ_U64(c.preferred_count, 0);
  REQUIRE(seq_read("sequence_batching { oldest { max_candidate_sequences: -3 } }") ==
          NULL);
  CHECK_EQ_U64(c.slots_per_instance, 1);
  REFUSED(sb_read("oldest { preferred_batch_size: [2, 0] }"),
          "'sequence_batching.oldest.preferred_batch_size[1]' is 0: sequence "
          "batching preferred batch size must be positive");
  REFUSED(sb_read("oldest { preferred_batch_size: [5] }"),
          "'sequence_batching.oldest.preferred_batch_size[0]' is 5: sequence "
          "batching preferred batch size must be <= max batch size (4)");
  /* Triton's rule: a model that does not batch lists no preferred size. */
  REFUSED(seq_read("sequence_batching { oldest { preferred_batch_size: [1] } }"),
          "'sequence_batching.oldest.preferred_batch_size[0]' is 1: sequence "
          "batching preferred batch size must be <= max batch size (0)");
}

static void test_slot_limit(void) {
  /* direct: max_batch_size slots per instance; 2 x 32768 is the limit. */
  REQUIRE(seq_read("max_batch_size: 32768 instance_group [{ count: 2 }]"
                   " sequence_batching {}") == NULL);
  CHECK_EQ_U64(c.slots_per_instance, 32768);
  REQUIRE(seq_read("max_batch_size: 65536 sequence_batching { direct {} }") == NULL);
  REFUSED(seq_read("max_batch_size: 32769 instance_group [{ count: 2 }]"
                   " sequence_batching {}"),
          "'max_batch_size' is 32769: with the direct strategy each instance "
          "holds max_batch_size sequence slots, and 2 instances hold 65538, "
          "above the limit of 65536 per model version");
  REFUSED(seq_read("max_batch_size: 2147483647 instance_group [{ count: 1024 }]"
                   " sequence_batching { oldest {} }"),
          "'max_batch_size' is 2147483647: with max_candidate_sequences "
          "unset each instance holds max_batch_size sequence slots, and 1024 "
          "instances hold 2199023254528, above the limit of 65536 per model "
          "version");
  /* oldest: max_candidate_sequences, across the groups' instances. */
  REQUIRE(seq_read("instance_group [{ count: 3 }, { count: 1 }]"
                   " sequence_batching { oldest { max_candidate_sequences: 16384 } }") ==
          NULL);
  REFUSED(seq_read("instance_group [{ count: 3 }, { count: 1 }]"
                   " sequence_batching { oldest { max_candidate_sequences: 16385 } }"),
          "'sequence_batching.oldest.max_candidate_sequences' is 16385: 4 "
          "instances hold 65540 sequence slots, above the limit of 65536 per "
          "model version");
}

static void test_states(void) {
  REQUIRE(sb_read("state [{ input_name: 'IN_S' output_name: 'OUT_S' data_type: TYPE_FP32"
                  "  dims: [-1, 3] use_same_buffer_for_input_output: true"
                  "  use_growable_memory: true },"
                  " { input_name: 'I2' output_name: 'O2' data_type: TYPE_INT32"
                  "  dims: [2, 3] initial_state { data_type: TYPE_INT32 dims: [2, 3]"
                  "  zero_data: true name: 'zeros' } },"
                  " { input_name: 'I3' output_name: 'O3' data_type: TYPE_STRING"
                  "  dims: [-1] initial_state { data_type: TYPE_STRING dims: [2]"
                  "  zero_data: false name: 'empty strings' } },"
                  " { input_name: 'I4' output_name: 'O4' data_type: TYPE_BOOL }]") ==
          NULL);
  REQUIRE(c.state_count == 4);
  const srv_seq_state_config_t *s = &c.states[0];
  CHECK_STREQ(s->input_name, "IN_S");
  CHECK_STREQ(s->output_name, "OUT_S");
  CHECK_EQ_U64(s->datatype, TRITONSERVER_TYPE_FP32);
  REQUIRE(s->dims_count == 2);
  CHECK(s->dims[0] == -1 && s->dims[1] == 3);
  CHECK(s->same_buffer && s->growable && !s->has_initial);
  CHECK(s->initial_data == NULL && s->initial_size == 0);
  s = srv_seq_config_state_by_output(&c, "O2");
  REQUIRE(s == &c.states[1]);
  CHECK(s->has_initial && !s->same_buffer && !s->growable);
  REQUIRE(s->initial_dims_count == 2);
  CHECK(s->initial_dims[0] == 2 && s->initial_dims[1] == 3);
  REQUIRE(s->initial_size == 24);
  static const uint8_t zeros[24];
  CHECK(memcmp(s->initial_data, zeros, 24) == 0);
  s = &c.states[2]; /* zero_data: false is zeros too (its value is ignored) */
  CHECK_EQ_U64(s->datatype, TRITONSERVER_TYPE_BYTES);
  REQUIRE(s->initial_size == 8); /* two empty strings: a zero length each */
  CHECK(memcmp(s->initial_data, zeros, 8) == 0);
  s = &c.states[3]; /* no dims: a scalar state */
  CHECK_EQ_U64(s->dims_count, 0);
  CHECK(!s->has_initial);
}

#define STATE(body) \
  "state { input_name: 'I' output_name: 'O' data_type: TYPE_INT32 " body " }"
#define INITIAL(body) STATE("dims: [-1, 2] initial_state { " body " }")

static void test_state_errors(void) {
  REFUSED(sb_read("state { output_name: 'O' data_type: TYPE_INT32 }"),
          "'sequence_batching.state[0].input_name' must be set");
  REFUSED(sb_read("state { input_name: 'I' data_type: TYPE_INT32 }"),
          "'sequence_batching.state[0].output_name' must be set");
  REFUSED(sb_read("state { input_name: 'I' output_name: 'O' }"),
          "'sequence_batching.state[0].data_type' must be set to a data type");
  REFUSED(sb_read(STATE("dims: [2, 0]")),
          "'sequence_batching.state[0].dims[1]' is 0: dimension must be "
          "integer >= 1, or -1 to indicate a variable-size dimension");
  REFUSED(sb_read(STATE("dims: [-2]")),
          "'sequence_batching.state[0].dims[0]' is -2: dimension must be "
          "integer >= 1, or -1 to indicate a variable-size dimension");
  REFUSED(sb_read(STATE("") " " STATE("")),
          "'sequence_batching.state[1].input_name': state input name 'I' "
          "specified more than once");
  REFUSED(sb_read(STATE("") " state { input_name: 'J' output_name: 'O'"
                            " data_type: TYPE_INT32 }"),
          "'sequence_batching.state[1].output_name': state output name 'O' "
          "specified more than once");
  REFUSED(
      sb_read(STATE("initial_state [{ data_type: TYPE_INT32 zero_data: true name: 'a' },"
                    " { data_type: TYPE_INT32 zero_data: true name: 'b' }]")),
      "'sequence_batching.state[0].initial_state': initial_state field for state "
      "input 'I' must contain exactly one or zero element. Found '2' elements.");
  REFUSED(sb_read(INITIAL("data_type: TYPE_FP32 dims: [1, 2] zero_data: true"
                          " name: 'x'")),
          "'sequence_batching.state[0].initial_state[0].data_type': the data "
          "type used for 'initial_state' field of state 'I' does not match "
          "the state data type");
  REFUSED(sb_read(INITIAL("data_type: TYPE_INT32 dims: [1, 2] zero_data: true")),
          "'sequence_batching.state[0].initial_state[0].name': field 'name' "
          "must be set when using initial_state for state input 'I'");
  REFUSED(sb_read(INITIAL("data_type: TYPE_INT32 dims: [2] zero_data: true"
                          " name: 'x'")),
          "'sequence_batching.state[0].initial_state[0].dims': number of "
          "dimensions in 'initial_state' doesn't match the size of 'state' "
          "dimensions for state input 'I'. 1 != 2");
  REFUSED(sb_read(INITIAL("data_type: TYPE_INT32 dims: [-1, 2] zero_data: true"
                          " name: 'x'")),
          "'sequence_batching.state[0].initial_state[0].dims': 'initial_state' "
          "field for state input name 'I' contains variable dimensions");
  REFUSED(sb_read(INITIAL("data_type: TYPE_INT32 dims: [4, 3] zero_data: true"
                          " name: 'x'")),
          "'sequence_batching.state[0].initial_state[0].dims': 'initial_state' "
          "dim for input name 'I' doesn't match 'state' dim description. 3 "
          "!= 2");
  REFUSED(sb_read(INITIAL("data_type: TYPE_INT32 dims: [0, 2] zero_data: true"
                          " name: 'x'")),
          "'sequence_batching.state[0].initial_state[0].dims[0]' is 0: "
          "dimensions must be integers >= 1");
  REFUSED(sb_read(INITIAL("data_type: TYPE_INT32 dims: [3, 2] name: 'x'")),
          "'sequence_batching.state[0].initial_state[0]': initial_state "
          "setting expects state 'I' to have state_data set (zero_data or "
          "data_file)");
  /* 2^28 x 2 INT32 elements are 2 GiB: refused before anything is allocated. */
  REFUSED(sb_read(INITIAL("data_type: TYPE_INT32 dims: [268435456, 2]"
                          " zero_data: true name: 'x'")),
          "'sequence_batching.state[0].initial_state[0].dims': 536870912 "
          "elements of TYPE_INT32 are above the limit of 1073741824 bytes of "
          "initial state");
  REFUSED(sb_read(STATE("dims: [-1, -1, -1] initial_state { data_type: TYPE_INT32"
                        " dims: [4294967296, 4294967296, 4294967296]"
                        " zero_data: true name: 'x' }")),
          "'sequence_batching.state[0].initial_state[0].dims': the element "
          "count does not fit in 64 bits");
}

static void test_data_files(void) {
  const int32_t values[4] = {1, -2, 3, 4};
  file_write("four", values, sizeof values);
  /* A fixed-size type takes the dims' bytes; the rest of the file is unused. */
  REQUIRE(sb_read(INITIAL("data_type: TYPE_INT32 dims: [1, 2] data_file: 'four'"
                          " name: 'x'")) == NULL);
  REQUIRE(c.states[0].initial_size == 8);
  CHECK(memcmp(c.states[0].initial_data, values, 8) == 0);
  char sub[600];
  snprintf(sub, sizeof sub, "%s/initial_state/sub", dir);
  mkdir(sub, 0755);
  file_write("sub/two", values, 8);
  REQUIRE(sb_read(INITIAL("data_type: TYPE_INT32 dims: [1, 2] data_file: 'sub/./two'"
                          " name: 'x'")) == NULL);
  CHECK(memcmp(c.states[0].initial_data, values, 8) == 0);
  char want[2048];
  snprintf(want, sizeof want,
           PREFIX
           "'sequence_batching.state[0].initial_state[0].data_file': "
           "initial_state setting expects 24 bytes, but the data provided from "
           "%s/initial_state/four only has 16 bytes",
           dir);
  CHECK_STREQ(sb_read(INITIAL("data_type: TYPE_INT32 dims: [3, 2] data_file: 'four'"
                              " name: 'x'")),
              want);
  snprintf(want, sizeof want,
           PREFIX
           "'sequence_batching.state[0].initial_state[0].data_file': "
           "%s/initial_state/none: No such file or directory",
           dir);
  CHECK_STREQ(sb_read(INITIAL("data_type: TYPE_INT32 dims: [1, 2] data_file: 'none'"
                              " name: 'x'")),
              want);
  snprintf(want, sizeof want,
           PREFIX
           "'sequence_batching.state[0].initial_state[0].data_file': "
           "%s/initial_state/sub: not a regular file",
           dir);
  CHECK_STREQ(sb_read(INITIAL("data_type: TYPE_INT32 dims: [1, 2] data_file: 'sub'"
                              " name: 'x'")),
              want);
  char fifo[600];
  snprintf(fifo, sizeof fifo, "%s/initial_state/fifo", dir);
  REQUIRE(mkfifo(fifo, 0600) == 0); /* opened without blocking, then refused */
  snprintf(want, sizeof want,
           PREFIX
           "'sequence_batching.state[0].initial_state[0].data_file': "
           "%s/initial_state/fifo: not a regular file",
           dir);
  CHECK_STREQ(sb_read(INITIAL("data_type: TYPE_INT32 dims: [1, 2] data_file: 'fifo'"
                              " name: 'x'")),
              want);
  /* Past the limit: refused by its size, never read (the file is sparse). */
  char big[600];
  snprintf(big, sizeof big, "%s/initial_state/big", dir);
  int fd = open(big, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, (off_t)SRV_CONFIG_INITIAL_STATE_MAX + 1) == 0);
  close(fd);
  snprintf(want, sizeof want,
           PREFIX
           "'sequence_batching.state[0].initial_state[0].data_file': "
           "%s/initial_state/big: 1073741825 bytes, above the limit of 1073741824",
           dir);
  CHECK_STREQ(sb_read(INITIAL("data_type: TYPE_INT32 dims: [1, 2] data_file: 'big'"
                              " name: 'x'")),
              want);
  unlink(big);
}

static void test_data_file_names(void) {
  static const struct {
    const char *name, *why;
  } refused[] = {
      {"../four", "is '../four': a '..' component leaves initial_state/"},
      {"sub/../../four", "is 'sub/../../four': a '..' component leaves initial_state/"},
      {"sub/..", "is 'sub/..': a '..' component leaves initial_state/"},
      {"/etc/passwd",
       "is '/etc/passwd': an absolute path; it must name a file in "
       "initial_state/"},
      {"", "must name a file"},
      {"a\\000b", "holds a NUL byte"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    char sb[512], want[512];
    snprintf(sb, sizeof sb,
             INITIAL("data_type: TYPE_INT32 dims: [1, 2] data_file: '%s' name: 'x'"),
             refused[i].name);
    snprintf(want, sizeof want,
             PREFIX "'sequence_batching.state[0].initial_state[0].data_file' %s",
             refused[i].why);
    CHECK_STREQ(sb_read(sb), want);
  }
  /* A name that only looks like "..": a file like any other. */
  file_write("..x", "abcdefgh", 8);
  CHECK(sb_read(INITIAL("data_type: TYPE_INT32 dims: [1, 2] data_file: '..x'"
                        " name: 'x'")) == NULL);
}

static void test_bytes_data_file(void) {
  /* Two elements, "ab" and "", then bytes past them (a newline an editor
   * added): the state keeps the two elements only. */
  static const uint8_t data[] = {2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, '\n'};
  file_write("words", data, sizeof data);
  static const char *const state =
      "state { input_name: 'I' output_name: 'O' data_type: TYPE_STRING dims: [-1]"
      " initial_state { data_type: TYPE_STRING dims: [%d] data_file: 'words'"
      " name: 'w' } }";
  char sb[512];
  snprintf(sb, sizeof sb, state, 2);
  REQUIRE(sb_read(sb) == NULL);
  REQUIRE(c.states[0].initial_size == 10);
  CHECK(memcmp(c.states[0].initial_data, data, 10) == 0);
  snprintf(sb, sizeof sb, state, 3);
  REFUSED(sb_read(sb),
          "'sequence_batching.state[0].initial_state[0].data_file': the data "
          "file holds fewer than the 3 BYTES elements of the dims (each a "
          "4-byte length, then its bytes)");
  static const uint8_t overlong[] = {9, 0, 0, 0, 'a'}; /* a length past the end */
  file_write("words", overlong, sizeof overlong);
  snprintf(sb, sizeof sb, state, 1);
  CHECK(sb_read(sb) != NULL);
}

/* Triton's ModelConfig puts dynamic_batching and sequence_batching in one
 * oneof: the config parser refuses both, as protoc's does. */
static void test_dynamic_and_sequence(void) {
  static const char text[] = "dynamic_batching {} sequence_batching {}";
  char err[256];
  upb_Arena *a = upb_Arena_New();
  CHECK(cfg_model_config_parse(text, strlen(text), "config.pbtxt", a, err, sizeof err) ==
        NULL);
  CHECK_STREQ(err,
              "config.pbtxt:1:21: field 'sequence_batching' conflicts with field "
              "'dynamic_batching': both are in oneof 'scheduling_choice' of "
              "inference.ModelConfig");
  upb_Arena_Free(a);
}

int main(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(dir, sizeof dir, "%s/seqcfg_XXXXXX", tmp != NULL ? tmp : "/tmp");
  if (mkdtemp(dir) == NULL) return 1;
  char sub[600];
  snprintf(sub, sizeof sub, "%s/initial_state", dir);
  if (mkdir(sub, 0755) != 0) return 1;
  static const unit_case_t cases[] = {
      UNIT_CASE(test_defaults),        UNIT_CASE(test_controls),
      UNIT_CASE(test_control_errors),  UNIT_CASE(test_direct),
      UNIT_CASE(test_oldest),          UNIT_CASE(test_slot_limit),
      UNIT_CASE(test_states),          UNIT_CASE(test_state_errors),
      UNIT_CASE(test_data_files),      UNIT_CASE(test_data_file_names),
      UNIT_CASE(test_bytes_data_file), UNIT_CASE(test_dynamic_and_sequence),
  };
  int rc = unit_run("sequence_config", cases, sizeof cases / sizeof cases[0]);
  if (arena != NULL) upb_Arena_Free(arena);
  return rc;
}
