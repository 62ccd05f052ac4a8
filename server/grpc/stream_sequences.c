/* The sequences of a stream (see stream_sequences.h): a small array, as
 * a stream carries few at a time; END finds its entry by a linear scan. */
#include "server/grpc/stream_sequences.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/views/model_lookup.h"

struct srv_stream_seq {
  const srv_model_t *model; /* identity only: no reference, never followed */
  uint64_t serial;          /* the model's load, for the lookup at the end */
  char *name;               /* the model's name (owned) */
  int64_t version;
  uint64_t id;
  char *id_string; /* owned, or NULL */
};

static bool same(const srv_stream_seq_t *e, const srv_model_t *m,
                 const TRITONBACKEND_Request *r) {
  if (e->model != m || e->serial != srv_model_serial(m)) return false;
  if (r->correlation_id_string != NULL)
    return e->id_string != NULL && strcmp(e->id_string, r->correlation_id_string) == 0;
  return e->id_string == NULL && e->id == r->correlation_id;
}

static void drop(srv_stream_sequences_t *t, uint32_t i) {
  free(t->items[i].name);
  free(t->items[i].id_string);
  t->items[i] = t->items[--t->count];
}

static char *copy(const char *s) {
  char *c = strdup(s);
  if (c == NULL) SRV_FATAL("out of memory");
  return c;
}

/* Streams' tokens, one per stream that starts a sequence: never 0, and
 * never one of a stream gone (an ID's end in flight from it must not meet
 * a later stream's START of the same ID). */
static _Atomic uint64_t last_owner;

void srv_stream_sequences_note(srv_stream_sequences_t *t, srv_model_t *m,
                               TRITONBACKEND_Request *r) {
  uint32_t flags = r->flags & (TRITONSERVER_REQUEST_FLAG_SEQUENCE_START |
                               TRITONSERVER_REQUEST_FLAG_SEQUENCE_END);
  if (flags == 0 || !srv_model_has_sequences(m)) return;
  if (flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) {
    if (t->owner == 0)
      t->owner = atomic_fetch_add_explicit(&last_owner, 1, memory_order_relaxed) + 1;
    r->seq_owner = t->owner;
  }
  for (uint32_t i = 0; i < t->count; i++)
    if (same(&t->items[i], m, r)) {
      if (flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) drop(t, i);
      return; /* a START again: still the one entry */
    }
  if (flags != TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) return; /* ends at once */
  if (t->count == SRV_STREAM_SEQUENCES_MAX) {
    SRV_VERBOSE(1,
                "ModelStreamInfer: %u sequences open on one stream: a new one ends by "
                "its idle timeout only",
                SRV_STREAM_SEQUENCES_MAX);
    return;
  }
  if (t->count == t->cap) {
    uint32_t cap = t->cap ? 2 * t->cap : 8;
    srv_stream_seq_t *bigger = realloc(t->items, cap * sizeof *bigger);
    if (bigger == NULL) SRV_FATAL("out of memory");
    t->items = bigger;
    t->cap = cap;
  }
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  srv_stream_seq_t *e = &t->items[t->count++];
  e->model = m;
  e->serial = srv_model_serial(m);
  e->name = copy(d.name);
  e->version = d.version;
  e->id = r->correlation_id;
  e->id_string = r->correlation_id_string != NULL ? copy(r->correlation_id_string) : NULL;
}

void srv_stream_sequences_end_all(srv_stream_sequences_t *t, srv_server_t *srv) {
  while (t->count > 0) {
    srv_stream_seq_t *e = &t->items[t->count - 1];
    char version[24];
    snprintf(version, sizeof version, "%" PRId64, e->version);
    srv_model_t *m = NULL;
    srv_status_t *st = srv_model_lookup(srv, upb_StringView_FromString(e->name),
                                        upb_StringView_FromString(version), &m);
    if (st == NULL) {
      /* Unloaded since, or loaded again: its sequences are gone already. */
      if (m == e->model && srv_model_serial(m) == e->serial)
        srv_model_sequence_end(m, e->id, e->id_string, t->owner);
      srv_model_unref(m);
    }
    srv_status_free(st);
    drop(t, t->count - 1);
  }
}

void srv_stream_sequences_free(srv_stream_sequences_t *t) {
  while (t->count > 0) drop(t, t->count - 1);
  free(t->items);
  t->items = NULL;
  t->cap = 0;
}
