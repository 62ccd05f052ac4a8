/* Tests of cfg_model_config_read on the realistic Triton configs of
 * test/data/pbtxt/valid, checked field by field through the generated
 * accessors, plus the loader's file errors and concurrent use. */
#include "server/config/model_config.h"

#include <pthread.h>
#include <string.h>

#include "test/unit/unit.h"

#define VALID_DIR "test/data/pbtxt/valid/"

static bool sv_is(upb_StringView s, const char *want) {
  return s.size == strlen(want) && memcmp(s.data, want, s.size) == 0;
}

/* A string field equals a C string (embedded NULs compared too). */
#define CHECK_SV(sv, want)                                                              \
  do {                                                                                  \
    upb_StringView s_ = (sv);                                                           \
    if (!sv_is(s_, want)) {                                                             \
      fprintf(stderr, "  %s:%d: CHECK failed: %s == \"%s\" (got \"%.*s\")\n", __FILE__, \
              __LINE__, #sv, want, (int)s_.size, s_.data ? s_.data : "");               \
      atomic_fetch_add_explicit(&unit_failures, 1, memory_order_relaxed);               \
    }                                                                                   \
  } while (0)

/* A repeated scalar field equals a list: CHECK_LIST(int64_t, accessor, msg, 1, 2). */
#define CHECK_LIST(type, accessor, msg, ...)                                        \
  do {                                                                              \
    const type want_[] = {__VA_ARGS__};                                             \
    size_t n_ = 0, count_ = sizeof want_ / sizeof want_[0];                         \
    const type *got_ = accessor(msg, &n_);                                          \
    CHECK_EQ_U64(n_, count_);                                                       \
    for (size_t i_ = 0; i_ < n_ && i_ < count_; i_++) CHECK(got_[i_] == want_[i_]); \
  } while (0)

static upb_StringView sv(const char *s) { return upb_StringView_FromString(s); }

static upb_Arena *arena;
static char err[512];

static const inference_ModelConfig *load(const char *name) {
  char path[256];
  snprintf(path, sizeof path, VALID_DIR "%s", name);
  if (arena) upb_Arena_Free(arena);
  arena = upb_Arena_New();
  const inference_ModelConfig *cfg = cfg_model_config_read(path, arena, err, sizeof err);
  if (cfg == NULL) fprintf(stderr, "  %s\n", err);
  return cfg;
}

static void check_tensor_in(const inference_ModelInput *in, const char *name,
                            int32_t type, int64_t dim) {
  CHECK_SV(inference_ModelInput_name(in), name);
  CHECK_EQ_U64(inference_ModelInput_data_type(in), type);
  CHECK_LIST(int64_t, inference_ModelInput_dims, in, dim);
}

static void test_simple(void) {
  const inference_ModelConfig *cfg = load("simple.pbtxt");
  REQUIRE(cfg != NULL);
  CHECK_SV(inference_ModelConfig_name(cfg), "simple");
  CHECK_SV(inference_ModelConfig_platform(cfg), "tensorflow_graphdef");
  CHECK_EQ_U64(inference_ModelConfig_max_batch_size(cfg), 8);
  size_t n;
  const inference_ModelInput *const *in = inference_ModelConfig_input(cfg, &n);
  REQUIRE(n == 2);
  check_tensor_in(in[0], "INPUT0", inference_TYPE_INT32, 16);
  check_tensor_in(in[1], "INPUT1", inference_TYPE_INT32, 16);
  const inference_ModelOutput *const *out = inference_ModelConfig_output(cfg, &n);
  REQUIRE(n == 2);
  CHECK_SV(inference_ModelOutput_name(out[0]), "OUTPUT0");
  CHECK_SV(inference_ModelOutput_name(out[1]), "OUTPUT1");
  CHECK_EQ_U64(inference_ModelOutput_data_type(out[1]), inference_TYPE_INT32);
  CHECK_LIST(int64_t, inference_ModelOutput_dims, out[1], 16);
  CHECK_EQ_U64(inference_ModelConfig_scheduling_choice_case(cfg),
               inference_ModelConfig_scheduling_choice_NOT_SET);
  CHECK(!inference_ModelConfig_has_version_policy(cfg));
}

static void test_dynamic_batching(void) {
  const inference_ModelConfig *cfg = load("dynamic_batching.pbtxt");
  REQUIRE(cfg != NULL);
  size_t n;
  const inference_ModelInput *in = inference_ModelConfig_input(cfg, &n)[0];
  CHECK_EQ_U64(inference_ModelInput_format(in), inference_ModelInput_FORMAT_NCHW);
  CHECK_LIST(int64_t, inference_ModelInput_dims, in, 3, 224, 224);
  CHECK_SV(inference_ModelOutput_label_filename(inference_ModelConfig_output(cfg, &n)[0]),
           "labels.txt");
  const inference_ModelDynamicBatching *db = inference_ModelConfig_dynamic_batching(cfg);
  REQUIRE(db != NULL);
  CHECK_EQ_U64(inference_ModelConfig_scheduling_choice_case(cfg),
               inference_ModelConfig_scheduling_choice_dynamic_batching);
  CHECK_LIST(int32_t, inference_ModelDynamicBatching_preferred_batch_size, db, 4, 8, 16,
             32);
  CHECK_EQ_U64(inference_ModelDynamicBatching_max_queue_delay_microseconds(db), 100);
  CHECK(inference_ModelDynamicBatching_preserve_ordering(db));
  CHECK_EQ_U64(inference_ModelDynamicBatching_priority_levels(db), 2);
  CHECK_EQ_U64(inference_ModelDynamicBatching_default_priority_level(db), 2);
  const inference_ModelQueuePolicy *q =
      inference_ModelDynamicBatching_default_queue_policy(db);
  REQUIRE(q != NULL);
  CHECK_EQ_U64(inference_ModelQueuePolicy_timeout_action(q),
               inference_ModelQueuePolicy_REJECT);
  CHECK_EQ_U64(inference_ModelQueuePolicy_default_timeout_microseconds(q), 1000000);
  CHECK(inference_ModelQueuePolicy_allow_timeout_override(q));
  CHECK_EQ_U64(inference_ModelQueuePolicy_max_queue_size(q), 128);
  CHECK_EQ_U64(inference_ModelDynamicBatching_priority_queue_policy_size(db), 2);
  inference_ModelQueuePolicy *p1 = NULL, *p2 = NULL;
  REQUIRE(inference_ModelDynamicBatching_priority_queue_policy_get(db, 1, &p1));
  REQUIRE(inference_ModelDynamicBatching_priority_queue_policy_get(db, 2, &p2));
  CHECK_EQ_U64(inference_ModelQueuePolicy_timeout_action(p1),
               inference_ModelQueuePolicy_DELAY);
  CHECK_EQ_U64(inference_ModelQueuePolicy_default_timeout_microseconds(p1), 500);
  CHECK_EQ_U64(inference_ModelQueuePolicy_max_queue_size(p2), 16);
  const inference_ModelInstanceGroup *const *g =
      inference_ModelConfig_instance_group(cfg, &n);
  REQUIRE(n == 1);
  CHECK_EQ_U64(inference_ModelInstanceGroup_count(g[0]), 2);
  CHECK_EQ_U64(inference_ModelInstanceGroup_kind(g[0]),
               inference_ModelInstanceGroup_KIND_GPU);
}

static void check_control(const inference_ModelSequenceBatching_ControlInput *ci,
                          const char *name, int32_t kind) {
  size_t n;
  CHECK_SV(inference_ModelSequenceBatching_ControlInput_name(ci), name);
  const inference_ModelSequenceBatching_Control *const *c =
      inference_ModelSequenceBatching_ControlInput_control(ci, &n);
  CHECK_EQ_U64(n, 1);
  if (n == 1) CHECK_EQ_U64(inference_ModelSequenceBatching_Control_kind(c[0]), kind);
}

static void test_sequence_oldest(void) {
  const inference_ModelConfig *cfg = load("sequence_oldest.pbtxt");
  REQUIRE(cfg != NULL);
  const inference_ModelSequenceBatching *sb =
      inference_ModelConfig_sequence_batching(cfg);
  REQUIRE(sb != NULL);
  CHECK_EQ_U64(inference_ModelSequenceBatching_max_sequence_idle_microseconds(sb),
               5000000);
  CHECK_EQ_U64(inference_ModelSequenceBatching_strategy_choice_case(sb),
               inference_ModelSequenceBatching_strategy_choice_oldest);
  const inference_ModelSequenceBatching_StrategyOldest *o =
      inference_ModelSequenceBatching_oldest(sb);
  CHECK_EQ_U64(inference_ModelSequenceBatching_StrategyOldest_max_candidate_sequences(o),
               16);
  CHECK_LIST(int32_t, inference_ModelSequenceBatching_StrategyOldest_preferred_batch_size,
             o, 2, 4);
  CHECK_EQ_U64(
      inference_ModelSequenceBatching_StrategyOldest_max_queue_delay_microseconds(o),
      200);
  size_t n;
  const inference_ModelSequenceBatching_ControlInput *const *ci =
      inference_ModelSequenceBatching_control_input(sb, &n);
  REQUIRE(n == 4);
  check_control(ci[0], "START",
                inference_ModelSequenceBatching_Control_CONTROL_SEQUENCE_START);
  check_control(ci[1], "READY",
                inference_ModelSequenceBatching_Control_CONTROL_SEQUENCE_READY);
  check_control(ci[2], "END",
                inference_ModelSequenceBatching_Control_CONTROL_SEQUENCE_END);
  check_control(ci[3], "CORRID",
                inference_ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID);
  size_t m;
  const inference_ModelSequenceBatching_Control *c =
      inference_ModelSequenceBatching_ControlInput_control(ci[0], &m)[0];
  CHECK_LIST(float, inference_ModelSequenceBatching_Control_fp32_false_true, c, 0.0f,
             1.0f);
  c = inference_ModelSequenceBatching_ControlInput_control(ci[1], &m)[0];
  CHECK_LIST(int32_t, inference_ModelSequenceBatching_Control_int32_false_true, c, 0, 1);
  c = inference_ModelSequenceBatching_ControlInput_control(ci[2], &m)[0];
  CHECK_LIST(bool, inference_ModelSequenceBatching_Control_bool_false_true, c, false,
             true);
  c = inference_ModelSequenceBatching_ControlInput_control(ci[3], &m)[0];
  CHECK_EQ_U64(inference_ModelSequenceBatching_Control_data_type(c),
               inference_TYPE_UINT64);
}

static void test_sequence_states(void) {
  const inference_ModelConfig *cfg = load("sequence_oldest.pbtxt");
  REQUIRE(cfg != NULL);
  const inference_ModelSequenceBatching *sb =
      inference_ModelConfig_sequence_batching(cfg);
  REQUIRE(sb != NULL);
  size_t n, m;
  const inference_ModelSequenceBatching_State *const *st =
      inference_ModelSequenceBatching_state(sb, &n);
  REQUIRE(n == 2);
  CHECK_SV(inference_ModelSequenceBatching_State_input_name(st[0]), "INPUT_STATE");
  CHECK_SV(inference_ModelSequenceBatching_State_output_name(st[0]), "OUTPUT_STATE");
  CHECK_LIST(int64_t, inference_ModelSequenceBatching_State_dims, st[0], -1);
  CHECK(inference_ModelSequenceBatching_State_use_same_buffer_for_input_output(st[0]));
  CHECK(inference_ModelSequenceBatching_State_use_growable_memory(st[0]));
  const inference_ModelSequenceBatching_InitialState *is =
      inference_ModelSequenceBatching_State_initial_state(st[0], &m)[0];
  CHECK_EQ_U64(inference_ModelSequenceBatching_InitialState_state_data_case(is),
               inference_ModelSequenceBatching_InitialState_state_data_zero_data);
  CHECK_SV(inference_ModelSequenceBatching_InitialState_name(is), "initial state");
  is = inference_ModelSequenceBatching_State_initial_state(st[1], &m)[0];
  CHECK_SV(inference_ModelSequenceBatching_InitialState_data_file(is), "cache_init.bin");
  CHECK_LIST(int64_t, inference_ModelSequenceBatching_InitialState_dims, is, 2, 1);
  CHECK_EQ_U64(inference_ModelSequenceBatching_State_data_type(st[1]),
               inference_TYPE_FP16);
}

static void test_sequence_direct(void) {
  const inference_ModelConfig *cfg = load("sequence_direct.pbtxt");
  REQUIRE(cfg != NULL);
  const inference_ModelSequenceBatching *sb =
      inference_ModelConfig_sequence_batching(cfg);
  REQUIRE(sb != NULL);
  const inference_ModelSequenceBatching_StrategyDirect *d =
      inference_ModelSequenceBatching_direct(sb);
  REQUIRE(d != NULL);
  CHECK_EQ_U64(
      inference_ModelSequenceBatching_StrategyDirect_max_queue_delay_microseconds(d),
      1000);
  CHECK(inference_ModelSequenceBatching_StrategyDirect_minimum_slot_utilization(d) ==
        0.5f);
  size_t n, m;
  const inference_ModelSequenceBatching_ControlInput *const *ci =
      inference_ModelSequenceBatching_control_input(sb, &n);
  REQUIRE(n == 2);
  const inference_ModelSequenceBatching_Control *c =
      inference_ModelSequenceBatching_ControlInput_control(ci[0], &m)[0];
  CHECK_LIST(int32_t, inference_ModelSequenceBatching_Control_int32_false_true, c, 0, 1);
  c = inference_ModelSequenceBatching_ControlInput_control(ci[1], &m)[0];
  CHECK_EQ_U64(inference_ModelSequenceBatching_Control_data_type(c),
               inference_TYPE_STRING);
  const inference_ModelInput *in = inference_ModelConfig_input(cfg, &n)[0];
  CHECK_LIST(int64_t, inference_ModelInput_dims, in, -1);
}

static void test_ensemble(void) {
  const inference_ModelConfig *cfg = load("ensemble.pbtxt");
  REQUIRE(cfg != NULL);
  CHECK_SV(inference_ModelConfig_platform(cfg), "ensemble");
  const inference_ModelEnsembling *e = inference_ModelConfig_ensemble_scheduling(cfg);
  REQUIRE(e != NULL);
  CHECK_EQ_U64(inference_ModelEnsembling_max_inflight_requests(e), 32);
  size_t n;
  const inference_ModelEnsembling_Step *const *step =
      inference_ModelEnsembling_step(e, &n);
  REQUIRE(n == 2);
  CHECK_SV(inference_ModelEnsembling_Step_model_name(step[0]), "image_preprocess");
  CHECK(inference_ModelEnsembling_Step_model_version(step[0]) == -1);
  CHECK_EQ_U64(inference_ModelEnsembling_Step_model_version(step[1]), 3);
  upb_StringView v;
  REQUIRE(inference_ModelEnsembling_Step_input_map_get(step[0], sv("INPUT"), &v));
  CHECK_SV(v, "RAW_IMAGE");
  REQUIRE(inference_ModelEnsembling_Step_output_map_get(step[0], sv("OUTPUT"), &v));
  CHECK_SV(v, "preprocessed_image");
  CHECK_EQ_U64(inference_ModelEnsembling_Step_output_map_size(step[1]), 2);
  REQUIRE(inference_ModelEnsembling_Step_output_map_get(step[1], sv("labels"), &v));
  CHECK_SV(v, "LABELS");
  const inference_ModelOutput *const *out = inference_ModelConfig_output(cfg, &n);
  REQUIRE(n == 2);
  CHECK_EQ_U64(inference_ModelOutput_data_type(out[1]), inference_TYPE_STRING);
}

static void test_instance_groups(void) {
  const inference_ModelConfig *cfg = load("instance_groups.pbtxt");
  REQUIRE(cfg != NULL);
  size_t n, m;
  const inference_ModelInstanceGroup *const *g =
      inference_ModelConfig_instance_group(cfg, &n);
  REQUIRE(n == 4);
  CHECK_SV(inference_ModelInstanceGroup_name(g[0]), "gpu_group");
  CHECK_EQ_U64(inference_ModelInstanceGroup_count(g[0]), 2);
  CHECK_LIST(int32_t, inference_ModelInstanceGroup_gpus, g[0], 0, 1);
  const upb_StringView *prof = inference_ModelInstanceGroup_profile(g[0], &m);
  REQUIRE(m == 2);
  CHECK_SV(prof[1], "1");
  const inference_ModelRateLimiter *rl = inference_ModelInstanceGroup_rate_limiter(g[0]);
  REQUIRE(rl != NULL);
  CHECK_EQ_U64(inference_ModelRateLimiter_priority(rl), 2);
  const inference_ModelRateLimiter_Resource *const *r =
      inference_ModelRateLimiter_resources(rl, &m);
  REQUIRE(m == 2);
  CHECK_SV(inference_ModelRateLimiter_Resource_name(r[1]), "R2");
  CHECK(inference_ModelRateLimiter_Resource_global(r[1]));
  CHECK(!inference_ModelRateLimiter_Resource_global(r[0]));
  CHECK_EQ_U64(inference_ModelRateLimiter_Resource_count(r[0]), 4);
  CHECK_LIST(int32_t, inference_ModelInstanceGroup_gpus, g[1], 2);
  const inference_ModelInstanceGroup_SecondaryDevice *const *sd =
      inference_ModelInstanceGroup_secondary_devices(g[1], &m);
  REQUIRE(m == 1);
  CHECK_EQ_U64(inference_ModelInstanceGroup_SecondaryDevice_kind(sd[0]),
               inference_ModelInstanceGroup_SecondaryDevice_KIND_NVDLA);
  CHECK_EQ_U64(inference_ModelInstanceGroup_kind(g[2]),
               inference_ModelInstanceGroup_KIND_CPU);
  CHECK_EQ_U64(inference_ModelInstanceGroup_count(g[2]), 4);
  CHECK_SV(inference_ModelInstanceGroup_host_policy(g[2]), "numa0");
  CHECK_EQ_U64(inference_ModelInstanceGroup_kind(g[3]),
               inference_ModelInstanceGroup_KIND_MODEL);
  CHECK(inference_ModelInstanceGroup_passive(g[3]));
  CHECK_EQ_U64(inference_ModelInstanceGroup_count(g[3]), 0);
}

static void test_parameters(void) {
  const inference_ModelConfig *cfg = load("parameters.pbtxt");
  REQUIRE(cfg != NULL);
  CHECK_SV(inference_ModelConfig_backend(cfg), "python");
  CHECK_EQ_U64(inference_ModelConfig_max_batch_size(cfg), 0);
  CHECK_EQ_U64(inference_ModelConfig_parameters_size(cfg), 4);
  inference_ModelParameter *p = NULL;
  REQUIRE(inference_ModelConfig_parameters_get(cfg, sv("EXECUTION_ENV_PATH"), &p));
  CHECK_SV(inference_ModelParameter_string_value(p),
           "$$TRITON_MODEL_DIRECTORY/python3.10.tar.gz");
  REQUIRE(inference_ModelConfig_parameters_get(cfg, sv("max_batch_rows"), &p));
  CHECK_SV(inference_ModelParameter_string_value(p), "200"); /* the later entry wins */
  REQUIRE(
      inference_ModelConfig_parameters_get(cfg, sv("FORCE_CPU_ONLY_INPUT_TENSORS"), &p));
  CHECK_SV(inference_ModelParameter_string_value(p), "no");
  upb_StringView v;
  CHECK_EQ_U64(inference_ModelConfig_cc_model_filenames_size(cfg), 3);
  REQUIRE(inference_ModelConfig_cc_model_filenames_get(cfg, sv("8.0"), &v));
  CHECK_SV(v, "model_sm80.plan");
  REQUIRE(inference_ModelConfig_metric_tags_get(cfg, sv("team"), &v));
  CHECK_SV(v, "vision");
  CHECK_SV(inference_ModelConfig_default_model_filename(cfg), "model.py");
}

static void test_version_policies(void) {
  const inference_ModelConfig *cfg = load("version_policy_specific.pbtxt");
  REQUIRE(cfg != NULL);
  const inference_ModelVersionPolicy *vp = inference_ModelConfig_version_policy(cfg);
  REQUIRE(vp != NULL);
  CHECK_EQ_U64(inference_ModelVersionPolicy_policy_choice_case(vp),
               inference_ModelVersionPolicy_policy_choice_specific);
  CHECK_LIST(int64_t, inference_ModelVersionPolicy_Specific_versions,
             inference_ModelVersionPolicy_specific(vp), 1, 3, 7);
  cfg = load("version_policy_latest.pbtxt");
  REQUIRE(cfg != NULL);
  vp = inference_ModelConfig_version_policy(cfg);
  CHECK_EQ_U64(inference_ModelVersionPolicy_policy_choice_case(vp),
               inference_ModelVersionPolicy_policy_choice_latest);
  CHECK_EQ_U64(inference_ModelVersionPolicy_Latest_num_versions(
                   inference_ModelVersionPolicy_latest(vp)),
               2);
  cfg = load("version_policy_all.pbtxt");
  REQUIRE(cfg != NULL);
  vp = inference_ModelConfig_version_policy(cfg);
  CHECK_EQ_U64(inference_ModelVersionPolicy_policy_choice_case(vp),
               inference_ModelVersionPolicy_policy_choice_all);
  CHECK(inference_ModelVersionPolicy_all(vp) != NULL);
}

static void test_optimization(void) {
  const inference_ModelConfig *cfg = load("optimization.pbtxt");
  REQUIRE(cfg != NULL);
  const inference_ModelOptimizationPolicy *o = inference_ModelConfig_optimization(cfg);
  REQUIRE(o != NULL);
  CHECK(inference_ModelOptimizationPolicy_Graph_level(
            inference_ModelOptimizationPolicy_graph(o)) == -1);
  CHECK_EQ_U64(inference_ModelOptimizationPolicy_priority(o),
               inference_ModelOptimizationPolicy_PRIORITY_MAX);
  const inference_ModelOptimizationPolicy_Cuda *cuda =
      inference_ModelOptimizationPolicy_cuda(o);
  REQUIRE(cuda != NULL);
  CHECK(inference_ModelOptimizationPolicy_Cuda_graphs(cuda));
  CHECK(inference_ModelOptimizationPolicy_Cuda_busy_wait_events(cuda));
  CHECK(inference_ModelOptimizationPolicy_Cuda_output_copy_stream(cuda));
  size_t n;
  const inference_ModelOptimizationPolicy_Cuda_GraphSpec *const *gs =
      inference_ModelOptimizationPolicy_Cuda_graph_spec(cuda, &n);
  REQUIRE(n == 1);
  CHECK_EQ_U64(inference_ModelOptimizationPolicy_Cuda_GraphSpec_batch_size(gs[0]), 4);
  inference_ModelOptimizationPolicy_Cuda_GraphSpec_Shape *shape = NULL;
  REQUIRE(inference_ModelOptimizationPolicy_Cuda_GraphSpec_input_get(gs[0], sv("data_0"),
                                                                     &shape));
  CHECK_LIST(int64_t, inference_ModelOptimizationPolicy_Cuda_GraphSpec_Shape_dim, shape,
             3, 224, 224);
  const inference_ModelOptimizationPolicy_Cuda_GraphSpec_LowerBound *lb =
      inference_ModelOptimizationPolicy_Cuda_GraphSpec_graph_lower_bound(gs[0]);
  REQUIRE(lb != NULL);
  CHECK_EQ_U64(inference_ModelOptimizationPolicy_Cuda_GraphSpec_LowerBound_batch_size(lb),
               1);
  REQUIRE(inference_ModelOptimizationPolicy_Cuda_GraphSpec_LowerBound_input_get(
      lb, sv("data_0"), &shape));
  CHECK_LIST(int64_t, inference_ModelOptimizationPolicy_Cuda_GraphSpec_Shape_dim, shape,
             3, 112, 112);
}

static void test_execution_accelerators(void) {
  const inference_ModelConfig *cfg = load("optimization.pbtxt");
  REQUIRE(cfg != NULL);
  const inference_ModelOptimizationPolicy *o = inference_ModelConfig_optimization(cfg);
  REQUIRE(o != NULL);
  size_t n;
  const inference_ModelOptimizationPolicy_ExecutionAccelerators *ea =
      inference_ModelOptimizationPolicy_execution_accelerators(o);
  REQUIRE(ea != NULL);
  const inference_ModelOptimizationPolicy_ExecutionAccelerators_Accelerator *const *gpu =
      inference_ModelOptimizationPolicy_ExecutionAccelerators_gpu_execution_accelerator(
          ea, &n);
  REQUIRE(n == 2);
  CHECK_SV(
      inference_ModelOptimizationPolicy_ExecutionAccelerators_Accelerator_name(gpu[0]),
      "tensorrt");
  upb_StringView v;
  REQUIRE(
      inference_ModelOptimizationPolicy_ExecutionAccelerators_Accelerator_parameters_get(
          gpu[0], sv("precision_mode"), &v));
  CHECK_SV(v, "FP16");
  CHECK_SV(
      inference_ModelOptimizationPolicy_ExecutionAccelerators_Accelerator_name(gpu[1]),
      "cuda");
  inference_ModelOptimizationPolicy_ExecutionAccelerators_cpu_execution_accelerator(ea,
                                                                                    &n);
  CHECK_EQ_U64(n, 1);
  CHECK(!inference_ModelOptimizationPolicy_PinnedMemoryBuffer_enable(
      inference_ModelOptimizationPolicy_input_pinned_memory(o)));
  CHECK(inference_ModelOptimizationPolicy_PinnedMemoryBuffer_enable(
      inference_ModelOptimizationPolicy_output_pinned_memory(o)));
  CHECK_EQ_U64(inference_ModelOptimizationPolicy_gather_kernel_buffer_threshold(o), 4096);
  CHECK(inference_ModelOptimizationPolicy_eager_batching(o));
}

static void test_model_warmup(void) {
  const inference_ModelConfig *cfg = load("model_warmup.pbtxt");
  REQUIRE(cfg != NULL);
  size_t n;
  const inference_ModelWarmup *const *w = inference_ModelConfig_model_warmup(cfg, &n);
  REQUIRE(n == 2);
  CHECK_SV(inference_ModelWarmup_name(w[0]), "zeros and random");
  CHECK_EQ_U64(inference_ModelWarmup_batch_size(w[0]), 8);
  CHECK_EQ_U64(inference_ModelWarmup_count(w[0]), 3);
  CHECK_EQ_U64(inference_ModelWarmup_inputs_size(w[0]), 3);
  inference_ModelWarmup_Input *in = NULL;
  REQUIRE(inference_ModelWarmup_inputs_get(w[0], sv("INPUT__1"), &in));
  CHECK_EQ_U64(inference_ModelWarmup_Input_input_data_type_case(in),
               inference_ModelWarmup_Input_input_data_type_random_data);
  CHECK_EQ_U64(inference_ModelWarmup_Input_data_type(in), inference_TYPE_INT64);
  REQUIRE(inference_ModelWarmup_inputs_get(w[0], sv("INPUT__2"), &in));
  CHECK_SV(inference_ModelWarmup_Input_input_data_file(in), "raw_strings");
  REQUIRE(inference_ModelWarmup_inputs_get(w[1], sv("INPUT__0"), &in));
  CHECK_LIST(int64_t, inference_ModelWarmup_Input_dims, in, 16);
  CHECK(inference_ModelWarmup_Input_random_data(in));
}

static void test_reshape_and_cache(void) {
  const inference_ModelConfig *cfg = load("reshape_and_cache.pbtxt");
  REQUIRE(cfg != NULL);
  size_t n, m;
  const inference_ModelInput *const *in = inference_ModelConfig_input(cfg, &n);
  REQUIRE(n == 2);
  /* An empty reshape is present (a scalar), not absent. */
  REQUIRE(inference_ModelInput_has_reshape(in[0]));
  inference_ModelTensorReshape_shape(inference_ModelInput_reshape(in[0]), &m);
  CHECK_EQ_U64(m, 0);
  CHECK_LIST(int64_t, inference_ModelTensorReshape_shape,
             inference_ModelInput_reshape(in[1]), 16);
  CHECK(inference_ModelInput_allow_ragged_batch(in[1]));
  CHECK(inference_ModelInput_optional(in[1]));
  const inference_ModelOutput *out = inference_ModelConfig_output(cfg, &n)[0];
  CHECK_LIST(int64_t, inference_ModelTensorReshape_shape,
             inference_ModelOutput_reshape(out), 4, 4);
  CHECK(inference_ModelResponseCache_enable(inference_ModelConfig_response_cache(cfg)));
}

static void test_string_escapes(void) {
  const inference_ModelConfig *cfg = load("string_escapes.pbtxt");
  REQUIRE(cfg != NULL);
  CHECK_SV(inference_ModelConfig_name(cfg), "escapes \"quoted\" model");
  CHECK_SV(inference_ModelConfig_platform(cfg),
           "tab\there\nnewline \\ backslash ' single \" double");
  CHECK_SV(inference_ModelConfig_backend(cfg),
           "octABC hexABC bell\a bs\b ff\f cr\r vt\v");
  CHECK_SV(inference_ModelConfig_default_model_filename(cfg), "model.plan");
  CHECK_SV(inference_ModelConfig_runtime(cfg), "libtriton_custom.so");
  size_t n;
  CHECK_SV(inference_ModelInput_name(inference_ModelConfig_input(cfg, &n)[0]),
           "entr\xc3\xa9"
           "e");
  CHECK_SV(inference_ModelOutput_name(inference_ModelConfig_output(cfg, &n)[0]),
           "\xc3\xa9t\xc3\xa9");
  upb_StringView v;
  REQUIRE(inference_ModelConfig_metric_tags_get(cfg, sv(""), &v));
  CHECK_SV(v, "empty key");
  REQUIRE(inference_ModelConfig_metric_tags_get(cfg, sv("quote\"key"), &v));
  CHECK_SV(v, "");
}

static void test_comments_separators(void) {
  const inference_ModelConfig *cfg = load("comments_separators.pbtxt");
  REQUIRE(cfg != NULL);
  CHECK_SV(inference_ModelConfig_name(cfg), "compact");
  CHECK_EQ_U64(inference_ModelConfig_max_batch_size(cfg), 4);
  CHECK_SV(inference_ModelConfig_backend(cfg), "identity");
  size_t n;
  const inference_ModelInput *const *in = inference_ModelConfig_input(cfg, &n);
  REQUIRE(n == 2);
  check_tensor_in(in[1], "B", inference_TYPE_UINT16, 7);
  CHECK_LIST(int64_t, inference_ModelInput_dims, in[0], 1, 2, 3);
  const inference_ModelOutput *const *out = inference_ModelConfig_output(cfg, &n);
  REQUIRE(n == 2);
  CHECK_LIST(int64_t, inference_ModelOutput_dims, out[0], 1, 2);
  CHECK_EQ_U64(inference_ModelOutput_data_type(out[1]), inference_TYPE_BF16);
  CHECK(inference_ModelTransactionPolicy_decoupled(
      inference_ModelConfig_model_transaction_policy(cfg)));
  CHECK(inference_ModelResponseCache_enable(inference_ModelConfig_response_cache(cfg)));
  const upb_StringView *libs = inference_ModelOperations_op_library_filename(
      inference_ModelConfig_model_operations(cfg), &n);
  REQUIRE(n == 1);
  CHECK_SV(libs[0], "libcustom_ops.so");
}

static void test_batch_io_and_policies(void) {
  const inference_ModelConfig *cfg = load("batch_io_and_policies.pbtxt");
  REQUIRE(cfg != NULL);
  size_t n, m;
  const inference_BatchInput *const *bi = inference_ModelConfig_batch_input(cfg, &n);
  REQUIRE(n == 2);
  CHECK_EQ_U64(inference_BatchInput_kind(bi[0]),
               inference_BatchInput_BATCH_ACCUMULATED_ELEMENT_COUNT);
  CHECK_SV(inference_BatchInput_target_name(bi[0], &m)[0], "INDEX");
  CHECK_SV(inference_BatchInput_source_input(bi[1], &m)[0], "IN");
  const inference_BatchOutput *const *bo = inference_ModelConfig_batch_output(cfg, &n);
  REQUIRE(n == 1);
  CHECK_EQ_U64(inference_BatchOutput_kind(bo[0]),
               inference_BatchOutput_BATCH_SCATTER_WITH_INPUT_SHAPE);
  CHECK(inference_ModelTransactionPolicy_decoupled(
      inference_ModelConfig_model_transaction_policy(cfg)));
  inference_ModelOperations_op_library_filename(
      inference_ModelConfig_model_operations(cfg), &n);
  CHECK_EQ_U64(n, 2);
  const inference_ModelRepositoryAgents_Agent *const *ag =
      inference_ModelRepositoryAgents_agents(
          inference_ModelConfig_model_repository_agents(cfg), &n);
  REQUIRE(n == 1);
  upb_StringView v;
  REQUIRE(inference_ModelRepositoryAgents_Agent_parameters_get(ag[0],
                                                               sv("MD5:model.onnx"), &v));
  CHECK_SV(v, "d41d8cd98f00b204e9800998ecf8427e");
  const inference_ModelMetrics_MetricControl *const *mc =
      inference_ModelMetrics_metric_control(inference_ModelConfig_model_metrics(cfg), &n);
  REQUIRE(n == 1);
  const inference_ModelMetrics_MetricControl_HistogramOptions *h =
      inference_ModelMetrics_MetricControl_histogram_options(mc[0]);
  CHECK_LIST(double, inference_ModelMetrics_MetricControl_HistogramOptions_buckets, h,
             0.5, 1, 2.5, 5, 10, 100, 1500, 0.25);
}

static void test_empty(void) {
  const inference_ModelConfig *cfg = load("empty.pbtxt");
  REQUIRE(cfg != NULL);
  size_t n;
  CHECK_EQ_U64(inference_ModelConfig_name(cfg).size, 0);
  CHECK_EQ_U64(inference_ModelConfig_max_batch_size(cfg), 0);
  inference_ModelConfig_input(cfg, &n);
  CHECK_EQ_U64(n, 0);
  CHECK(!inference_ModelConfig_has_dynamic_batching(cfg));
}

static void test_file_errors(void) {
  upb_Arena *a = upb_Arena_New();
  CHECK(cfg_model_config_read("test/data/pbtxt/valid/no_such.pbtxt", a, err,
                              sizeof err) == NULL);
  CHECK_STREQ(err, "test/data/pbtxt/valid/no_such.pbtxt: No such file or directory");
  CHECK(cfg_model_config_read("test/data/pbtxt/valid", a, err, sizeof err) == NULL);
  CHECK_STREQ(err, "test/data/pbtxt/valid: Is a directory");
  CHECK(cfg_model_config_read("test/data/pbtxt/invalid/unknown_field.pbtxt", a, err,
                              sizeof err) == NULL);
  CHECK_STREQ(err,
              "test/data/pbtxt/invalid/unknown_field.pbtxt:5:3: unknown field 'dim' in "
              "message inference.ModelInput");
  /* A NULL or empty error buffer is allowed. */
  CHECK(cfg_model_config_read("/nonexistent", a, NULL, 0) == NULL);
  char tiny[4] = "xxx";
  CHECK(cfg_model_config_read("/nonexistent", a, tiny, sizeof tiny) == NULL);
  CHECK_STREQ(tiny, "/no");
  const inference_ModelConfig *cfg =
      cfg_model_config_parse("name: 'm'", 9, "mem", a, err, 64);
  REQUIRE(cfg != NULL);
  CHECK_SV(inference_ModelConfig_name(cfg), "m");
  upb_Arena_Free(a);
}

/* Many threads race to the first use of the shared def pool, then parse. */
static void *parse_all(void *arg) {
  static const char *const files[] = {"simple.pbtxt", "ensemble.pbtxt",
                                      "optimization.pbtxt", "sequence_oldest.pbtxt",
                                      "parameters.pbtxt"};
  intptr_t failures = 0;
  for (int round = 0; round < 20; round++) {
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
      char path[256], e[256];
      snprintf(path, sizeof path, VALID_DIR "%s", files[i]);
      upb_Arena *a = upb_Arena_New();
      if (cfg_model_config_read(path, a, e, sizeof e) == NULL) failures++;
      upb_Arena_Free(a);
    }
  }
  (void)arg;
  return (void *)failures;
}

static void test_concurrent_reads(void) {
  pthread_t t[8];
  for (int i = 0; i < 8; i++) REQUIRE(pthread_create(&t[i], NULL, parse_all, NULL) == 0);
  for (int i = 0; i < 8; i++) {
    void *failures;
    pthread_join(t[i], &failures);
    CHECK_EQ_U64((intptr_t)failures, 0);
  }
  CHECK(cfg_model_config_def() != NULL);
  CHECK_STREQ(upb_MessageDef_FullName(cfg_model_config_def()), "inference.ModelConfig");
}

static void test_cleanup(void) {
  if (arena) upb_Arena_Free(arena);
  arena = NULL;
}

UNIT_MAIN("model_config", UNIT_CASE(test_concurrent_reads), UNIT_CASE(test_simple),
          UNIT_CASE(test_dynamic_batching), UNIT_CASE(test_sequence_oldest),
          UNIT_CASE(test_sequence_states), UNIT_CASE(test_sequence_direct),
          UNIT_CASE(test_ensemble), UNIT_CASE(test_instance_groups),
          UNIT_CASE(test_parameters), UNIT_CASE(test_version_policies),
          UNIT_CASE(test_optimization), UNIT_CASE(test_execution_accelerators),
          UNIT_CASE(test_model_warmup), UNIT_CASE(test_reshape_and_cache),
          UNIT_CASE(test_string_escapes), UNIT_CASE(test_comments_separators),
          UNIT_CASE(test_batch_io_and_policies), UNIT_CASE(test_empty),
          UNIT_CASE(test_file_errors), UNIT_CASE(test_cleanup))
