/* Inline runs (see inline.h). The FIFO is the thread's own: no other
 * thread reads it, so it needs no atomics. */
#include "actors/inline.h"

#include <assert.h>
#include <sched.h>

#include "actors/base.h"
#include "actors/runtime_internal.h"

enum {
  /* Actors kept at most; more go to the workers. A run keeps one to three
   * (call, model, ensemble); the FIFO is thread-local, and
   * libtritonserver.so's thread-locals must stay small enough for a
   * dlopen (server/common/block_pool.md, "Cost"). */
  INLINE_CAP = 32,
  INLINE_TURNS = 256,  /* turns per act_inline_end before handing over */
};

typedef struct {
  act_runtime_t *rt;
  unsigned depth;
  act_actor_t *items[INLINE_CAP];
  unsigned head, len;
} inline_t;

static _Thread_local inline_t tls_inline ACT_TLS_INITIAL_EXEC;

void act_inline_begin(act_runtime_t *rt) {
  if (tls_inline.depth++ > 0) {
    assert(tls_inline.rt == rt && "inline sections of two runtimes nested");
    return;
  }
  tls_inline.rt = rt;
  tls_inline.head = tls_inline.len = 0;
}

bool act_inline_take(act_sched_t *s, act_actor_t *a) {
  inline_t *t = &tls_inline;
  if (t->rt == NULL || &t->rt->sched != s || t->len == INLINE_CAP) return false;
  t->items[(t->head + t->len++) % INLINE_CAP] = a;
  return true;
}

static act_actor_t *take_next(inline_t *t) {
  if (t->len == 0) return NULL;
  act_actor_t *a = t->items[t->head];
  t->head = (t->head + 1) % INLINE_CAP;
  t->len--;
  return a;
}

void act_inline_end(void) {
  inline_t *t = &tls_inline;
  assert(t->depth > 0 && "act_inline_end without begin");
  if (t->depth > 1) { /* an inner section: the outermost runs the FIFO */
    t->depth--;
    return;
  }
  act_runtime_t *rt = t->rt;
  act_actor_t *a;
  unsigned turns = 0;
  while (turns < INLINE_TURNS && (a = take_next(t)) != NULL) {
    turns++;
    switch (act_actor_turn(a, rt->batch)) {
      case ACT_TURN_WAIT: /* a sender is between its two steps */
        sched_yield();
        /* fall through */
      case ACT_TURN_MORE:
        if (!act_inline_take(&rt->sched, a)) act_sched_submit(&rt->sched, a);
        break;
      case ACT_TURN_IDLE:
      case ACT_TURN_STOPPED:
        break;
    }
  }
  /* Stop keeping first, so that the submits below reach the workers. */
  t->rt = NULL;
  t->depth = 0;
  while ((a = take_next(t)) != NULL) act_sched_submit(&rt->sched, a);
}

void act_send_inline(act_actor_t *to, act_msg_t *msg) {
  act_inline_begin(act_actor_runtime(to));
  act_send(to, msg);
  act_inline_end();
}
