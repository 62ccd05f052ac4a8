/* The sequence batcher: the scheduler of models with `sequence_batching`
 * (stateful models). See sequence.md for the protocol.
 *
 * Two kinds of actor share the work. The model actor (sequence.c,
 * sequence_route.c, sequence_batch.c) routes each request by its
 * correlation ID to the sequence slot that holds its sequence, keeps the
 * backlog of sequences waiting for a slot, reaps idle sequences and forms
 * batches for idle instances. Each sequence slot is an
 * actor of its own (sequence_slot.c), bound to one batch slot of one
 * instance: it holds the requests of its sequence in order, lends them out
 * one at a time with their control inputs and implicit state added, gets
 * each back when the backend releases it, and holds the sequence's
 * implicit state buffers. */
#ifndef NEREID_SERVER_SCHED_SEQUENCE_H
#define NEREID_SERVER_SCHED_SEQUENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "actors/actor.h"
#include "actors/timer.h"
#include "server/common/status.h"
#include "server/model/request.h"
#include "server/sched/queue.h"
#include "server/sched/sequence_config.h"
#include "server/sched/sequence_map.h"
#include "server/stats/stats.h"

typedef struct TRITONBACKEND_Model srv_model_t;
struct TRITONBACKEND_ModelInstance;

/* Messages between the model actor and its slots. */
enum {
  SRV_SEQ_SLOT_REQUEST = 0x400, /* model -> slot: a request of its sequence (r->msg) */
  SRV_SEQ_SLOT_END,             /* model -> slot: the sequence ended (idle, cancelled) */
  SRV_SEQ_SLOT_DRAIN,           /* model -> slot: the model stops; fail what waits */
  SRV_SEQ_SLOT_STOP,            /* model -> slot: the final message */
  SRV_SEQ_OFFER,                /* slot -> model: a request to batch (r->msg) */
  SRV_SEQ_OFFER_AFTER_STEP,     /* the same, in answer to a step that ended */
  SRV_SEQ_VACANT_AFTER_STEP,    /* slot -> model: a step ended, nothing to offer */
  SRV_SEQ_FREED,                /* slot -> model: its sequence is over, it is free */
  SRV_SEQ_FREED_AFTER_STEP,     /* the same, in answer to a step that ended */
  SRV_SEQ_DRAINED,              /* slot -> model: nothing of it is lent out any more */
  SRV_SEQ_GONE,                 /* slot -> model: it handled its final message */
};

/** One implicit state of a slot's sequence: two buffers, swapped when the
 *  backend updates the state (one only with use_same_buffer_for_input_output). */
typedef struct {
  void *buf[2];
  uint64_t cap[2];
  uint64_t size[2];
  int64_t *shape[2]; /* full shape, batch dimension included when batching */
  uint32_t dims_count[2];
  uint8_t cur; /* the buffer the next step reads */
} srv_seq_state_buf_t;

/* TRITONBACKEND_State: a state update the backend is writing for one
 * request. Each slot has one per configured state (one step is lent out at
 * a time); each instance has scratch ones for its padding requests. */
struct TRITONBACKEND_State {
  const srv_seq_state_config_t *config;
  srv_seq_state_buf_t *buf; /* NULL for a padding request: the update is dropped */
  int64_t *shape;           /* as given to StateNew */
  uint32_t dims_count;
  void *scratch; /* padding requests' buffer */
  uint64_t scratch_cap;
  TRITONSERVER_BufferAttributes *attrs; /* made on first use */
};

/** Server-added inputs of one lent request: controls, then states. */
typedef struct {
  struct TRITONBACKEND_Input *inputs;
  srv_buffer_t *buffers;
  int64_t *shapes; /* 2 per control input (batch dim and [1]) */
  uint8_t *values; /* control values: 8 bytes each */
  uint8_t *corrid; /* CORRID data: up to 4 + string id bytes */
  uint32_t corrid_cap;
} srv_seq_extra_t;

typedef struct srv_seq_slot {
  act_actor_t actor;
  srv_model_t *model;
  struct TRITONBACKEND_ModelInstance *inst;
  uint32_t inst_index, index; /* which instance; batch position on it */
  /* The model actor's. */
  srv_seq_t *seq;    /* the sequence bound to it; NULL when free or ending */
  bool busy;         /* bound or ending: not in the free heap */
  uint32_t heap_pos; /* index + 1 in the free heap; 0: not in it */
  uint64_t last_ns;  /* its sequence's last request */
  struct srv_seq_slot *lru_prev, *lru_next; /* bound slots by last_ns */
  TRITONBACKEND_Request *offered;           /* direct: lent, waiting for a batch */
  uint32_t starts_routed; /* STARTs sent to it (TRITONBACKEND_Request.seq_epoch) */
  act_msg_t drain_msg, stop_msg;
  /* The slot actor's. */
  TRITONBACKEND_Request *head, *tail; /* its sequence's requests, in order */
  TRITONBACKEND_Request *lent;        /* the one out now */
  bool active;    /* it holds a sequence: a request came since it was last free */
  bool ending;    /* END seen or told: free once nothing is left */
  bool draining;  /* the model stops: fail what waits, answer DRAINED */
  bool cancelled; /* ended by a cancel: its late requests are refused */
  uint32_t epoch; /* seq_epoch of the last START it took */
  /* FREED's word (written before each send; one FREED is in flight at a
   * time): the epoch of the sequence that ended. */
  uint32_t freed_epoch;
  srv_seq_state_buf_t *states; /* one per configured state; NULL until used */
  struct TRITONBACKEND_State *updates;
  srv_seq_extra_t extra;
  act_msg_t vacant_msg, freed_msg, drained_msg, gone_msg;
} srv_seq_slot_t;

/* What an instance holds for sequences: its batch positions and padding. */
typedef struct {
  srv_seq_slot_t **batch_slots; /* slot of each request in the batch; NULL: padding */
  int32_t pending;              /* steps of its last batch not answered yet */
  bool idle;                    /* the model actor holds it idle */
  uint32_t bound;               /* its slots that hold a sequence (or end one) */
  srv_queue_t ready;            /* oldest: lent requests waiting for a batch */
  /* Padding requests (direct): reused once released. */
  struct srv_seq_null *nulls;
  uint32_t null_count;
  struct srv_seq_null *null_free;
  struct TRITONBACKEND_State *null_updates;
} srv_seq_instance_t;

/** IDs of the latest sequences the idle timeout ended, so that their next
 *  request learns why it is refused. */
#define SRV_SEQ_REAPED_KEPT 256u
struct srv_seq_reaped {
  struct srv_seq key; /* its id_string owned */
};

/** The scheduler's state, in the model (m->seq). */
typedef struct srv_seq_sched {
  srv_seq_config_t config;
  uint32_t slot_count;
  srv_seq_slot_t *slots; /* slots_per_instance per instance, instance-major */
  srv_seq_instance_t *instances;
  /* The model actor's. */
  srv_seq_map_t *map;         /* correlation ID -> sequence */
  srv_seq_slot_t **free_heap; /* free slots, lowest position first */
  uint32_t free_count;
  srv_seq_t *backlog_head, *backlog_tail; /* sequences waiting for a slot */
  uint32_t backlog_count;
  srv_seq_slot_t *lru_head, *lru_tail;
  uint32_t active;               /* sequences bound to a slot */
  struct srv_seq_reaped *reaped; /* the latest reaped IDs, for errors */
  uint32_t reaped_next;
  void *zeros; /* padding data: zeros */
  uint64_t zeros_size;
  uint32_t drained, gone;     /* slots that answered the stop's two steps */
  srv_sequence_stats_t stats; /* read by ModelStatistics (m->stats.sequences) */
  bool drain_sent, stop_sent;
} srv_seq_sched_t;

/** Reads the config's sequence_batching and sets up the scheduler of m
 *  (m->seq) once its instances exist. On error nothing is left to free.
 *  Loading thread. */
srv_status_t *srv_seq_setup(srv_model_t *m, const char *source);

/** Makes the slot actors and the per-instance state once the instances
 *  exist; from here on the model actor must stop the slots. Loading thread. */
srv_status_t *srv_seq_start(srv_model_t *m);

/** Frees the padding requests an instance got back. */
void srv_seq_nulls_free(srv_seq_instance_t *si);

/** Frees what srv_seq_setup made, once every slot actor has stopped. */
void srv_seq_free(srv_model_t *m);

/** The model actor's behaviour for sequence models. */
void srv_seq_behaviour(act_actor_t *self, act_msg_t *msg);

/** The slot actors' behaviour (sequence_slot.c). */
void srv_seq_slot_behaviour(act_actor_t *self, act_msg_t *msg);

/** Releases what a slot holds for a sequence (its states), at its end. */
void srv_seq_slot_states_reset(srv_seq_slot_t *slot);

/** Sizes the storage of the inputs a slot (or padding request) adds. */
void srv_seq_extra_init(srv_seq_extra_t *e, const srv_seq_config_t *c);
void srv_seq_extra_release(srv_seq_extra_t *e);

/** Adds the controls and states to request r of `slot`'s sequence. The
 *  slot's actor. */
void srv_seq_extra_fill(srv_model_t *m, srv_seq_slot_t *slot, TRITONBACKEND_Request *r);

/** Adds "not ready" controls and zero states shaped like `like`'s to the
 *  padding request r. The model actor. */
void srv_seq_padding_fill(srv_model_t *m, srv_seq_extra_t *e, TRITONBACKEND_Request *r,
                          const TRITONBACKEND_Request *like, const void *zeros);

#endif
