/* Actors (see actor.h): init, spawn, send, and one turn of a behaviour.
 * Senders: any thread. A turn: the worker or pinned thread running it. */
#include "actors/actor.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>

#include "actors/base.h"
#include "actors/pinned.h"
#include "actors/runtime_internal.h"
#include "actors/scheduler.h"

/* The thread's running actor, and a stop that a behaviour sent itself
 * with act_send_stop_self, kept for the end of its turn instead of being
 * queued. The kept stop names its actor: inline turns of other actors may
 * run inside that behaviour (inline.h). One struct: a turn computes its
 * address once for all three. */
static _Thread_local struct {
  act_actor_t *self;
  act_actor_t *stop_actor;
  act_msg_t *stop_msg;
} tls_run ACT_TLS_INITIAL_EXEC;

static void actor_setup(act_actor_t *a, act_runtime_t *rt,
                        act_behaviour_fn *fn, void *state, uint32_t flags) {
  act_mailbox_init(&a->mailbox);
  atomic_init(&a->link.next, NULL);
  a->rt = rt;
  a->fn = fn;
  a->state = state;
  a->pin = NULL;
  a->flags = flags;
}

void act_actor_init(act_actor_t *a, act_runtime_t *rt, act_behaviour_fn *fn,
                    void *state) {
  actor_setup(a, rt, fn, state, 0);
  act_runtime_actor_born(rt);
}

act_actor_t *act_spawn(act_runtime_t *rt, act_behaviour_fn *fn, void *state) {
  /* Whole cache lines of its own: no neighbour's hot fields share a line
   * with the senders' `head` or the runner's fields. */
  size_t size = (sizeof(act_actor_t) + ACT_CACHE_LINE - 1) &
                ~(size_t)(ACT_CACHE_LINE - 1);
  act_actor_t *a = aligned_alloc(ACT_CACHE_LINE, size);
  if (a == NULL) ACT_FATAL("out of memory spawning an actor");
  actor_setup(a, rt, fn, state, ACT_ACTOR_HEAP);
  act_runtime_actor_born(rt);
  return a;
}

int act_actor_init_pinned(act_actor_t *a, act_runtime_t *rt,
                          act_behaviour_fn *fn, void *state,
                          const char *thread_name) {
  actor_setup(a, rt, fn, state, 0);
  act_runtime_actor_born(rt);
  int err = act_pinned_start(rt, a, thread_name);
  if (err != 0) act_runtime_actor_died(rt);
  return err;
}

act_actor_t *act_self(void) { return tls_run.self; }

/* Only the sender whose push found the actor idle gets here, so the actor
 * cannot run (nor be freed) before we hand it over: reading it is safe. */
static void schedule(act_actor_t *a) {
  if (a->pin != NULL)
    act_pinned_wake(a->pin);
  else
    act_sched_submit(&a->rt->sched, a);
}

void act_send(act_actor_t *to, act_msg_t *msg) {
  msg->flags &= ~ACT_MSG_STOP;
  if (act_mailbox_push(&to->mailbox, msg)) schedule(to);
}

void act_send_stop(act_actor_t *to, act_msg_t *msg) {
  msg->flags |= ACT_MSG_STOP;
  if (act_mailbox_push(&to->mailbox, msg)) schedule(to);
}

void act_send_stop_self(act_actor_t *self, act_msg_t *msg) {
  /* Outside self's own turn, or something queued (sent before the stop,
   * so it goes first), or another kept stop (an outer turn's) holding the
   * one slot: queue it. Only self's runner reads its mailbox, and a push
   * that the check misses is one not ordered before the stop, which
   * act_send_stop forbids as well. */
  if (tls_run.self != self || tls_run.stop_actor != NULL ||
      !act_mailbox_is_drained(&self->mailbox)) {
    act_send_stop(self, msg);
    return;
  }
  msg->flags |= ACT_MSG_STOP;
  tls_run.stop_actor = self;
  tls_run.stop_msg = msg;
}

/* The final message: everything needed afterwards is read first, because
 * the behaviour may free the actor (embedded) and nothing may touch it
 * after the behaviour returns except our free of a heap actor. */
static act_turn_t deliver_stop(act_actor_t *a, act_msg_t *m, act_actor_t *prev) {
  act_runtime_t *rt = a->rt;
  bool heap = (a->flags & ACT_ACTOR_HEAP) != 0;
  bool pinned = a->pin != NULL;
  assert(act_mailbox_is_drained(&a->mailbox) &&
         "a message was sent after the stop message");
  a->fn(a, m);
  tls_run.self = prev;
  if (heap) free(a);
  /* A pinned thread reports its death itself, after marking itself
   * exited, so that quiesce-then-reap joins it. */
  if (!pinned) act_runtime_actor_died(rt);
  return ACT_TURN_STOPPED;
}

act_turn_t act_actor_turn(act_actor_t *a, unsigned batch) {
  act_mailbox_t *mb = &a->mailbox;
  /* Messages that arrive during this turn (an actor sending to itself, a
   * fast producer) wait for the next turn, so one actor cannot hold the
   * worker for longer than the backlog it started with (and `batch`). */
  const act_msg_t *newest = act_mailbox_newest(mb);
  /* An inline turn may run inside another actor's behaviour (inline.h). */
  act_actor_t *prev = tls_run.self;
  act_msg_t *m = act_mailbox_pop(mb);
  if (ACT_UNLIKELY(m == NULL)) /* empty, or a sender between its two steps */
    return act_mailbox_try_unschedule(mb) ? ACT_TURN_IDLE : ACT_TURN_WAIT;
  tls_run.self = a;
  /* Few values live across the behaviour's call (a, newest, the count,
   * prev): the turn runs about seven times per request. fn is re-read
   * from `a` (it never changes; a line the runner reads anyway). */
  assert(batch > 0);
  for (unsigned left = batch;;) {
    if (ACT_UNLIKELY((m->flags & ACT_MSG_STOP) != 0)) return deliver_stop(a, m, prev);
    assert(tls_run.stop_actor != a && "a message was sent after the stop message");
    bool last = (m == newest); /* compare before fn may free m */
    a->fn(a, m);
    if (last || --left == 0) break;
    m = act_mailbox_pop(mb);
    if (m == NULL) break;
  }
  /* A kept stop ends the batch: the mailbox was drained when it was sent,
   * so its message was the last one popped (pop stops at `newest`, or
   * found nothing more, or the batch ended there). */
  if (ACT_UNLIKELY(tls_run.stop_actor == a)) {
    act_msg_t *stop = tls_run.stop_msg;
    tls_run.stop_actor = NULL;
    return deliver_stop(a, stop, prev);
  }
  tls_run.self = prev;
  return act_mailbox_try_unschedule(mb) ? ACT_TURN_IDLE : ACT_TURN_MORE;
}
