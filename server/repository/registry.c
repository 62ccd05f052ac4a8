/* The published views of the models (see registry.h). Readers: any thread,
 * inside an epoch section. Writer: the repository actor, one at a time. */
#include "server/repository/registry.h"
#include "server/model/model.h"
#include "server/repository/repo_scan.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "actors/epoch.h"
#include "server/common/log.h"
#include "server/common/memory.h"

struct srv_registry_view {
  act_epoch_entry_t retired;     /* first: the epoch callback gets this */
  srv_registry_entry_t *entries; /* sorted by name, then namespace */
  size_t count;
  /* Some name has several entries (namespaces): lookups by name alone
   * check for ambiguity. Never set without --model-namespacing, so the
   * plain lookup costs this one test. */
  bool shared_names;
  /* open addressing: index + 1 into entries, 0 = empty; a shared name
   * holds its first entry only */
  size_t *table;
  size_t table_size;
  srv_model_t **leaving; /* models to unref when this view is reclaimed */
  size_t leaving_count;
  srv_registry_t *owner;
  uint64_t serial; /* view_serial's number for it: no other view has it */
};

struct srv_registry {
  /* seq_cst store and load: with the epoch's seq_cst announcement this is
   * the store/load pair that lets the writer know a reader that missed the
   * new view is visible to it (see actors/epoch.h). */
  _Atomic(srv_registry_view_t *) current;
  act_epoch_t *epoch;
  bool closing; /* srv_registry_free runs: the models are gone */
};

/* Numbers the views of every registry, so that a thread's memo of one
 * (below) never matches another: a new view may be allocated where a
 * reclaimed one was, and tests run several registries. */
static _Atomic uint64_t view_serial;

/* A thread's last lookup by name (srv_registry_acquire): the view it was
 * in and the entry it found. Only that view's own readers use the index:
 * requests mostly name the model the thread's last request named, whose
 * entry is then checked by name alone, without the hash and the probe
 * (issue 21). Initial-exec: see ACT_TLS_INITIAL_EXEC in actors/base.h. */
typedef struct {
  uint64_t serial;
  size_t index;
} lookup_memo_t;
static _Thread_local lookup_memo_t lookup_memo __attribute__((tls_model("initial-exec")));

const char *srv_model_state_name(srv_model_state_t s) {
  switch (s) {
    case SRV_MODEL_STATE_LOADING:
      return "LOADING";
    case SRV_MODEL_STATE_READY:
      return "READY";
    case SRV_MODEL_STATE_UNLOADING:
      return "UNLOADING";
    case SRV_MODEL_STATE_UNAVAILABLE:
      return "UNAVAILABLE";
    case SRV_MODEL_STATE_UNKNOWN:
      break;
  }
  return "";
}

bool srv_model_state_is_unloaded(srv_model_state_t state, const char *reason,
                                 size_t version_count) {
  if (state == SRV_MODEL_STATE_UNKNOWN) return true;
  return state == SRV_MODEL_STATE_UNAVAILABLE && version_count == 0 && reason != NULL &&
         strcmp(reason, SRV_MODEL_REASON_UNLOADED) == 0;
}

static uint64_t name_hash(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* Whether the NUL-terminated `s` is the `len` bytes at `name`, which may
 * hold a NUL: byte by byte, reading s no further than its own end. Model
 * names are short: strnlen and memcmp calls cost more (issue 21). */
static bool name_is(const char *s, const char *name, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (s[i] != name[i] || s[i] == '\0') return false;
  return s[len] == '\0';
}

static int entry_cmp(const void *a, const void *b) {
  const srv_registry_entry_t *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c != 0 ? c : srv_repo_ns_cmp(x->ns, y->ns);
}

static void *array_copy(const void *from, size_t n, size_t size) {
  if (n == 0) return NULL;
  void *to = malloc(n * size);
  if (to == NULL) SRV_FATAL("out of memory");
  memcpy(to, from, n * size);
  return to;
}

static srv_registry_view_t *view_new(const srv_registry_entry_t *entries, size_t count) {
  srv_registry_view_t *v = calloc(1, sizeof *v);
  if (v == NULL) SRV_FATAL("out of memory");
  /* relaxed: a unique number; the view is published by `current`. */
  v->serial = atomic_fetch_add_explicit(&view_serial, 1, memory_order_relaxed) + 1;
  v->count = count;
  v->entries = calloc(count + 1, sizeof *v->entries);
  if (v->entries == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < count; i++) {
    const srv_registry_entry_t *from = &entries[i];
    srv_registry_entry_t *e = &v->entries[i];
    e->name = srv_strdup(from->name);
    e->ns = from->ns != NULL ? srv_strdup(from->ns) : NULL;
    e->state = from->state;
    e->reason = from->reason != NULL ? srv_strdup(from->reason) : NULL;
    e->version_count = from->version_count;
    e->versions = array_copy(from->versions, from->version_count, sizeof *e->versions);
    e->failure_count = from->failure_count;
    e->failures = array_copy(from->failures, from->failure_count, sizeof *e->failures);
    for (size_t f = 0; f < e->failure_count; f++)
      e->failures[f].reason = srv_strdup(from->failures[f].reason);
  }
  qsort(v->entries, count, sizeof *v->entries, entry_cmp);
  v->table_size = 16;
  while (v->table_size < 2 * count) v->table_size *= 2;
  v->table = calloc(v->table_size, sizeof *v->table);
  if (v->table == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < count; i++) {
    const char *name = v->entries[i].name;
    if (i > 0 && strcmp(v->entries[i - 1].name, name) == 0) {
      v->shared_names = true;
      continue;
    }
    size_t slot = name_hash(name, strlen(name)) & (v->table_size - 1);
    while (v->table[slot] != 0) slot = (slot + 1) & (v->table_size - 1);
    v->table[slot] = i + 1;
  }
  return v;
}

static void view_free(srv_registry_view_t *v, bool drop_models) {
  if (drop_models)
    for (size_t i = 0; i < v->leaving_count; i++) {
      srv_model_ref_fold(v->leaving[i]); /* a grace period after its unslice */
      srv_model_unref(v->leaving[i]);
    }
  free(v->leaving);
  for (size_t i = 0; i < v->count; i++) {
    srv_registry_entry_t *e = &v->entries[i];
    free(e->name);
    free(e->ns);
    free(e->reason);
    free(e->versions);
    for (size_t f = 0; f < e->failure_count; f++) free(e->failures[f].reason);
    free(e->failures);
  }
  free(v->entries);
  free(v->table);
  free(v);
}

/* Epoch callback: no reader can reach the view any more. */
static void view_reclaim(act_epoch_entry_t *retired) {
  srv_registry_view_t *v = (srv_registry_view_t *)retired;
  view_free(v, !v->owner->closing);
}

const srv_registry_entry_t *srv_registry_view_find(const srv_registry_view_t *v,
                                                   const char *name, size_t len) {
  /* No entry has an empty name, and an empty upb view may have data NULL,
   * which no str* or mem* function may be given. */
  if (name == NULL || len == 0) return NULL;
  size_t slot = name_hash(name, len) & (v->table_size - 1);
  for (; v->table[slot] != 0; slot = (slot + 1) & (v->table_size - 1)) {
    const srv_registry_entry_t *e = &v->entries[v->table[slot] - 1];
    if (name_is(e->name, name, len)) return e;
  }
  return NULL;
}

/* srv_registry_view_find through the thread's memo: the memo's entry when
 * it is of this view and has this name (the entry the find gave, as a
 * name's first entry is the one the table holds), else the find, which
 * then becomes the memo. Inside a read section of v. */
static const srv_registry_entry_t *view_find_memo(const srv_registry_view_t *v,
                                                  const char *name, size_t len) {
  if (lookup_memo.serial == v->serial) {
    const srv_registry_entry_t *e = &v->entries[lookup_memo.index];
    if (name_is(e->name, name, len)) return e;
  }
  const srv_registry_entry_t *e = srv_registry_view_find(v, name, len);
  if (e != NULL) lookup_memo = (lookup_memo_t){v->serial, (size_t)(e - v->entries)};
  return e;
}

/* The entry after `e` when it has the same name (another namespace). */
static const srv_registry_entry_t *same_name_next(const srv_registry_view_t *v,
                                                  const srv_registry_entry_t *e) {
  if (!v->shared_names || e + 1 == v->entries + v->count) return NULL;
  return strcmp(e[1].name, e->name) == 0 ? e + 1 : NULL;
}

const srv_registry_entry_t *srv_registry_view_find_ns(const srv_registry_view_t *v,
                                                      const char *ns, const char *name) {
  const srv_registry_entry_t *e = srv_registry_view_find(v, name, strlen(name));
  for (; e != NULL; e = same_name_next(v, e))
    if (srv_repo_ns_cmp(e->ns, ns) == 0) return e;
  return NULL;
}

const srv_registry_entry_t *srv_registry_view_find_model(const srv_registry_view_t *v,
                                                         const srv_model_t *m) {
  const srv_registry_entry_t *e = srv_registry_view_find(v, m->name, strlen(m->name));
  for (; e != NULL; e = same_name_next(v, e))
    for (size_t i = 0; i < e->version_count; i++)
      if (e->versions[i] == m) return e;
  return NULL;
}

static bool view_holds(const srv_registry_view_t *v, const srv_model_t *m) {
  return srv_registry_view_find_model(v, m) != NULL;
}

/* The models of `from` that `to` does not hold, into `out` (NULL: count). */
static size_t models_missing(const srv_registry_view_t *from,
                             const srv_registry_view_t *to, srv_model_t **out) {
  size_t n = 0;
  for (size_t i = 0; i < from->count; i++)
    for (size_t j = 0; j < from->entries[i].version_count; j++) {
      srv_model_t *m = from->entries[i].versions[j];
      if (view_holds(to, m)) continue;
      if (out != NULL) out[n] = m;
      n++;
    }
  return n;
}

srv_registry_t *srv_registry_new(void) {
  srv_registry_t *r = calloc(1, sizeof *r);
  if (r == NULL) SRV_FATAL("out of memory");
  r->epoch = act_epoch_new();
  atomic_init(&r->current, view_new(NULL, 0));
  return r;
}

void srv_registry_publish(srv_registry_t *r, const srv_registry_entry_t *entries,
                          size_t count) {
  srv_registry_view_t *next = view_new(entries, count);
  /* relaxed: the writer is the only thread that stores `current`. */
  srv_registry_view_t *old = atomic_load_explicit(&r->current, memory_order_relaxed);
  srv_model_t **entering = calloc(models_missing(next, old, NULL) + 1, sizeof *entering);
  if (entering == NULL) SRV_FATAL("out of memory");
  size_t entering_count = models_missing(next, old, entering);
  /* A published model's references are counted per thread (model.c,
   * "References"); a leaving one's go back to one count before the view
   * is retired, and are folded when it is reclaimed (view_free). */
  for (size_t i = 0; i < entering_count; i++) {
    srv_model_ref(entering[i]);
    srv_model_ref_slice(entering[i], r->epoch);
  }
  free(entering);
  old->leaving = calloc(models_missing(old, next, NULL) + 1, sizeof *old->leaving);
  if (old->leaving == NULL) SRV_FATAL("out of memory");
  old->leaving_count = models_missing(old, next, old->leaving);
  for (size_t i = 0; i < old->leaving_count; i++) srv_model_ref_unslice(old->leaving[i]);
  /* seq_cst: see `current`. Release part: readers see the view's contents. */
  atomic_store_explicit(&r->current, next, memory_order_seq_cst);
  old->owner = r;
  act_epoch_retire(r->epoch, &old->retired, view_reclaim);
}

bool srv_registry_reclaim(srv_registry_t *r) { return act_epoch_poll(r->epoch); }

void srv_registry_free(srv_registry_t *r) {
  /* Views reclaimed from here on belong to models already freed. */
  r->closing = true;
  act_epoch_free(r->epoch); /* runs the pending reclaims */
  view_free(atomic_load_explicit(&r->current, memory_order_relaxed), false);
  free(r);
}

const srv_registry_view_t *srv_registry_view_begin(srv_registry_t *r) {
  act_epoch_enter(r->epoch);
  /* seq_cst: see `current`. */
  return atomic_load_explicit(&r->current, memory_order_seq_cst);
}

void srv_registry_view_end(srv_registry_t *r) { act_epoch_exit(r->epoch); }

size_t srv_registry_view_count(const srv_registry_view_t *v) { return v->count; }

const srv_registry_entry_t *srv_registry_view_at(const srv_registry_view_t *v, size_t i) {
  return &v->entries[i];
}

srv_model_t *srv_registry_entry_version(const srv_registry_entry_t *e, int64_t version) {
  if (e->version_count == 0) return NULL;
  if (version < 0) return e->versions[e->version_count - 1];
  for (size_t i = 0; i < e->version_count; i++)
    if (e->versions[i]->version == version) return e->versions[i];
  return NULL;
}

/* The error texts, out of line: a lookup that finds its model then keeps
 * no quote buffer on its stack (no stack-protector canary, a smaller
 * frame; issue 21). */
#define COLD __attribute__((cold, noinline))

static COLD srv_status_t *missing(const srv_registry_entry_t *e, const char *name,
                                  size_t len, int64_t version) {
  char q[SRV_QUOTE_SIZE];
  srv_quote(q, name, len);
  if (e == NULL)
    return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                          "Request for unknown model: '%s' is not found", q);
  /* Triton's lifecycle keeps a version that failed to load, not ready. */
  for (size_t i = 0; version >= 0 && i < e->failure_count; i++)
    if (e->failures[i].version == version)
      return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                            "Request for unknown model: '%s' version %lld is not at ready "
                            "state",
                            q, (long long)version);
  if (e->version_count == 0 && version < 0) {
    const char *why = e->reason;
    if (why == NULL && e->failure_count > 0) why = e->failures[0].reason;
    if (why == NULL && e->state == SRV_MODEL_STATE_LOADING) why = "the model is loading";
    if (why == NULL && e->state == SRV_MODEL_STATE_UNLOADING)
      why = "the model is unloading";
    return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                          "Request for unknown model: '%s' has no available versions%s%s",
                          q, why ? ": " : "", why ? why : "");
  }
  return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                        "Request for unknown model: '%s' version %lld is not found", q,
                        (long long)version);
}

/* Of the entries named as `e`, the one a name alone means: the only one
 * not unloaded (or the first, when all are), as tritonserver keeps an
 * identifier per namespace until its model unloads. NULL and *count when
 * several are. */
static const srv_registry_entry_t *unique_entry(const srv_registry_view_t *v,
                                                const srv_registry_entry_t *e,
                                                size_t *count) {
  const srv_registry_entry_t *found = NULL;
  *count = 0;
  for (const srv_registry_entry_t *x = e; x != NULL; x = same_name_next(v, x))
    if (!srv_model_state_is_unloaded(x->state, x->reason, x->version_count)) {
      found = x;
      ++*count;
    }
  if (*count == 0) return e;
  return *count == 1 ? found : NULL;
}

/* The version asked of `e` with a reference, or NULL and why. Inside a
 * read section of r's epoch. */
static srv_status_t *entry_acquire(srv_registry_t *r, const srv_registry_entry_t *e,
                                   const char *name, size_t len, int64_t version,
                                   srv_model_t **out) {
  srv_model_t *m = e != NULL ? srv_registry_entry_version(e, version) : NULL;
  *out = m;
  if (m == NULL) return missing(e, name, len, version);
  /* The view holds a reference until the section ends. */
  srv_model_ref_in_section(m, r->epoch);
  return NULL;
}

static COLD srv_status_t *ambiguous(const char *name, size_t len, size_t count) {
  char q[SRV_QUOTE_SIZE];
  srv_quote(q, name, len);
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "There are %zu identifiers of model '%s' in global map, model "
                        "namespace must be provided to resolve ambiguity.",
                        count, q);
}

srv_status_t *srv_registry_acquire(srv_registry_t *r, const char *name, size_t len,
                                   int64_t version, srv_model_t **out) {
  *out = NULL;
  if (name == NULL || len == 0) /* Triton's text for an empty name */
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "model name must not be empty");
  const srv_registry_view_t *v = srv_registry_view_begin(r);
  const srv_registry_entry_t *e = view_find_memo(v, name, len);
  size_t count = 0;
  if (e != NULL && v->shared_names) e = unique_entry(v, e, &count);
  srv_status_t *st;
  if (e == NULL && count > 1) {
    st = ambiguous(name, len, count);
  } else {
    st = entry_acquire(r, e, name, len, version, out);
  }
  srv_registry_view_end(r);
  return st;
}

srv_status_t *srv_registry_acquire_ns(srv_registry_t *r, const char *ns, const char *name,
                                      int64_t version, srv_model_t **out) {
  const srv_registry_view_t *v = srv_registry_view_begin(r);
  srv_status_t *st = entry_acquire(r, srv_registry_view_find_ns(v, ns, name), name,
                                   strlen(name), version, out);
  srv_registry_view_end(r);
  return st;
}

bool srv_registry_all_ready(srv_registry_t *r) {
  const srv_registry_view_t *v = srv_registry_view_begin(r);
  bool ready = true;
  for (size_t i = 0; i < v->count && ready; i++) {
    const srv_registry_entry_t *e = &v->entries[i];
    if (e->failure_count > 0) ready = false;
    if (e->version_count == 0 &&
        !srv_model_state_is_unloaded(e->state, e->reason, e->version_count))
      ready = false;
  }
  srv_registry_view_end(r);
  return ready;
}

bool srv_version_parse(const char *version, size_t len, int64_t *out) {
  if (len == 0) {
    *out = -1;
    return true;
  }
  char buf[32];
  if (len >= sizeof buf) return false;
  memcpy(buf, version, len);
  buf[len] = '\0';
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || buf[0] == '-' || buf[0] == '+') return false;
  *out = v;
  return true;
}

/* A version string that srv_version_parse refused, in Triton's words
 * (GetModelVersionFromString: its std::stol says "stol"). Triton takes
 * what stol takes ("7abc" is version 7, " 7" too); Nereid takes digits
 * only, and refuses the rest with the same text. */
static COLD srv_status_t *version_error(const char *version, size_t len) {
  char qv[SRV_QUOTE_SIZE];
  srv_quote(qv, version, len);
  bool negative = len > 1 && version[0] == '-' && version[1] >= '0' && version[1] <= '9';
  for (size_t i = 2; negative && i < len; i++)
    negative = version[i] >= '0' && version[i] <= '9';
  if (negative)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "invalid model version specified '%s' , version should be an "
                          "integral value > 0",
                          qv);
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "failed to get model version from specified version string '%s' "
                        "(details: stol), version should be an integral value > 0",
                        qv);
}

srv_status_t *srv_registry_lookup(srv_registry_t *r, const char *name, size_t len,
                                  const char *version, size_t version_len,
                                  srv_model_t **out) {
  int64_t v = -1; /* no version given (most requests): the latest */
  *out = NULL;
  if (version_len != 0 && !srv_version_parse(version, version_len, &v))
    return version_error(version, version_len);
  return srv_registry_acquire(r, name, len, v, out);
}

srv_status_t *srv_registry_ready(srv_registry_t *r, const char *name, size_t len,
                                 const char *version, size_t version_len, bool *ready) {
  srv_model_t *m;
  srv_status_t *st = srv_registry_lookup(r, name, len, version, version_len, &m);
  *ready = st == NULL;
  if (st == NULL) srv_model_unref(m);
  /* Past the version and an empty name, the one INVALID_ARGUMENT the
   * lookup gives is an ambiguous name: not ready, no error. */
  bool refused = st != NULL && srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT &&
                 (len == 0 || !srv_version_parse(version, version_len, &(int64_t){0}));
  if (refused) return st;
  srv_status_free(st);
  return NULL;
}
