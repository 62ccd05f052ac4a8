/* An ensemble's scheduler set up at load (see ensemble.h): the step graph,
 * the composing models, the scopes of decoupled steps and the layout of a
 * frame. Loading thread. */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/core/server.h"
#include "server/repository/registry.h"
#include "server/sched/ensemble.h"
#include "server/sched/ensemble_frame.h"

#define INVALID(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static void *arena_array(upb_Arena *a, size_t n, size_t size) {
  void *p = upb_Arena_Malloc(a, (n ? n : 1) * size);
  if (p == NULL) SRV_FATAL("out of memory");
  memset(p, 0, (n ? n : 1) * size);
  return p;
}

/* Each step's model from the registry, with a reference. */
static srv_status_t *models_acquire(srv_model_t *m, srv_ensemble_t *e,
                                    const char *source) {
  const srv_ensemble_graph_t *g = &e->graph;
  for (uint32_t s = 0; s < g->step_count; s++) {
    const srv_ens_step_t *st = &g->steps[s];
    srv_status_t *st_err =
        st->model_namespace != NULL
            ? srv_registry_acquire_ns(m->server->registry, st->model_namespace,
                                      st->model_name, st->model_version, &e->models[s])
            : srv_registry_acquire(m->server->registry, st->model_name,
                                   strlen(st->model_name), st->model_version,
                                   &e->models[s]);
    if (st_err == NULL) continue;
    srv_status_t *err =
        INVALID("%s: ensemble '%s' depends on '%s' which has no loaded version: %s",
                source, m->name, st->model_name, srv_status_message(st_err));
    srv_status_free(st_err);
    return err;
  }
  return NULL;
}

/* What each step sends: its inputs' specs and the outputs it asks for, as
 * the composing model's own (the checks and backends compare those). */
static void bindings_resolve(srv_ensemble_t *e, upb_Arena *a) {
  const srv_ensemble_graph_t *g = &e->graph;
  for (uint32_t s = 0; s < g->step_count; s++) {
    const srv_ens_step_t *st = &g->steps[s];
    srv_model_desc_t d;
    srv_model_describe(e->models[s], &d);
    e->decoupled[s] = d.decoupled;
    e->has_sequences = e->has_sequences || srv_model_has_sequences(e->models[s]);
    e->input_specs[s] = arena_array(a, st->input_count, sizeof *e->input_specs[s]);
    for (uint32_t k = 0; k < st->input_count; k++)
      e->input_specs[s][k] =
          srv_ens_spec_find(d.inputs, d.input_count, st->inputs[k].name);
    e->output_names[s] = arena_array(a, st->output_count, sizeof *e->output_names[s]);
    for (uint32_t k = 0; k < st->output_count; k++)
      e->output_names[s][k] =
          srv_ens_spec_find(d.outputs, d.output_count, st->outputs[k].name)->name;
  }
}

/* Whether scope `a` is `b` or encloses it. */
static bool scope_encloses(uint32_t a, uint32_t b, const uint32_t *parent) {
  for (;;) {
    if (a == b) return true;
    if (b == 0) return false;
    b = parent[b];
  }
}

/* The deepest of the scopes of `n` tensors, which must lie on one chain
 * (the graph check's decoupled rule); UINT32_MAX when they do not. */
static uint32_t scope_deepest(const srv_ensemble_t *e, const uint32_t *tensors,
                              size_t stride, uint32_t n, const uint32_t *parent,
                              const uint32_t *depth) {
  uint32_t deepest = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t sc =
        e->tensor_scope[*(const uint32_t *)((const char *)tensors + i * stride)];
    if (depth[sc] > depth[deepest]) deepest = sc;
  }
  for (uint32_t i = 0; i < n; i++) {
    uint32_t sc =
        e->tensor_scope[*(const uint32_t *)((const char *)tensors + i * stride)];
    if (!scope_encloses(sc, deepest, parent)) return UINT32_MAX;
  }
  return deepest;
}

/* Scopes, in run order: a step runs in the deepest scope of its inputs;
 * a decoupled step's outputs live in its own scope, others' in the step's. */
static srv_status_t *scopes_compute(srv_model_t *m, srv_ensemble_t *e, upb_Arena *a,
                                    const char *source) {
  const srv_ensemble_graph_t *g = &e->graph;
  e->scope_count = g->step_count + 1;
  e->step_scope = arena_array(a, g->step_count, sizeof *e->step_scope);
  e->tensor_scope = arena_array(a, g->tensor_count, sizeof *e->tensor_scope);
  uint32_t *parent = arena_array(a, e->scope_count, sizeof *parent);
  uint32_t *depth = arena_array(a, e->scope_count, sizeof *depth);
  for (uint32_t k = 0; k < g->step_count; k++) {
    uint32_t s = g->order[k];
    const srv_ens_step_t *st = &g->steps[s];
    uint32_t sc = scope_deepest(e, &st->inputs[0].tensor, sizeof st->inputs[0],
                                st->input_count, parent, depth);
    if (sc == UINT32_MAX)
      return INVALID(
          "%s: in ensemble %s, step of model '%s' receives inputs originated "
          "from different decoupled models",
          source, m->name, st->model_name);
    e->step_scope[s] = sc;
    uint32_t out = sc;
    if (e->decoupled[s]) {
      out = s + 1;
      parent[out] = sc;
      depth[out] = depth[sc] + 1;
    }
    for (uint32_t o = 0; o < st->output_count; o++)
      e->tensor_scope[st->outputs[o].tensor] = out;
  }
  e->output_scope =
      scope_deepest(e, g->outputs, sizeof g->outputs[0], g->output_count, parent, depth);
  if (e->output_scope == UINT32_MAX)
    return INVALID(
        "%s: in ensemble %s, the outputs originate from different decoupled "
        "models",
        source, m->name);
  e->scope_steps = arena_array(a, e->scope_count, sizeof *e->scope_steps);
  e->scope_step_count = arena_array(a, e->scope_count, sizeof *e->scope_step_count);
  for (uint32_t s = 0; s < g->step_count; s++) e->scope_step_count[e->step_scope[s]]++;
  for (uint32_t sc = 0; sc < e->scope_count; sc++) {
    e->scope_steps[sc] = arena_array(a, e->scope_step_count[sc], sizeof(uint32_t));
    e->scope_step_count[sc] = 0;
  }
  for (uint32_t k = 0; k < g->step_count; k++) {
    uint32_t s = g->order[k], sc = e->step_scope[s];
    e->scope_steps[sc][e->scope_step_count[sc]++] = s;
  }
  return NULL;
}

/* Whether a step input bound to the ensemble's input `own` passes
 * srv_check_input_shape against `spec` of `target` whenever the frontend's
 * check of the client's input against `own` of m passed: same type, same
 * dims, and a batch dimension in both models or in neither. */
static bool shape_proven(const srv_model_t *m, const srv_tensor_spec_t *own,
                         const srv_model_t *target, const srv_tensor_spec_t *spec) {
  if (own->datatype != spec->datatype || own->dims_count != spec->dims_count ||
      (m->max_batch_size > 0) != (target->max_batch_size > 0))
    return false;
  return own->dims_count == 0 ||
         memcmp(own->dims, spec->dims, own->dims_count * sizeof *own->dims) == 0;
}

/* What every run recomputed and the load can know: a root frame's wait
 * counts (its only values are the ensemble's inputs, given or absent, so a
 * step or the answer of scope 0 waits for each of its tensors that is not
 * one), the steps that start at once, and whether a step binds every input
 * its model requires (srv_check_required_inputs then passes unless an
 * optional ensemble input was left out). */
static void run_plan(const srv_model_t *m, srv_ensemble_t *e, upb_Arena *a) {
  const srv_ensemble_graph_t *g = &e->graph;
  e->root_wait = arena_array(a, g->step_count + 1, sizeof *e->root_wait);
  e->root_ready = arena_array(a, e->scope_step_count[0], sizeof *e->root_ready);
  e->required_bound = arena_array(a, g->step_count, sizeof *e->required_bound);
  for (uint32_t i = 0; i < e->scope_step_count[0]; i++) {
    uint32_t s = e->scope_steps[0][i];
    for (uint32_t k = 0; k < g->steps[s].input_count; k++)
      e->root_wait[s] += g->steps[s].inputs[k].tensor >= g->input_count;
    if (e->root_wait[s] == 0) e->root_ready[e->root_ready_count++] = s;
  }
  if (e->output_scope == 0)
    for (uint32_t o = 0; o < g->output_count; o++)
      e->root_wait[g->step_count] += g->outputs[o] >= g->input_count;
  for (uint32_t s = 0; s < g->step_count; s++) {
    const srv_model_t *target = e->models[s];
    bool bound = true;
    for (uint32_t i = 0; i < target->input_count && bound; i++) {
      if (target->inputs[i].optional) continue;
      bound = false;
      for (uint32_t k = 0; k < g->steps[s].input_count && !bound; k++)
        bound = e->input_specs[s][k]->name == target->inputs[i].name;
    }
    e->required_bound[s] = bound;
  }
  uint32_t inputs = 0;
  for (uint32_t s = 0; s < g->step_count; s++) inputs += g->steps[s].input_count;
  e->input_proven = arena_array(a, inputs, sizeof *e->input_proven);
  for (uint32_t s = 0; s < g->step_count; s++) {
    for (uint32_t k = 0; k < g->steps[s].input_count; k++) {
      uint32_t t = g->steps[s].inputs[k].tensor;
      e->input_proven[e->input_offset[s] + k] =
          t < g->input_count &&
          shape_proven(m, &m->inputs[t], e->models[s], e->input_specs[s][k]);
    }
  }
}

static size_t align_up(size_t n) {
  size_t al = alignof(max_align_t);
  return (n + al - 1) / al * al;
}

/* One block per frame: header, tensors, wait counts, steps, the steps'
 * inputs, kept responses (a step's one, or the one that opened the frame). */
static void frame_layout(srv_ensemble_t *e, upb_Arena *a) {
  const srv_ensemble_graph_t *g = &e->graph;
  e->input_offset = arena_array(a, g->step_count, sizeof *e->input_offset);
  uint32_t inputs = 0;
  for (uint32_t s = 0; s < g->step_count; s++) {
    e->input_offset[s] = inputs;
    inputs += g->steps[s].input_count;
  }
  size_t at = align_up(sizeof(ens_frame_t));
  e->tensors_at = at;
  at = align_up(at + g->tensor_count * sizeof(ens_value_t));
  e->wait_at = at;
  at = align_up(at + (g->step_count + 1) * sizeof(uint32_t));
  e->steps_at = at;
  at = align_up(at + g->step_count * sizeof(ens_step_t));
  e->inputs_at = at;
  at = align_up(at + inputs * sizeof(TRITONBACKEND_Input));
  e->kept_at = at;
  e->frame_bytes = align_up(at + (g->step_count + 1) * sizeof(TRITONBACKEND_Response *));
}

srv_status_t *srv_ensemble_setup(srv_model_t *m, const char *source) {
  srv_ensemble_t *e = calloc(1, sizeof *e);
  if (e == NULL) SRV_FATAL("out of memory");
  m->ens = e;
  srv_status_t *err =
      srv_ensemble_graph_compile(m->config, m->name, source, m->arena, &e->graph);
  if (err != NULL) return err;
  const srv_ensemble_graph_t *g = &e->graph;
  e->models = calloc(g->step_count ? g->step_count : 1, sizeof *e->models);
  if (e->models == NULL) SRV_FATAL("out of memory");
  if ((err = models_acquire(m, e, source)) != NULL) return err;
  srv_model_desc_t self, *descs = calloc(g->step_count, sizeof *descs);
  if (descs == NULL) SRV_FATAL("out of memory");
  srv_model_describe(m, &self);
  for (uint32_t s = 0; s < g->step_count; s++)
    srv_model_describe(e->models[s], &descs[s]);
  bool decoupled = false;
  err = srv_ensemble_graph_check(g, &self, descs, g->step_count, source, &decoupled);
  free(descs);
  if (err != NULL) return err;
  m->decoupled = m->decoupled || decoupled;
  e->decoupled = arena_array(m->arena, g->step_count, sizeof *e->decoupled);
  e->input_specs = arena_array(m->arena, g->step_count, sizeof *e->input_specs);
  e->output_names = arena_array(m->arena, g->step_count, sizeof *e->output_names);
  bindings_resolve(e, m->arena);
  if ((err = scopes_compute(m, e, m->arena, source)) != NULL) return err;
  frame_layout(e, m->arena);
  run_plan(m, e, m->arena);
  return NULL;
}

void srv_ensemble_sequence_end(srv_model_t *m, uint64_t id, const char *id_string,
                               uint64_t owner) {
  const srv_ensemble_t *e = m->ens;
  /* A model that is several steps hears of the end once. */
  for (uint32_t s = 0; s < e->graph.step_count; s++) {
    srv_model_t *step = e->models[s];
    bool seen = false;
    for (uint32_t k = 0; k < s && !seen; k++) seen = e->models[k] == step;
    if (!seen && srv_model_has_sequences(step))
      srv_model_sequence_end(step, id, id_string, owner);
  }
}

void srv_ensemble_stats_init(srv_model_t *m) {
  srv_ensemble_t *e = m->ens;
  uint32_t n = e->graph.step_count;
  m->stats.steps = calloc(n ? n : 1, sizeof *m->stats.steps);
  if (m->stats.steps == NULL) SRV_FATAL("out of memory");
  m->stats.step_count = n;
  for (uint32_t s = 0; s < n; s++) {
    m->stats.steps[s].model_name = e->models[s]->name;
    m->stats.steps[s].model_version = e->models[s]->version_string;
  }
}

void srv_ensemble_models_release(srv_model_t *m) {
  srv_ensemble_t *e = m->ens;
  if (e == NULL || e->models == NULL) return;
  for (uint32_t s = 0; s < e->graph.step_count; s++)
    if (e->models[s] != NULL) srv_model_unref(e->models[s]);
  free(e->models);
  e->models = NULL;
}

void srv_ensemble_free(srv_model_t *m) {
  srv_ensemble_t *e = m->ens;
  if (e == NULL) return;
  srv_ensemble_models_release(m);
  while (e->pool != NULL) {
    ens_frame_t *f = e->pool;
    e->pool = f->next_sibling;
    free(f);
  }
  free(e);
  m->ens = NULL;
}
