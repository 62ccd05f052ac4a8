/* The sequence scheduler's sequences and slots (sequence.md "One step", 1,
 * and "Ending a sequence"): each request checked and routed by its
 * correlation ID to the slot of its sequence; the free slots, the backlog of
 * sequences waiting for one, and idle reaping. The model actor's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/timer.h"
#include "server/common/log.h"
#include "server/model/model.h"
#include "server/model/response.h"
#include "server/sched/sequence.h"
#include "server/sched/sequence_internal.h"
#include "server/sched/sequence_map.h"

#define ID_PRINT_MAX 96u

static void id_print(const TRITONBACKEND_Request *r, char *buf, size_t size) {
  if (r->correlation_id_string != NULL)
    snprintf(buf, size, "%s", r->correlation_id_string);
  else
    snprintf(buf, size, "%llu", (unsigned long long)r->correlation_id);
}

/* ---- free slots: a min-heap on (position, instance) ---------------------- */

/* Direct batches reach the highest busy position, so low positions fill
 * first, spread over the instances. */
static bool slot_before(const srv_seq_slot_t *a, const srv_seq_slot_t *b) {
  return a->index != b->index ? a->index < b->index : a->inst_index < b->inst_index;
}

static void heap_set(srv_seq_sched_t *s, uint32_t i, srv_seq_slot_t *slot) {
  s->free_heap[i] = slot;
  slot->heap_pos = i + 1;
}

static void heap_push(srv_seq_sched_t *s, srv_seq_slot_t *slot) {
  uint32_t i = s->free_count++;
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!slot_before(slot, s->free_heap[parent])) break;
    heap_set(s, i, s->free_heap[parent]);
    i = parent;
  }
  heap_set(s, i, slot);
}

static srv_seq_slot_t *heap_pop(srv_seq_sched_t *s) {
  if (s->free_count == 0) return NULL;
  srv_seq_slot_t *top = s->free_heap[0];
  top->heap_pos = 0;
  srv_seq_slot_t *last = s->free_heap[--s->free_count];
  if (s->free_count == 0) return top;
  uint32_t i = 0;
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, best = i;
    srv_seq_slot_t *pick = last;
    if (l < s->free_count && slot_before(s->free_heap[l], pick)) {
      best = l;
      pick = s->free_heap[l];
    }
    if (r < s->free_count && slot_before(s->free_heap[r], pick)) best = r;
    if (best == i) break;
    heap_set(s, i, s->free_heap[best]);
    i = best;
  }
  heap_set(s, i, last);
  return top;
}

/* ---- bound slots by their sequence's last request (idle reaping) ------- */

static void lru_remove(srv_seq_sched_t *s, srv_seq_slot_t *slot) {
  if (slot->lru_prev != NULL)
    slot->lru_prev->lru_next = slot->lru_next;
  else if (s->lru_head == slot)
    s->lru_head = slot->lru_next;
  if (slot->lru_next != NULL)
    slot->lru_next->lru_prev = slot->lru_prev;
  else if (s->lru_tail == slot)
    s->lru_tail = slot->lru_prev;
  slot->lru_prev = slot->lru_next = NULL;
}

static void lru_touch(srv_seq_sched_t *s, srv_seq_slot_t *slot, uint64_t now) {
  lru_remove(s, slot);
  slot->last_ns = now;
  slot->lru_prev = s->lru_tail;
  if (s->lru_tail != NULL)
    s->lru_tail->lru_next = slot;
  else
    s->lru_head = slot;
  s->lru_tail = slot;
}

uint64_t srv_seq_idle_deadline(const srv_seq_sched_t *s) {
  if (s->lru_head == NULL) return 0;
  uint64_t at = s->lru_head->last_ns + s->config.idle_ns;
  return at < s->lru_head->last_ns ? UINT64_MAX : at;
}

/* Tells a slot that the sequence it holds ends (idle, its stream left, or
 * it ended in the backlog): what it holds still runs, then it frees
 * itself. A message of its own each time: the slot may have freed itself
 * meanwhile (a cancel), and then ignores it (sequence_slot.c). */
static void slot_end_send(srv_seq_slot_t *slot) {
  act_msg_t *msg = act_msg_alloc(sizeof *msg);
  msg->kind = SRV_SEQ_SLOT_END;
  act_send(&slot->actor, msg);
}

/* ---- routing ------------------------------------------------------------- */

static void slot_send(srv_seq_slot_t *slot, TRITONBACKEND_Request *r) {
  if ((r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0) slot->starts_routed++;
  r->seq_epoch = slot->starts_routed;
  r->seq_slot = slot;
  r->msg.kind = SRV_SEQ_SLOT_REQUEST;
  act_send(&slot->actor, &r->msg);
}

/* Binds `seq` to a free slot and hands it the requests it gathered. */
static void bind(srv_model_t *m, srv_seq_t *seq, srv_seq_slot_t *slot, uint64_t now) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  slot->busy = true;
  s->active++;
  s->instances[slot->inst_index].bound++;
  if (seq->mapped) {
    seq->slot = slot;
    slot->seq = seq;
    lru_touch(s, slot, now);
  }
  if (srv_log_verbose_level() >= 1) {
    char id[ID_PRINT_MAX];
    srv_seq_id_print(seq, id, sizeof id);
    SRV_VERBOSE(1, "model '%s': sequence %s bound to instance '%s' slot %u", m->name, id,
                slot->inst->name, slot->index);
  }
  TRITONBACKEND_Request *r;
  while ((r = seq->backlog_head) != NULL) {
    seq->backlog_head = r->next;
    r->next = NULL;
    r->queued = false;
    slot_send(slot, r);
  }
  seq->backlog_tail = NULL;
  if (!seq->mapped) { /* it ended in the backlog: END, or its stream left */
    srv_seq_free_one(seq);
    slot_end_send(slot); /* after its requests ran */
  }
}

static void backlog_push(srv_seq_sched_t *s, srv_seq_t *seq) {
  seq->backlog_next = NULL;
  if (s->backlog_tail != NULL)
    s->backlog_tail->backlog_next = seq;
  else
    s->backlog_head = seq;
  s->backlog_tail = seq;
  s->backlog_count++;
}

static void backlog_append(srv_seq_t *seq, TRITONBACKEND_Request *r) {
  r->next = NULL;
  r->queued = true; /* a cancel finds it here */
  r->seq_slot = NULL;
  if (seq->backlog_tail != NULL)
    seq->backlog_tail->next = r;
  else
    seq->backlog_head = r;
  seq->backlog_tail = r;
}

static bool reaped_recently(const srv_seq_sched_t *s, const srv_seq_t *key) {
  for (uint32_t i = 0; i < SRV_SEQ_REAPED_KEPT; i++) {
    const srv_seq_t *k = &s->reaped[i].key;
    if ((k->id_string == NULL) != (key->id_string == NULL)) continue;
    if (k->id_string == NULL ? (k->id != 0 && k->id == key->id)
                             : (k->id_len == key->id_len &&
                                memcmp(k->id_string, key->id_string, k->id_len) == 0))
      return true;
  }
  return false;
}

/* Checks a request against the sequence rules; false when it was refused. */
static bool request_check(srv_model_t *m, TRITONBACKEND_Request *r) {
  const srv_seq_control_t *corrid =
      srv_seq_config_control(&m->seq->config, SRV_SEQ_CONTROL_CORRID);
  bool has_id = r->correlation_id_string != NULL ? r->correlation_id_string[0] != '\0'
                                                 : r->correlation_id != 0;
  if (!has_id) {
    srv_request_fail(r, TRITONSERVER_ERROR_INVALID_ARG,
                     "inference request to model '%s' must specify a non-zero or "
                     "non-empty correlation ID",
                     m->name);
    return false;
  }
  if (r->batch_size > 1) {
    srv_request_fail(r, TRITONSERVER_ERROR_INVALID_ARG,
                     "inference request to model '%s' must specify batch-size 1 due to "
                     "requirements of sequence batcher",
                     m->name);
    return false;
  }
  if (corrid != NULL && (corrid->datatype == TRITONSERVER_TYPE_BYTES) !=
                            (r->correlation_id_string != NULL)) {
    char id[ID_PRINT_MAX];
    id_print(r, id, sizeof id);
    srv_request_fail(r, TRITONSERVER_ERROR_INVALID_ARG,
                     "sequence %s to model '%s': the correlation ID is %s, but the "
                     "model's CONTROL_SEQUENCE_CORRID input '%s' is %s",
                     id, m->name,
                     r->correlation_id_string != NULL ? "a string" : "an integer",
                     corrid->name, TRITONSERVER_DataTypeString(corrid->datatype));
    return false;
  }
  return true;
}

/* A START of an unknown ID: a new sequence, bound to the lowest free slot,
 * or into the backlog. */
static srv_seq_t *sequence_start(srv_model_t *m, const TRITONBACKEND_Request *r,
                                 const srv_seq_t *key, uint64_t now) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  srv_seq_count(&s->stats.started);
  srv_seq_t *seq = srv_seq_map_add(s->map, key);
  srv_seq_slot_t *slot = heap_pop(s);
  if (slot == NULL) {
    backlog_push(s, seq);
    if (srv_log_verbose_level() >= 1) {
      char id[ID_PRINT_MAX];
      id_print(r, id, sizeof id);
      SRV_VERBOSE(1, "model '%s': sequence %s waits for a slot (%u in the backlog)",
                  m->name, id, s->backlog_count);
    }
  } else {
    bind(m, seq, slot, now);
  }
  return seq;
}

void srv_seq_route(srv_model_t *m, TRITONBACKEND_Request *r) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  if (m->stopping) {
    srv_request_fail(r, TRITONSERVER_ERROR_UNAVAILABLE,
                     "model '%s' version %lld is unloading", m->name,
                     (long long)m->version);
    return;
  }
  if (!request_check(m, r)) return;
  bool start = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0;
  bool end = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) != 0;
  srv_seq_t key;
  srv_seq_key_of(s->map, r, &key);
  srv_seq_t *seq = srv_seq_map_get(s->map, &key);
  uint64_t now = act_now_ns();
  r->queue_start_ns = now;
  if (seq == NULL && !start) {
    char id[ID_PRINT_MAX];
    id_print(r, id, sizeof id);
    bool reaped = reaped_recently(s, &key);
    srv_request_fail(r, TRITONSERVER_ERROR_INVALID_ARG,
                     "inference request for sequence %s to model '%s' must specify the "
                     "START flag on the first request of the sequence%s",
                     id, m->name,
                     reaped ? " (the sequence was ended after it was idle for longer "
                              "than max_sequence_idle_microseconds)"
                            : "");
    return;
  }
  if (seq != NULL && start) {
    char id[ID_PRINT_MAX];
    id_print(r, id, sizeof id);
    SRV_WARN(
        "sequence %s for model '%s' started again before it ended: the previous "
        "sequence ends here and the new one takes its place",
        id, m->name);
  }
  if (end) srv_seq_count(&s->stats.ended);
  if (seq == NULL) seq = sequence_start(m, r, &key, now);
  if (start) seq->owner = r->seq_owner;
  srv_seq_slot_t *slot = seq->slot;
  if (end) srv_seq_map_remove(s->map, seq);
  if (slot == NULL) {
    backlog_append(seq, r);
    return;
  }
  lru_touch(s, slot, now);
  if (end) {
    if (srv_log_verbose_level() >= 1) {
      char id[ID_PRINT_MAX];
      id_print(r, id, sizeof id);
      SRV_VERBOSE(1, "model '%s': sequence %s ends (END)", m->name, id);
    }
    /* The slot frees itself after this request; nothing more comes here. */
    lru_remove(s, slot);
    slot->seq = NULL;
    srv_seq_free_one(seq);
  }
  slot_send(slot, r);
}

/* ---- slots coming back --------------------------------------------------- */

void srv_seq_slot_freed(srv_model_t *m, srv_seq_slot_t *slot) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  /* A cancel ended the sequence, and a START of its ID was routed here
   * before this FREED came: the slot holds the new sequence now (the
   * START reached it after it freed itself), and frees itself again when
   * that one ends. */
  if (slot->freed_epoch != slot->starts_routed) return;
  if (slot->seq != NULL) { /* it ended itself: a cancel (counted there) */
    srv_seq_t *seq = slot->seq;
    srv_seq_map_remove(s->map, seq);
    srv_seq_free_one(seq);
    slot->seq = NULL;
    lru_remove(s, slot);
  }
  slot->busy = false;
  s->active--;
  s->instances[slot->inst_index].bound--;
  if (m->stopping) return;
  srv_seq_t *next = s->backlog_head;
  if (next != NULL) {
    s->backlog_head = next->backlog_next;
    if (s->backlog_head == NULL) s->backlog_tail = NULL;
    s->backlog_count--;
    bind(m, next, slot, act_now_ns());
    return;
  }
  heap_push(s, slot);
}

/* ---- idle sequences ------------------------------------------------------ */

static void reaped_note(srv_seq_sched_t *s, const srv_seq_t *seq) {
  srv_seq_t *k = &s->reaped[s->reaped_next].key;
  s->reaped_next = (s->reaped_next + 1) % SRV_SEQ_REAPED_KEPT;
  free(k->id_string);
  *k = *seq;
  k->id_string = NULL;
  if (seq->id_string != NULL) {
    k->id_string = malloc(seq->id_len + 1u);
    if (k->id_string == NULL) SRV_FATAL("out of memory");
    memcpy(k->id_string, seq->id_string, seq->id_len + 1u);
  }
}

void srv_seq_reap(srv_model_t *m, uint64_t now) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  srv_seq_slot_t *slot;
  while ((slot = s->lru_head) != NULL && srv_seq_idle_deadline(s) <= now) {
    srv_seq_t *seq = slot->seq;
    char id[ID_PRINT_MAX];
    srv_seq_id_print(seq, id, sizeof id);
    SRV_VERBOSE(1, "model '%s': sequence %s idle for more than %llu us: ended", m->name,
                id, (unsigned long long)(s->config.idle_ns / 1000));
    reaped_note(s, seq);
    srv_seq_count(&s->stats.idle_ended);
    lru_remove(s, slot);
    srv_seq_map_remove(s->map, seq);
    srv_seq_free_one(seq);
    slot->seq = NULL;
    slot_end_send(slot);
  }
}

/* ---- sequences whose client left ----------------------------------------- */

/* Like the idle timeout, but now: a bound sequence's slot ends it once
 * what it holds ran; a backlog sequence keeps its requests, ends after them. */
void srv_seq_end_by_id(srv_model_t *m, uint64_t id, const char *id_string,
                       uint64_t owner) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  TRITONBACKEND_Request key_request = {.correlation_id = id,
                                       .correlation_id_string = id_string};
  srv_seq_t key;
  srv_seq_key_of(s->map, &key_request, &key);
  srv_seq_t *seq = srv_seq_map_get(s->map, &key);
  if (seq == NULL) return;
  if (srv_log_verbose_level() >= 1) {
    char printed[ID_PRINT_MAX];
    srv_seq_id_print(seq, printed, sizeof printed);
    SRV_VERBOSE(1, "model '%s': sequence %s %s", m->name, printed,
                seq->owner == owner ? "ends: the stream that started it closed"
                                    : "outlives a closed stream: another client started "
                                      "it again since");
  }
  /* Ended and started again (an idle reap, then a START): not the one the
   * stream left, whatever the order its end and the START came in. */
  if (seq->owner != owner) return;
  srv_seq_count(&s->stats.stream_ended);
  srv_seq_map_remove(s->map, seq);
  srv_seq_slot_t *slot = seq->slot;
  if (slot == NULL) return; /* in the backlog: bind() ends it after its requests */
  lru_remove(s, slot);
  slot->seq = NULL;
  srv_seq_free_one(seq);
  slot_end_send(slot);
}

/* ---- cancels ------------------------------------------------------------- */

/* As in Triton, the whole sequence ends with r, before it ever held a slot. */
void srv_seq_backlog_cancel(srv_model_t *m, TRITONBACKEND_Request *r) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  srv_seq_t *prev_seq = NULL;
  for (srv_seq_t *seq = s->backlog_head; seq != NULL;
       prev_seq = seq, seq = seq->backlog_next) {
    bool here = false;
    for (TRITONBACKEND_Request *x = seq->backlog_head; x != NULL && !here; x = x->next)
      here = x == r;
    if (!here) continue;
    if (prev_seq != NULL)
      prev_seq->backlog_next = seq->backlog_next;
    else
      s->backlog_head = seq->backlog_next;
    if (s->backlog_tail == seq) s->backlog_tail = prev_seq;
    s->backlog_count--;
    srv_seq_count(&s->stats.cancel_ended);
    TRITONBACKEND_Request *x;
    while ((x = seq->backlog_head) != NULL) {
      seq->backlog_head = x->next;
      x->next = NULL;
      x->queued = false;
      if (x == r)
        srv_request_fail(x, TRITONSERVER_ERROR_CANCELLED,
                         "request '%s' for model '%s' was cancelled before it ran", x->id,
                         m->name);
      else
        srv_request_fail(
            x, TRITONSERVER_ERROR_CANCELLED,
            "model '%s': the sequence was cancelled: one of its requests was", m->name);
    }
    srv_seq_map_remove(s->map, seq);
    srv_seq_free_one(seq);
    return;
  }
}

/* ---- the stop ------------------------------------------------------------ */

void srv_seq_backlog_fail(srv_model_t *m, TRITONSERVER_Error_Code code, const char *why) {
  srv_seq_sched_t *s = srv_seq_sched_of(m);
  srv_seq_t *seq;
  while ((seq = s->backlog_head) != NULL) {
    s->backlog_head = seq->backlog_next;
    TRITONBACKEND_Request *r;
    while ((r = seq->backlog_head) != NULL) {
      seq->backlog_head = r->next;
      r->queued = false;
      srv_request_fail(r, code, "model '%s': %s", m->name, why);
    }
    if (seq->mapped) srv_seq_map_remove(s->map, seq);
    srv_seq_free_one(seq);
  }
  s->backlog_tail = NULL;
  s->backlog_count = 0;
}
