/* The dynamic batcher's settings (Triton's `dynamic_batching`), checked at
 * load, and batch formation over the model's queue. Formation runs on the
 * model actor; the settings are read-only once the model serves. */
#ifndef NEREID_SERVER_SCHED_BATCHER_H
#define NEREID_SERVER_SCHED_BATCHER_H

#include <stdbool.h>
#include <stdint.h>

#include "server/common/status.h"
#include "server/sched/queue.h"

typedef struct TRITONBACKEND_Model srv_model_t;
struct TRITONBACKEND_ModelInstance;

typedef struct {
  bool dynamic;        /* dynamic_batching is configured */
  uint32_t max_batch;  /* batch elements per execution (at least 1) */
  uint32_t *preferred; /* preferred_batch_size, ascending, <= max_batch */
  uint32_t preferred_count;
  uint64_t max_delay_ns; /* max_queue_delay_microseconds */
  bool preserve_ordering;
} srv_batcher_t;

/** Reads and checks the scheduling settings of m's config into m->batcher
 *  and sets up m->queue (priority levels and queue policies). On error the
 *  status names the setting, and nothing needs freeing. */
srv_status_t *srv_batcher_setup(srv_model_t *m);
void srv_batcher_free(srv_model_t *m);

/** Takes the next batch out of m's queue into the idle instance's batch
 *  array and returns its request count. The array grows (up to max_batch
 *  requests) with the largest batch formed, so its size follows the load,
 *  not max_batch_size. Returns 0 when the queue is empty, or when the
 *  batch should wait for more requests: then *wait_until_ns is when it
 *  stops waiting. The model actor, on an instance it holds idle. */
uint32_t srv_batcher_take(srv_model_t *m, struct TRITONBACKEND_ModelInstance *inst,
                          uint64_t now_ns, uint64_t *wait_until_ns);

/** srv_batcher_take from queue q instead of the model's (the sequence
 *  batcher's oldest strategy keeps one per instance). `nothing_more`: the
 *  caller knows no request that could join is on its way, so the batch
 *  goes without waiting for the delay. */
uint32_t srv_batcher_take_from(srv_model_t *m, srv_queue_t *q,
                               struct TRITONBACKEND_ModelInstance *inst, uint64_t now_ns,
                               bool nothing_more, uint64_t *wait_until_ns);

/** Sets up an instance's empty batch array. Loading thread. */
void srv_batcher_room_init(srv_model_t *m, struct TRITONBACKEND_ModelInstance *inst);

#endif
