/* Setting up and freeing a model's sequence scheduler (see sequence.h):
 * its settings, a slot actor per (instance, batch position), each
 * instance's batch room and ready queue, the map and the free slots. */
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/core/server.h"
#include "server/model/model.h"
#include "server/sched/sequence.h"
#include "server/sched/sequence_map.h"

/* The oldest strategy batches with the dynamic batcher's rules: its
 * settings go where the batcher reads them. */
static void oldest_batcher(srv_model_t *m, const srv_seq_config_t *c) {
  srv_batcher_t *b = &m->batcher;
  b->dynamic = true;
  b->max_batch = m->max_batch_size > 0 ? (uint32_t)m->max_batch_size : 1;
  /* The batcher owns (and srv_batcher_free frees) its own copy. */
  free(b->preferred);
  b->preferred = NULL;
  b->preferred_count = c->preferred_count;
  if (c->preferred_count > 0) {
    b->preferred = malloc(c->preferred_count * sizeof *b->preferred);
    if (b->preferred == NULL) SRV_FATAL("out of memory");
    memcpy(b->preferred, c->preferred, c->preferred_count * sizeof *b->preferred);
  }
  b->max_delay_ns = c->oldest_delay_ns;
  b->preserve_ordering = c->preserve_ordering;
}

srv_status_t *srv_seq_setup(srv_model_t *m, const char *source) {
  srv_seq_sched_t *s = calloc(1, sizeof *s);
  if (s == NULL) SRV_FATAL("out of memory");
  srv_status_t *st =
      srv_seq_config_read(m->config, m->name, source, m->dir, m->arena, &s->config);
  if (st != NULL) {
    free(s);
    return st;
  }
  m->seq = s;
  if (s->config.strategy == SRV_SEQ_OLDEST) oldest_batcher(m, &s->config);
  return NULL;
}

srv_status_t *srv_seq_start(srv_model_t *m) {
  srv_seq_sched_t *s = m->seq;
  uint32_t per = s->config.slots_per_instance;
  s->slot_count = per * m->instance_count;
  size_t bytes = ((sizeof *s->slots * s->slot_count + 63) / 64) * 64;
  s->slots = aligned_alloc(64, bytes ? bytes : 64); /* actors on their own lines */
  s->instances = calloc(m->instance_count ? m->instance_count : 1, sizeof *s->instances);
  s->free_heap = calloc(s->slot_count ? s->slot_count : 1, sizeof *s->free_heap);
  s->reaped = calloc(SRV_SEQ_REAPED_KEPT, sizeof *s->reaped);
  if (s->slots == NULL || s->instances == NULL || s->free_heap == NULL ||
      s->reaped == NULL)
    SRV_FATAL("out of memory");
  memset(s->slots, 0, sizeof *s->slots * s->slot_count);
  s->map = srv_seq_map_new();
  m->stats.sequences = &s->stats;
  static const srv_queue_policy_t no_policy = {0};
  uint32_t room = per > m->batcher.max_batch ? per : m->batcher.max_batch;
  for (uint32_t i = 0; i < m->instance_count; i++) {
    srv_instance_t *inst = m->instances[i];
    srv_seq_instance_t *si = &s->instances[i];
    si->batch_slots = calloc(room, sizeof *si->batch_slots);
    TRITONBACKEND_Request **batch = realloc(inst->batch, room * sizeof *batch);
    if (si->batch_slots == NULL || batch == NULL) SRV_FATAL("out of memory");
    inst->batch = batch;
    inst->batch_cap = room;
    si->idle = inst->started;
    srv_queue_init(&si->ready, 1, 0, &no_policy);
  }
  for (uint32_t i = 0; i < s->slot_count; i++) {
    srv_seq_slot_t *slot = &s->slots[i];
    slot->model = m;
    slot->inst_index = i / per;
    slot->inst = m->instances[slot->inst_index];
    slot->index = i % per;
    srv_seq_extra_init(&slot->extra, &s->config);
    act_actor_init(&slot->actor, m->server->runtime, srv_seq_slot_behaviour, slot);
  }
  /* Free slots, lowest position first (a sorted array is a heap); only
   * started instances take sequences. */
  for (uint32_t pos = 0; pos < per; pos++)
    for (uint32_t i = 0; i < m->instance_count; i++) {
      srv_seq_slot_t *slot = &s->slots[(size_t)i * per + pos];
      if (!slot->inst->started) continue;
      s->free_heap[s->free_count++] = slot;
      slot->heap_pos = s->free_count;
    }
  SRV_VERBOSE(1, "model '%s': sequence batcher (%s), %u slot(s) per instance, %u in all",
              m->name, s->config.strategy == SRV_SEQ_DIRECT ? "direct" : "oldest", per,
              s->slot_count);
  return NULL;
}

/* What StateNew, StateBuffer and StateBufferAttributes made. */
static void updates_free(struct TRITONBACKEND_State *u, uint32_t count) {
  for (uint32_t i = 0; u != NULL && i < count; i++) {
    free(u[i].shape);
    free(u[i].scratch);
    free(u[i].attrs);
  }
  free(u);
}

void srv_seq_free(srv_model_t *m) {
  srv_seq_sched_t *s = m->seq;
  if (s == NULL) return;
  uint32_t states = s->config.state_count;
  for (uint32_t i = 0; i < s->slot_count; i++) {
    srv_seq_slot_states_reset(&s->slots[i]);
    free(s->slots[i].states);
    updates_free(s->slots[i].updates, states);
    srv_seq_extra_release(&s->slots[i].extra);
  }
  for (uint32_t i = 0; s->instances != NULL && i < m->instance_count; i++) {
    srv_seq_instance_t *si = &s->instances[i];
    srv_seq_nulls_free(si);
    free(si->batch_slots);
    updates_free(si->null_updates, states);
    srv_queue_free(&si->ready);
  }
  for (uint32_t i = 0; s->reaped != NULL && i < SRV_SEQ_REAPED_KEPT; i++)
    free(s->reaped[i].key.id_string);
  srv_seq_map_free(s->map);
  m->stats.sequences = NULL;
  free(s->reaped);
  free(s->free_heap);
  free(s->instances);
  free(s->slots);
  free(s);
  m->seq = NULL;
}
