/* The bounds on model configs (config_limits.h) and the checks at load
 * that use them (model_check.h), on configs parsed from text: each bound
 * holds at its limit and refuses one past it with the exact text clients
 * see; instance counts add up in 64 bits; duplicate tensor names are found
 * among thousands. One thread. */
#include "server/model/config_limits.h"
#include "server/model/model.h"
#include "server/model/model_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/model_config.h"
#include "test/unit/unit.h"

/* A growing text buffer for generated configs. */
typedef struct {
  char *s;
  size_t len, cap;
} text_t;

static void add(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text_t *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (t->s != NULL && t->len + (size_t)n < t->cap) {
      t->len += (size_t)n;
      return;
    }
    t->cap = 2 * (t->cap + (size_t)n + 64);
    t->s = realloc(t->s, t->cap);
    if (t->s == NULL) abort();
  }
}

/* The limits check on `text`: NULL when it passes, else its message (static). */
static const char *limits(const char *text) {
  static char msg[1024];
  upb_Arena *a = upb_Arena_New();
  char err[256];
  inference_ModelConfig *c =
      cfg_model_config_parse(text, strlen(text), "config.pbtxt", a, err, sizeof err);
  if (c == NULL) {
    fprintf(stderr, "  does not parse: %s\n", err);
    upb_Arena_Free(a);
    return "(no parse)";
  }
  srv_status_t *st = srv_config_limits_check(c, "m", "config.pbtxt");
  const char *out = NULL;
  if (st != NULL) {
    CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
    snprintf(msg, sizeof msg, "%s", srv_status_message(st));
    srv_status_free(st);
    out = msg;
  }
  upb_Arena_Free(a);
  return out;
}

/* `n` repetitions of `item` inside `before` ... `after`. */
static char *repeated(const char *before, const char *item, size_t n, const char *after) {
  text_t t = {0};
  add(&t, "%s", before);
  for (size_t i = 0; i < n; i++) add(&t, item, (unsigned)i);
  add(&t, "%s", after);
  return t.s;
}

static void expect_list(const char *before, const char *item, const char *after,
                        size_t limit, const char *past) {
  char *at = repeated(before, item, limit, after);
  CHECK(limits(at) == NULL);
  char *over = repeated(before, item, limit + 1, after);
  CHECK_STREQ(limits(over), past);
  free(at);
  free(over);
}

static void test_list_lengths(void) {
  expect_list(
      "", "input { name: \"I%u\" }\n", "", SRV_CONFIG_LIST_MAX,
      "model 'm': config.pbtxt: 'input' has 4097 entries, above the limit of 4096");
  expect_list("", "parameters { key: \"k%u\" value { string_value: \"v\" } }\n", "",
              SRV_CONFIG_LIST_MAX,
              "model 'm': config.pbtxt: 'parameters' has 4097 entries, above the limit "
              "of 4096");
  expect_list("version_policy { specific { versions: [", "%u,", "0] } }",
              SRV_CONFIG_LIST_MAX - 1,
              "model 'm': config.pbtxt: 'version_policy.specific.versions' has 4097 "
              "entries, above the limit of 4096");
  expect_list("sequence_batching { control_input { name: \"c\" control [",
              "{ int32_false_true: [0, %u] },", "{}] } }", SRV_CONFIG_LIST_MAX - 1,
              "model 'm': config.pbtxt: 'sequence_batching.control_input[0].control' "
              "has 4097 entries, above the limit of 4096");
  expect_list("input { name: \"x\" reshape { shape: [", "1,", "1] } }",
              SRV_CONFIG_DIMS_MAX - 1,
              "model 'm': config.pbtxt: 'input[0].reshape.shape' has 65 entries, above "
              "the limit of 64");
  expect_list("model_warmup { inputs { key: \"x\" value { dims: [", "%u,", "1] } } }",
              SRV_CONFIG_DIMS_MAX - 1,
              "model 'm': config.pbtxt: 'model_warmup[0].inputs[\"x\"].dims' has 65 "
              "entries, above the limit of 64");
}

static void test_names_and_durations(void) {
  char name[SRV_CONFIG_NAME_MAX + 2], text[SRV_CONFIG_NAME_MAX + 64];
  memset(name, 'n', sizeof name - 1);
  name[SRV_CONFIG_NAME_MAX] = '\0';
  snprintf(text, sizeof text, "output { name: \"%s\" }", name);
  CHECK(limits(text) == NULL);
  name[SRV_CONFIG_NAME_MAX] = 'n';
  name[SRV_CONFIG_NAME_MAX + 1] = '\0';
  snprintf(text, sizeof text, "output { name: \"%s\" }", name);
  CHECK_STREQ(limits(text),
              "model 'm': config.pbtxt: 'output[0].name' is 1025 bytes long, above the "
              "limit of 1024");
  CHECK(limits("dynamic_batching { max_queue_delay_microseconds: 31536000000000 }") ==
        NULL);
  CHECK_STREQ(limits("dynamic_batching { max_queue_delay_microseconds: 31536000000001 }"),
              "model 'm': config.pbtxt: 'dynamic_batching.max_queue_delay_microseconds' "
              "is 31536000000001, above the limit of 31536000000000 (365 days)");
  CHECK_STREQ(limits("dynamic_batching { priority_queue_policy { key: 3 value { "
                     "default_timeout_microseconds: 18446744073709551615 } } }"),
              "model 'm': config.pbtxt: "
              "'dynamic_batching.priority_queue_policy[3].default_timeout_microseconds' "
              "is 18446744073709551615, above the limit of 31536000000000 (365 days)");
  CHECK_STREQ(limits("sequence_batching { oldest { max_queue_delay_microseconds: "
                     "99999999999999999 } }"),
              "model 'm': config.pbtxt: "
              "'sequence_batching.oldest.max_queue_delay_microseconds' is "
              "99999999999999999, above the limit of 31536000000000 (365 days)");
}

static void test_instances_and_levels(void) {
  CHECK(limits("instance_group { count: 1024 }") == NULL);
  CHECK_STREQ(limits("instance_group { count: 1025 }"),
              "model 'm': config.pbtxt: 'instance_group[0].count' is 1025, above the "
              "limit of 1024 instances per model version");
  CHECK(limits("instance_group [{ count: 1000 }, { count: 24 }]") == NULL);
  CHECK_STREQ(limits("instance_group [{ count: 1000 }, { count: 24 }, {}]"),
              "model 'm': config.pbtxt: 'instance_group' counts add up to 1025 "
              "instances, above the limit of 1024 per model version");
  CHECK_STREQ(limits("instance_group [{ count: 2147483647 }, { count: 2147483647 }, "
                     "{ count: 2 }]"),
              "model 'm': config.pbtxt: 'instance_group[0].count' is 2147483647, above "
              "the limit of 1024 instances per model version");
  /* The sum that once wrapped to 0 in 32 bits. */
  upb_Arena *a = upb_Arena_New();
  const char *wrap =
      "instance_group [{ count: 2147483647 }, { count: 2147483647 }, { count: 2 }]";
  inference_ModelConfig *c =
      cfg_model_config_parse(wrap, strlen(wrap), "config.pbtxt", a, NULL, 0);
  REQUIRE(c != NULL);
  CHECK_EQ_U64(srv_config_instance_total(c), 4294967296ull);
  upb_Arena_Free(a);
  CHECK(limits("dynamic_batching { priority_levels: 4096 }") == NULL);
  CHECK_STREQ(limits("dynamic_batching { priority_levels: 50000000 }"),
              "model 'm': config.pbtxt: 'dynamic_batching.priority_levels' is 50000000, "
              "above the limit of 4096");
}

/* srv_model_config_complete on a config text, for model "m". */
static srv_status_t *complete(const char *text, upb_Arena *a) {
  static srv_model_t m;
  static char name[] = "m";
  memset(&m, 0, sizeof m);
  m.name = name;
  m.arena = a;
  m.config = cfg_model_config_parse(text, strlen(text), "config.pbtxt", a, NULL, 0);
  if (m.config == NULL) return srv_status_new(GRPC_STATUS_INTERNAL, "does not parse");
  return srv_model_config_complete(&m, "config override");
}

static void expect_complete(const char *text, const char *msg) {
  upb_Arena *a = upb_Arena_New();
  srv_status_t *st = complete(text, a);
  if (msg == NULL) {
    CHECK(st == NULL);
  } else {
    REQUIRE(st != NULL);
    CHECK_STREQ(srv_status_message(st), msg);
  }
  srv_status_free(st);
  upb_Arena_Free(a);
}

static void test_complete(void) {
  /* The limits come first, and name the source given. */
  expect_complete("backend: \"b\" instance_group { count: 2000 }",
                  "model 'm': config override: 'instance_group[0].count' is 2000, above "
                  "the limit of 1024 instances per model version");
  /* Duplicates among the largest number of inputs allowed: sorted, not
   * compared pairwise. */
  char *inputs = repeated(
      "backend: \"b\" ", "input { name: \"I%u\" data_type: TYPE_FP32 dims: 1 }",
      SRV_CONFIG_LIST_MAX - 1, "input { name: \"I7\" data_type: TYPE_FP32 dims: 1 }");
  expect_complete(inputs, "model 'm': input 'I7' is declared twice");
  free(inputs);
  expect_complete(
      "backend: \"b\" output { name: \"O\" data_type: TYPE_FP32 dims: 1 } "
      "output { name: \"O\" data_type: TYPE_FP32 dims: 1 }",
      "model 'm': output 'O' is declared twice");
  /* Triton's rule: GPUs are listed only by GPU groups. */
  /* KIND_AUTO listing a GPU this server lacks is KIND_CPU, as Triton. */
  expect_complete("backend: \"b\" instance_group { name: \"g\" gpus: [99] }",
                  "model 'm': instance group 'g' is KIND_CPU but lists GPUs in 'gpus'; "
                  "only KIND_GPU groups may");
  expect_complete("backend: \"b\" instance_group { kind: KIND_MODEL gpus: 1 }",
                  "model 'm': instance group 'm' is KIND_MODEL but lists GPUs in "
                  "'gpus'; only KIND_GPU groups may");
  expect_complete("backend: \"b\" instance_group { kind: KIND_CPU count: 1024 }", NULL);
}

UNIT_MAIN("config_limits", UNIT_CASE(test_list_lengths),
          UNIT_CASE(test_names_and_durations), UNIT_CASE(test_instances_and_levels),
          UNIT_CASE(test_complete))
