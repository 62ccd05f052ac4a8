/* Ensemble step graphs (ensemble_graph.h) from config texts: a two-step
 * chain and a diamond with their tensor and step numbering, consumers,
 * wait counts and run order; every refusal of the config alone with the
 * exact text a client sees; the checks against hand-made composing model
 * descriptions. One thread. */
#include "server/sched/ensemble_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/model_config.h"
#include "server/model/config_limits.h"
#include "test/unit/unit.h"

static srv_ensemble_graph_t g; /* the last graph compiled */
static upb_Arena *arena;       /* holds g; renewed by each compile */
static bool dec;               /* the last check's decoupled */

/* Compiles `text` as ensemble "e" into g: NULL when accepted, else the
 * message (static). */
static const char *compile(const char *text) {
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
  memset(&g, 0xAB, sizeof g); /* an error must leave it as it is */
  srv_ensemble_graph_t before = g;
  srv_status_t *st = srv_ensemble_graph_compile(config, "e", "config.pbtxt", arena, &g);
  if (st == NULL) return NULL;
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
  CHECK(memcmp(&before, &g, sizeof g) == 0);
  snprintf(msg, sizeof msg, "%s", srv_status_message(st));
  srv_status_free(st);
  return msg;
}

/* An ensemble with `io` (inputs and outputs) and `steps` as the step list. */
static const char *ens(const char *io, const char *steps) {
  size_t size = strlen(io) + strlen(steps) + 128;
  char *text = malloc(size);
  if (text == NULL) abort();
  snprintf(text, size,
           "name: 'e' platform: 'ensemble' max_batch_size: 8 %s "
           "ensemble_scheduling { step [ %s ] }",
           io, steps);
  const char *msg = compile(text);
  free(text);
  return msg;
}

#define IO1                                                \
  "input [{ name: 'IN' data_type: TYPE_FP32 dims: [4] }] " \
  "output [{ name: 'OUT' data_type: TYPE_FP32 dims: [4] }]"

/* A step on model m reading ensemble tensor `in` as X, writing Y as `out`. */
#define STEP(m, in, out)                                                     \
  "{ model_name: '" m "' model_version: -1 input_map { key: 'X' value: '" in \
  "' } output_map { key: 'Y' value: '" out "' } }"

static const char *const kPrefix = "model 'e': config.pbtxt: ";

/* The message without "model 'e': config.pbtxt: ". */
static const char *tail(const char *msg) {
  if (msg == NULL) return "(accepted)";
  size_t n = strlen(kPrefix);
  return strncmp(msg, kPrefix, n) == 0 ? msg + n : msg;
}

static void test_chain(void) {
  /* The consumer is listed first: ids follow the config, order the flow. */
  REQUIRE(ens(IO1, STEP("b", "mid", "OUT") "," STEP("a", "IN", "mid")) == NULL);
  CHECK_STREQ(g.name, "e");
  CHECK_EQ_U64(g.max_batch_size, 8);
  REQUIRE(g.tensor_count == 3 && g.step_count == 2);
  CHECK_EQ_U64(g.input_count, 1);
  CHECK_STREQ(g.tensors[0].name, "IN");
  CHECK_EQ_U64(g.tensors[0].producer, SRV_ENS_PRODUCER_INPUT);
  CHECK(g.tensors[0].producer_output == NULL);
  REQUIRE(g.tensors[0].consumer_count == 1);
  CHECK_EQ_U64(g.tensors[0].consumers[0].step, 1);
  CHECK_STREQ(g.tensors[0].consumers[0].input, "X");
  CHECK_STREQ(g.tensors[1].name, "OUT"); /* step 0's output */
  CHECK_EQ_U64(g.tensors[1].producer, 0);
  CHECK_STREQ(g.tensors[1].producer_output, "Y");
  CHECK_EQ_U64(g.tensors[1].consumer_count, 0);
  CHECK(g.tensors[1].is_output && !g.tensors[0].is_output && !g.tensors[2].is_output);
  CHECK_STREQ(g.tensors[2].name, "mid");
  CHECK_EQ_U64(g.tensors[2].producer, 1);
  REQUIRE(g.tensors[2].consumer_count == 1);
  CHECK_EQ_U64(g.tensors[2].consumers[0].step, 0);
  CHECK_STREQ(g.steps[0].model_name, "b");
  CHECK(g.steps[0].model_version == -1);
  REQUIRE(g.steps[0].input_count == 1 && g.steps[0].output_count == 1);
  CHECK_STREQ(g.steps[0].inputs[0].name, "X");
  CHECK_EQ_U64(g.steps[0].inputs[0].tensor, 2);
  CHECK_STREQ(g.steps[0].outputs[0].name, "Y");
  CHECK_EQ_U64(g.steps[0].outputs[0].tensor, 1);
  CHECK_EQ_U64(g.steps[0].wait_count, 1);
  CHECK_EQ_U64(g.steps[1].wait_count, 1);
  CHECK_EQ_U64(g.order[0], 1);
  CHECK_EQ_U64(g.order[1], 0);
  REQUIRE(g.output_count == 1);
  CHECK_EQ_U64(g.outputs[0], 1);
  CHECK_EQ_U64(srv_ensemble_graph_tensor_find(&g, "mid"), 2);
  CHECK_EQ_U64(srv_ensemble_graph_tensor_find(&g, "IN"), 0);
  CHECK_EQ_U64(srv_ensemble_graph_tensor_find(&g, "mi"), UINT32_MAX);
  CHECK_EQ_U64(srv_ensemble_graph_tensor_find(&g, "nope"), UINT32_MAX);
}

/* split writes left and right, f and g work on each, join reads both. The
 * join is listed first, and reads one tensor twice. */
#define DIAMOND                                                                         \
  "{ model_name: 'join' input_map [{ key: 'B' value: 'r2' }, { key: 'A' value: 'l2' }," \
  " { key: 'C' value: 'l2' }] output_map { key: 'Y' value: 'OUT' } },"                  \
  "{ model_name: 'split' model_version: 2 input_map { key: 'X' value: 'IN' }"           \
  " output_map [{ key: 'B' value: 'right' }, { key: 'A' value: 'left' }] }," STEP(      \
      "f", "left", "l2") "," STEP("g", "right", "r2")

static void test_diamond(void) {
  REQUIRE(ens(IO1, DIAMOND) == NULL);
  REQUIRE(g.tensor_count == 6 && g.step_count == 4);
  /* IN, then join's OUT, split's outputs by model output name, f's, g's. */
  static const char *const names[] = {"IN", "OUT", "left", "right", "l2", "r2"};
  for (uint32_t t = 0; t < 6; t++) CHECK_STREQ(g.tensors[t].name, names[t]);
  const srv_ens_step_t *join = &g.steps[0], *split = &g.steps[1];
  REQUIRE(join->input_count == 3);
  CHECK_STREQ(join->inputs[0].name, "A");
  CHECK_EQ_U64(join->inputs[0].tensor, 4);
  CHECK_STREQ(join->inputs[1].name, "B");
  CHECK_EQ_U64(join->inputs[1].tensor, 5);
  CHECK_STREQ(join->inputs[2].name, "C");
  CHECK_EQ_U64(join->inputs[2].tensor, 4);
  CHECK_EQ_U64(join->wait_count, 3);
  CHECK(split->model_version == 2);
  REQUIRE(split->output_count == 2);
  CHECK_STREQ(split->outputs[0].name, "A");
  CHECK_EQ_U64(split->outputs[0].tensor, 2);
  CHECK_STREQ(g.tensors[3].producer_output, "B");
  /* l2 feeds two inputs of join: two entries, by model input name. */
  REQUIRE(g.tensors[4].consumer_count == 2);
  CHECK_STREQ(g.tensors[4].consumers[0].input, "A");
  CHECK_STREQ(g.tensors[4].consumers[1].input, "C");
  CHECK_EQ_U64(g.tensors[4].consumers[1].step, 0);
  /* split first, then the branches, join last. */
  CHECK_EQ_U64(g.order[0], 1);
  CHECK(g.order[1] == 2 || g.order[1] == 3);
  CHECK(g.order[2] == 2 || g.order[2] == 3);
  CHECK(g.order[1] != g.order[2]);
  CHECK_EQ_U64(g.order[3], 0);
}

static void test_kind_errors(void) {
  CHECK_STREQ(tail(compile("name: 'e' platform: 'onnxruntime_onnx' ensemble_scheduling {"
                           " step [" STEP("a", "IN", "OUT") "] }")),
              "ensemble scheduling cannot be set for model 'e' whose platform is not "
              "ensemble");
  CHECK_STREQ(
      tail(compile("name: 'e' platform: 'ensemble'")),
      "ensemble scheduling must be set for ensemble e whose platform is ensemble");
  /* dynamic_batching is in the same oneof: it leaves ensemble_scheduling unset. */
  CHECK_STREQ(
      tail(compile("name: 'e' platform: 'ensemble' dynamic_batching {}")),
      "ensemble scheduling must be set for ensemble e whose platform is ensemble");
  CHECK_STREQ(
      tail(compile("name: 'e' platform: 'ensemble' sequence_batching {}")),
      "ensemble scheduling must be set for ensemble e whose platform is ensemble");
  CHECK_STREQ(tail(compile("name: 'e' platform: 'ensemble' backend: 'python'"
                           " ensemble_scheduling { step [" STEP("a", "IN", "OUT") "] }")),
              "Ensemble model 'e' must have platform type 'ensemble' and empty backend "
              "type");
  CHECK_STREQ(tail(compile("name: 'e' platform: 'ensemble' instance_group { count: 1 }"
                           " ensemble_scheduling { step [" STEP("a", "IN", "OUT") "] }")),
              "instance group should not be specified for ensemble 'e'");
  CHECK_STREQ(tail(compile("name: 'e' platform: 'ensemble' optimization { priority: "
                           "PRIORITY_MAX } ensemble_scheduling { step [" STEP(
                               "a", "IN", "OUT") "] }")),
              "optimization should not be specified for ensemble 'e'");
  CHECK_STREQ(tail(compile("name: 'e' platform: 'ensemble' model_warmup { name: 'w' }"
                           " ensemble_scheduling { step [" STEP("a", "IN", "OUT") "] }")),
              "model_warmup can not be specified for ensemble 'e'");
  CHECK_STREQ(tail(compile("name: 'e' platform: 'ensemble' ensemble_scheduling {}")),
              "must specify 'step' for ensemble 'e'");
}

static void test_step_errors(void) {
  CHECK_STREQ(
      tail(ens(IO1, STEP("a", "IN", "OUT") ", { input_map { key: 'X' value: 'IN' }"
                                           " output_map { key: 'Y' value: 'Z' } }")),
      "must specify 'model_name' in step 1 of ensemble 'e'");
  CHECK_STREQ(tail(ens(IO1, "{ model_name: 'a' output_map { key: 'Y' value: 'OUT' } }")),
              "must specify 'input_map' in step 0 of ensemble 'e'");
  CHECK_STREQ(tail(ens(IO1, "{ model_name: 'a' input_map { key: 'X' value: 'IN' } }")),
              "must specify 'output_map' in step 0 of ensemble 'e'");
  /* Two producers: two steps, or two outputs of one step. */
  CHECK_STREQ(tail(ens(IO1, STEP("a", "IN", "OUT") "," STEP("b", "IN", "OUT"))),
              "ensemble tensor 'OUT' can appear in an output map only once for ensemble "
              "'e' step 1");
  CHECK_STREQ(tail(ens(IO1,
                       "{ model_name: 'a' input_map { key: 'X' value: 'IN' }"
                       " output_map [{ key: 'Y' value: 'OUT' }, { key: 'Z' value: "
                       "'OUT' }] }")),
              "ensemble tensor 'OUT' can appear in an output map only once for ensemble "
              "'e' step 0");
  CHECK_STREQ(tail(ens(IO1, STEP("a", "IN", "IN"))),
              "ensemble tensor 'IN' is an ensemble input and cannot appear in the output "
              "map of step 0 of ensemble 'e'");
  CHECK_STREQ(tail(ens(IO1, STEP("a", "IN", "OUT") "," STEP("e", "OUT", "X2") "," STEP(
                                "c", "X2", "X3") "," STEP("d", "X3", "OUT2"))),
              "ensemble tensor 'OUT2' is unused in ensemble 'e'");
  CHECK_STREQ(tail(ens("input [{ name: 'IN' data_type: TYPE_FP32 dims: [4] },"
                       " { name: 'IN' data_type: TYPE_FP32 dims: [4] }]",
                       STEP("a", "IN", "OUT"))),
              "ensemble input 'IN' is declared twice in ensemble 'e'");
  /* Names are kept as C strings: set, without a NUL (ours, not Triton's). */
  CHECK_STREQ(tail(ens(IO1, STEP("a", "", "OUT"))),
              "an input_map value of step 0 of ensemble 'e' is empty");
  CHECK_STREQ(tail(ens(IO1, STEP("a", "IN", "O\\000UT"))),
              "an output_map value of step 0 of ensemble 'e' holds a NUL byte");
}

static void test_flow_errors(void) {
  /* An input nothing reads (Triton's text, stray quote included). */
  CHECK_STREQ(tail(ens("input [{ name: 'IN' data_type: TYPE_FP32 dims: [4] },"
                       " { name: 'SPARE' data_type: TYPE_FP32 dims: [4] }]"
                       " output [{ name: 'OUT' data_type: TYPE_FP32 dims: [4] }]",
                       STEP("a", "IN", "OUT"))),
              "ensemble input 'SPARE' for ensemble e' is not used");
  /* An output no step mentions. */
  CHECK_STREQ(tail(ens("input [{ name: 'IN' data_type: TYPE_FP32 dims: [4] }]"
                       " output [{ name: 'OUT' data_type: TYPE_FP32 dims: [4] },"
                       " { name: 'OTHER' data_type: TYPE_FP32 dims: [4] }]",
                       STEP("a", "IN", "OUT"))),
              "ensemble output 'OTHER' for ensemble e' is not used");
  /* A step reads a tensor nothing writes: its output is never written. */
  CHECK_STREQ(tail(ens(IO1, STEP("a", "IN", "mid") "," STEP("b", "ghost", "OUT"))),
              "output 'OUT' for ensemble 'e' is not written: at least one of its "
              "depending tensors, 'ghost', is not connected");
  /* Two levels up. */
  CHECK_STREQ(tail(ens(IO1,
                       "{ model_name: 'a' input_map [{ key: 'X' value: 'IN' },"
                       " { key: 'G' value: 'ghost' }] output_map { key: 'Y' value: "
                       "'mid' } }," STEP("b", "mid", "OUT"))),
              "output 'OUT' for ensemble 'e' is not written: at least one of its "
              "depending tensors, 'ghost', is not connected");
  /* Read by an output only when the input is an output: never written. */
  CHECK_STREQ(tail(ens("input [{ name: 'IN' data_type: TYPE_FP32 dims: [4] }]"
                       " output [{ name: 'OUT' data_type: TYPE_FP32 dims: [4] }]",
                       STEP("a", "IN", "mid") "," STEP("b", "mid", "x2"))),
              "ensemble output 'OUT' for ensemble e' is not used");
  /* A cycle: b and c feed each other; Triton names no cycle, only where the
   * flow breaks. */
  CHECK_STREQ(
      tail(ens(IO1,
               "{ model_name: 'b' input_map [{ key: 'X' value: 'IN' },"
               " { key: 'Z' value: 'c_out' }] output_map { key: 'Y' value: "
               "'b_out' } }," STEP("c", "b_out", "c_out") "," STEP("d", "b_out", "OUT"))),
      "output 'OUT' for ensemble 'e' is not written: at least one of its "
      "depending tensors, 'c_out', is not connected");
  /* A step output nobody reads. */
  CHECK_STREQ(tail(ens(IO1,
                       "{ model_name: 'a' input_map { key: 'X' value: 'IN' }"
                       " output_map [{ key: 'Y' value: 'OUT' }, { key: 'Z' value: "
                       "'extra' }] }")),
              "ensemble tensor 'extra' is unused in ensemble 'e'");
  /* A step whose only reader is another unused chain. */
  CHECK_STREQ(tail(ens(IO1, STEP("a", "IN", "OUT") "," STEP("b", "IN", "lost"))),
              "ensemble tensor 'lost' is unused in ensemble 'e'");
  /* The ensemble among its own steps (Triton finds it building the
   * dependencies, once the config passes). */
  CHECK_STREQ(tail(ens(IO1, STEP("e", "IN", "OUT"))),
              "circular dependency between ensembles: e -> ... -> e -> e");
}

/* Bounds: tensors and step inputs past SRV_CONFIG_LIST_MAX, in one step
 * (config_limits bounds each map, not their sum over the steps). */
static void test_bounds(void) {
  size_t cap = 200 * 2100;
  char *steps = malloc(cap);
  REQUIRE(steps != NULL);
  size_t at = 0;
  /* 2049 steps of 2 outputs: 4099 tensors with IN; each map alone is small. */
  for (uint32_t i = 0; i < 2049; i++)
    at += (size_t)snprintf(steps + at, cap - at,
                           "%s{ model_name: 'a' input_map { key: 'X' value: 'IN' }"
                           " output_map [{ key: 'Y' value: 'y%u' }, { key: 'Z' value: "
                           "'z%u' }] }",
                           i ? "," : "", i, i);
  CHECK_STREQ(
      tail(ens(IO1, steps)),
      "ensemble 'e' has 4099 tensors (inputs and step outputs), more than the limit "
      "of 4096");
  at = 0;
  for (uint32_t i = 0; i < 2049; i++)
    at += (size_t)snprintf(
        steps + at, cap - at,
        "%s{ model_name: 'a' input_map [{ key: 'X' value: 'IN' }, { key: "
        "'W' value: 'IN' }] output_map { key: 'Y' value: 'y%u' } }",
        i ? "," : "", i);
  CHECK_STREQ(tail(ens(IO1, steps)),
              "ensemble 'e' maps 4098 step inputs, more than the limit of 4096");
  free(steps);
}

/* ---- against composing models ---- */

static const int64_t kD4[] = {4}, kDm1[] = {-1}, kDm1x4[] = {-1, 4}, kD5[] = {5},
                     kD2x5[] = {2, 5};

static srv_tensor_spec_t spec(const char *name, TRITONSERVER_DataType t, const int64_t *d,
                              uint32_t n) {
  return (srv_tensor_spec_t){.name = name, .datatype = t, .dims = d, .dims_count = n};
}

static srv_model_desc_t desc(const char *name, int32_t mbs, const srv_tensor_spec_t *in,
                             uint32_t nin, const srv_tensor_spec_t *out, uint32_t nout) {
  return (srv_model_desc_t){.name = name,
                            .max_batch_size = mbs,
                            .inputs = in,
                            .input_count = nin,
                            .outputs = out,
                            .output_count = nout};
}

/* Checks g against ensemble e and models m: NULL when accepted, else the
 * message after its prefix (static). */
static const char *check(const srv_model_desc_t *e, const srv_model_desc_t *m,
                         uint32_t n) {
  static char msg[SRV_STATUS_MESSAGE_MAX];
  srv_status_t *st = srv_ensemble_graph_check(&g, e, m, n, "config.pbtxt", &dec);
  if (st == NULL) return NULL;
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
  snprintf(msg, sizeof msg, "%s", tail(srv_status_message(st)));
  srv_status_free(st);
  return msg;
}

/* Checks the chain IN -a-> mid -b-> OUT (ensemble max_batch_size 8,
 * FP32 [4]) against a and b: X and Y of `xa`/`ya` and `xb`/`yb`. */
static const char *chain_check(int32_t mbs_a, srv_tensor_spec_t xa, srv_tensor_spec_t ya,
                               int32_t mbs_b, srv_tensor_spec_t xb,
                               srv_tensor_spec_t yb) {
  if (ens(IO1, STEP("a", "IN", "mid") "," STEP("b", "mid", "OUT")) != NULL)
    return "(no graph)";
  srv_tensor_spec_t ein = spec("IN", TRITONSERVER_TYPE_FP32, kD4, 1);
  srv_tensor_spec_t eout = spec("OUT", TRITONSERVER_TYPE_FP32, kD4, 1);
  srv_model_desc_t e = desc("e", 8, &ein, 1, &eout, 1);
  srv_model_desc_t m[2] = {desc("b", mbs_b, &xb, 1, &yb, 1),
                           desc("a", mbs_a, &xa, 1, &ya, 1)};
  return check(&e, m, 2);
}

#define F32(n, d) spec(n, TRITONSERVER_TYPE_FP32, d, sizeof d / sizeof d[0])
#define I32(n, d) spec(n, TRITONSERVER_TYPE_INT32, d, sizeof d / sizeof d[0])

static void test_models(void) {
  CHECK(chain_check(8, F32("X", kD4), F32("Y", kD4), 16, F32("X", kD4), F32("Y", kD4)) ==
        NULL);
  /* -1 matches any dim. */
  CHECK(chain_check(8, F32("X", kDm1), F32("Y", kD4), 8, F32("X", kDm1),
                    F32("Y", kDm1)) == NULL);
  /* A model that does not batch takes the batch as its first dim. */
  CHECK(chain_check(0, F32("X", kDm1x4), F32("Y", kDm1x4), 8, F32("X", kD4),
                    F32("Y", kD4)) == NULL);
  CHECK_STREQ(
      chain_check(4, F32("X", kD4), F32("Y", kD4), 8, F32("X", kD4), F32("Y", kD4)),
      "ensemble e allows maximum batch size 8, but it contains model a which only "
      "allows maximum batch size to be 4");
  CHECK_STREQ(
      chain_check(8, F32("X", kD4), I32("Y", kD4), 8, F32("X", kD4), F32("Y", kD4)),
      "in ensemble e, ensemble tensor mid: inconsistent data type: TYPE_INT32 is "
      "inferred from model a while TYPE_FP32 is inferred from model b");
  CHECK_STREQ(
      chain_check(8, I32("X", kD4), F32("Y", kD4), 8, F32("X", kD4), F32("Y", kD4)),
      "in ensemble e, ensemble tensor IN: inconsistent data type: TYPE_FP32 is "
      "inferred from model e while TYPE_INT32 is inferred from model a");
  CHECK_STREQ(
      chain_check(8, F32("X", kD4), F32("Y", kD5), 8, F32("X", kD4), F32("Y", kD4)),
      "in ensemble e, ensemble tensor mid: inconsistent shape: [-1,5] is inferred "
      "from model a while [-1,4] is inferred from model b");
  /* The ensemble's own output against what b writes. */
  CHECK_STREQ(
      chain_check(8, F32("X", kD4), F32("Y", kD4), 8, F32("X", kD4), F32("Y", kD5)),
      "in ensemble e, ensemble tensor OUT: inconsistent shape: [-1,4] is inferred "
      "from model e while [-1,5] is inferred from model b");
  /* Batching on one side only: the dims as given agree, or with the batch
   * dim first; here neither. */
  CHECK(chain_check(0, F32("X", kD4), F32("Y", kD4), 8, F32("X", kD4), F32("Y", kD4)) ==
        NULL);
  CHECK_STREQ(
      chain_check(0, F32("X", kD2x5), F32("Y", kD4), 8, F32("X", kD4), F32("Y", kD4)),
      "in ensemble e, ensemble tensor IN: inconsistent shape: [-1,4] is inferred "
      "from model e while [2,5] is inferred from model a");
  CHECK_STREQ(
      chain_check(8, F32("W", kD4), F32("Y", kD4), 8, F32("X", kD4), F32("Y", kD4)),
      "in ensemble e, ensemble tensor IN is mapping to non-existing input X in "
      "model a");
  CHECK_STREQ(
      chain_check(8, F32("X", kD4), F32("Z", kD4), 8, F32("X", kD4), F32("Y", kD4)),
      "in ensemble e, ensemble tensor mid is mapped from non-existing output Y in "
      "model a");
  /* A model input the step leaves unmapped: refused unless optional. */
  REQUIRE(ens(IO1, STEP("a", "IN", "OUT")) == NULL);
  srv_tensor_spec_t ein = F32("IN", kD4), eout = F32("OUT", kD4);
  srv_tensor_spec_t ain[2] = {F32("X", kD4), F32("EXTRA", kD4)}, aout = F32("Y", kD4);
  srv_model_desc_t e = desc("e", 8, &ein, 1, &eout, 1),
                   a = desc("a", 8, ain, 2, &aout, 1);
  CHECK_STREQ(
      check(&e, &a, 1),
      "in ensemble e, input EXTRA in model a is not mapped to any ensemble tensors");
  ain[1].optional = true;
  CHECK(check(&e, &a, 1) == NULL);
  CHECK_STREQ(check(&e, &a, 0), "in ensemble e, step 0: model a is not given");
}

static void test_diamond_models(void) {
  REQUIRE(ens(IO1, DIAMOND) == NULL);
  srv_tensor_spec_t ein = F32("IN", kD4), eout = F32("OUT", kD4);
  srv_tensor_spec_t x = F32("X", kD4), y = F32("Y", kD4);
  srv_tensor_spec_t ab[2] = {F32("A", kD4), F32("B", kD4)};
  srv_tensor_spec_t abc[3] = {F32("A", kD4), F32("B", kD4), F32("C", kD4)};
  srv_model_desc_t e = desc("e", 8, &ein, 1, &eout, 1);
  srv_model_desc_t m[4] = {desc("split", 8, &x, 1, ab, 2), desc("f", 8, &x, 1, &y, 1),
                           desc("g", 8, &x, 1, &y, 1), desc("join", 8, abc, 3, &y, 1)};
  dec = true;
  CHECK(check(&e, m, 4) == NULL);
  CHECK(!dec);
  /* A decoupled split: both branches carry its responses; the ensemble is
   * decoupled. */
  m[0].decoupled = true;
  CHECK(check(&e, m, 4) == NULL);
  CHECK(dec);
  /* A decoupled branch: join would mix its responses with the other's. */
  m[0].decoupled = false;
  m[1].decoupled = true;
  dec = false;
  CHECK_STREQ(check(&e, m, 4),
              "in ensemble e, step of model 'join' receives inputs originated from "
              "different decoupled models");
  CHECK(!dec); /* untouched on error */
  m[1].decoupled = false;
  abc[2] = F32("C", kD5); /* join reads l2 as C with other dims than as A */
  CHECK_STREQ(check(&e, m, 4),
              "in ensemble e, ensemble tensor l2: inconsistent shape: [-1,4] is inferred "
              "from model join while [-1,5] is inferred from model join");
}

/* The ensemble's outputs together: one from a decoupled step, one not. */
static void test_decoupled_outputs(void) {
  REQUIRE(ens("input [{ name: 'IN' data_type: TYPE_FP32 dims: [4] }]"
              " output [{ name: 'OUT' data_type: TYPE_FP32 dims: [4] },"
              " { name: 'OUT2' data_type: TYPE_FP32 dims: [4] }]",
              STEP("a", "IN", "OUT") "," STEP("b", "IN", "OUT2")) == NULL);
  srv_tensor_spec_t ein = F32("IN", kD4), eout[2] = {F32("OUT", kD4), F32("OUT2", kD4)};
  srv_tensor_spec_t x = F32("X", kD4), y = F32("Y", kD4);
  srv_model_desc_t e = desc("e", 8, &ein, 1, eout, 2);
  srv_model_desc_t m[2] = {desc("a", 8, &x, 1, &y, 1), desc("b", 8, &x, 1, &y, 1)};
  m[1].decoupled = true;
  CHECK_STREQ(
      check(&e, m, 2),
      "in ensemble e, step of model 'e' receives inputs originated from different "
      "decoupled models");
}

UNIT_MAIN("ensemble_graph", UNIT_CASE(test_chain), UNIT_CASE(test_diamond),
          UNIT_CASE(test_kind_errors), UNIT_CASE(test_step_errors),
          UNIT_CASE(test_flow_errors), UNIT_CASE(test_bounds), UNIT_CASE(test_models),
          UNIT_CASE(test_diamond_models), UNIT_CASE(test_decoupled_outputs))
