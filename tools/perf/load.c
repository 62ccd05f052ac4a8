/* The load's workers (see load.h): threads, their event loop, the open
 * loop's schedule, and the windows they record into. */
#include <grpc/support/time.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/perf/load_internal.h"
#include "tools/perf/rpc.h"

/* How long a worker waits for an event before it looks at the stop flag. */
#define POLL_NS 50000000

static unsigned min_u(unsigned a, unsigned b) { return a < b ? a : b; }

bool perf_load_plan(const perf_options_t *o, unsigned concurrency, double rate,
                    perf_load_config_t *cfg, perf_err_t *err) {
  bool streams = o->mode == PERF_STREAM || o->mode == PERF_DECOUPLED;
  cfg->mode = o->mode;
  cfg->concurrency = concurrency;
  cfg->rate = rate;
  cfg->poisson = o->poisson;
  cfg->max_inflight = o->max_inflight;
  cfg->seed = o->seed;
  cfg->threads = o->threads;
  cfg->streams = 0;
  if (o->inflight > 0 && o->mode == PERF_UNARY_SYNC)
    return perf_fail(err, "--inflight is for unary-async, stream and decoupled modes");
  if (o->inflight > 0 && o->mode == PERF_UNARY_ASYNC && o->connections > 0)
    return perf_fail(err, "unary-async: give --connections or --inflight, not both");
  if (cfg->sequences) {
    cfg->seq.lanes = concurrency ? concurrency : o->num_sequences;
    if (!perf_seq_plan_check(
            &cfg->seq, concurrency ? "--concurrency-range" : "--num-of-sequences", err))
      return false;
  }
  if (concurrency == 0) { /* open loop */
    if (o->inflight > 0)
      return perf_fail(err,
                       "--inflight applies to --concurrency-range, not request rates");
    cfg->connections = o->connections ? o->connections : 4;
    if (cfg->sequences) /* a worker, and a stream, without a lane would idle */
      cfg->threads = min_u(cfg->threads, cfg->seq.lanes);
    if (streams)
      cfg->streams = cfg->connections > cfg->threads ? cfg->connections : cfg->threads;
    if (streams && cfg->sequences) cfg->streams = min_u(cfg->streams, cfg->seq.lanes);
    return true;
  }
  unsigned lanes = o->inflight ? (concurrency + o->inflight - 1) / o->inflight : 0;
  if (o->mode == PERF_UNARY_SYNC) {
    cfg->connections = o->connections ? o->connections : min_u(concurrency, 4);
    cfg->threads = concurrency; /* a worker per client, each with one call */
  } else if (o->mode == PERF_UNARY_ASYNC) {
    cfg->connections = lanes            ? lanes
                       : o->connections ? o->connections
                                        : min_u(concurrency, 4);
    cfg->threads = min_u(o->threads, concurrency);
  } else {
    cfg->streams = lanes            ? lanes
                   : o->connections ? o->connections
                                    : min_u(concurrency, 4);
    cfg->connections = o->connections ? o->connections : min_u(cfg->streams, 4);
    cfg->threads = min_u(o->threads, cfg->streams);
  }
  return true;
}

void perf_worker_ok(perf_worker_t *w, uint64_t latency_ns, bool ended) {
  pthread_mutex_lock(&w->mu);
  perf_hist_record(&w->win.latency, latency_ns);
  w->win.completed++;
  w->win.sequences += ended;
  pthread_mutex_unlock(&w->mu);
}

void perf_worker_error(perf_worker_t *w, const char *msg, size_t len) {
  pthread_mutex_lock(&w->mu);
  w->win.failed++;
  perf_errors_add(&w->win.errors, msg, len, 1);
  pthread_mutex_unlock(&w->mu);
}

void perf_worker_status_error(perf_worker_t *w, grpc_status_code code,
                              const grpc_slice *details) {
  char text[600];
  size_t dl = GRPC_SLICE_LENGTH(*details);
  int n =
      snprintf(text, sizeof text, "%s: %.*s", perf_status_name(code),
               (int)(dl < 500 ? dl : 500), (const char *)GRPC_SLICE_START_PTR(*details));
  perf_worker_error(w, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

void perf_worker_responses(perf_worker_t *w, uint64_t n) {
  pthread_mutex_lock(&w->mu);
  w->win.responses += n;
  pthread_mutex_unlock(&w->mu);
}

/* Open loop: a request left late_ns after its time. */
static void worker_sent(perf_worker_t *w, uint64_t late_ns, bool delayed) {
  pthread_mutex_lock(&w->mu);
  w->win.sends++;
  w->win.send_late_sum_ns += late_ns;
  if (late_ns > w->win.send_late_max_ns) w->win.send_late_max_ns = late_ns;
  if (delayed) w->win.delayed++;
  pthread_mutex_unlock(&w->mu);
}

grpc_slice perf_worker_next_body(perf_worker_t *w) {
  const perf_requests_t *r = w->load->cfg.requests;
  grpc_slice body = grpc_slice_ref(r->bodies[w->next_request]);
  w->next_request = (w->next_request + 1) % r->n;
  return body;
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}

static uint64_t next_gap(perf_worker_t *w) {
  if (!w->load->cfg.poisson) return (uint64_t)w->gap_ns;
  double u = ((double)(rng_next(&w->rng) >> 11) + 0.5) / (double)(1ull << 53);
  return (uint64_t)(-log(u) * w->gap_ns);
}

void perf_worker_seq_step(perf_worker_t *w, perf_seq_t *seq) {
  if (w->stopping) perf_seq_end_next(seq);
  perf_seq_advance(seq, &w->load->cfg.seq, &w->rng);
}

bool perf_worker_seq_goes_on(const perf_worker_t *w, const perf_seq_t *seq) {
  return !w->stopping || (perf_seq_open(seq) && !w->cancelled);
}

void perf_worker_lane_idle(perf_worker_t *w, perf_seq_t *seq) {
  seq->next_idle = NULL;
  if (w->idle_tail)
    w->idle_tail->next_idle = seq;
  else
    w->idle_head = seq;
  w->idle_tail = seq;
}

static perf_seq_t *lane_take(perf_worker_t *w) {
  perf_seq_t *seq = w->idle_head;
  if (seq == NULL) PERF_FATAL("no idle sequence within --num-of-sequences");
  w->idle_head = seq->next_idle;
  if (w->idle_head == NULL) w->idle_tail = NULL;
  return seq;
}

/* Open loop: one request, scheduled at `at`, on the worker's next call or
 * stream; in sequence mode, lane seq's next step, on its stream. */
static void send_on(perf_worker_t *w, uint64_t at, perf_seq_t *seq) {
  perf_load_t *l = w->load;
  if (w->nstreams > 0) {
    size_t k = w->next_stream;
    if (seq != NULL)
      k = seq->stream; /* a sequence keeps to one stream */
    else
      w->next_stream = (w->next_stream + 1) % w->nstreams;
    perf_stream_enqueue(&w->streams[k], at, seq);
    return;
  }
  unsigned channel = (unsigned)(w->next_channel++ % l->cfg.connections);
  perf_unary_t *u = w->free_unary;
  if (u != NULL) {
    w->free_unary = u->next_free;
    u->channel = channel; /* idle calls keep no connection: spread the sends */
  } else {
    u = perf_unary_new(w, channel);
    if (w->nunary == w->unary_cap) {
      w->unary_cap = w->unary_cap ? w->unary_cap * 2 : 64;
      w->unary = perf_realloc(w->unary, w->unary_cap * sizeof *w->unary);
    }
    w->unary[w->nunary++] = u;
  }
  u->seq = seq;
  perf_unary_start(u, at);
}

/* Open loop: the scheduled request at `at`; in sequence mode, the next
 * step of the lane idle longest (the cap keeps one idle). */
static void send_one(perf_worker_t *w, uint64_t at) {
  send_on(w, at, w->load->cfg.sequences ? lane_take(w) : NULL);
}

void perf_worker_lane_done(perf_worker_t *w, perf_seq_t *seq, uint64_t now) {
  if (w->stopping && perf_worker_seq_goes_on(w, seq))
    send_on(w, now, seq);
  else
    perf_worker_lane_idle(w, seq);
}

/* Open loop, the load stops: idle lanes whose sequence is open send its END. */
static void lanes_end_idle(perf_worker_t *w) {
  perf_seq_t *idle = w->idle_head;
  w->idle_head = w->idle_tail = NULL;
  uint64_t now = perf_now_ns();
  while (idle != NULL) {
    perf_seq_t *next = idle->next_idle;
    perf_worker_lane_done(w, idle, now);
    idle = next;
  }
}

/* Open loop: sends every request whose time has come, as far as the cap
 * allows; a request held back by the cap counts as delayed. Worker thread;
 * the pacer learns the new schedule. */
static void send_due(perf_worker_t *w) {
  if (w->stopping) return;
  uint64_t now = perf_now_ns(), next = w->next_send_ns;
  bool capped = w->capped;
  while (next <= now) {
    if (w->inflight >= w->max_inflight) break;
    worker_sent(w, perf_now_ns() - next, capped);
    send_one(w, next);
    next += next_gap(w);
  }
  bool still_capped = next <= now;
  if (next != w->next_send_ns || still_capped != w->capped)
    perf_pacer_update(w, next, still_capped);
}

void perf_worker_request_done(perf_worker_t *w) {
  if (w->load->cfg.concurrency == 0) send_due(w);
}

static void dispatch(void *tag, bool ok) {
  perf_tag_t *t = tag;
  if (t->kind == TAG_UNARY)
    perf_unary_done(t->owner, ok);
  else if (t->kind == TAG_DOORBELL)
    perf_doorbell_done(t->owner);
  else
    perf_stream_event(t->owner, t, ok);
}

/* Sees the stop flag; after PERF_DRAIN_NS, cancels what is still in flight. */
static void check_stop(perf_worker_t *w) {
  uint64_t now = perf_now_ns();
  /* Acquire: pairs with perf_load_stop's release (nothing else is published). */
  if (!w->stopping && atomic_load_explicit(&w->load->stop, memory_order_acquire)) {
    if (w->load->cfg.concurrency == 0)
      perf_pacer_stop(w); /* the doorbell goes too */
    else
      w->stopping = true;
    w->stop_ns = now;
    if (w->load->cfg.concurrency == 0 && w->load->cfg.sequences) lanes_end_idle(w);
    for (size_t i = 0; i < w->nstreams; i++) perf_stream_wind_down(&w->streams[i]);
  }
  if (w->stopping && !w->cancelled && now - w->stop_ns > PERF_DRAIN_NS) {
    w->cancelled = true;
    for (size_t i = 0; i < w->nunary; i++)
      if (w->unary[i]->call != NULL) grpc_call_cancel(w->unary[i]->call, NULL);
    for (size_t i = 0; i < w->nstreams; i++) perf_stream_cancel(&w->streams[i]);
  }
}

static bool idle(const perf_worker_t *w) {
  if (w->inflight > 0 || w->doorbell != NULL) return false;
  for (size_t i = 0; i < w->nstreams; i++)
    if (!perf_stream_closed(&w->streams[i])) return false;
  return true;
}

static void *worker_main(void *arg) {
  perf_worker_t *w = arg;
  bool open_loop = w->load->cfg.concurrency == 0;
  uint64_t now = perf_now_ns();
  if (open_loop) perf_doorbell_arm(w);
  for (size_t i = 0; i < w->nstreams; i++) perf_stream_open(&w->streams[i]);
  for (size_t i = 0; !open_loop && i < w->nunary; i++) perf_unary_start(w->unary[i], now);
  for (;;) {
    check_stop(w);
    if (w->stopping && idle(w)) break;
    grpc_event ev;
    if (open_loop) send_due(w);
    if (open_loop && perf_pacer_send_is_near(w)) {
      ev = grpc_completion_queue_next(w->cq, gpr_inf_past(GPR_CLOCK_MONOTONIC), NULL);
    } else {
      if (open_loop) perf_pacer_sleeping(w, true);
      ev = grpc_completion_queue_next(w->cq, perf_deadline_in(POLL_NS), NULL);
      if (open_loop) perf_pacer_sleeping(w, false);
    }
    if (ev.type == GRPC_OP_COMPLETE) dispatch(ev.tag, ev.success);
  }
  grpc_completion_queue_shutdown(w->cq);
  while (
      grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
      GRPC_QUEUE_SHUTDOWN) {
  }
  return NULL;
}

static void channels_create(perf_load_t *l) {
  unsigned k = l->cfg.connections;
  l->channels = perf_calloc(k, sizeof *l->channels);
  l->infer_method = perf_calloc(k, sizeof *l->infer_method);
  l->stream_method = perf_calloc(k, sizeof *l->stream_method);
  for (unsigned c = 0; c < k; c++) {
    l->channels[c] = perf_channel_create(l->cfg.url);
    l->infer_method[c] = grpc_channel_register_call(
        l->channels[c], PERF_METHOD_PREFIX "ModelInfer", NULL, NULL);
    l->stream_method[c] = grpc_channel_register_call(
        l->channels[c], PERF_METHOD_PREFIX "ModelStreamInfer", NULL, NULL);
  }
}

/* Hands out the closed loop's calls, or the streams, round-robin over
 * workers and channels; sets the open loop's schedule. */
static void workers_assign(perf_load_t *l) {
  const perf_load_config_t *c = &l->cfg;
  unsigned t = c->threads;
  for (unsigned s = 0; s < c->streams; s++) l->workers[s % t].nstreams++;
  for (unsigned i = 0; i < t; i++) {
    perf_worker_t *w = &l->workers[i];
    w->streams = w->nstreams ? perf_calloc(w->nstreams, sizeof *w->streams) : NULL;
    w->nstreams = 0;
  }
  for (unsigned s = 0; s < c->streams; s++) {
    perf_worker_t *w = &l->workers[s % t];
    unsigned depth = 0;
    if (c->concurrency > 0)
      depth = c->concurrency / c->streams + (s < c->concurrency % c->streams ? 1 : 0);
    perf_stream_init(&w->streams[w->nstreams++], w, s % c->connections, depth);
  }
  if (c->streams == 0 && c->concurrency > 0) {
    for (unsigned i = 0; i < c->concurrency; i++) {
      perf_worker_t *w = &l->workers[i % t];
      if (w->nunary == w->unary_cap) {
        w->unary_cap = w->unary_cap ? w->unary_cap * 2 : 8;
        w->unary = perf_realloc(w->unary, w->unary_cap * sizeof *w->unary);
      }
      w->unary[w->nunary++] = perf_unary_new(w, i % c->connections);
    }
  }
  uint64_t start = perf_now_ns();
  for (unsigned i = 0; c->concurrency == 0 && i < t; i++) {
    perf_worker_t *w = &l->workers[i];
    w->gap_ns = 1e9 * t / c->rate;
    w->max_inflight = c->max_inflight / t ? c->max_inflight / t : 1;
    w->next_channel = i;
    /* Constant spacing: the workers' sends interleave evenly. */
    w->next_send_ns = start + (c->poisson ? next_gap(w) : (uint64_t)(w->gap_ns * i / t));
  }
}

/* Sequence mode: the workers' lanes, indexed over the load (which sets
 * their ids): one per closed-loop call or stream request slot, or the open
 * loop's --num-of-sequences spread over the workers, each bound to one of
 * its worker's streams and idle to begin with. */
static void lanes_assign(perf_load_t *l) {
  const perf_load_config_t *c = &l->cfg;
  unsigned t = c->threads;
  uint32_t index = 0;
  for (unsigned i = 0; i < t; i++) {
    perf_worker_t *w = &l->workers[i];
    w->nseqs = c->seq.lanes / t + (i < c->seq.lanes % t ? 1 : 0);
    if (c->concurrency > 0) {
      w->nseqs = w->nunary;
      for (size_t k = 0; k < w->nstreams; k++) w->nseqs += w->streams[k].depth;
    }
    w->seqs = perf_calloc(w->nseqs, sizeof *w->seqs);
    for (size_t k = 0; k < w->nseqs; k++) perf_seq_init(&w->seqs[k], index++);
    size_t next = 0;
    for (size_t k = 0; c->concurrency > 0 && k < w->nunary; k++)
      w->unary[k]->seq = &w->seqs[next++];
    for (size_t k = 0; c->concurrency > 0 && k < w->nstreams; k++) {
      w->streams[k].lanes = &w->seqs[next];
      next += w->streams[k].depth;
    }
    for (size_t k = 0; c->concurrency == 0 && k < w->nseqs; k++) {
      w->seqs[k].stream = w->nstreams ? (uint32_t)(k % w->nstreams) : 0;
      perf_worker_lane_idle(w, &w->seqs[k]);
    }
    if (c->concurrency == 0 && w->max_inflight > w->nseqs) w->max_inflight = w->nseqs;
  }
  if (index != c->seq.lanes) PERF_FATAL("%u sequence lanes for %u", index, c->seq.lanes);
}

perf_load_t *perf_load_start(const perf_load_config_t *cfg) {
  perf_load_t *l = perf_calloc(1, sizeof *l);
  l->cfg = *cfg;
  atomic_init(&l->stop, false);
  channels_create(l);
  l->workers = perf_calloc(cfg->threads, sizeof *l->workers);
  for (unsigned i = 0; i < cfg->threads; i++) {
    perf_worker_t *w = &l->workers[i];
    w->load = l;
    w->index = i;
    w->cq = grpc_completion_queue_create_for_next(NULL);
    w->next_request = i % cfg->requests->n;
    w->rng = (cfg->seed + 1) * 0x9E3779B97F4A7C15ull + i;
    pthread_mutex_init(&w->mu, NULL);
    if (cfg->concurrency == 0) perf_pacer_init(w);
    perf_window_init(&w->win);
  }
  workers_assign(l);
  if (cfg->sequences) lanes_assign(l);
  for (unsigned i = 0; i < cfg->threads; i++) {
    perf_worker_t *w = &l->workers[i];
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0 ||
        (cfg->concurrency == 0 &&
         pthread_create(&w->pacer, NULL, perf_pacer_main, w) != 0))
      PERF_FATAL("pthread_create failed (worker %u of %u)", i, cfg->threads);
  }
  return l;
}

void perf_load_collect(perf_load_t *l, perf_window_t *into) {
  perf_window_reset(into);
  for (unsigned i = 0; i < l->cfg.threads; i++) {
    perf_worker_t *w = &l->workers[i];
    pthread_mutex_lock(&w->mu);
    perf_window_merge(into, &w->win);
    perf_window_reset(&w->win);
    pthread_mutex_unlock(&w->mu);
  }
}

void perf_load_stop(perf_load_t *l) {
  /* Release: see check_stop. */
  atomic_store_explicit(&l->stop, true, memory_order_release);
  for (unsigned i = 0; i < l->cfg.threads; i++) {
    if (l->cfg.concurrency == 0) perf_pacer_wake(&l->workers[i]);
  }
  for (unsigned i = 0; i < l->cfg.threads; i++) {
    if (l->cfg.concurrency == 0) pthread_join(l->workers[i].pacer, NULL);
    pthread_join(l->workers[i].thread, NULL);
  }
}

void perf_load_free(perf_load_t *l) {
  for (unsigned i = 0; i < l->cfg.threads; i++) {
    perf_worker_t *w = &l->workers[i];
    for (size_t k = 0; k < w->nunary; k++) perf_unary_free(w->unary[k]);
    free(w->unary);
    for (size_t k = 0; k < w->nstreams; k++) perf_stream_destroy(&w->streams[k]);
    free(w->streams);
    free(w->seqs);
    grpc_completion_queue_destroy(w->cq);
    pthread_mutex_destroy(&w->mu);
    if (l->cfg.concurrency == 0) perf_pacer_destroy(w);
    perf_window_reset(&w->win);
  }
  free(l->workers);
  for (unsigned c = 0; c < l->cfg.connections; c++) grpc_channel_destroy(l->channels[c]);
  free(l->channels);
  free(l->infer_method);
  free(l->stream_method);
  free(l);
}
