/* Binary min-heap of armed timers ordered by (deadline, arm order); each
 * timer knows its slot so cancel is O(log n). Caller holds the timer lock. */
#ifndef NEREID_ACTORS_TIMER_HEAP_H
#define NEREID_ACTORS_TIMER_HEAP_H

#include <stdint.h>

#include "actors/timer.h"

typedef struct act_timer_heap {
  act_timer_t **items;
  uint32_t len;
  uint32_t cap;
} act_timer_heap_t;

void act_timer_heap_init(act_timer_heap_t *h);
/* Frees the array; timers still in it are left as they are. */
void act_timer_heap_free(act_timer_heap_t *h);
/* Adds t (t->slot == 0). Grows the array; out of memory is fatal. */
void act_timer_heap_insert(act_timer_heap_t *h, act_timer_t *t);
/* Removes t (t->slot != 0, t in h) and sets t->slot = 0. */
void act_timer_heap_remove(act_timer_heap_t *h, act_timer_t *t);
/* Earliest timer, or NULL. */
act_timer_t *act_timer_heap_min(const act_timer_heap_t *h);

#endif
