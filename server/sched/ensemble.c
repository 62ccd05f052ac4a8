/* The ensemble model's actor (ensemble.md): each request becomes a run, a
 * tree of frames; a step is sent to its composing model as soon as its
 * inputs exist in its frame or the frames around it, and its answers come
 * back here as messages. Everything in this file runs on the ensemble's
 * actor only. */
#include "server/sched/ensemble.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/api/error.h"
#include "server/cache/cache_hook.h"
#include "server/common/log.h"
#include "server/model/infer_check.h"
#include "server/sched/ensemble_frame.h"
#include "server/sched/reorder.h"
#include "server/sched/scheduler.h"
#include "server/trace/trace.h"

/* ---- frames ---- */

/* A new block: the pointers into it, and each step's place, never change
 * while it is pooled. */
static ens_frame_t *frame_new(const srv_ensemble_t *e) {
  ens_frame_t *f = malloc(e->frame_bytes);
  if (f == NULL) SRV_FATAL("out of memory");
  char *base = (char *)f;
  f->tensors = (ens_value_t *)(base + e->tensors_at);
  f->wait = (uint32_t *)(base + e->wait_at);
  f->steps = (ens_step_t *)(base + e->steps_at);
  f->kept = (TRITONBACKEND_Response **)(base + e->kept_at);
  TRITONBACKEND_Input *inputs = (TRITONBACKEND_Input *)(base + e->inputs_at);
  for (uint32_t s = 0; s < e->graph.step_count; s++) {
    ens_step_t *x = &f->steps[s];
    x->frame = f;
    x->inputs = inputs + e->input_offset[s];
    x->index = s;
  }
  return f;
}

static ens_frame_t *frame_open(srv_ensemble_t *e, ens_frame_t *parent, uint32_t scope) {
  ens_frame_t *f = e->pool;
  if (f != NULL)
    e->pool = f->next_sibling;
  else
    f = frame_new(e);
  memset(f, 0, offsetof(ens_frame_t, tensors));
  /* A value is whole once set (run_start, outputs_take): only the state
   * says whether it is. */
  for (uint32_t t = 0; t < e->graph.tensor_count; t++) f->tensors[t].state = ENS_UNSET;
  for (uint32_t i = 0; i < e->scope_step_count[scope]; i++) {
    ens_step_t *x = &f->steps[e->scope_steps[scope][i]];
    x->started = x->answered = x->released = x->finished = false;
  }
  f->scope = scope;
  f->parent = parent;
  if (parent != NULL) {
    f->run = parent->run;
    f->next_sibling = parent->children;
    parent->children = f;
    parent->live_children++;
  } else {
    f->run = &f->own_run;
  }
  return f;
}

static void frame_close(srv_ensemble_t *e, ens_frame_t *f) {
  for (uint32_t i = 0; i < f->kept_count; i++) srv_response_free(f->kept[i]);
  ens_frame_t *p = f->parent;
  if (p != NULL) {
    ens_frame_t **link = &p->children;
    while (*link != f) link = &(*link)->next_sibling;
    *link = f->next_sibling;
    p->live_children--;
  }
  f->next_sibling = e->pool;
  e->pool = f;
}

/* The frame holding tensor t as seen from f: f or the frame around it. */
static ens_value_t *value_of(const srv_ensemble_t *e, ens_frame_t *f, uint32_t t) {
  uint32_t scope = e->tensor_scope[t];
  while (f->scope != scope) f = f->parent;
  return &f->tensors[t];
}

/* The index of `name` among n specs, n when absent. Names that passed the
 * frontend's checks are the model's own strings: equal pointers first. */
static uint32_t spec_index(const srv_tensor_spec_t *specs, uint32_t n, const char *name) {
  for (uint32_t j = 0; j < n; j++)
    if (specs[j].name == name) return j;
  for (uint32_t j = 0; j < n; j++)
    if (strcmp(specs[j].name, name) == 0) return j;
  return n;
}

/* ---- answers to the ensemble request ---- */

static void run_send(ens_run_t *run, TRITONBACKEND_Response *r) {
  srv_response_shm_settle(r);
  srv_cache_on_send(r);
  srv_reorder_route(run->request->state, &r->msg);
}

/* A response with room for n borrowed outputs and their lenders. */
static TRITONBACKEND_Response *response_new(ens_run_t *run, uint32_t flags, uint32_t n) {
  return srv_response_new_borrowing(run->request->state, flags, n);
}

static void lender_add(TRITONBACKEND_Response *r, TRITONBACKEND_Response *lender) {
  for (uint32_t i = 0; i < r->lender_count; i++)
    if (r->lenders[i] == lender) return;
  srv_response_lend_start(lender); /* first: the frame that keeps it */
  srv_response_hold(lender);
  r->lenders[r->lender_count++] = lender;
}

/* The requested outputs as they are in f (or around it), by reference. */
static void outputs_answer(srv_model_t *m, ens_frame_t *f) {
  srv_ensemble_t *e = m->ens;
  ens_run_t *run = f->run;
  TRITONBACKEND_Request *req = run->request;
  /* No outputs named: all of them, in the config's order. */
  uint32_t n = req->output_count != 0 ? req->output_count : m->output_count;
  const char *const *names = req->output_count != 0 ? req->outputs : m->output_names;
  TRITONBACKEND_Response *r =
      response_new(run, m->decoupled ? 0 : TRITONSERVER_RESPONSE_COMPLETE_FINAL, n);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t j = spec_index(m->outputs, m->output_count, names[i]);
    if (j == m->output_count) continue; /* the frontend checked the names */
    ens_value_t *v = value_of(e, f, e->graph.outputs[j]);
    struct TRITONBACKEND_Output *o = &r->outputs[r->output_count++];
    *o = (struct TRITONBACKEND_Output){
        .name = (char *)m->outputs[j].name,
        .datatype = v->datatype,
        .shape = (int64_t *)v->shape,
        .dims_count = v->dims_count,
        .buffer = (void *)v->one.base,
        .byte_size = v->byte_size,
    };
    lender_add(r, v->owner);
  }
  run->answered = true;
  run_send(run, r);
}

/* ---- failing a run ---- */

static void steps_cancel(srv_ensemble_t *e, ens_frame_t *f) {
  for (uint32_t i = 0; i < e->scope_step_count[f->scope]; i++) {
    ens_step_t *x = &f->steps[e->scope_steps[f->scope][i]];
    if (x->started && !x->finished) srv_request_cancel(&x->req);
  }
  for (ens_frame_t *c = f->children; c != NULL; c = c->next_sibling) steps_cancel(e, c);
}

/* The run ends with this error (the first one wins); steps in flight are
 * cancelled, and no other step starts. */
static void run_fail(srv_model_t *m, ens_run_t *run, TRITONSERVER_Error_Code code,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void run_fail(srv_model_t *m, ens_run_t *run, TRITONSERVER_Error_Code code,
                     const char *fmt, ...) {
  if (run->error != NULL) return;
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  run->error = TRITONSERVER_ErrorNew(code, text);
  steps_cancel(m->ens, (ens_frame_t *)((char *)run - offsetof(ens_frame_t, own_run)));
}

/* ---- lazy watching ---- */

/* A run asks its client's owner to watch for a cancel only once it has run
 * SRV_WATCH_AFTER_NS, as a queued request does (scheduler.c): a run
 * answered sooner, nearly all of them, never pays for the watch (a second
 * gRPC batch per call). Runs whose owner waits to be asked are listed here,
 * oldest first, and swept by the model's timer. The steps' own models
 * never ask: a step's state is the ensemble's, which watches its steps. */
static uint64_t watch_due(const ens_run_t *run) {
  return run->request->state->request_start_ns + SRV_WATCH_AFTER_NS;
}

static void unwatched_add(srv_model_t *m, ens_run_t *run) {
  srv_ensemble_t *e = m->ens;
  if (!srv_infer_state_watch_lazy(run->request->state)) return;
  run->unwatched = true;
  run->unwatched_next = NULL;
  run->unwatched_prev = e->unwatched_tail;
  if (e->unwatched_tail != NULL)
    e->unwatched_tail->unwatched_next = run;
  else
    e->unwatched_head = run;
  e->unwatched_tail = run;
  srv_scheduler_timer_want(m, watch_due(e->unwatched_head));
}

static void unwatched_remove(srv_ensemble_t *e, ens_run_t *run) {
  if (!run->unwatched) return;
  run->unwatched = false;
  if (run->unwatched_prev != NULL)
    run->unwatched_prev->unwatched_next = run->unwatched_next;
  else
    e->unwatched_head = run->unwatched_next;
  if (run->unwatched_next != NULL)
    run->unwatched_next->unwatched_prev = run->unwatched_prev;
  else
    e->unwatched_tail = run->unwatched_prev;
}

/* Runs arrive nearly in start order (frontend threads race a little), so
 * the sweep stops at the first run not due; one behind it waits at most
 * one more sweep. */
static void unwatched_sweep(srv_model_t *m) {
  srv_ensemble_t *e = m->ens;
  uint64_t now = act_now_ns();
  ens_run_t *run;
  while ((run = e->unwatched_head) != NULL && watch_due(run) <= now) {
    unwatched_remove(e, run);
    srv_request_watch_ask(run->request->state);
  }
  if (run != NULL) srv_scheduler_timer_want(m, watch_due(run));
}

/* ---- the end of a run ---- */

static void run_end(srv_model_t *m, ens_frame_t *root) {
  srv_ensemble_t *e = m->ens;
  ens_run_t *run = root->run;
  TRITONBACKEND_Request *req = run->request;
  if (run->error == NULL && !run->answered && !m->decoupled)
    run_fail(m, run, TRITONSERVER_ERROR_INTERNAL,
             "ensemble '%s': the run ended without its outputs", m->name);
  uint64_t now = act_now_ns(), took = now - req->state->request_start_ns;
  if (run->error != NULL) {
    TRITONBACKEND_Response *r =
        response_new(run, TRITONSERVER_RESPONSE_COMPLETE_FINAL, 0);
    r->error = run->error;
    run->error = NULL;
    /* Read before the send: the response is the owner's after it. */
    bool cancelled = TRITONSERVER_ErrorCode(r->error) == TRITONSERVER_ERROR_CANCELLED;
    run_send(run, r);
    srv_stats_fail(&m->stats, cancelled ? SRV_FAIL_CANCELED : SRV_FAIL_OTHER, took);
  } else {
    if (m->decoupled)
      srv_final_flags_send(req->state, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
    srv_stats_slot_t *mine = srv_stats_mine(&m->stats);
    srv_duration_add(&mine->success, took);
    srv_hist_record(&srv_stats_slot_latency(mine)->kind[SRV_LAT_REQUEST], took);
    atomic_fetch_add_explicit(&mine->inference_count, req->batch_size,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&mine->execution_count, 1, memory_order_relaxed);
    atomic_store_explicit(&mine->last_inference_ms, srv_stats_wall_ms(),
                          memory_order_relaxed);
  }
  req->ens_run = NULL;
  unwatched_remove(e, run);
  frame_close(e, root);
  e->runs--;
  TRITONSERVER_Error *err =
      TRITONBACKEND_RequestRelease(req, TRITONSERVER_REQUEST_RELEASE_ALL);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  if (e->stopping && e->runs == 0) srv_scheduler_close(m);
}

/* A frame may be done: looked at once the message in hand is handled
 * (checks_run), so that no frame closes under a caller still using it. */
static void frame_check(srv_ensemble_t *e, ens_frame_t *f) {
  if (f->check_queued) return;
  f->check_queued = true;
  f->next_check = e->checks;
  e->checks = f;
}

/* A frame is done when its steps and its answer are (or, in a failed run,
 * when none of its steps runs) and its child frames are done. */
static bool frame_done(const ens_frame_t *f) {
  if (f->live_children != 0) return false;
  return f->pending == 0 || (f->run->error != NULL && f->running == 0);
}

static void checks_run(srv_model_t *m) {
  srv_ensemble_t *e = m->ens;
  while (e->checks != NULL) {
    ens_frame_t *f = e->checks;
    e->checks = f->next_check;
    f->check_queued = false;
    if (!frame_done(f)) continue;
    ens_frame_t *p = f->parent;
    if (p == NULL) {
      run_end(m, f);
    } else {
      frame_close(e, f);
      frame_check(e, p);
    }
  }
}

/* ---- steps ---- */

static void step_start(srv_model_t *m, ens_frame_t *f, uint32_t s);

/* Input (or answer, s == step_count) s of frame f has one more of its
 * tensors. */
static void wait_less(srv_model_t *m, ens_frame_t *f, uint32_t s) {
  if (--f->wait[s] != 0) return;
  srv_ensemble_t *e = m->ens;
  if (s == e->graph.step_count) {
    if (f->run->error == NULL) outputs_answer(m, f);
    f->pending--;
    frame_check(e, f);
    return;
  }
  if (f->run->error == NULL) step_start(m, f, s);
}

/* Tensor t now exists in f: every step (or answer) that reads it, in f or
 * in the frames inside f of that step's scope, waits for one tensor less. */
static void tensor_notify(srv_model_t *m, ens_frame_t *f, uint32_t s, uint32_t scope) {
  if (f->scope == scope) {
    wait_less(m, f, s);
    return;
  }
  for (ens_frame_t *c = f->children, *next; c != NULL; c = next) {
    next = c->next_sibling; /* c may close */
    tensor_notify(m, c, s, scope);
  }
}

static void tensor_ready(srv_model_t *m, ens_frame_t *f, uint32_t t) {
  srv_ensemble_t *e = m->ens;
  const srv_ens_tensor_t *ten = &e->graph.tensors[t];
  for (uint32_t c = 0; c < ten->consumer_count; c++) {
    uint32_t s = ten->consumers[c].step;
    tensor_notify(m, f, s, e->step_scope[s]);
  }
  if (ten->is_output) tensor_notify(m, f, e->graph.step_count, e->output_scope);
}

/* What the steps of f's scope and its answer miss, looked up in f and the
 * frames around it. */
static void waits_count(const srv_ensemble_t *e, ens_frame_t *f) {
  const srv_ensemble_graph_t *g = &e->graph;
  uint32_t sc = f->scope;
  for (uint32_t i = 0; i < e->scope_step_count[sc]; i++) {
    uint32_t s = e->scope_steps[sc][i];
    uint32_t missing = 0;
    for (uint32_t k = 0; k < g->steps[s].input_count; k++)
      missing += value_of(e, f, g->steps[s].inputs[k].tensor)->state == ENS_UNSET;
    f->wait[s] = missing;
  }
  if (e->output_scope == sc) {
    uint32_t missing = 0;
    for (uint32_t o = 0; o < g->output_count; o++)
      missing += value_of(e, f, g->outputs[o])->state == ENS_UNSET;
    f->wait[g->step_count] = missing;
  }
}

/* A new frame counts what its steps and its answer miss, then starts what
 * misses nothing. A root frame holds the ensemble's inputs alone: its
 * counts, and the steps that start at once, were computed at load. */
static void frame_activate(srv_model_t *m, ens_frame_t *f) {
  srv_ensemble_t *e = m->ens;
  const srv_ensemble_graph_t *g = &e->graph;
  uint32_t sc = f->scope, n = e->scope_step_count[sc];
  f->pending = n + (e->output_scope == sc ? 1 : 0);
  if (f->parent == NULL) {
    memcpy(f->wait, e->root_wait, (g->step_count + 1) * sizeof *f->wait);
    for (uint32_t i = 0; i < e->root_ready_count && f->run->error == NULL; i++)
      step_start(m, f, e->root_ready[i]);
  } else {
    waits_count(e, f);
    for (uint32_t i = 0; i < n; i++) {
      uint32_t s = e->scope_steps[sc][i];
      if (f->wait[s] == 0 && f->run->error == NULL) step_start(m, f, s);
    }
  }
  if (e->output_scope == sc && f->wait[g->step_count] == 0) {
    f->wait[g->step_count] = 1;
    wait_less(m, f, g->step_count);
  }
  frame_check(e, f);
}

/* The step's time ends at its last answer, not at its release: the next
 * step may already run then, and the per-step times of a chain must not
 * overlap. */
static void step_answered(ens_step_t *x) {
  x->answered = true;
  x->answer_ns = act_now_ns();
}

static void step_finish_if_done(srv_model_t *m, ens_step_t *x) {
  if (x->finished || !x->answered || !x->released || srv_request_cancel_out(&x->req))
    return;
  x->finished = true;
  ens_frame_t *f = x->frame;
  srv_duration_add(&m->stats.steps[x->index].time, x->answer_ns - x->start_ns);
  srv_infer_state_unref(x->req.state);
  f->running--;
  f->pending--;
  frame_check(m->ens, f);
}

/* A step that never went out: counted as finished at once. */
static void step_refuse(srv_model_t *m, ens_frame_t *f, ens_step_t *x) {
  x->finished = true;
  f->pending--;
  frame_check(m->ens, f);
}

static void step_start(srv_model_t *m, ens_frame_t *f, uint32_t s) {
  srv_ensemble_t *e = m->ens;
  const srv_ens_step_t *st = &e->graph.steps[s];
  srv_model_t *target = e->models[s];
  ens_step_t *x = &f->steps[s];
  TRITONBACKEND_Request *req = f->run->request;
  x->req = (TRITONBACKEND_Request){
      .model = target,
      .id = req->id,
      .correlation_id = req->correlation_id,
      .correlation_id_string = req->correlation_id_string,
      .flags = req->flags,
      .seq_owner = req->seq_owner, /* a stream's end reaches the steps' sequences */
      .inputs = x->inputs,
      .outputs = e->output_names[s],
      .output_count = st->output_count,
      .priority = req->priority,
      .timeout_us = req->timeout_us,
      /* Each step reads the ensemble request's parameters, as in Triton;
       * borrowed like its id: every step ends before the request goes. */
      .params = req->params,
      .param_count = req->param_count,
      .param_room = req->param_room,
  };
  srv_status_t *err = NULL;
  uint32_t n = 0;
  for (uint32_t k = 0; k < st->input_count && err == NULL; k++) {
    const ens_value_t *v = value_of(e, f, st->inputs[k].tensor);
    if (v->state == ENS_ABSENT) continue;
    const srv_tensor_spec_t *spec = e->input_specs[s][k];
    if (v->datatype != spec->datatype) {
      const char *given = TRITONSERVER_DataTypeString(v->datatype);
      err = srv_check_input_datatype(target, spec, v->datatype, given, strlen(given));
    } else if (!e->input_proven[e->input_offset[s] + k]) {
      err = srv_check_input_shape(target, spec, v->shape, v->dims_count);
    }
    x->inputs[n++] = (TRITONBACKEND_Input){
        .name = spec->name,
        .datatype = v->datatype,
        .shape = v->shape,
        .dims_count = v->dims_count,
        .byte_size = v->byte_size,
        .buffers = v->buffers,
        .buffer_count = v->buffer_count,
    };
  }
  x->req.input_count = n;
  /* Proven at load when every input the model requires is bound and none
   * was left out (an optional ensemble input not given). */
  if (err == NULL && !(e->required_bound[s] && n == st->input_count))
    err = srv_check_required_inputs(target, &x->req);
  if (err == NULL) err = srv_check_batch(target, &x->req);
  if (err != NULL) {
    run_fail(m, f->run, TRITONSERVER_ERROR_INVALID_ARG, "in ensemble '%s', step %u: %s",
             m->name, s, srv_status_message(err));
    srv_status_free(err);
    step_refuse(m, f, x);
    return;
  }
  srv_infer_state_t *state = srv_infer_state_new(&m->actor);
  state->owner_data = x;
  srv_model_ref(target);
  state->model = target;
  uint64_t now = act_now_ns();
  state->request_start_ns = now;
  /* Triton's child trace: the step's request under the ensemble's. */
  srv_infer_state_t *parent = f->run->request->state;
  if (parent->trace != NULL) state->trace = srv_trace_child(parent->trace);
  x->req.state = state;
  x->req.queue_start_ns = now;
  x->start_ns = now;
  x->started = true;
  f->running++;
  srv_model_enqueue(target, &x->req);
}

/* The outputs of a step's response become tensors of frame f, which keeps
 * the response. False when one is missing (the run failed). */
static bool outputs_take(srv_model_t *m, ens_frame_t *f, uint32_t s,
                         TRITONBACKEND_Response *r) {
  srv_ensemble_t *e = m->ens;
  const srv_ens_step_t *st = &e->graph.steps[s];
  for (uint32_t k = 0; k < st->output_count; k++) {
    /* The name is the model's own string when the backend named one of
     * its outputs (TRITONBACKEND_ResponseOutput): equal pointers first. */
    const char *name = e->output_names[s][k];
    const struct TRITONBACKEND_Output *o = NULL;
    for (uint32_t i = 0; i < r->output_count && o == NULL; i++)
      if (r->outputs[i].name == name) o = &r->outputs[i];
    for (uint32_t i = 0; i < r->output_count && o == NULL; i++)
      if (strcmp(r->outputs[i].name, name) == 0) o = &r->outputs[i];
    if (o == NULL || (o->buffer == NULL && o->byte_size != 0)) {
      run_fail(m, f->run, TRITONSERVER_ERROR_INTERNAL,
               "in ensemble '%s', step %u: model '%s' gave no output '%s'", m->name, s,
               e->models[s]->name, st->outputs[k].name);
      srv_response_free(r);
      return false;
    }
    ens_value_t *v = &f->tensors[st->outputs[k].tensor];
    *v = (ens_value_t){
        .shape = o->shape,
        .dims_count = o->dims_count,
        .datatype = o->datatype,
        .byte_size = o->byte_size,
        .one = {.base = o->buffer, .size = o->byte_size},
        .buffer_count = 1,
        .owner = r,
        .state = ENS_SET,
    };
    v->buffers = &v->one;
  }
  f->kept[f->kept_count++] = r;
  return true;
}

static void step_response(srv_model_t *m, TRITONBACKEND_Response *r) {
  srv_ensemble_t *e = m->ens;
  ens_step_t *x = r->state->owner_data;
  ens_frame_t *f = x->frame;
  uint32_t s = x->index;
  bool final = srv_response_final(e->decoupled[s], r->flags);
  if (x->answered) { /* a second answer from a model that is not decoupled */
    SRV_WARN("ensemble '%s': model '%s' answered a step twice; the second is dropped",
             m->name, e->models[s]->name);
    srv_response_free(r);
    return;
  }
  if (final) step_answered(x);
  if (f->run->error != NULL) {
    srv_response_free(r);
  } else if (r->error != NULL) {
    run_fail(m, f->run, TRITONSERVER_ErrorCode(r->error), "%s",
             TRITONSERVER_ErrorMessage(r->error));
    srv_response_free(r);
  } else if (!e->decoupled[s]) {
    if (outputs_take(m, f, s, r)) {
      const srv_ens_step_t *st = &e->graph.steps[s];
      for (uint32_t k = 0; k < st->output_count; k++)
        tensor_ready(m, f, st->outputs[k].tensor);
    }
  } else if (r->output_count == 0) {
    srv_response_free(r); /* the final flag alone */
  } else {
    /* Each response of a decoupled step runs what follows it on its own. */
    ens_frame_t *c = frame_open(e, f, s + 1);
    if (outputs_take(m, c, s, r))
      frame_activate(m, c);
    else
      frame_check(e, c);
  }
  step_finish_if_done(m, x);
}

static void step_final_flags(srv_model_t *m, srv_final_msg_t *fm) {
  ens_step_t *x = fm->state->owner_data;
  if (srv_final_flags_take(&fm->msg) & TRITONSERVER_RESPONSE_COMPLETE_FINAL)
    step_answered(x);
  step_finish_if_done(m, x);
}

static void step_released(srv_model_t *m, ens_step_t *x) {
  x->released = true;
  /* Nothing can answer any more when no response, message or factory
   * holds the state but ours: a backend that released without answering. */
  if (!x->answered && srv_infer_state_only_held(x->req.state, 1)) {
    step_answered(x);
    run_fail(m, x->frame->run, TRITONSERVER_ERROR_INTERNAL,
             "in ensemble '%s', step %u: model '%s' released the request without an "
             "answer",
             m->name, x->index, m->ens->models[x->index]->name);
  }
  step_finish_if_done(m, x);
}

/* ---- requests to the ensemble ---- */

static void run_start(srv_model_t *m, TRITONBACKEND_Request *req) {
  srv_ensemble_t *e = m->ens;
  if (e->stopping) {
    srv_request_fail(req, TRITONSERVER_ERROR_UNAVAILABLE,
                     "model '%s' version %lld is unloading", m->name,
                     (long long)m->version);
    return;
  }
  ens_frame_t *root = frame_open(e, NULL, 0);
  ens_run_t *run = root->run;
  *run = (ens_run_t){.request = req, .model = m};
  req->ens_run = run;
  e->runs++;
  unwatched_add(m, run);
  /* The ensemble's inputs are tensors 0..n-1, in the config's order. */
  for (uint32_t t = 0; t < e->graph.input_count; t++) root->tensors[t].state = ENS_ABSENT;
  for (uint32_t i = 0; i < req->input_count; i++) {
    const TRITONBACKEND_Input *in = &req->inputs[i];
    uint32_t t = spec_index(m->inputs, m->input_count, in->name);
    if (t == m->input_count) continue; /* the frontend checked the names */
    root->tensors[t] = (ens_value_t){
        .shape = in->shape,
        .dims_count = in->dims_count,
        .datatype = in->datatype,
        .byte_size = in->byte_size,
        .buffers = in->buffers,
        .buffer_count = in->buffer_count,
        .state = ENS_SET,
    };
  }
  frame_activate(m, root);
}

/* A cancel of the ensemble request (client cancel, deadline): its steps in
 * flight are cancelled and the run ends CANCELLED. The owner keeps req
 * until the cancel is back (model/README.md, "Cancelling a request"). */
static void run_cancel(srv_model_t *m, TRITONBACKEND_Request *req) {
  ens_run_t *run = req->ens_run;
  if (run != NULL)
    run_fail(m, run, TRITONSERVER_ERROR_CANCELLED,
             "request '%s' for ensemble '%s' was cancelled", req->id, m->name);
  req->cancel_msg.kind = SRV_MSG_INFER_CANCEL_DONE;
  act_send(req->state->owner, &req->cancel_msg);
}

static void handle(srv_model_t *m, act_msg_t *msg) {
  srv_ensemble_t *e = m->ens;
  switch (msg->kind) {
    case SRV_MODEL_REQUEST:
      run_start(m, (TRITONBACKEND_Request *)msg);
      return;
    case SRV_MODEL_TIMER:
      m->timer_at = 0;
      m->timer_flying = false;
      unwatched_sweep(m);
      if (e->stopping && e->runs == 0) srv_scheduler_close(m);
      return;
    case SRV_MODEL_CANCEL:
      run_cancel(m,
                 (TRITONBACKEND_Request *)((char *)msg -
                                           offsetof(TRITONBACKEND_Request, cancel_msg)));
      return;
    case SRV_MSG_INFER_RESPONSE:
      step_response(m, (TRITONBACKEND_Response *)msg);
      return;
    case SRV_MSG_INFER_FINAL_FLAGS:
      step_final_flags(m, (srv_final_msg_t *)msg);
      return;
    case SRV_MSG_INFER_RELEASED:
      step_released(m, (ens_step_t *)msg); /* the request is the step's first field */
      return;
    case SRV_MSG_INFER_CANCEL_DONE:
      step_finish_if_done(m, (ens_step_t *)srv_request_cancel_back(msg));
      return;
    case SRV_MODEL_STOP:
      e->stopping = true;
      if (e->runs == 0) srv_scheduler_close(m);
      return;
    case SRV_MODEL_STOP_RETRY:
      m->retry_sent = false;
      if (e->runs == 0) srv_scheduler_close(m);
      return;
    default:
      SRV_FATAL("ensemble '%s': unexpected message kind %u", m->name, msg->kind);
  }
}

void srv_ensemble_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_model_t *m = act_actor_state(self);
  if (msg->kind == SRV_MODEL_STOPPED) {
    /* The runtime never touches the actor after this: the waiter may free m. */
    sem_post(&m->stopped);
    return;
  }
  handle(m, msg);
  checks_run(m);
}
