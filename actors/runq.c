/* Worker-local run queue (see runq.h): the owner pushes at `tail`; the owner
 * and thieves take from `head` with a CAS. Owner worker plus any thief. */
#include "actors/runq.h"

#define MASK (ACT_RUNQ_CAP - 1u)

void act_runq_init(act_runq_t *q) {
  atomic_init(&q->head, 0);
  atomic_init(&q->tail, 0);
  for (uint32_t i = 0; i < ACT_RUNQ_CAP; i++) atomic_init(&q->slot[i], NULL);
}

bool act_runq_push(act_runq_t *q, struct act_actor *a) {
  /* relaxed: only this thread stores tail. */
  uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
  /* acquire: a consumer read the slot we are about to reuse before its CAS
   * moved head past it (release), so our overwrite cannot reach its read. */
  uint32_t h = atomic_load_explicit(&q->head, memory_order_acquire);
  if (t - h >= ACT_RUNQ_CAP) return false;
  /* relaxed: slots are atomic only because a thief holding a stale head may
   * read one being rewritten; it then fails its CAS and drops the value. */
  atomic_store_explicit(&q->slot[t & MASK], a, memory_order_relaxed);
  /* seq_cst: a release that publishes the slot and the actor to whoever
   * acquires tail, and the "work is visible" store of the scheduler's
   * sleep/wake protocol (scheduler.c, notify). */
  atomic_store_explicit(&q->tail, t + 1, memory_order_seq_cst);
  return true;
}

/* Takes n actors starting at h, if head is still h. */
static bool take(act_runq_t *q, uint32_t h, uint32_t n) {
  /* acq_rel: acquire orders our slot reads before any later reuse we may
   * see; release lets the owner's push (acquire head) reuse the slots. */
  return atomic_compare_exchange_strong_explicit(
      &q->head, &h, h + n, memory_order_acq_rel, memory_order_relaxed);
}

struct act_actor *act_runq_pop(act_runq_t *q) {
  for (;;) {
    /* acquire: see thieves' progress (and their release of slots). */
    uint32_t h = atomic_load_explicit(&q->head, memory_order_acquire);
    /* relaxed: our own stores. */
    uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
    if (h == t) return NULL;
    struct act_actor *a =
        atomic_load_explicit(&q->slot[h & MASK], memory_order_relaxed);
    if (take(q, h, 1)) return a;
  }
}

struct act_actor *act_runq_steal(act_runq_t *victim, act_runq_t *into) {
  for (;;) {
    uint32_t h = atomic_load_explicit(&victim->head, memory_order_acquire);
    /* acquire: pairs with the owner's release of tail, so the slots below
     * h..t and the actors in them are visible. */
    uint32_t t = atomic_load_explicit(&victim->tail, memory_order_acquire);
    uint32_t len = t - h;
    if (len == 0) return NULL;
    if (len > ACT_RUNQ_CAP) continue; /* h was stale: re-read */
    uint32_t n = len - len / 2;       /* half, rounded up */
    /* relaxed slot reads: valid only if the CAS below succeeds, which
     * proves head did not move, so the owner could not reuse the slots. */
    uint32_t it = atomic_load_explicit(&into->tail, memory_order_relaxed);
    for (uint32_t i = 1; i < n; i++) {
      struct act_actor *a = atomic_load_explicit(&victim->slot[(h + i) & MASK],
                                                 memory_order_relaxed);
      atomic_store_explicit(&into->slot[(it + i - 1) & MASK], a,
                            memory_order_relaxed);
    }
    struct act_actor *first =
        atomic_load_explicit(&victim->slot[h & MASK], memory_order_relaxed);
    if (!take(victim, h, n)) continue;
    /* seq_cst: publishes the copied slots, as in act_runq_push. */
    atomic_store_explicit(&into->tail, it + n - 1, memory_order_seq_cst);
    return first;
  }
}

uint32_t act_runq_len(const act_runq_t *q) {
  /* seq_cst: the sleep protocol's re-check (scheduler.c) needs these loads
   * in the single total order; on x86 they are plain loads anyway. */
  uint32_t t = atomic_load_explicit(&q->tail, memory_order_seq_cst);
  uint32_t h = atomic_load_explicit(&q->head, memory_order_seq_cst);
  uint32_t len = t - h;
  return len > ACT_RUNQ_CAP ? 0 : len;
}
