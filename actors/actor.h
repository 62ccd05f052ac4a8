/* Actors: state + behaviour function + mailbox; sending messages to them.
 * Any thread sends; an actor's behaviour runs on one thread at a time. */
#ifndef NEREID_ACTORS_ACTOR_H
#define NEREID_ACTORS_ACTOR_H

#include <stdint.h>

#include "actors/inject.h"
#include "actors/mailbox.h"
#include "actors/msg.h"

typedef struct act_actor act_actor_t;
typedef struct act_runtime act_runtime_t;

/** A behaviour: called with each message in turn, never concurrently with
 * itself for the same actor. It owns msg from the call on (free it, keep
 * it, or re-send it). It must not block (no sleeps, locks held long, I/O
 * waits): blocking work belongs to a pinned actor. */
typedef void act_behaviour_fn(act_actor_t *self, act_msg_t *msg);

/** Runtime-private fields; the definition is public only so that an actor
 * can be embedded in the struct that owns it (no allocation). 192 bytes.
 * Owners that care about false sharing allocate it (or their struct)
 * 64-byte aligned, as act_spawn does: then `head`, which every sender
 * writes, has a cache line to itself. */
struct act_actor {
  act_mailbox_t mailbox;  /* senders: head; runner: the rest */
  act_link_t link;        /* inject-queue link, scheduler-owned while queued */
  act_runtime_t *rt;
  act_behaviour_fn *fn;
  void *state;
  struct act_pin *pin;    /* pinned actors: their thread; NULL otherwise */
  uint32_t flags;         /* ACT_ACTOR_* below, set at init */
};

#define ACT_ACTOR_HEAP 1u   /* from act_spawn: freed by the runtime */

/** Initialises an embedded actor that runs on the worker threads. The owner
 * keeps `a` valid until the behaviour has been called with the stop
 * message (see act_send_stop). Any thread; the actor counts as alive for
 * act_runtime_quiesce from now until its stop message is handled. Before
 * act_runtime_free only. */
void act_actor_init(act_actor_t *a, act_runtime_t *rt, act_behaviour_fn *fn,
                    void *state);

/** Like act_actor_init on memory the runtime allocates and frees after the
 * behaviour returns from the stop message. Any thread. Never returns NULL
 * (out of memory is fatal). The caller must not use the pointer after it
 * sends the stop message. */
act_actor_t *act_spawn(act_runtime_t *rt, act_behaviour_fn *fn, void *state);

/** Initialises an embedded actor that owns a dedicated thread (named
 * thread_name, truncated to 15 bytes; NULL for a default), for behaviours
 * that block (backend execution). The thread sleeps while the mailbox is
 * empty and is woken by the send that fills it. After the stop message the
 * thread exits; it is joined by act_runtime_reap or act_runtime_free. Any
 * thread. Returns 0, or an errno value (nothing was started then and the
 * actor is not alive). */
int act_actor_init_pinned(act_actor_t *a, act_runtime_t *rt,
                          act_behaviour_fn *fn, void *state,
                          const char *thread_name);

/** The state pointer given at init. Any thread (it never changes). Inline:
 * every behaviour starts with it. */
static inline void *act_actor_state(const act_actor_t *a) { return a->state; }

/** The runtime the actor belongs to. Any thread. */
static inline act_runtime_t *act_actor_runtime(const act_actor_t *a) { return a->rt; }

/** Queues msg for `to`. Any thread: workers, pinned threads, the timer
 * thread, and threads outside the runtime (those schedule the actor through
 * the inject queue). Lock-free and never blocks: a wait-free push, plus, for
 * the one send that finds the actor idle, a push onto a run queue and
 * possibly a futex wake of a sleeping worker. FIFO per sending thread. msg
 * belongs to the receiver from the call on: the sender must not touch it,
 * nor re-send it until the receiver hands it back. Clears ACT_MSG_STOP. */
void act_send(act_actor_t *to, act_msg_t *msg);

/** act_send of the actor's final message (sets ACT_MSG_STOP): the behaviour
 * gets it after every message sent before it, then the runtime never
 * touches the actor again. An embedded actor's owner may free or reuse its
 * memory inside the behaviour handling this message; an act_spawn actor is
 * freed by the runtime after that behaviour returns; a pinned actor's
 * thread exits. Any thread, once per actor; every other send to the actor
 * must happen before this one (sending after it is a contract violation,
 * asserted in debug builds when detected). */
void act_send_stop(act_actor_t *to, act_msg_t *msg);

/** act_send_stop(self, msg) for an actor that stops itself: called from
 * self's own behaviour with nothing queued for self, the stop skips the
 * mailbox and the turn it would cost; the runtime calls the behaviour with
 * msg (ACT_MSG_STOP set) right after the current call returns, in the same
 * turn, with the same stop rules (quiesce count, freeing, a pinned
 * thread's exit). Otherwise it is act_send_stop: from another thread or
 * actor, when messages are queued (sent before the stop, they go first),
 * or while another actor's kept stop is pending on this thread (an inline
 * turn inside that actor's behaviour). Same contract as act_send_stop:
 * once, every other send to self must happen before it (asserted in debug
 * builds), and the caller must not touch msg after it. */
void act_send_stop_self(act_actor_t *self, act_msg_t *msg);

/** The actor whose behaviour is running on the calling thread, or NULL. */
act_actor_t *act_self(void);

#endif
