/* Model metadata, config and statistics (see views.h). Statistics are
 * read lock-free from the models' counters inside one registry section;
 * every string is copied into the caller's arena, so the message needs
 * neither the section nor the models once built. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/views/model_lookup.h"
#include "server/views/views.h"

static upb_StringView copy(upb_Arena *a, const char *s) {
  size_t n = strlen(s);
  return upb_StringView_FromDataAndSize(srv_arena_copy(a, s, n), n);
}

static void tensors_add(inference_ModelMetadataResponse *reply, const srv_model_desc_t *m,
                        bool inputs, upb_Arena *a) {
  const srv_tensor_spec_t *t = inputs ? m->inputs : m->outputs;
  uint32_t n = inputs ? m->input_count : m->output_count;
  for (uint32_t i = 0; i < n; i++) {
    inference_ModelMetadataResponse_TensorMetadata *md =
        inputs ? inference_ModelMetadataResponse_add_inputs(reply, a)
               : inference_ModelMetadataResponse_add_outputs(reply, a);
    if (md == NULL) SRV_FATAL("out of memory");
    inference_ModelMetadataResponse_TensorMetadata_set_name(md, copy(a, t[i].name));
    const char *dt = api_datatype_protocol_name(t[i].datatype);
    inference_ModelMetadataResponse_TensorMetadata_set_datatype(
        md, upb_StringView_FromString(dt ? dt : "")); /* a static name */
    if (m->max_batch_size > 0)
      inference_ModelMetadataResponse_TensorMetadata_add_shape(md, -1, a);
    for (uint32_t d = 0; d < t[i].dims_count; d++)
      inference_ModelMetadataResponse_TensorMetadata_add_shape(md, t[i].dims[d], a);
  }
}

inference_ModelMetadataResponse *srv_view_model_metadata(srv_server_t *srv,
                                                         srv_model_t *m,
                                                         bool named_version,
                                                         upb_Arena *a) {
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  inference_ModelMetadataResponse *reply = inference_ModelMetadataResponse_new(a);
  if (reply == NULL) SRV_FATAL("out of memory");
  inference_ModelMetadataResponse_set_name(reply, copy(a, d.name));
  if (named_version) {
    inference_ModelMetadataResponse_add_versions(reply, copy(a, d.version_string), a);
  } else { /* the ready versions, as the registry has them now */
    const srv_registry_view_t *v = srv_registry_view_begin(srv->registry);
    const srv_registry_entry_t *e = srv_registry_view_find_model(v, m);
    for (size_t i = 0; e != NULL && i < e->version_count; i++) {
      srv_model_desc_t vd;
      srv_model_describe(e->versions[i], &vd);
      inference_ModelMetadataResponse_add_versions(reply, copy(a, vd.version_string), a);
    }
    srv_registry_view_end(srv->registry);
  }
  upb_StringView platform = inference_ModelConfig_platform(d.config);
  if (platform.size == 0) platform = inference_ModelConfig_backend(d.config);
  inference_ModelMetadataResponse_set_platform(
      reply, upb_StringView_FromDataAndSize(
                 srv_arena_copy(a, platform.data, platform.size), platform.size));
  tensors_add(reply, &d, true, a);
  tensors_add(reply, &d, false, a);
  return reply;
}

inference_ModelConfigResponse *srv_view_model_config(srv_model_t *m, upb_Arena *a) {
  inference_ModelConfigResponse *reply = inference_ModelConfigResponse_new(a);
  if (reply == NULL) SRV_FATAL("out of memory");
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  /* The setter takes a mutable pointer; the reply only reads the config. */
  inference_ModelConfigResponse_set_config(reply, (inference_ModelConfig *)d.config);
  return reply;
}

/* ---- statistics ----------------------------------------------------------- */

static void duration_set(inference_StatisticDuration *d, srv_duration_t *s) {
  if (d == NULL) SRV_FATAL("out of memory");
  inference_StatisticDuration_set_count(d, srv_stat_load(&s->count));
  inference_StatisticDuration_set_ns(d, srv_stat_load(&s->ns));
}

static bool response_stat_used(srv_response_stat_t *e) {
  srv_duration_t *d[] = {&e->success, &e->fail, &e->empty_response, &e->cancel};
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
    if (srv_stat_load(&d[i]->count) != 0) return true;
  return false;
}

/* Nereid's sequence_stats, for models with a sequence batcher. */
static void sequence_stats_fill(inference_ModelStatistics *out, srv_sequence_stats_t *q,
                                upb_Arena *a) {
  inference_SequenceStatistics *seq =
      inference_ModelStatistics_mutable_sequence_stats(out, a);
  if (seq == NULL) SRV_FATAL("out of memory");
  inference_SequenceStatistics_set_active(seq, srv_stat_load(&q->active));
  inference_SequenceStatistics_set_backlog(seq, srv_stat_load(&q->backlog));
  inference_SequenceStatistics_set_started(seq, srv_stat_load(&q->started));
  inference_SequenceStatistics_set_ended(seq, srv_stat_load(&q->ended));
  inference_SequenceStatistics_set_idle_ended(seq, srv_stat_load(&q->idle_ended));
  inference_SequenceStatistics_set_cancel_ended(seq, srv_stat_load(&q->cancel_ended));
  inference_SequenceStatistics_set_stream_ended(seq, srv_stat_load(&q->stream_ended));
}

/* response_stats: one entry per response index that was reported. */
static void response_stats_fill(inference_ModelStatistics *out, srv_stats_t *s,
                                upb_Arena *a) {
  for (uint64_t i = 0; i < SRV_RESPONSE_STATS_MAX; i += SRV_RESPONSE_STATS_CHUNK) {
    if (srv_response_stats_find(s->responses, i) == NULL) continue; /* no chunk */
    for (uint64_t k = i; k < i + SRV_RESPONSE_STATS_CHUNK; k++) {
      srv_response_stat_t *e = srv_response_stats_find(s->responses, k);
      if (!response_stat_used(e)) continue;
      inference_InferResponseStatistics *r = inference_InferResponseStatistics_new(a);
      if (r == NULL) SRV_FATAL("out of memory");
      duration_set(inference_InferResponseStatistics_mutable_compute_infer(r, a),
                   &e->compute_infer);
      duration_set(inference_InferResponseStatistics_mutable_compute_output(r, a),
                   &e->compute_output);
      duration_set(inference_InferResponseStatistics_mutable_success(r, a), &e->success);
      duration_set(inference_InferResponseStatistics_mutable_fail(r, a), &e->fail);
      duration_set(inference_InferResponseStatistics_mutable_empty_response(r, a),
                   &e->empty_response);
      duration_set(inference_InferResponseStatistics_mutable_cancel(r, a), &e->cancel);
      char key[24];
      snprintf(key, sizeof key, "%llu", (unsigned long long)k);
      inference_ModelStatistics_response_stats_set(out, copy(a, key), r, a);
    }
  }
}

static void steps_fill(inference_ModelStatistics *out, srv_stats_t *s, upb_Arena *a) {
  for (uint32_t i = 0; i < s->step_count; i++) {
    inference_EnsembleStepStatistics *e =
        inference_ModelStatistics_add_ensemble_step_stats(out, a);
    if (e == NULL) SRV_FATAL("out of memory");
    inference_EnsembleStepStatistics_set_step(e, i);
    inference_EnsembleStepStatistics_set_model_name(e, copy(a, s->steps[i].model_name));
    inference_EnsembleStepStatistics_set_model_version(
        e, copy(a, s->steps[i].model_version));
    duration_set(inference_EnsembleStepStatistics_mutable_time(e, a), &s->steps[i].time);
  }
}

static void batches_fill(inference_ModelStatistics *out, srv_stats_t *s, upb_Arena *a) {
  srv_batch_stats_t *bs;
  for (uint64_t b = 0; (bs = srv_batch_table_next(s->batches, &b)) != NULL; b++) {
    if (srv_stat_load(&bs->compute_infer.count) == 0) continue;
    inference_InferBatchStatistics *o = inference_ModelStatistics_add_batch_stats(out, a);
    if (o == NULL) SRV_FATAL("out of memory");
    inference_InferBatchStatistics_set_batch_size(o, b);
    duration_set(inference_InferBatchStatistics_mutable_compute_input(o, a),
                 &bs->compute_input);
    duration_set(inference_InferBatchStatistics_mutable_compute_infer(o, a),
                 &bs->compute_infer);
    duration_set(inference_InferBatchStatistics_mutable_compute_output(o, a),
                 &bs->compute_output);
  }
}

/* What the backend reported its model and instances hold, summed per
 * memory type and device, as Triton lists it. */
static void memory_fill(inference_ModelStatistics *out, srv_stats_t *s, upb_Arena *a) {
  uint32_t n = 0;
  srv_memory_use_t *uses = srv_memory_usage_sum(s->memory, &n);
  for (uint32_t i = 0; i < n; i++) {
    inference_MemoryUsage *o = inference_ModelStatistics_add_memory_usage(out, a);
    if (o == NULL) SRV_FATAL("out of memory");
    inference_MemoryUsage_set_type(o, copy(a, TRITONSERVER_MemoryTypeString(uses[i].type)));
    inference_MemoryUsage_set_id(o, uses[i].id);
    inference_MemoryUsage_set_byte_size(o, uses[i].byte_size);
  }
  free(uses);
}

static void stats_fill(inference_ModelStatistics *out, srv_model_t *m, upb_Arena *a) {
  if (out == NULL) SRV_FATAL("out of memory");
  srv_stats_t *s = srv_model_stats(m);
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  inference_ModelStatistics_set_name(out, copy(a, d.name));
  inference_ModelStatistics_set_version(out, copy(a, d.version_string));
  inference_ModelStatistics_set_last_inference(out, srv_stat_load(&s->last_inference_ms));
  inference_ModelStatistics_set_inference_count(out, srv_stat_load(&s->inference_count));
  inference_ModelStatistics_set_execution_count(out, srv_stat_load(&s->execution_count));
  if (s->sequences != NULL) sequence_stats_fill(out, s->sequences, a);
  steps_fill(out, s, a);
  inference_InferStatistics *is =
      inference_ModelStatistics_mutable_inference_stats(out, a);
  if (is == NULL) SRV_FATAL("out of memory");
  duration_set(inference_InferStatistics_mutable_success(is, a), &s->success);
  duration_set(inference_InferStatistics_mutable_fail(is, a), &s->fail);
  duration_set(inference_InferStatistics_mutable_queue(is, a), &s->queue);
  duration_set(inference_InferStatistics_mutable_compute_input(is, a), &s->compute_input);
  duration_set(inference_InferStatistics_mutable_compute_infer(is, a), &s->compute_infer);
  duration_set(inference_InferStatistics_mutable_compute_output(is, a),
               &s->compute_output);
  duration_set(inference_InferStatistics_mutable_cache_hit(is, a), &s->cache_hit);
  duration_set(inference_InferStatistics_mutable_cache_miss(is, a), &s->cache_miss);
  batches_fill(out, s, a);
  memory_fill(out, s, a);
  response_stats_fill(out, s, a);
}

/* All loaded versions of one entry, or just `version` (>= 0). */
static void entry_stats(inference_ModelStatisticsResponse *reply,
                        const srv_registry_entry_t *e, int64_t version, upb_Arena *a) {
  for (size_t i = 0; i < e->version_count; i++) {
    srv_model_desc_t d;
    srv_model_describe(e->versions[i], &d);
    if (version < 0 || d.version == version)
      stats_fill(inference_ModelStatisticsResponse_add_model_stats(reply, a),
                 e->versions[i], a);
  }
}

/* Triton's texts (TRITONSERVER_ServerModelStatistics) for a model without
 * a ready version, or without the one asked for; a malformed version
 * keeps its own (st). */
static srv_status_t *statistics_missing(srv_server_t *srv, srv_status_t *st,
                                        upb_StringView name) {
  if (srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT) return st;
  srv_status_free(st);
  const srv_registry_view_t *view = srv_registry_view_begin(srv->registry);
  const srv_registry_entry_t *e = srv_registry_view_find(view, name.data, name.size);
  bool any = e != NULL && e->version_count > 0;
  srv_registry_view_end(srv->registry);
  char q[SRV_QUOTE_SIZE];
  srv_quote(q, name.data, name.size);
  if (!any)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "requested model '%s' is not available", q);
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "requested model version is not available for model '%s'", q);
}

srv_status_t *srv_view_model_statistics(srv_server_t *srv, upb_StringView name,
                                        upb_StringView version, upb_Arena *a,
                                        inference_ModelStatisticsResponse **out) {
  *out = NULL;
  srv_model_t *m = NULL;
  srv_status_t *st = name.size > 0 ? srv_model_lookup(srv, name, version, &m) : NULL;
  if (st != NULL) return statistics_missing(srv, st, name);
  inference_ModelStatisticsResponse *reply = inference_ModelStatisticsResponse_new(a);
  if (reply == NULL) SRV_FATAL("out of memory");
  const srv_registry_view_t *view = srv_registry_view_begin(srv->registry);
  if (m == NULL) {
    for (size_t i = 0; i < srv_registry_view_count(view); i++)
      entry_stats(reply, srv_registry_view_at(view, i), -1, a);
  } else if (version.size == 0) {
    const srv_registry_entry_t *e = srv_registry_view_find_model(view, m);
    if (e != NULL) entry_stats(reply, e, -1, a);
  } else {
    stats_fill(inference_ModelStatisticsResponse_add_model_stats(reply, a), m, a);
  }
  srv_registry_view_end(srv->registry);
  if (m != NULL) srv_model_unref(m);
  *out = reply;
  return NULL;
}
