/* Reading the sequence_batching section as TRITONBACKEND_ModelConfig prints
 * it (every scalar and repeated field, enums by name, unset sub-messages
 * left out): the four example models, what decides the accumulator's
 * home, and configs that must be refused with the field named. */
#include "backends/sequence/seq_config.h"

#include <stdio.h>
#include <string.h>

#include "test/unit/unit.h"

/* The value tensors of every example model. */
#define TENSORS                                                                 \
  "\"input\":[{\"name\":\"INPUT\",\"data_type\":\"TYPE_INT32\",\"dims\":[1]}]," \
  "\"output\":[{\"name\":\"OUTPUT\",\"data_type\":\"TYPE_INT32\",\"dims\":[1]}]"

/* A flag control as the server prints it: all three lists present. */
#define FLAG(name, kind)                                               \
  "{\"name\":\"" name "\",\"control\":[{\"kind\":\"" kind              \
  "\",\"int32_false_true\":"                                           \
  "[0,1],\"fp32_false_true\":[],\"bool_false_true\":[],\"data_type\":" \
  "\"TYPE_INVALID\"}]}"

#define CORRID(type)                                                         \
  "{\"name\":\"CORRID\",\"control\":[{\"kind\":\"CONTROL_SEQUENCE_CORRID\"," \
  "\"int32_false_true\":[],\"fp32_false_true\":[],\"bool_false_true\":[],"   \
  "\"data_type\":\"" type "\"}]}"

#define START FLAG("START", "CONTROL_SEQUENCE_START")
#define END FLAG("END", "CONTROL_SEQUENCE_END")
#define READY FLAG("READY", "CONTROL_SEQUENCE_READY")

static const char *kSimpleSequence =
    "{\"name\":\"simple_sequence\",\"max_batch_size\":8,"
    "\"sequence_batching\":{\"max_sequence_idle_microseconds\":0,"
    "\"control_input\":[" START "," READY "],\"state\":[]}," TENSORS
    ",\"parameters\":{\"sequence_mode\":{\"string_value\":\"control_sum\"}}}";

static const char *kDyna =
    "{\"name\":\"simple_dyna_sequence\",\"max_batch_size\":8,"
    "\"sequence_batching\":{\"oldest\":{\"max_candidate_sequences\":1024,"
    "\"preferred_batch_size\":[],\"max_queue_delay_microseconds\":10000},"
    "\"control_input\":[" START "," END "," READY
    "," CORRID("TYPE_UINT64") "]}," TENSORS
                              ",\"parameters\":{\"sequence_mode\":{\"string_value\":"
                              "\"control_sum\"}}}";

static const char *kStringDyna =
    "{\"name\":\"simple_string_dyna_sequence\",\"max_batch_size\":8,"
    "\"sequence_batching\":{\"oldest\":{\"max_candidate_sequences\":1024},"
    "\"control_input\":[" START "," END "," READY "," CORRID(
        "TYPE_STRING") "]}," TENSORS
                       ",\"parameters\":{\"execute_delay_ms\":{\"string_value\":\"3\"}}}";

static const char *kState =
    "{\"name\":\"simple_sequence_state\",\"max_batch_size\":8,"
    "\"sequence_batching\":{\"control_input\":[" START "," READY
    "],"
    "\"state\":[{\"input_name\":\"INPUT_STATE\",\"output_name\":\"OUTPUT_STATE\","
    "\"data_type\":\"TYPE_INT32\",\"dims\":[1],\"initial_state\":[{\"data_type\":"
    "\"TYPE_INT32\",\"dims\":[1],\"zero_data\":true,\"name\":\"zero\"}],"
    "\"use_same_buffer_for_input_output\":false,\"use_growable_memory\":false}]}," TENSORS
    "}";

static bool load(const char *json, bk_model_config_t *cfg, seq_config_t *seq, char *err,
                 size_t len) {
  if (!bk_model_config_parse(json, strlen(json), cfg, err, len)) return false;
  if (seq_config_read(cfg, seq, err, len)) return true;
  bk_model_config_free(cfg);
  return false;
}

/* load() for configs that must be accepted; prints the reason when not. */
static bool load_ok(const char *json, bk_model_config_t *cfg, seq_config_t *seq) {
  char err[256] = "";
  if (load(json, cfg, seq, err, sizeof err)) return true;
  fprintf(stderr, "  refused: %s\n", err);
  return false;
}

static void simple_sequence(void) {
  bk_model_config_t cfg;
  seq_config_t seq;
  REQUIRE(load_ok(kSimpleSequence, &cfg, &seq));
  CHECK(seq.mode == SEQ_MODE_CONTROL_SUM && seq.store == SEQ_STORE_NONE);
  CHECK_STREQ(seq.controls[SEQ_START].name, "START");
  CHECK_STREQ(seq.controls[SEQ_READY].name, "READY");
  CHECK(seq.controls[SEQ_END].name == NULL && seq.controls[SEQ_CORRID].name == NULL);
  const seq_flag_t *f = &seq.controls[SEQ_START].flag;
  CHECK(f->datatype == TRITONSERVER_TYPE_INT32);
  CHECK(f->values[0].i32 == 0 && f->values[1].i32 == 1);
  CHECK_STREQ(seq.input->name, "INPUT");
  CHECK_STREQ(seq.output->name, "OUTPUT");
  CHECK(seq.execute_delay_ms == 0);
  bk_model_config_free(&cfg);
}

static void dyna_sequences(void) {
  bk_model_config_t cfg;
  seq_config_t seq;
  REQUIRE(load_ok(kDyna, &cfg, &seq));
  CHECK(seq.mode == SEQ_MODE_CONTROL_SUM && seq.store == SEQ_STORE_NONE);
  CHECK(seq.controls[SEQ_CORRID].corrid_type == TRITONSERVER_TYPE_UINT64);
  bk_model_config_free(&cfg);
  REQUIRE(load_ok(kStringDyna, &cfg, &seq));
  CHECK(seq.mode == SEQ_MODE_ACCUMULATE && seq.store == SEQ_STORE_CORRID);
  CHECK(seq.controls[SEQ_CORRID].corrid_type == TRITONSERVER_TYPE_BYTES);
  CHECK_STREQ(seq.controls[SEQ_END].name, "END");
  CHECK(seq.corrid_capacity == 2048);
  CHECK(seq.execute_delay_ms == 3);
  bk_model_config_free(&cfg);
}

static void implicit_state(void) {
  bk_model_config_t cfg;
  seq_config_t seq;
  REQUIRE(load_ok(kState, &cfg, &seq));
  CHECK(seq.mode == SEQ_MODE_ACCUMULATE && seq.store == SEQ_STORE_STATE);
  CHECK_STREQ(seq.state_input, "INPUT_STATE");
  CHECK_STREQ(seq.state_output, "OUTPUT_STATE");
  bk_model_config_free(&cfg);
}

/* Accumulating without state or oldest: one accumulator per batch slot;
 * other flag forms and control names; kind left out means START. */
static void direct_slots_and_flag_forms(void) {
  const char *json =
      "{\"name\":\"m\",\"max_batch_size\":0,\"sequence_batching\":{\"direct\":{},"
      "\"control_input\":[{\"name\":\"s\",\"control\":[{\"fp32_false_true\":[0,1]}]},"
      "{\"name\":\"r\",\"control\":[{\"kind\":\"CONTROL_SEQUENCE_READY\","
      "\"bool_false_true\":[false,true]}]}]},"
      "\"input\":[{\"name\":\"X\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}],"
      "\"output\":[{\"name\":\"Y\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}]}";
  bk_model_config_t cfg;
  seq_config_t seq;
  REQUIRE(load_ok(json, &cfg, &seq));
  CHECK(seq.store == SEQ_STORE_SLOT && seq.slots == 1);
  CHECK(seq.controls[SEQ_START].flag.datatype == TRITONSERVER_TYPE_FP32);
  CHECK(seq.controls[SEQ_START].flag.values[1].f32 == 1.0f);
  CHECK(seq.controls[SEQ_READY].flag.datatype == TRITONSERVER_TYPE_BOOL);
  CHECK_STREQ(seq.input->name, "X");
  bk_model_config_free(&cfg);
}

/* Replaces the first `from` in `base` by `to`. Returns one of a few
 * rotating buffers, so that edits nest. */
static const char *edit(const char *base, const char *from, const char *to) {
  static char bufs[4][4096];
  static int next = 0;
  char *buf = bufs[next++ % 4];
  const char *at = strstr(base, from);
  if (at == NULL) return "(edit did not apply)";
  snprintf(buf, sizeof bufs[0], "%.*s%s%s", (int)(at - base), base, to,
           at + strlen(from));
  return buf;
}

static bool accepted(const char *json) {
  bk_model_config_t cfg;
  seq_config_t seq;
  if (!load_ok(json, &cfg, &seq)) return false;
  bk_model_config_free(&cfg);
  return true;
}

static bool refused_with(const char *json, const char *needle) {
  bk_model_config_t cfg;
  seq_config_t seq;
  char err[256] = "";
  if (load(json, &cfg, &seq, err, sizeof err)) {
    fprintf(stderr, "  accepted, expected an error with \"%s\"\n", needle);
    bk_model_config_free(&cfg);
    return false;
  }
  if (strstr(err, needle) != NULL) return true;
  fprintf(stderr, "  error \"%s\" lacks \"%s\"\n", err, needle);
  return false;
}

static void refusals(void) {
  CHECK(refused_with("{\"name\":\"m\"," TENSORS "}", "sequence_batching"));
  CHECK(refused_with(edit(kSimpleSequence, START ",", ""), "CONTROL_SEQUENCE_START"));
  CHECK(refused_with(
      edit(kSimpleSequence, "\"int32_false_true\":[0,1]", "\"int32_false_true\":[1,1]"),
      "'START': int32_false_true must hold two different values"));
  CHECK(refused_with(
      edit(kSimpleSequence, "\"int32_false_true\":[0,1]", "\"int32_false_true\":[0]"),
      "int32_false_true"));
  CHECK(refused_with(
      edit(kSimpleSequence, "\"fp32_false_true\":[]", "\"fp32_false_true\":[0,1]"),
      "exactly one of"));
  CHECK(refused_with(
      edit(kSimpleSequence, "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_START"),
      "'READY': CONTROL_SEQUENCE_START is already input 'START'"));
  CHECK(refused_with(edit(kSimpleSequence, "CONTROL_SEQUENCE_READY", "CONTROL_NOPE"),
                     "'READY': needs exactly one control"));
  CHECK(refused_with(edit(kDyna, "TYPE_UINT64", "TYPE_FP32"), "TYPE_FP32"));
  CHECK(refused_with(edit(kSimpleSequence, "control_sum", "sum"), "'sequence_mode'"));
  CHECK(refused_with(edit(kStringDyna, "\"3\"", "\"-1\""), "'execute_delay_ms'"));
  CHECK(refused_with(edit(kStringDyna, "\"3\"", "\"3600000\""), "'execute_delay_ms'"));
  CHECK(refused_with(edit(kStringDyna, CORRID("TYPE_STRING"), READY),
                     "CONTROL_SEQUENCE_READY is already input 'READY'"));
  /* Accumulating by correlation ID without a CORRID control. */
  CHECK(refused_with(edit(kStringDyna, "," CORRID("TYPE_STRING"), ""),
                     "needs a CONTROL_SEQUENCE_CORRID"));
  CHECK(refused_with(edit(kState, "\"dims\":[1],\"initial", "\"dims\":[2],\"initial"),
                     "sequence_batching.state"));
  CHECK(refused_with(edit(kState, "\"max_batch_size\"",
                          "\"parameters\":{\"sequence_mode\":{\"string_value\":"
                          "\"control_sum\"}},\"max_batch_size\""),
                     "remove sequence_batching.state"));
  CHECK(refused_with(edit(kSimpleSequence, "\"OUTPUT\",\"data_type\":\"TYPE_INT32\"",
                          "\"OUTPUT\",\"data_type\":\"TYPE_FP32\""),
                     "both TYPE_INT32"));
  /* Implicit state keeps nothing per slot: any max_batch_size. */
  CHECK(accepted(edit(kState, "\"max_batch_size\":8", "\"max_batch_size\":100000")));
  /* Accumulating per batch slot needs no CORRID. */
  CHECK(accepted(
      edit(edit(kStringDyna, "\"oldest\":{\"max_candidate_sequences\":1024},", ""),
           "," CORRID("TYPE_STRING"), "")));
  CHECK(refused_with(edit(edit(kSimpleSequence, "control_sum", "accumulate"),
                          "\"max_batch_size\":8", "\"max_batch_size\":100000"),
                     "batch slots"));
}

UNIT_MAIN("seq_config", UNIT_CASE(simple_sequence), UNIT_CASE(dyna_sequences),
          UNIT_CASE(implicit_state), UNIT_CASE(direct_slots_and_flag_forms),
          UNIT_CASE(refusals))
