/* The model actor's behaviour: the scheduler of one model version. It owns
 * the queue, the idle instances and the batching timer (see sched/README.md);
 * model.c starts the actor with this behaviour when a model loads. */
#ifndef NEREID_SERVER_SCHED_SCHEDULER_H
#define NEREID_SERVER_SCHED_SCHEDULER_H

#include "actors/actor.h"

/** Handles one message of a model actor (SRV_MODEL_* kinds of model.h).
 *  The model's actor only. */
void srv_scheduler_behaviour(act_actor_t *self, act_msg_t *msg);

typedef struct TRITONBACKEND_Model srv_model_t;

/* A request still queued (or an ensemble run still running) this long
 * after it arrived asks its owner to watch for a client cancel
 * (model/request.h, SRV_WATCH_LAZY). Longer than the queueing of a
 * saturated server (1024 in flight on `simple`: about 10 ms), so that
 * requests answered at full load never pay for the watch; short enough
 * that a cancelled or expired request leaves the queue well before a slow
 * model would have run it. */
enum { SRV_WATCH_AFTER_NS = 100 * 1000 * 1000 };

/** Asks for the model's timer message (SRV_MODEL_TIMER) at `at` (0: none),
 *  unless one is armed earlier or already on its way. The model actor. */
void srv_scheduler_timer_want(srv_model_t *m, uint64_t at);

/** The last step of a stop, once nothing of the model runs any more: the
 *  timer is settled, the gate closes, the instances and the actor stop.
 *  Returns early (to be called again) while a timer message or a gated
 *  send is on its way. The model actor. */
void srv_scheduler_close(srv_model_t *m);

#endif
