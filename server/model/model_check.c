/* Model configuration completion and validation (see model_check.h). */
#include "server/model/model_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/core/server.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/cuda/cuda.h"
#include "server/model/config_limits.h"
#include "server/model/labels.h"
#include "server/model/platform.h"
#include "server/sched/ensemble_graph.h"

#define INVALID(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static bool view_eq(upb_StringView v, const char *s) {
  return v.size == strlen(s) && memcmp(v.data, s, v.size) == 0;
}

static srv_status_t *check_name(srv_model_t *m) {
  upb_StringView name = inference_ModelConfig_name(m->config);
  if (name.size == 0) {
    inference_ModelConfig_set_name(m->config, upb_StringView_FromString(m->name));
  } else if (!view_eq(name, m->name)) {
    return INVALID(
        "model '%s': the name '%.*s' in config.pbtxt does not match the "
        "model's folder name",
        m->name, (int)name.size, name.data);
  }
  m->max_batch_size = inference_ModelConfig_max_batch_size(m->config);
  if (m->max_batch_size < 0)
    return INVALID("model '%s': max_batch_size must be >= 0, got %d", m->name,
                   (int)m->max_batch_size);
  return NULL;
}

/* platform, backend and default_model_filename as tritonserver completes
 * and checks them, on every config (platform.h). An ensemble has its own
 * checks (sched/ensemble_graph.c). */
static srv_status_t *check_backend(srv_model_t *m, const char *source) {
  if (srv_ensemble_config_is(m->config)) return NULL;
  srv_status_t *st = srv_platform_complete(m->config, m->name, m->dir, source, m->arena);
  return st != NULL ? st : srv_platform_check(m->config, m->name, source);
}

static srv_status_t *check_dims(srv_model_t *m, const char *what, srv_tensor_spec_t *t) {
  for (uint32_t d = 0; d < t->dims_count; d++)
    if (t->dims[d] < -1 || t->dims[d] == 0)
      return INVALID(
          "model '%s': %s '%s' has dimension %lld: dimensions must be "
          "positive or -1 (variable)",
          m->name, what, t->name, (long long)t->dims[d]);
  if (t->dims_count == 0 && m->max_batch_size == 0)
    return INVALID("model '%s': %s '%s' must have at least one dimension", m->name, what,
                   t->name);
  return NULL;
}

/* Fills one spec from a ModelInput or ModelOutput (same field layout). */
static srv_status_t *spec_fill(srv_model_t *m, const char *what, upb_StringView name,
                               int32_t type, const int64_t *dims, size_t ndims,
                               srv_tensor_spec_t *t) {
  if (name.size == 0) return INVALID("model '%s': an %s has no name", m->name, what);
  /* Names are C strings from here on (requests, backends, statistics). */
  if (memchr(name.data, '\0', name.size) != NULL)
    return INVALID("model '%s': the name of an %s holds a NUL byte", m->name, what);
  t->name = srv_arena_strview(m->arena, name);
  t->datatype = api_datatype_from_config_value(type);
  if (t->datatype == TRITONSERVER_TYPE_INVALID)
    return INVALID("model '%s': %s '%s' has no valid data_type", m->name, what, t->name);
  t->dims = dims;
  t->dims_count = (uint32_t)ndims;
  return check_dims(m, what, t);
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted, so a config with thousands of tensors is checked in n log n. */
static srv_status_t *check_unique(srv_model_t *m, const char *what,
                                  const srv_tensor_spec_t *t, size_t n) {
  if (n < 2) return NULL;
  const char **names = malloc(n * sizeof *names);
  if (names == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < n; i++) names[i] = t[i].name;
  qsort(names, n, sizeof *names, name_cmp);
  srv_status_t *st = NULL;
  for (size_t i = 1; i < n && st == NULL; i++)
    if (strcmp(names[i - 1], names[i]) == 0)
      st = INVALID("model '%s': %s '%s' is declared twice", m->name, what, names[i]);
  free(names);
  return st;
}

static srv_status_t *check_tensors(srv_model_t *m) {
  size_t ni, no, n;
  const inference_ModelInput *const *in = inference_ModelConfig_input(m->config, &ni);
  const inference_ModelOutput *const *out = inference_ModelConfig_output(m->config, &no);
  m->inputs = upb_Arena_Malloc(m->arena, (ni + 1) * sizeof *m->inputs);
  m->outputs = upb_Arena_Malloc(m->arena, (no + 1) * sizeof *m->outputs);
  m->output_names = upb_Arena_Malloc(m->arena, (no + 1) * sizeof *m->output_names);
  if (!m->inputs || !m->outputs || !m->output_names) SRV_FATAL("out of memory");
  /* Fields a spec may leave unset (labels) read as none. */
  memset(m->inputs, 0, (ni + 1) * sizeof *m->inputs);
  memset(m->outputs, 0, (no + 1) * sizeof *m->outputs);
  m->input_count = (uint32_t)ni;
  m->output_count = (uint32_t)no;
  for (size_t i = 0; i < ni; i++) {
    const int64_t *dims = inference_ModelInput_dims(in[i], &n);
    srv_status_t *st =
        spec_fill(m, "input", inference_ModelInput_name(in[i]),
                  inference_ModelInput_data_type(in[i]), dims, n, &m->inputs[i]);
    if (st != NULL) return st;
    m->inputs[i].optional = inference_ModelInput_optional(in[i]);
    m->inputs[i].ragged = inference_ModelInput_allow_ragged_batch(in[i]);
  }
  for (size_t i = 0; i < no; i++) {
    const int64_t *dims = inference_ModelOutput_dims(out[i], &n);
    srv_status_t *st =
        spec_fill(m, "output", inference_ModelOutput_name(out[i]),
                  inference_ModelOutput_data_type(out[i]), dims, n, &m->outputs[i]);
    if (st != NULL) return st;
    m->output_names[i] = m->outputs[i].name;
    upb_StringView labels = inference_ModelOutput_label_filename(out[i]);
    if (labels.size > 0) {
      const char **l = NULL;
      st = srv_labels_read(m->name, m->outputs[i].name, m->dir, labels, m->arena, &l,
                           &m->outputs[i].label_count);
      if (st != NULL) return st;
      m->outputs[i].labels = l;
    }
  }
  srv_status_t *st = check_unique(m, "input", m->inputs, ni);
  return st != NULL ? st : check_unique(m, "output", m->outputs, no);
}

/* --min-supported-compute-capability; a model checked without a server
 * (model_bare.c) takes tritonserver's default. */
static double min_cc(const srv_model_t *m) {
  return m->server != NULL ? m->server->options->min_compute_capability
                           : SRV_MIN_COMPUTE_CAPABILITY_DEFAULT;
}

/* A GPU this server uses: it exists and has the compute capability. */
static bool gpu_usable(const srv_model_t *m, int64_t d, int gpus) {
  return d >= 0 && d < gpus && srv_cuda_device_supported((int)d, min_cc(m));
}

/* The GPUs this server uses ("0, 1, 2"), for the message on a bad id;
 * returns how many. */
static int gpu_list(const srv_model_t *m, char *buf, size_t len, int gpus) {
  buf[0] = '\0';
  size_t used = 0;
  int usable = 0;
  for (int d = 0; d < gpus; d++) {
    if (!gpu_usable(m, d, gpus)) continue;
    if (used < len)
      used += (size_t)snprintf(buf + used, len - used, "%s%d", usable ? ", " : "", d);
    usable++;
  }
  return usable;
}

/* --model-load-gpu-limit: each GPU of the group has no more than its
 * limit's fraction of memory in use now, read before its instances take
 * any (tritonserver's rule: a load on a GPU past the limit is refused). */
static srv_status_t *gpu_load_limits_check(srv_model_t *m,
                                           const inference_ModelInstanceGroup *g) {
  if (m->server == NULL) return NULL;
  size_t n;
  const int32_t *ids = inference_ModelInstanceGroup_gpus(g, &n);
  for (size_t k = 0; k < n; k++) {
    double limit = srv_options_gpu_load_limit(m->server->options, ids[k]), used;
    if (limit >= 1.0) continue;
    srv_status_t *st = srv_cuda_memory_used(ids[k], &used);
    if (st != NULL) return st;
    if (used > limit)
      return INVALID(
          "model '%s': GPU %d has %.1f%% of its memory in use, more than its "
          "--model-load-gpu-limit of %.1f%%; the load is refused",
          m->name, (int)ids[k], used * 100.0, limit * 100.0);
  }
  return NULL;
}

/* A KIND_GPU group: its GPUs exist and have the compute capability (all
 * such GPUs when it lists none). */
static srv_status_t *check_gpu_group(srv_model_t *m, inference_ModelInstanceGroup *g,
                                     int gpus, const char *why) {
  upb_StringView gname = inference_ModelInstanceGroup_name(g);
  char list[256];
  if (gpus == 0)
    return INVALID(
        "model '%s': instance group '%.*s' asks for KIND_GPU, but no GPU is "
        "available to this server: %s",
        m->name, (int)gname.size, gname.data, why);
  if (gpu_list(m, list, sizeof list, gpus) == 0)
    return INVALID(
        "model '%s': instance group '%.*s' asks for KIND_GPU, but no GPU of this "
        "server has the minimum compute capability %f (--min-supported-compute-"
        "capability)",
        m->name, (int)gname.size, gname.data, min_cc(m));
  size_t n;
  const int32_t *ids = inference_ModelInstanceGroup_gpus(g, &n);
  for (size_t k = 0; k < n; k++) {
    if (gpu_usable(m, ids[k], gpus)) continue;
    return INVALID(
        "instance group %.*s of model %s specifies invalid or unsupported gpu id %d. "
        "GPUs with at least the minimum required CUDA compute compatibility "
        "of %f are: %s",
        (int)gname.size, gname.data, m->name, (int)ids[k], min_cc(m), list);
  }
  if (n == 0)
    for (int d = 0; d < gpus; d++)
      if (gpu_usable(m, d, gpus) && !inference_ModelInstanceGroup_add_gpus(g, d, m->arena))
        SRV_FATAL("out of memory");
  return gpu_load_limits_check(m, g);
}

/* Triton's KIND_AUTO: GPU when this server uses a GPU and every GPU the
 * group lists is one it uses, else CPU. */
static int32_t auto_kind(const srv_model_t *m, const inference_ModelInstanceGroup *g,
                         int gpus) {
  char list[256];
  if (gpus == 0 || gpu_list(m, list, sizeof list, gpus) == 0)
    return inference_ModelInstanceGroup_KIND_CPU;
  size_t n;
  const int32_t *ids = inference_ModelInstanceGroup_gpus(g, &n);
  for (size_t k = 0; k < n; k++)
    if (!gpu_usable(m, ids[k], gpus)) return inference_ModelInstanceGroup_KIND_CPU;
  return inference_ModelInstanceGroup_KIND_GPU;
}

static srv_status_t *check_instance_groups(srv_model_t *m) {
  size_t n;
  inference_ModelInstanceGroup **g =
      inference_ModelConfig_mutable_instance_group(m->config, &n);
  m->groups_defaulted = n == 0;
  if (n == 0) {
    inference_ModelInstanceGroup *d =
        inference_ModelConfig_add_instance_group(m->config, m->arena);
    if (d == NULL) SRV_FATAL("out of memory");
    g = inference_ModelConfig_mutable_instance_group(m->config, &n);
  }
  const char *why = "";
  int gpus = srv_cuda_device_count(&why);
  for (size_t i = 0; i < n; i++) {
    if (inference_ModelInstanceGroup_name(g[i]).size == 0) {
      char name[300];
      if (n == 1)
        snprintf(name, sizeof name, "%s", m->name);
      else
        snprintf(name, sizeof name, "%s_%zu", m->name, i);
      inference_ModelInstanceGroup_set_name(
          g[i], upb_StringView_FromString(
                    srv_arena_strview(m->arena, upb_StringView_FromString(name))));
    }
    upb_StringView gname = inference_ModelInstanceGroup_name(g[i]);
    int32_t count = inference_ModelInstanceGroup_count(g[i]);
    if (count < 0)
      return INVALID("model '%s': instance group '%.*s' has count %d", m->name,
                     (int)gname.size, gname.data, (int)count);
    if (count == 0) inference_ModelInstanceGroup_set_count(g[i], 1);
    int32_t kind = inference_ModelInstanceGroup_kind(g[i]);
    /* An open enum: JSON and text may give any number. */
    if (kind != inference_ModelInstanceGroup_KIND_AUTO &&
        kind != inference_ModelInstanceGroup_KIND_GPU &&
        kind != inference_ModelInstanceGroup_KIND_CPU &&
        kind != inference_ModelInstanceGroup_KIND_MODEL)
      return INVALID(
          "model '%s': instance group '%.*s' has kind %d, which is none of "
          "KIND_AUTO, KIND_GPU, KIND_CPU, KIND_MODEL",
          m->name, (int)gname.size, gname.data, (int)kind);
    if (kind == inference_ModelInstanceGroup_KIND_AUTO) {
      kind = auto_kind(m, g[i], gpus);
      inference_ModelInstanceGroup_set_kind(g[i], kind);
    }
    if (kind == inference_ModelInstanceGroup_KIND_GPU) {
      srv_status_t *st = check_gpu_group(m, g[i], gpus, why);
      if (st != NULL) return st;
      continue;
    }
    /* As Triton: only GPU groups name GPUs. */
    size_t listed;
    inference_ModelInstanceGroup_gpus(g[i], &listed);
    if (listed > 0)
      return INVALID(
          "model '%s': instance group '%.*s' is %s but lists GPUs in 'gpus'; only "
          "KIND_GPU groups may",
          m->name, (int)gname.size, gname.data,
          kind == inference_ModelInstanceGroup_KIND_MODEL ? "KIND_MODEL" : "KIND_CPU");
  }
  return NULL;
}

bool srv_model_groups_prefer(srv_model_t *m) {
  if (!m->groups_defaulted || m->backend == NULL) return false;
  const struct TRITONBACKEND_BackendAttribute *attr = &m->backend->attributes;
  int gpus = srv_cuda_device_count(NULL);
  char list[256];
  int usable = gpus > 0 ? gpu_list(m, list, sizeof list, gpus) : 0;
  for (int i = 0; i < attr->preferred_count; i++) {
    TRITONSERVER_InstanceGroupKind kind = attr->preferred[i].kind;
    /* As Triton: a preferred GPU group needs a GPU it may use. */
    if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU && usable == 0) continue;
    size_t n;
    inference_ModelInstanceGroup **g =
        inference_ModelConfig_mutable_instance_group(m->config, &n);
    inference_ModelInstanceGroup_clear_gpus(g[0]);
    if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU) {
      inference_ModelInstanceGroup_set_kind(g[0], inference_ModelInstanceGroup_KIND_GPU);
      for (int d = 0; d < gpus; d++)
        if (gpu_usable(m, d, gpus) &&
            !inference_ModelInstanceGroup_add_gpus(g[0], d, m->arena))
          SRV_FATAL("out of memory");
    } else {
      inference_ModelInstanceGroup_set_kind(g[0],
                                            kind == TRITONSERVER_INSTANCEGROUPKIND_MODEL
                                                ? inference_ModelInstanceGroup_KIND_MODEL
                                                : inference_ModelInstanceGroup_KIND_CPU);
    }
    /* Clamped, not wrapped: srv_instances_create refuses what is past the
     * instance limit. */
    uint64_t count = attr->preferred[i].count;
    inference_ModelInstanceGroup_set_count(g[0], count == 0          ? 1
                                                 : count > INT32_MAX ? INT32_MAX
                                                                     : (int32_t)count);
    return true;
  }
  return false;
}

/* tritonserver's NormalizeModelConfig: the defaults it writes into every
 * config, so that ModelConfig and TRITONBACKEND_ModelConfig show them.
 * Each leaves the scheduling as it was: a single preferred batch size of
 * max_batch_size batches as none does, and the idle time is the one the
 * sequence batcher assumes when it is 0. */
static void normalize(srv_model_t *m) {
  inference_ModelConfig *c = m->config;
  upb_Arena *a = m->arena;
  if (!inference_ModelConfig_has_version_policy(c)) {
    inference_ModelVersionPolicy *vp = inference_ModelConfig_mutable_version_policy(c, a);
    inference_ModelVersionPolicy_Latest *l =
        vp != NULL ? inference_ModelVersionPolicy_mutable_latest(vp, a) : NULL;
    if (l == NULL) SRV_FATAL("out of memory");
    inference_ModelVersionPolicy_Latest_set_num_versions(l, 1);
  }
  int32_t max = m->max_batch_size;
  size_t n = 0;
  inference_ModelDynamicBatching *db =
      (inference_ModelDynamicBatching *)inference_ModelConfig_dynamic_batching(c);
  if (db != NULL) inference_ModelDynamicBatching_preferred_batch_size(db, &n);
  if (db != NULL && max > 0 && n == 0 &&
      !inference_ModelDynamicBatching_add_preferred_batch_size(db, max, a))
    SRV_FATAL("out of memory");
  inference_ModelSequenceBatching *sb =
      (inference_ModelSequenceBatching *)inference_ModelConfig_sequence_batching(c);
  if (sb != NULL &&
      inference_ModelSequenceBatching_max_sequence_idle_microseconds(sb) == 0)
    inference_ModelSequenceBatching_set_max_sequence_idle_microseconds(sb, 1000000);
  inference_ModelSequenceBatching_StrategyOldest *o =
      sb != NULL ? (inference_ModelSequenceBatching_StrategyOldest *)
                       inference_ModelSequenceBatching_oldest(sb)
                 : NULL;
  n = 0;
  if (o != NULL)
    inference_ModelSequenceBatching_StrategyOldest_preferred_batch_size(o, &n);
  if (o != NULL && max > 0 && n == 0 &&
      !inference_ModelSequenceBatching_StrategyOldest_add_preferred_batch_size(o, max, a))
    SRV_FATAL("out of memory");
  if (inference_ModelConfig_has_ensemble_scheduling(c)) return;
  inference_ModelOptimizationPolicy *opt =
      inference_ModelConfig_mutable_optimization(c, a);
  inference_ModelOptimizationPolicy_PinnedMemoryBuffer *in =
      opt == NULL || inference_ModelOptimizationPolicy_has_input_pinned_memory(opt)
          ? NULL
          : inference_ModelOptimizationPolicy_mutable_input_pinned_memory(opt, a);
  inference_ModelOptimizationPolicy_PinnedMemoryBuffer *out =
      opt == NULL || inference_ModelOptimizationPolicy_has_output_pinned_memory(opt)
          ? NULL
          : inference_ModelOptimizationPolicy_mutable_output_pinned_memory(opt, a);
  if (opt == NULL) SRV_FATAL("out of memory");
  if (in != NULL)
    inference_ModelOptimizationPolicy_PinnedMemoryBuffer_set_enable(in, true);
  if (out != NULL)
    inference_ModelOptimizationPolicy_PinnedMemoryBuffer_set_enable(out, true);
}

srv_status_t *srv_model_config_complete(srv_model_t *m, const char *source) {
  srv_status_t *st = srv_config_limits_check(m->config, m->name, source);
  if (st == NULL) st = check_name(m);
  if (st == NULL) st = check_backend(m, source);
  if (st == NULL) st = check_tensors(m);
  if (st == NULL) normalize(m);
  /* An ensemble has no instances (its compiler refuses instance groups). */
  if (st == NULL && !srv_ensemble_config_is(m->config)) st = check_instance_groups(m);
  if (st != NULL) return st;
  const inference_ModelTransactionPolicy *tp =
      inference_ModelConfig_model_transaction_policy(m->config);
  m->decoupled = tp != NULL && inference_ModelTransactionPolicy_decoupled(tp);
  return NULL;
}
