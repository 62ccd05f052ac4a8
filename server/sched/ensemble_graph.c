/* An ensemble's step graph, compiled and checked at load (see
 * ensemble_graph.h). The checks and the texts a client sees are Triton's:
 * model_config_utils.cc (ValidateEnsembleSchedulingConfig) on the config
 * alone, ensemble_utils.cc (ValidateEnsembleConfig) against the composing
 * models, the model repository's check of ensembles depending on
 * themselves. Loading thread only. */
#include "server/sched/ensemble_graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/model/config_limits.h"

/* No producer yet: a name that only step inputs read (compile only). */
#define NO_PRODUCER (UINT32_MAX - 1)

/* One map entry of a step: model tensor name -> ensemble tensor name. */
typedef struct {
  upb_StringView key, value;
} entry_t;

typedef struct {
  const char *model, *source;
  upb_Arena *arena;
  /* The tensor table while compiling: produced tensors first, then names
   * that only step inputs read. */
  srv_ens_tensor_t *tensors;
  uint32_t count;
  uint32_t *slots;
  uint32_t slot_mask;
} ctx_t;

static srv_status_t *bad(const char *model, const char *source, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static srv_status_t *bad(const char *model, const char *source, const char *fmt, ...) {
  char what[SRV_STATUS_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "model '%s': %s: %s", model, source,
                        what);
}

#define BAD(c, ...) bad((c)->model, (c)->source, __VA_ARGS__)

static bool view_is(upb_StringView v, const char *s) {
  return v.size == strlen(s) && memcmp(v.data, s, v.size) == 0;
}

/* ---- name -> tensor id ---- */

static uint32_t hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

static uint32_t find_bytes(const srv_ens_tensor_t *tensors, const uint32_t *slots,
                           uint32_t mask, const char *s, size_t n) {
  for (uint32_t i = hash_bytes(s, n) & mask;; i = (i + 1) & mask) {
    uint32_t id = slots[i];
    if (id == 0) return UINT32_MAX;
    const char *name = tensors[id - 1].name;
    if (strncmp(name, s, n) == 0 && name[n] == '\0') return id - 1;
  }
}

uint32_t srv_ensemble_graph_tensor_find(const srv_ensemble_graph_t *g, const char *name) {
  return find_bytes(g->tensors, g->slots, g->slot_mask, name, strlen(name));
}

static uint32_t find(const ctx_t *c, upb_StringView v) {
  return find_bytes(c->tensors, c->slots, c->slot_mask, v.data, v.size);
}

/* Adds a tensor named v (not yet in the table; room was sized upfront). */
static uint32_t add(ctx_t *c, upb_StringView v, uint32_t producer, const char *output) {
  uint32_t id = c->count++;
  c->tensors[id] = (srv_ens_tensor_t){.name = srv_arena_strview(c->arena, v),
                                      .producer = producer,
                                      .producer_output = output};
  uint32_t i = hash_bytes(v.data, v.size) & c->slot_mask;
  while (c->slots[i] != 0) i = (i + 1) & c->slot_mask;
  c->slots[i] = id + 1;
  return id;
}

/* A name kept as a C string: set, and without a NUL (which would cut it
 * short and make two names one). */
static srv_status_t *name_check(const ctx_t *c, upb_StringView v, const char *what,
                                uint32_t step) {
  if (v.size > 0 && memchr(v.data, '\0', v.size) == NULL) return NULL;
  return BAD(c, "%s of step %u of ensemble '%s' %s", what, step, c->model,
             v.size == 0 ? "is empty" : "holds a NUL byte");
}

/* ---- the config alone ---- */

static int entry_cmp(const void *a, const void *b) {
  const entry_t *x = a, *y = b;
  size_t n = x->key.size < y->key.size ? x->key.size : y->key.size;
  int r = memcmp(x->key.data, y->key.data, n);
  if (r != 0) return r;
  return (x->key.size > y->key.size) - (x->key.size < y->key.size);
}

/* A step's input_map (inputs) or output_map, sorted by model tensor name. */
static entry_t *entries(upb_Arena *a, const inference_ModelEnsembling_Step *s,
                        bool inputs, uint32_t *count) {
  size_t n = inputs ? inference_ModelEnsembling_Step_input_map_size(s)
                    : inference_ModelEnsembling_Step_output_map_size(s);
  entry_t *e = srv_arena_alloc(a, (n ? n : 1) * sizeof *e);
  size_t iter = kUpb_Map_Begin, k = 0;
  if (inputs) {
    const inference_ModelEnsembling_Step_InputMapEntry *m;
    while ((m = inference_ModelEnsembling_Step_input_map_next(s, &iter)) != NULL)
      e[k++] = (entry_t){inference_ModelEnsembling_Step_InputMapEntry_key(m),
                         inference_ModelEnsembling_Step_InputMapEntry_value(m)};
  } else {
    const inference_ModelEnsembling_Step_OutputMapEntry *m;
    while ((m = inference_ModelEnsembling_Step_output_map_next(s, &iter)) != NULL)
      e[k++] = (entry_t){inference_ModelEnsembling_Step_OutputMapEntry_key(m),
                         inference_ModelEnsembling_Step_OutputMapEntry_value(m)};
  }
  qsort(e, k, sizeof *e, entry_cmp);
  *count = (uint32_t)k;
  return e;
}

/* The fields Triton refuses on an ensemble, and the platform/scheduling
 * pairing. */
static srv_status_t *kind_check(const ctx_t *c, const inference_ModelConfig *config) {
  bool is_ensemble = view_is(inference_ModelConfig_platform(config), "ensemble");
  bool has_sched = inference_ModelConfig_has_ensemble_scheduling(config);
  const char *m = c->model;
  if (!is_ensemble)
    return has_sched ? BAD(c,
                           "ensemble scheduling cannot be set for model '%s' whose "
                           "platform is not ensemble",
                           m)
                     : BAD(c, "platform is not \"ensemble\"");
  if (inference_ModelConfig_backend(config).size != 0)
    return BAD(c,
               "Ensemble model '%s' must have platform type 'ensemble' and empty "
               "backend type",
               m);
  if (!has_sched)
    return BAD(c,
               "ensemble scheduling must be set for ensemble %s whose platform is "
               "ensemble",
               m);
  size_t n;
  inference_ModelConfig_instance_group(config, &n);
  if (n != 0)
    return BAD(c, "instance group should not be specified for ensemble '%s'", m);
  if (inference_ModelConfig_has_optimization(config))
    return BAD(c, "optimization should not be specified for ensemble '%s'", m);
  inference_ModelConfig_model_warmup(config, &n);
  if (n != 0) return BAD(c, "model_warmup can not be specified for ensemble '%s'", m);
  return NULL;
}

/* Steps, tensors and step inputs within SRV_CONFIG_LIST_MAX, before any of
 * them sizes memory. */
static srv_status_t *bounds_check(const ctx_t *c,
                                  const inference_ModelEnsembling_Step *const *s,
                                  size_t steps, size_t inputs, uint32_t *mappings) {
  if (steps > SRV_CONFIG_LIST_MAX)
    return BAD(c, "ensemble '%s' has %zu steps, more than the limit of %u", c->model,
               steps, SRV_CONFIG_LIST_MAX);
  uint64_t tensors = inputs, reads = 0;
  for (size_t i = 0; i < steps; i++) {
    tensors += inference_ModelEnsembling_Step_output_map_size(s[i]);
    reads += inference_ModelEnsembling_Step_input_map_size(s[i]);
  }
  if (tensors > SRV_CONFIG_LIST_MAX)
    return BAD(c,
               "ensemble '%s' has %llu tensors (inputs and step outputs), more than the "
               "limit of %u",
               c->model, (unsigned long long)tensors, SRV_CONFIG_LIST_MAX);
  if (reads > SRV_CONFIG_LIST_MAX)
    return BAD(c, "ensemble '%s' maps %llu step inputs, more than the limit of %u",
               c->model, (unsigned long long)reads, SRV_CONFIG_LIST_MAX);
  *mappings = (uint32_t)(tensors + reads);
  return NULL;
}

/* Step i's own fields and its outputs: each ensemble tensor is written once. */
static srv_status_t *step_outputs(ctx_t *c, const inference_ModelEnsembling_Step *s,
                                  uint32_t i, srv_ens_step_t *st) {
  upb_StringView name = inference_ModelEnsembling_Step_model_name(s);
  if (name.size == 0)
    return BAD(c, "must specify 'model_name' in step %u of ensemble '%s'", i, c->model);
  srv_status_t *e = name_check(c, name, "'model_name'", i);
  if (e != NULL) return e;
  if (inference_ModelEnsembling_Step_input_map_size(s) == 0)
    return BAD(c, "must specify 'input_map' in step %u of ensemble '%s'", i, c->model);
  if (inference_ModelEnsembling_Step_output_map_size(s) == 0)
    return BAD(c, "must specify 'output_map' in step %u of ensemble '%s'", i, c->model);
  st->model_name = srv_arena_strview(c->arena, name);
  upb_StringView ns = inference_ModelEnsembling_Step_model_namespace(s);
  st->model_namespace = ns.size > 0 ? srv_arena_strview(c->arena, ns) : NULL;
  st->model_version = inference_ModelEnsembling_Step_model_version(s);
  entry_t *out = entries(c->arena, s, false, &st->output_count);
  st->outputs = srv_arena_alloc(c->arena, st->output_count * sizeof *st->outputs);
  char q[SRV_QUOTE_SIZE];
  for (uint32_t k = 0; k < st->output_count; k++) {
    if ((e = name_check(c, out[k].key, "an output_map key", i)) != NULL ||
        (e = name_check(c, out[k].value, "an output_map value", i)) != NULL)
      return e;
    uint32_t t = find(c, out[k].value);
    if (t != UINT32_MAX && c->tensors[t].producer == SRV_ENS_PRODUCER_INPUT)
      return BAD(c,
                 "ensemble tensor '%s' is an ensemble input and cannot appear in the "
                 "output map of step %u of ensemble '%s'",
                 srv_quote(q, out[k].value.data, out[k].value.size), i, c->model);
    if (t != UINT32_MAX)
      return BAD(c,
                 "ensemble tensor '%s' can appear in an output map only once for "
                 "ensemble '%s' step %u",
                 srv_quote(q, out[k].value.data, out[k].value.size), c->model, i);
    const char *model_output = srv_arena_strview(c->arena, out[k].key);
    st->outputs[k] =
        (srv_ens_binding_t){model_output, add(c, out[k].value, i, model_output)};
  }
  return NULL;
}

/* Step i's inputs; a name nothing has written yet gets an entry with
 * NO_PRODUCER (the data flow check then names it). */
static srv_status_t *step_inputs(ctx_t *c, const inference_ModelEnsembling_Step *s,
                                 uint32_t i, srv_ens_step_t *st) {
  entry_t *in = entries(c->arena, s, true, &st->input_count);
  st->inputs = srv_arena_alloc(c->arena, st->input_count * sizeof *st->inputs);
  st->wait_count = st->input_count;
  for (uint32_t k = 0; k < st->input_count; k++) {
    srv_status_t *e;
    if ((e = name_check(c, in[k].key, "an input_map key", i)) != NULL ||
        (e = name_check(c, in[k].value, "an input_map value", i)) != NULL)
      return e;
    uint32_t t = find(c, in[k].value);
    if (t == UINT32_MAX) t = add(c, in[k].value, NO_PRODUCER, NULL);
    st->inputs[k] = (srv_ens_binding_t){srv_arena_strview(c->arena, in[k].key), t};
    c->tensors[t].consumer_count++;
  }
  return NULL;
}

/* Each tensor's consumers, by step then model input name (the order the
 * steps' sorted inputs give). */
static void consumers_fill(ctx_t *c, srv_ens_step_t *steps, uint32_t step_count) {
  for (uint32_t t = 0; t < c->count; t++) {
    srv_ens_tensor_t *x = &c->tensors[t];
    x->consumers = srv_arena_alloc(
        c->arena, (x->consumer_count ? x->consumer_count : 1) * sizeof *x->consumers);
    x->consumer_count = 0;
  }
  for (uint32_t i = 0; i < step_count; i++)
    for (uint32_t k = 0; k < steps[i].input_count; k++) {
      srv_ens_tensor_t *x = &c->tensors[steps[i].inputs[k].tensor];
      x->consumers[x->consumer_count++] =
          (srv_ens_consumer_t){i, steps[i].inputs[k].name};
    }
}

/* Runs the data flow once: ensemble inputs are ready, a step runs when all
 * its inputs are, its outputs are then ready. Fills ready[] and order[];
 * returns the steps that ran. */
static uint32_t flow(const ctx_t *c, const srv_ens_step_t *steps, uint32_t step_count,
                     uint32_t input_count, bool *ready, uint32_t *order) {
  uint32_t *wait = malloc((step_count ? step_count : 1) * sizeof *wait);
  uint32_t *queue = malloc((c->count ? c->count : 1) * sizeof *queue);
  if (wait == NULL || queue == NULL) SRV_FATAL("out of memory");
  uint32_t head = 0, tail = 0, ran = 0;
  for (uint32_t i = 0; i < step_count; i++) wait[i] = steps[i].wait_count;
  for (uint32_t t = 0; t < input_count; t++) {
    ready[t] = true;
    queue[tail++] = t;
  }
  while (head < tail) {
    const srv_ens_tensor_t *x = &c->tensors[queue[head++]];
    for (uint32_t k = 0; k < x->consumer_count; k++) {
      uint32_t i = x->consumers[k].step;
      if (--wait[i] != 0) continue;
      order[ran++] = i;
      for (uint32_t o = 0; o < steps[i].output_count; o++) {
        ready[steps[i].outputs[o].tensor] = true;
        queue[tail++] = steps[i].outputs[o].tensor;
      }
    }
  }
  free(wait);
  free(queue);
  return ran;
}

/* Triton's hint for an output never written: from it, go up through the
 * first input of the producing step that is not ready and not yet seen,
 * while there is one; the tensor reached is where the flow breaks (a name
 * nothing writes, or a cycle). */
static uint32_t break_find(const ctx_t *c, const srv_ens_step_t *steps, const bool *ready,
                           uint32_t t) {
  bool *seen = calloc(c->count, sizeof *seen);
  if (seen == NULL) SRV_FATAL("out of memory");
  for (uint32_t at = t;;) {
    uint32_t p = c->tensors[at].producer, next = UINT32_MAX;
    if (p != SRV_ENS_PRODUCER_INPUT && p != NO_PRODUCER)
      for (uint32_t k = 0; k < steps[p].input_count && next == UINT32_MAX; k++) {
        uint32_t u = steps[p].inputs[k].tensor;
        if (!ready[u] && !seen[u]) next = u;
      }
    if (next == UINT32_MAX) {
      free(seen);
      return at;
    }
    seen[next] = true;
    at = next;
  }
}

/* Triton's data flow checks, in its order: every ensemble input read,
 * every output written, no tensor left unread or unwritten. */
static srv_status_t *flow_check(const ctx_t *c, const inference_ModelConfig *config,
                                const srv_ens_step_t *steps, uint32_t step_count,
                                uint32_t input_count, uint32_t *order,
                                uint32_t *outputs) {
  char q[SRV_QUOTE_SIZE], q2[SRV_QUOTE_SIZE];
  const char *m = c->model;
  for (uint32_t t = 0; t < input_count; t++)
    if (c->tensors[t].consumer_count == 0) /* Triton's text, stray quote included */
      return BAD(c, "ensemble input '%s' for ensemble %s' is not used",
                 srv_quote_str(q, c->tensors[t].name), m);
  bool *ready = calloc(c->count ? c->count : 1, sizeof *ready);
  if (ready == NULL) SRV_FATAL("out of memory");
  flow(c, steps, step_count, input_count, ready, order);
  srv_status_t *e = NULL;
  size_t n;
  const inference_ModelOutput *const *out = inference_ModelConfig_output(config, &n);
  for (size_t k = 0; k < n && e == NULL; k++) {
    upb_StringView name = inference_ModelOutput_name(out[k]);
    uint32_t t = find(c, name);
    srv_quote(q, name.data, name.size);
    if (t == UINT32_MAX) {
      e = BAD(c, "ensemble output '%s' for ensemble %s' is not used", q, m);
    } else if (!ready[t]) {
      uint32_t b = break_find(c, steps, ready, t);
      if (b == t)
        e = BAD(c, "output '%s' for ensemble '%s' is not written", q, m);
      else
        e = BAD(c,
                "output '%s' for ensemble '%s' is not written: at least one of its "
                "depending tensors, '%s', is not connected",
                q, m, srv_quote_str(q2, c->tensors[b].name));
    } else {
      c->tensors[t].is_output = true;
      outputs[k] = t;
    }
  }
  for (uint32_t t = 0; t < c->count && e == NULL; t++) {
    const srv_ens_tensor_t *x = &c->tensors[t];
    if (!x->is_output && (!ready[t] || x->consumer_count == 0))
      e = BAD(c, "ensemble tensor '%s' is unused in ensemble '%s'",
              srv_quote_str(q, x->name), m);
  }
  free(ready);
  return e;
}

/* Sizes the name table for `cap` names and fills the ensemble inputs. */
static srv_status_t *inputs_read(ctx_t *c, const inference_ModelConfig *config,
                                 uint32_t cap) {
  c->tensors = srv_arena_alloc(c->arena, (cap ? cap : 1) * sizeof *c->tensors);
  uint32_t slots = 16;
  while (slots < 2 * cap) slots *= 2;
  c->slots = srv_arena_zalloc(c->arena, slots * sizeof *c->slots);
  c->slot_mask = slots - 1;
  size_t n;
  const inference_ModelInput *const *in = inference_ModelConfig_input(config, &n);
  char q[SRV_QUOTE_SIZE];
  for (size_t k = 0; k < n; k++) {
    upb_StringView name = inference_ModelInput_name(in[k]);
    if (name.size == 0 || memchr(name.data, '\0', name.size) != NULL)
      return BAD(c, "'input[%zu].name' is empty or holds a NUL byte", k);
    if (find(c, name) != UINT32_MAX)
      return BAD(c, "ensemble input '%s' is declared twice in ensemble '%s'",
                 srv_quote(q, name.data, name.size), c->model);
    add(c, name, SRV_ENS_PRODUCER_INPUT, NULL);
  }
  return NULL;
}

bool srv_ensemble_config_is(const inference_ModelConfig *c) {
  /* Either half makes it one: the ensemble compiler refuses the other
   * half missing, in Triton's words. */
  return view_is(inference_ModelConfig_platform(c), "ensemble") ||
         inference_ModelConfig_has_ensemble_scheduling(c);
}

srv_status_t *srv_ensemble_graph_compile(const inference_ModelConfig *config,
                                         const char *model, const char *source,
                                         upb_Arena *arena, srv_ensemble_graph_t *out) {
  ctx_t c = {.model = model, .source = source, .arena = arena};
  srv_status_t *e = kind_check(&c, config);
  if (e != NULL) return e;
  size_t steps_n, inputs_n, outputs_n;
  const inference_ModelEnsembling_Step *const *s = inference_ModelEnsembling_step(
      inference_ModelConfig_ensemble_scheduling(config), &steps_n);
  if (steps_n == 0) return BAD(&c, "must specify 'step' for ensemble '%s'", model);
  inference_ModelConfig_input(config, &inputs_n);
  inference_ModelConfig_output(config, &outputs_n);
  uint32_t names = 0;
  if ((e = bounds_check(&c, s, steps_n, inputs_n, &names)) != NULL) return e;
  if ((e = inputs_read(&c, config, names)) != NULL) return e;
  uint32_t step_count = (uint32_t)steps_n, input_count = c.count;
  srv_ens_step_t *steps = srv_arena_zalloc(arena, step_count * sizeof *steps);
  for (uint32_t i = 0; i < step_count; i++)
    if ((e = step_outputs(&c, s[i], i, &steps[i])) != NULL) return e;
  for (uint32_t i = 0; i < step_count; i++)
    if ((e = step_inputs(&c, s[i], i, &steps[i])) != NULL) return e;
  consumers_fill(&c, steps, step_count);
  uint32_t *order = srv_arena_alloc(arena, step_count * sizeof *order);
  uint32_t *outputs =
      srv_arena_alloc(arena, (outputs_n ? outputs_n : 1) * sizeof *outputs);
  e = flow_check(&c, config, steps, step_count, input_count, order, outputs);
  if (e != NULL) return e;
  /* Triton finds this once the configs pass, building the dependencies. */
  for (uint32_t i = 0; i < step_count; i++)
    if (strcmp(steps[i].model_name, model) == 0)
      return BAD(&c, "circular dependency between ensembles: %s -> ... -> %s -> %s",
                 model, model, model);
  /* Every tensor left is ready, so every step ran and nothing only read. */
  *out = (srv_ensemble_graph_t){
      .name = srv_arena_strview(arena, (upb_StringView){model, strlen(model)}),
      .max_batch_size = inference_ModelConfig_max_batch_size(config),
      .tensors = c.tensors,
      .tensor_count = c.count,
      .input_count = input_count,
      .steps = steps,
      .step_count = step_count,
      .outputs = outputs,
      .output_count = (uint32_t)outputs_n,
      .order = order,
      .slots = c.slots,
      .slot_mask = c.slot_mask,
  };
  return NULL;
}

/* ---- against the composing models ---- */

/* What is known of a tensor so far: where its data type and dims were
 * first inferred from (Triton's TensorNode). */
typedef struct {
  bool set;
  bool batching; /* full dims start with -1, the batch */
  TRITONSERVER_DataType datatype;
  const int64_t *dims;
  uint32_t dims_count;
  const char *model;
} node_t;

static bool dims_match(const int64_t *a, uint32_t na, const int64_t *b, uint32_t nb) {
  if (na != nb) return false;
  for (uint32_t i = 0; i < na; i++)
    if (a[i] != -1 && b[i] != -1 && a[i] != b[i]) return false;
  return true;
}

/* Dims with the batch dimension (-1) first when the model batches. */
static uint32_t full_dims(const node_t *n, int64_t *out) {
  uint32_t k = 0;
  if (n->batching) out[k++] = -1;
  for (uint32_t i = 0; i < n->dims_count && k < SRV_CONFIG_DIMS_MAX + 1; i++)
    out[k++] = n->dims[i];
  return k;
}

/* "[d0,d1,...]", Triton's DimsListToString. */
static const char *dims_text(char *buf, size_t size, const int64_t *d, uint32_t n) {
  size_t at = (size_t)snprintf(buf, size, "[");
  for (uint32_t i = 0; i < n && at < size; i++)
    at += (size_t)snprintf(buf + at, size - at, "%s%lld", i ? "," : "", (long long)d[i]);
  if (at < size) snprintf(buf + at, size - at, "]");
  return buf;
}

/* Triton's ValidateTensorConsistency: one data type, and dims that agree
 * with or without the batch dimension. */
static srv_status_t *consistent(const char *model, const char *source, const char *tensor,
                                const node_t *l, const node_t *r) {
  char q[SRV_QUOTE_SIZE];
  if (l->datatype != r->datatype)
    return bad(model, source,
               "in ensemble %s, ensemble tensor %s: inconsistent data type: %s is "
               "inferred from model %s while %s is inferred from model %s",
               model, srv_quote_str(q, tensor), api_datatype_config_name(l->datatype),
               l->model, api_datatype_config_name(r->datatype), r->model);
  int64_t lf[SRV_CONFIG_DIMS_MAX + 1], rf[SRV_CONFIG_DIMS_MAX + 1];
  uint32_t nl = full_dims(l, lf), nr = full_dims(r, rf);
  if (dims_match(l->dims, l->dims_count, r->dims, r->dims_count) ||
      dims_match(lf, nl, rf, nr))
    return NULL;
  char ls[256], rs[256];
  return bad(
      model, source,
      "in ensemble %s, ensemble tensor %s: inconsistent shape: %s is inferred from "
      "model %s while %s is inferred from model %s",
      model, srv_quote_str(q, tensor), dims_text(ls, sizeof ls, lf, nl), l->model,
      dims_text(rs, sizeof rs, rf, nr), r->model);
}

/* Records what `spec` of `model` says of tensor t, or checks it against
 * what was recorded first. */
static srv_status_t *node_see(const srv_ensemble_graph_t *g, node_t *nodes, uint32_t t,
                              const srv_tensor_spec_t *spec, const char *model,
                              bool batching, const char *source) {
  node_t n = {true, batching, spec->datatype, spec->dims, spec->dims_count, model};
  if (!nodes[t].set) {
    nodes[t] = n;
    return NULL;
  }
  return consistent(g->name, source, g->tensors[t].name, &nodes[t], &n);
}

const srv_tensor_spec_t *srv_ens_spec_find(const srv_tensor_spec_t *specs, uint32_t n,
                                           const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(specs[i].name, name) == 0) return &specs[i];
  return NULL;
}

static const srv_ens_binding_t *binding_find(const srv_ens_binding_t *b, uint32_t n,
                                             const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(b[i].name, name) == 0) return &b[i];
  return NULL;
}

/* Triton's ValidateTensorMapping for step i on model d. */
static srv_status_t *step_check(const srv_ensemble_graph_t *g, const srv_ens_step_t *st,
                                const srv_model_desc_t *d, node_t *nodes,
                                const char *source) {
  const char *e = g->name, *m = d->name;
  bool batching = d->max_batch_size > 0;
  char q[SRV_QUOTE_SIZE], q2[SRV_QUOTE_SIZE];
  for (uint32_t k = 0; k < st->input_count; k++)
    if (srv_ens_spec_find(d->inputs, d->input_count, st->inputs[k].name) == NULL)
      return bad(e, source,
                 "in ensemble %s, ensemble tensor %s is mapping to non-existing input %s "
                 "in model %s",
                 e, srv_quote_str(q, g->tensors[st->inputs[k].tensor].name),
                 srv_quote_str(q2, st->inputs[k].name), m);
  srv_status_t *err;
  for (uint32_t k = 0; k < d->input_count; k++) {
    const srv_ens_binding_t *b =
        binding_find(st->inputs, st->input_count, d->inputs[k].name);
    if (b == NULL && d->inputs[k].optional) continue;
    if (b == NULL)
      return bad(e, source,
                 "in ensemble %s, input %s in model %s is not mapped to any ensemble "
                 "tensors",
                 e, srv_quote_str(q, d->inputs[k].name), m);
    if ((err = node_see(g, nodes, b->tensor, &d->inputs[k], m, batching, source)) != NULL)
      return err;
  }
  for (uint32_t k = 0; k < st->output_count; k++)
    if (srv_ens_spec_find(d->outputs, d->output_count, st->outputs[k].name) == NULL)
      return bad(
          e, source,
          "in ensemble %s, ensemble tensor %s is mapped from non-existing output %s "
          "in model %s",
          e, srv_quote_str(q, g->tensors[st->outputs[k].tensor].name),
          srv_quote_str(q2, st->outputs[k].name), m);
  for (uint32_t k = 0; k < st->output_count; k++) {
    const srv_tensor_spec_t *o =
        srv_ens_spec_find(d->outputs, d->output_count, st->outputs[k].name);
    if ((err = node_see(g, nodes, st->outputs[k].tensor, o, m, batching, source)) != NULL)
      return err;
  }
  return NULL;
}

/* The ensemble's own inputs, then outputs (an output already seen as an
 * input keeps the input's, as in Triton). */
static void ensemble_nodes(const srv_ensemble_graph_t *g, const srv_model_desc_t *ens,
                           node_t *nodes) {
  bool batching = ens->max_batch_size > 0;
  for (uint32_t pass = 0; pass < 2; pass++) {
    const srv_tensor_spec_t *specs = pass ? ens->outputs : ens->inputs;
    uint32_t n = pass ? ens->output_count : ens->input_count;
    for (uint32_t k = 0; k < n; k++) {
      uint32_t t = srv_ensemble_graph_tensor_find(g, specs[k].name);
      if (t == UINT32_MAX || nodes[t].set) continue;
      nodes[t] = (node_t){
          true, batching, specs[k].datatype, specs[k].dims, specs[k].dims_count, g->name};
    }
  }
}

/* Triton's decoupled rule: what one request of a decoupled model makes
 * (any number of responses) is a "label"; a step, and the ensemble's
 * outputs together, must not mix tensors of two labels. Steps in run
 * order; `d` holds each step's model. */
static srv_status_t *decoupled_check(const srv_ensemble_graph_t *g,
                                     const srv_model_desc_t *const *d, const char *source,
                                     bool *decoupled) {
  uint32_t *label = calloc(g->tensor_count ? g->tensor_count : 1, sizeof *label);
  if (label == NULL) SRV_FATAL("out of memory");
  uint32_t labels = 0;
  srv_status_t *err = NULL;
  char q[SRV_QUOTE_SIZE];
  for (uint32_t k = 0; k < g->step_count && err == NULL; k++) {
    const srv_ens_step_t *st = &g->steps[g->order[k]];
    uint32_t in = label[st->inputs[0].tensor];
    for (uint32_t i = 1; i < st->input_count && err == NULL; i++)
      if (label[st->inputs[i].tensor] != in)
        err = bad(g->name, source,
                  "in ensemble %s, step of model '%s' receives inputs originated from "
                  "different decoupled models",
                  g->name, srv_quote_str(q, st->model_name));
    uint32_t out = d[g->order[k]]->decoupled ? ++labels : in;
    for (uint32_t o = 0; o < st->output_count; o++) label[st->outputs[o].tensor] = out;
  }
  for (uint32_t o = 1; o < g->output_count && err == NULL; o++)
    if (label[g->outputs[o]] != label[g->outputs[0]])
      err = bad(g->name, source,
                "in ensemble %s, step of model '%s' receives inputs originated from "
                "different decoupled models",
                g->name, g->name);
  free(label);
  *decoupled = labels != 0;
  return err;
}

srv_status_t *srv_ensemble_graph_check(const srv_ensemble_graph_t *g,
                                       const srv_model_desc_t *ensemble,
                                       const srv_model_desc_t *models,
                                       uint32_t model_count, const char *source,
                                       bool *decoupled) {
  node_t *nodes = calloc(g->tensor_count ? g->tensor_count : 1, sizeof *nodes);
  const srv_model_desc_t **found = calloc(g->step_count, sizeof *found);
  if (nodes == NULL || found == NULL) SRV_FATAL("out of memory");
  ensemble_nodes(g, ensemble, nodes);
  srv_status_t *err = NULL;
  char q[SRV_QUOTE_SIZE];
  for (uint32_t i = 0; i < g->step_count && err == NULL; i++) {
    const srv_ens_step_t *st = &g->steps[i];
    const srv_model_desc_t *d = NULL;
    for (uint32_t k = 0; k < model_count && d == NULL; k++)
      if (strcmp(models[k].name, st->model_name) == 0) d = &models[k];
    found[i] = d;
    if (d == NULL) {
      err = bad(g->name, source, "in ensemble %s, step %u: model %s is not given",
                g->name, i, srv_quote_str(q, st->model_name));
    } else if (d->max_batch_size != 0 && d->max_batch_size < ensemble->max_batch_size) {
      err =
          bad(g->name, source,
              "ensemble %s allows maximum batch size %d, but it contains model %s which "
              "only allows maximum batch size to be %d",
              g->name, ensemble->max_batch_size, d->name, d->max_batch_size);
    } else {
      err = step_check(g, st, d, nodes, source);
    }
  }
  bool dec = false;
  if (err == NULL) err = decoupled_check(g, found, source, &dec);
  if (err == NULL) *decoupled = dec;
  free(found);
  free(nodes);
  return err;
}
