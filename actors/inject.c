/* Inject queue (see inject.h): producers exchange `head` (any thread);
 * consumers hold the `busy` try-lock while they walk from `tail`. */
#include "actors/inject.h"

void act_inject_init(act_inject_t *q) {
  atomic_init(&q->stub.next, NULL);
  atomic_init(&q->head, &q->stub);
  atomic_init(&q->busy, false);
  q->tail = &q->stub;
}

void act_inject_push(act_inject_t *q, act_link_t *l) {
  /* relaxed: l is unreachable until the exchange publishes it. */
  atomic_store_explicit(&l->next, NULL, memory_order_relaxed);
  /* seq_cst: acq_rel for the queue itself (release orders l->next = NULL
   * before the next producer's link store into l; acquire gives us prev's
   * likewise), and the "work is visible" step of the scheduler's sleep/wake
   * protocol (scheduler.c, notify). Same instruction on x86. */
  act_link_t *prev =
      atomic_exchange_explicit(&q->head, l, memory_order_seq_cst);
  /* release: a consumer acquires this link before it uses l. */
  atomic_store_explicit(&prev->next, l, memory_order_release);
}

/* Vyukov pop; caller holds busy. */
static act_link_t *pop_one(act_inject_t *q) {
  act_link_t *stub = &q->stub;
  act_link_t *tail = q->tail;
  /* acquire: pairs with the producer's release link. */
  act_link_t *next = atomic_load_explicit(&tail->next, memory_order_acquire);
  if (tail == stub) {
    if (next == NULL) return NULL;
    q->tail = next;
    tail = next;
    next = atomic_load_explicit(&tail->next, memory_order_acquire);
  }
  if (next != NULL) {
    q->tail = next;
    return tail;
  }
  /* tail is the newest linked node. Detach it by swinging head from it to
   * the stub. A CAS, not a push: a push could land the stub behind a
   * producer that is between its exchange and its link, leaving head ==
   * &stub with that producer's node still unpopped, and act_inject_is_empty
   * (what workers sleep on) would say "empty". With the CAS, head == &stub
   * means nothing is left. relaxed: stub.next is published by the CAS.
   * acq_rel on success: release publishes stub.next = NULL to the next
   * producer (it acquires head); relaxed on failure: a push is in flight,
   * its link will come and we report "nothing yet". */
  atomic_store_explicit(&stub->next, NULL, memory_order_relaxed);
  act_link_t *expected = tail;
  if (!atomic_compare_exchange_strong_explicit(&q->head, &expected, stub,
                                               memory_order_acq_rel,
                                               memory_order_relaxed))
    return NULL;
  q->tail = stub;
  return tail;
}

size_t act_inject_pop(act_inject_t *q, act_link_t **out, size_t max) {
  if (act_inject_is_empty(q)) return 0;
  /* acquire: the previous consumer's tail updates happen-before ours. */
  if (atomic_exchange_explicit(&q->busy, true, memory_order_acquire))
    return 0;
  size_t n = 0;
  while (n < max) {
    act_link_t *l = pop_one(q);
    if (l == NULL) break;
    out[n++] = l;
  }
  /* release: hands our tail updates to the next consumer. */
  atomic_store_explicit(&q->busy, false, memory_order_release);
  return n;
}

bool act_inject_is_empty(const act_inject_t *q) {
  /* seq_cst: the sleep protocol's re-check (scheduler.c); a plain load on
   * x86. After the last pop the stub is the head again. */
  return atomic_load_explicit(&q->head, memory_order_seq_cst) == &q->stub;
}
