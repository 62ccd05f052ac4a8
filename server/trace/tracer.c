/* The tracer (see tracer.h): settings in place as relaxed atomics, so that
 * sampling reads them without a lock and nothing is ever reclaimed under a
 * reader; updates are serialized by `mu`. A model's slot, once made, stays
 * until shutdown (at most SRV_TRACE_MODELS_MAX), published by a release
 * store of `slot_count`. */
#include "server/trace/tracer.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/trace/trace_record.h"
#include "server/trace/trace_writer.h"

/* One setting: the global one, or a model's values where `specified`
 * says so (the global one's otherwise). */
typedef struct {
  char *name;                 /* NULL for the global slot */
  _Atomic uint32_t specified; /* SRV_TRACE_F_* */
  _Atomic uint32_t level, rate, log_frequency;
  _Atomic int32_t count;
  /* Requests counted for sampling: written by the model's requests alone,
   * on a line of its own. */
  _Alignas(64) _Atomic uint64_t seen;
} slot_t;

struct srv_tracer {
  _Atomic bool on;            /* first: srv_tracer_on reads it through the pointer */
  pthread_mutex_t mu;         /* updates */
  srv_trace_config_t initial; /* what clearing a global value restores */
  char *file;
  srv_trace_writer_t *writer;
  slot_t global;
  slot_t *slots[SRV_TRACE_MODELS_MAX];
  _Atomic uint32_t slot_count;
};

_Static_assert(offsetof(struct srv_tracer, on) == 0,
               "srv_tracer_on reads the first field");

srv_status_t *srv_tracer_new(const srv_trace_config_t *c, srv_tracer_t **out) {
  srv_tracer_t *tr = aligned_alloc(64, sizeof *tr); /* slot_t's counter line */
  if (tr == NULL) SRV_FATAL("out of memory");
  memset(tr, 0, sizeof *tr);
  pthread_mutex_init(&tr->mu, NULL);
  tr->initial = *c;
  tr->initial.file = NULL;
  tr->file = srv_strdup(c->file != NULL ? c->file : "");
  if (c->file != NULL) {
    srv_status_t *st = srv_trace_writer_start(c->file, &tr->writer);
    if (st != NULL) {
      free(tr->file);
      pthread_mutex_destroy(&tr->mu);
      free(tr);
      return st;
    }
  }
  atomic_init(&tr->global.level, c->level);
  atomic_init(&tr->global.rate, c->rate);
  atomic_init(&tr->global.count, c->count);
  atomic_init(&tr->global.log_frequency, c->log_frequency);
  atomic_init(&tr->global.specified, 0);
  atomic_init(&tr->global.seen, 0);
  atomic_init(&tr->slot_count, 0);
  bool on = c->level != 0 && c->file != NULL && c->count != 0;
  atomic_init(&tr->on, on);
  if (c->level != 0 && c->file == NULL)
    SRV_WARN(
        "tracing is on (level) but no trace file is named "
        "(--trace-config triton,file=<path>): nothing is traced");
  *out = tr;
  return NULL;
}

void srv_tracer_free(srv_tracer_t *tr) {
  if (tr == NULL) return;
  if (tr->writer != NULL) srv_trace_writer_stop(tr->writer);
  uint32_t n = atomic_load_explicit(&tr->slot_count, memory_order_relaxed);
  for (uint32_t i = 0; i < n; i++) {
    free(tr->slots[i]->name);
    free(tr->slots[i]);
  }
  free(tr->file);
  pthread_mutex_destroy(&tr->mu);
  free(tr);
}

/* The model's slot, or NULL. Lock-free: slots are published whole. */
static slot_t *slot_find(srv_tracer_t *tr, const char *model) {
  /* Acquire: pairs with slot_add's release; the slot's name is set. */
  uint32_t n = atomic_load_explicit(&tr->slot_count, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(tr->slots[i]->name, model) == 0) return tr->slots[i];
  return NULL;
}

/* Which slot holds field f for `s`: its own when specified, else the
 * global one. Relaxed: each field is read alone. */
static slot_t *owner(srv_tracer_t *tr, slot_t *s, uint32_t f) {
  if (s == NULL) return &tr->global;
  return atomic_load_explicit(&s->specified, memory_order_relaxed) & f ? s : &tr->global;
}

#define FIELD(tr, s, f, name) \
  atomic_load_explicit(&owner(tr, s, f)->name, memory_order_relaxed)

static srv_status_t *slot_add(srv_tracer_t *tr, const char *model, slot_t **out);

/* The model's slot, made on its first sampled-for request with no setting
 * of its own (specified 0: it follows the global one), so that each model
 * counts its own requests: the sampling counter is written only by that
 * model's requests. NULL at SRV_TRACE_MODELS_MAX (the global counter
 * serves the rest, and the caller stops asking). Takes mu once per model
 * name. */
static slot_t *slot_make(srv_tracer_t *tr, const char *model) {
  pthread_mutex_lock(&tr->mu);
  slot_t *s = slot_find(tr, model);
  if (s == NULL) {
    srv_status_t *st = slot_add(tr, model, &s);
    if (st != NULL) {
      srv_status_free(st);
      s = NULL;
    }
  }
  pthread_mutex_unlock(&tr->mu);
  return s;
}

/* One trace off count, unless it is spent; -1 is no limit. */
static bool count_take(_Atomic int32_t *count) {
  /* Relaxed: only the count itself is at stake; the CAS keeps it exact. */
  int32_t c = atomic_load_explicit(count, memory_order_relaxed);
  while (c != -1) {
    if (c <= 0) return false;
    if (atomic_compare_exchange_weak_explicit(count, &c, c - 1, memory_order_relaxed,
                                              memory_order_relaxed))
      return true;
  }
  return true;
}

srv_trace_t *srv_tracer_sample(srv_tracer_t *tr, const char *model) {
  if (tr->writer == NULL) return NULL;
  slot_t *s = slot_find(tr, model);
  /* Relaxed: at the limit no slot can be made; a stale count only means
   * one more try under the mutex. */
  if (s == NULL &&
      atomic_load_explicit(&tr->slot_count, memory_order_relaxed) < SRV_TRACE_MODELS_MAX)
    s = slot_make(tr, model);
  uint32_t level = FIELD(tr, s, SRV_TRACE_F_LEVEL, level);
  uint32_t rate = FIELD(tr, s, SRV_TRACE_F_RATE, rate);
  if (level == 0 || rate == 0) return NULL;
  /* Relaxed: a counter alone; every rate-th request of the model. */
  _Atomic uint64_t *seen = s != NULL ? &s->seen : &tr->global.seen;
  if ((atomic_fetch_add_explicit(seen, 1, memory_order_relaxed) + 1) % rate != 0)
    return NULL;
  if (!count_take(&owner(tr, s, SRV_TRACE_F_COUNT)->count)) return NULL;
  uint32_t freq = FIELD(tr, s, SRV_TRACE_F_LOG_FREQUENCY, log_frequency);
  srv_trace_t *t = srv_trace_alloc(level, 0);
  t->record = srv_trace_record_new(tr->writer, freq);
  return t;
}

void srv_tracer_get(srv_tracer_t *tr, const char *model, srv_trace_view_t *out) {
  slot_t *s = model != NULL ? slot_find(tr, model) : NULL;
  out->level = FIELD(tr, s, SRV_TRACE_F_LEVEL, level);
  out->rate = FIELD(tr, s, SRV_TRACE_F_RATE, rate);
  out->count = FIELD(tr, s, SRV_TRACE_F_COUNT, count);
  out->log_frequency = FIELD(tr, s, SRV_TRACE_F_LOG_FREQUENCY, log_frequency);
  out->file = tr->file;
}

/* The values an update leaves in force, before any is stored. */
typedef struct {
  uint32_t specified, level, rate, log_frequency;
  int32_t count;
} values_t;

static void values_merge(srv_tracer_t *tr, slot_t *s, bool global,
                         const srv_trace_update_t *u, values_t *v) {
  v->specified =
      s != NULL ? atomic_load_explicit(&s->specified, memory_order_relaxed) : 0;
  v->specified = (v->specified | u->given) & ~u->cleared;
  const srv_trace_config_t *init = &tr->initial;
  /* A global value cleared goes back to the flags'; a model's follows the
   * global one again (its own value no longer matters). */
#define PICK(F, name, initv)                                                 \
  v->name = (u->given & F)     ? u->name                                     \
            : (u->cleared & F) ? (global ? initv : FIELD(tr, NULL, F, name)) \
                               : FIELD(tr, s, F, name)
  PICK(SRV_TRACE_F_LEVEL, level, init->level);
  PICK(SRV_TRACE_F_RATE, rate, init->rate);
  PICK(SRV_TRACE_F_COUNT, count, init->count);
  PICK(SRV_TRACE_F_LOG_FREQUENCY, log_frequency, init->log_frequency);
#undef PICK
  if (global) v->specified = 0;
}

/* Triton's rule: only a setting that turns tracing off may be invalid. */
static srv_status_t *values_check(srv_tracer_t *tr, const values_t *v, bool global) {
  uint32_t level = global || (v->specified & SRV_TRACE_F_LEVEL)
                       ? v->level
                       : FIELD(tr, NULL, SRV_TRACE_F_LEVEL, level);
  uint32_t rate = global || (v->specified & SRV_TRACE_F_RATE)
                      ? v->rate
                      : FIELD(tr, NULL, SRV_TRACE_F_RATE, rate);
  if (level == 0) return NULL;
  if (rate == 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "invalid trace setting: trace_rate must be non-zero while "
                          "tracing is on");
  if (tr->writer == NULL)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "invalid trace setting: no trace file is named (the server "
                          "starts with --trace-config triton,file=<path>)");
  return NULL;
}

static srv_status_t *slot_add(srv_tracer_t *tr, const char *model, slot_t **out) {
  uint32_t n = atomic_load_explicit(&tr->slot_count, memory_order_relaxed);
  if (n == SRV_TRACE_MODELS_MAX)
    return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                          "trace settings of model '%s': %u models have settings of "
                          "their own already, the limit",
                          model, SRV_TRACE_MODELS_MAX);
  slot_t *s = aligned_alloc(64, sizeof *s);
  if (s == NULL) SRV_FATAL("out of memory");
  memset(s, 0, sizeof *s);
  s->name = srv_strdup(model);
  tr->slots[n] = s;
  /* Release: a sampler that sees the count sees the slot whole. */
  atomic_store_explicit(&tr->slot_count, n + 1, memory_order_release);
  *out = s;
  return NULL;
}

/* Whether any setting may sample now (srv_tracer_on). Under mu. */
static bool any_on(srv_tracer_t *tr) {
  if (tr->writer == NULL) return false;
  if (atomic_load_explicit(&tr->global.level, memory_order_relaxed) != 0) return true;
  uint32_t n = atomic_load_explicit(&tr->slot_count, memory_order_relaxed);
  for (uint32_t i = 0; i < n; i++) {
    slot_t *s = tr->slots[i];
    if ((atomic_load_explicit(&s->specified, memory_order_relaxed) & SRV_TRACE_F_LEVEL) &&
        atomic_load_explicit(&s->level, memory_order_relaxed) != 0)
      return true;
  }
  return false;
}

srv_status_t *srv_tracer_update(srv_tracer_t *tr, const char *model,
                                const srv_trace_update_t *u) {
  pthread_mutex_lock(&tr->mu);
  bool global = model == NULL;
  slot_t *s = global ? &tr->global : slot_find(tr, model);
  values_t v;
  values_merge(tr, global ? NULL : s, global, u, &v);
  srv_status_t *st = values_check(tr, &v, global);
  if (st == NULL && s == NULL && v.specified != 0) st = slot_add(tr, model, &s);
  if (st == NULL && s != NULL) {
    /* Relaxed: each field stands alone (tracer.h). Values before
     * `specified`, so a model's new own value is there when it counts. */
    atomic_store_explicit(&s->level, v.level, memory_order_relaxed);
    atomic_store_explicit(&s->rate, v.rate, memory_order_relaxed);
    atomic_store_explicit(&s->count, v.count, memory_order_relaxed);
    atomic_store_explicit(&s->log_frequency, v.log_frequency, memory_order_relaxed);
    atomic_store_explicit(&s->specified, v.specified, memory_order_release);
  }
  /* Relaxed: srv_tracer_on is a hint (tracer.h). */
  if (st == NULL) atomic_store_explicit(&tr->on, any_on(tr), memory_order_relaxed);
  pthread_mutex_unlock(&tr->mu);
  return st;
}
