/* Model metadata, config and statistics over the control RPCs (see model.h). */
#include "tools/perf/model.h"

#include <stdlib.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "model_config.upb.h"
#include "tools/perf/rpc.h"

static const struct {
  const char *name;
  perf_dtype_t dtype;
  size_t size;
} dtypes[] = {
    {"BOOL", PERF_BOOL, 1},     {"UINT8", PERF_UINT8, 1},   {"UINT16", PERF_UINT16, 2},
    {"UINT32", PERF_UINT32, 4}, {"UINT64", PERF_UINT64, 8}, {"INT8", PERF_INT8, 1},
    {"INT16", PERF_INT16, 2},   {"INT32", PERF_INT32, 4},   {"INT64", PERF_INT64, 8},
    {"FP16", PERF_FP16, 2},     {"FP32", PERF_FP32, 4},     {"FP64", PERF_FP64, 8},
    {"BF16", PERF_BF16, 2},     {"BYTES", PERF_BYTES, 0},
};

bool perf_dtype_parse(const char *name, size_t len, perf_dtype_t *dtype, size_t *size) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
    if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, name, len) == 0) {
      *dtype = dtypes[i].dtype;
      *size = dtypes[i].size;
      return true;
    }
  }
  return false;
}

/* Serializes a {name, version} request (ModelMetadata, ModelConfig and
 * ModelStatistics requests share field numbers 1 and 2) and calls method. */
static bool name_version_call(grpc_channel *ch, const char *method, const char *name,
                              const char *version, unsigned timeout_ms, upb_Arena *a,
                              grpc_slice *reply, perf_err_t *err) {
  inference_ModelMetadataRequest *req = inference_ModelMetadataRequest_new(a);
  if (req == NULL) PERF_FATAL("out of memory");
  inference_ModelMetadataRequest_set_name(req, upb_StringView_FromString(name));
  inference_ModelMetadataRequest_set_version(req, upb_StringView_FromString(version));
  size_t len;
  char *bytes = inference_ModelMetadataRequest_serialize(req, a, &len);
  if (bytes == NULL) PERF_FATAL("out of memory");
  return perf_rpc_call(ch, method, bytes, len, timeout_ms, reply, err);
}

static bool input_set(perf_input_t *in,
                      const inference_ModelMetadataResponse_TensorMetadata *t,
                      int32_t max_batch_size, perf_err_t *err) {
  upb_StringView name = inference_ModelMetadataResponse_TensorMetadata_name(t);
  upb_StringView dt = inference_ModelMetadataResponse_TensorMetadata_datatype(t);
  in->name = perf_strndup(name.data, name.size);
  if (!perf_dtype_parse(dt.data, dt.size, &in->dtype, &in->elem_size) ||
      dt.size >= sizeof in->datatype)
    return perf_fail(err, "input %s: unknown datatype '%.*s'", in->name, (int)dt.size,
                     dt.data);
  memcpy(in->datatype, dt.data, dt.size);
  size_t n;
  const int64_t *shape = inference_ModelMetadataResponse_TensorMetadata_shape(t, &n);
  size_t skip = max_batch_size > 0 && n > 0 ? 1 : 0; /* the batch dimension */
  if (n - skip > PERF_MAX_DIMS)
    return perf_fail(err, "input %s: more than %d dimensions", in->name, PERF_MAX_DIMS);
  in->ndims = n - skip;
  memcpy(in->shape, shape + skip, in->ndims * sizeof *shape);
  return true;
}

static bool metadata_parse(const grpc_slice *reply, perf_model_t *m, upb_Arena *a,
                           perf_err_t *err) {
  inference_ModelMetadataResponse *md = inference_ModelMetadataResponse_parse(
      (const char *)GRPC_SLICE_START_PTR(*reply), GRPC_SLICE_LENGTH(*reply), a);
  if (md == NULL) return perf_fail(err, "ModelMetadata: unparsable response");
  size_t n;
  const inference_ModelMetadataResponse_TensorMetadata *const *ins =
      inference_ModelMetadataResponse_inputs(md, &n);
  if (n == 0) return perf_fail(err, "ModelMetadata: the model has no inputs");
  m->inputs = perf_calloc(n, sizeof *m->inputs);
  m->ninputs = n;
  for (size_t i = 0; i < n; i++)
    if (!input_set(&m->inputs[i], ins[i], m->max_batch_size, err)) return false;
  const inference_ModelMetadataResponse_TensorMetadata *const *outs =
      inference_ModelMetadataResponse_outputs(md, &n);
  m->outputs = perf_calloc(n ? n : 1, sizeof *m->outputs);
  m->noutputs = n;
  for (size_t i = 0; i < n; i++) {
    upb_StringView name = inference_ModelMetadataResponse_TensorMetadata_name(outs[i]);
    m->outputs[i] = perf_strndup(name.data, name.size);
  }
  return true;
}

/* Whether the model is a sequence model, and its ids' type (as
 * perf_analyzer: a CORRID control of TYPE_STRING wants string ids). */
static void sequence_parse(const inference_ModelSequenceBatching *sb, perf_model_t *m) {
  m->sequence = sb != NULL;
  size_t ninputs = 0, ncontrols = 0;
  const inference_ModelSequenceBatching_ControlInput *const *ins =
      sb ? inference_ModelSequenceBatching_control_input(sb, &ninputs) : NULL;
  for (size_t i = 0; i < ninputs; i++) {
    const inference_ModelSequenceBatching_Control *const *cs =
        inference_ModelSequenceBatching_ControlInput_control(ins[i], &ncontrols);
    for (size_t c = 0; c < ncontrols; c++)
      if (inference_ModelSequenceBatching_Control_kind(cs[c]) ==
              inference_ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID &&
          inference_ModelSequenceBatching_Control_data_type(cs[c]) ==
              inference_TYPE_STRING)
        m->string_ids = true;
  }
}

static bool config_parse(const grpc_slice *reply, perf_model_t *m, upb_Arena *a,
                         perf_err_t *err) {
  inference_ModelConfigResponse *resp = inference_ModelConfigResponse_parse(
      (const char *)GRPC_SLICE_START_PTR(*reply), GRPC_SLICE_LENGTH(*reply), a);
  if (resp == NULL) return perf_fail(err, "ModelConfig: unparsable response");
  const inference_ModelConfig *cfg = inference_ModelConfigResponse_config(resp);
  if (cfg == NULL) return perf_fail(err, "ModelConfig: the response has no config");
  m->max_batch_size = inference_ModelConfig_max_batch_size(cfg);
  const inference_ModelTransactionPolicy *tp =
      inference_ModelConfig_model_transaction_policy(cfg);
  m->decoupled = tp != NULL && inference_ModelTransactionPolicy_decoupled(tp);
  sequence_parse(inference_ModelConfig_sequence_batching(cfg), m);
  return true;
}

bool perf_model_fetch(grpc_channel *ch, const char *name, const char *version,
                      unsigned timeout_ms, perf_model_t *m, perf_err_t *err) {
  memset(m, 0, sizeof *m);
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) PERF_FATAL("out of memory");
  grpc_slice cfg = grpc_empty_slice(), md = grpc_empty_slice();
  /* The config first: whether the metadata shapes carry a batch dimension. */
  bool ok =
      name_version_call(ch, "ModelConfig", name, version, timeout_ms, a, &cfg, err) &&
      config_parse(&cfg, m, a, err) &&
      name_version_call(ch, "ModelMetadata", name, version, timeout_ms, a, &md, err) &&
      metadata_parse(&md, m, a, err);
  grpc_slice_unref(cfg);
  grpc_slice_unref(md);
  upb_Arena_Free(a);
  if (!ok) perf_model_free(m);
  return ok;
}

void perf_model_free(perf_model_t *m) {
  for (size_t i = 0; i < m->ninputs; i++) free(m->inputs[i].name);
  free(m->inputs);
  for (size_t i = 0; i < m->noutputs; i++) free(m->outputs[i]);
  free(m->outputs);
  memset(m, 0, sizeof *m);
}

static void duration_add(perf_duration_t *into, const inference_StatisticDuration *d) {
  if (d == NULL) return;
  into->count += inference_StatisticDuration_count(d);
  into->ns += inference_StatisticDuration_ns(d);
}

static void stats_add_model(perf_server_stats_t *out,
                            const inference_ModelStatistics *s) {
  out->inference_count += inference_ModelStatistics_inference_count(s);
  out->execution_count += inference_ModelStatistics_execution_count(s);
  const inference_InferStatistics *is = inference_ModelStatistics_inference_stats(s);
  if (is == NULL) return;
  duration_add(&out->success, inference_InferStatistics_success(is));
  duration_add(&out->fail, inference_InferStatistics_fail(is));
  duration_add(&out->queue, inference_InferStatistics_queue(is));
  duration_add(&out->compute_input, inference_InferStatistics_compute_input(is));
  duration_add(&out->compute_infer, inference_InferStatistics_compute_infer(is));
  duration_add(&out->compute_output, inference_InferStatistics_compute_output(is));
}

bool perf_server_stats_fetch(grpc_channel *ch, const char *name, const char *version,
                             unsigned timeout_ms, perf_server_stats_t *out,
                             perf_err_t *err) {
  memset(out, 0, sizeof *out);
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) PERF_FATAL("out of memory");
  grpc_slice reply = grpc_empty_slice();
  bool ok =
      name_version_call(ch, "ModelStatistics", name, version, timeout_ms, a, &reply, err);
  if (ok) {
    inference_ModelStatisticsResponse *resp = inference_ModelStatisticsResponse_parse(
        (const char *)GRPC_SLICE_START_PTR(reply), GRPC_SLICE_LENGTH(reply), a);
    if (resp == NULL) ok = perf_fail(err, "ModelStatistics: unparsable response");
    size_t n = 0;
    const inference_ModelStatistics *const *all =
        resp ? inference_ModelStatisticsResponse_model_stats(resp, &n) : NULL;
    for (size_t i = 0; i < n; i++) stats_add_model(out, all[i]);
  }
  grpc_slice_unref(reply);
  upb_Arena_Free(a);
  return ok;
}

static uint64_t sub(uint64_t a, uint64_t b) { return b > a ? b - a : 0; }

static void duration_delta(perf_duration_t *o, const perf_duration_t *a,
                           const perf_duration_t *b) {
  o->count = sub(a->count, b->count);
  o->ns = sub(a->ns, b->ns);
}

void perf_server_stats_delta(perf_server_stats_t *out, const perf_server_stats_t *a,
                             const perf_server_stats_t *b) {
  duration_delta(&out->success, &a->success, &b->success);
  duration_delta(&out->fail, &a->fail, &b->fail);
  duration_delta(&out->queue, &a->queue, &b->queue);
  duration_delta(&out->compute_input, &a->compute_input, &b->compute_input);
  duration_delta(&out->compute_infer, &a->compute_infer, &b->compute_infer);
  duration_delta(&out->compute_output, &a->compute_output, &b->compute_output);
  out->inference_count = sub(a->inference_count, b->inference_count);
  out->execution_count = sub(a->execution_count, b->execution_count);
}

static void duration_sum(perf_duration_t *into, const perf_duration_t *d) {
  into->count += d->count;
  into->ns += d->ns;
}

void perf_server_stats_add(perf_server_stats_t *into, const perf_server_stats_t *d) {
  duration_sum(&into->success, &d->success);
  duration_sum(&into->fail, &d->fail);
  duration_sum(&into->queue, &d->queue);
  duration_sum(&into->compute_input, &d->compute_input);
  duration_sum(&into->compute_infer, &d->compute_infer);
  duration_sum(&into->compute_output, &d->compute_output);
  into->inference_count += d->inference_count;
  into->execution_count += d->execution_count;
}
