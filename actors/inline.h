/* Inline runs: a thread outside the workers (a completion-queue thread, a
 * pinned actor's thread) runs the actors that its own sends schedule,
 * right after its current work, instead of handing each to a worker and
 * waking one. A request then crosses threads only where it must (to the
 * pinned thread that blocks), not at every message: on a small machine a
 * futex wake of another core costs more than the work it hands over.
 *
 * Between act_inline_begin and act_inline_end, every actor that a send on
 * this thread finds idle (and must schedule) is kept in a small FIFO of the
 * thread's own; act_inline_end runs their turns here, and the turns' own
 * sends join the FIFO. A budget of turns bounds the time one thread spends
 * so; what is left then goes to the workers as usual. Pinned actors are
 * never run inline: they have a thread of their own. Exclusive turns hold
 * as everywhere: only the sender whose push found the actor idle runs it.
 *
 * The rule for callers: nothing between begin and end may wait for an
 * actor it sent to, since that actor runs only at the end. So sections are
 * short and never block (a send, and what the behaviours do); a thread
 * that may block (a loader, a backend's execute) never keeps a section
 * open around it. Sections nest: only the outermost end runs the FIFO. On
 * a worker thread they change nothing (workers run what they schedule
 * anyway). */
#ifndef NEREID_ACTORS_INLINE_H
#define NEREID_ACTORS_INLINE_H

#include "actors/actor.h"

/** Starts keeping this thread's scheduled actors (nests). Any thread. */
void act_inline_begin(act_runtime_t *rt);

/** The outermost end runs what was kept (and what those turns schedule) up
 *  to the budget, then hands the rest to the workers and stops keeping. */
void act_inline_end(void);

/** act_send, then run the recipient here (see above): begin, send, end. */
void act_send_inline(act_actor_t *to, act_msg_t *msg);

#endif
