/* Inline runs (see inline.h). The FIFO is the thread's own: no other
 * thread reads it, so it needs no atomics. */
#include "actors/inline.h"

#include <assert.h>
#include <sched.h>

#include "actors/base.h"
#include "actors/runtime_internal.h"

enum {
  INLINE_TURNS = 256, /* turns per act_inline_end before handing over */
};

_Thread_local act_inline_fifo_t act_inline_fifo ACT_TLS_INITIAL_EXEC;

/* begin and end are static so that act_send_inline gets them inlined (the
 * exported names may be interposed, so the compiler calls those). */
static inline void inline_begin(act_sched_t *s) {
  act_inline_fifo_t *t = &act_inline_fifo;
  if (t->depth++ > 0) {
    assert(t->sched == s && "inline sections of two runtimes nested");
    return;
  }
  t->sched = s; /* the FIFO is empty: the last end drained it */
}

void act_inline_begin(act_runtime_t *rt) { inline_begin(&rt->sched); }

static act_actor_t *take_next(act_inline_fifo_t *t) {
  if (t->len == 0) return NULL;
  act_actor_t *a = t->items[t->head];
  t->head = (t->head + 1) % ACT_INLINE_CAP;
  t->len--;
  return a;
}

static inline void inline_end(void) {
  act_inline_fifo_t *t = &act_inline_fifo;
  assert(t->depth > 0 && "act_inline_end without begin");
  if (t->depth > 1) { /* an inner section: the outermost runs the FIFO */
    t->depth--;
    return;
  }
  act_sched_t *s = t->sched;
  act_actor_t *a;
  unsigned turns = 0;
  while (turns < INLINE_TURNS && (a = take_next(t)) != NULL) {
    turns++;
    switch (act_actor_turn(a, s->batch)) {
      case ACT_TURN_WAIT: /* a sender is between its two steps */
        sched_yield();
        /* fall through */
      case ACT_TURN_MORE:
        if (!act_inline_take(s, a)) act_sched_submit(s, a);
        break;
      case ACT_TURN_IDLE:
      case ACT_TURN_STOPPED:
        break;
    }
  }
  /* Stop keeping first, so that the submits below reach the workers. */
  t->sched = NULL;
  t->depth = 0;
  while ((a = take_next(t)) != NULL) act_sched_submit(s, a);
}

void act_inline_end(void) { inline_end(); }

void act_send_inline(act_actor_t *to, act_msg_t *msg) {
  inline_begin(&act_actor_runtime(to)->sched);
  act_send(to, msg);
  inline_end();
}
