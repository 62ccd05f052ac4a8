/* Timer min-heap (see timer_heap.h). Only the holder of the timer lock. */
#include "actors/timer_heap.h"

#include <stdbool.h>
#include <stdlib.h>

#include "actors/base.h"

void act_timer_heap_init(act_timer_heap_t *h) {
  h->items = NULL;
  h->len = 0;
  h->cap = 0;
}

void act_timer_heap_free(act_timer_heap_t *h) {
  free(h->items);
  act_timer_heap_init(h);
}

static bool earlier(const act_timer_t *a, const act_timer_t *b) {
  if (a->deadline_ns != b->deadline_ns) return a->deadline_ns < b->deadline_ns;
  return a->seq < b->seq;
}

static void place(act_timer_heap_t *h, uint32_t i, act_timer_t *t) {
  h->items[i] = t;
  t->slot = i + 1;
}

static void sift_up(act_timer_heap_t *h, uint32_t i) {
  act_timer_t *t = h->items[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!earlier(t, h->items[parent])) break;
    place(h, i, h->items[parent]);
    i = parent;
  }
  place(h, i, t);
}

static void sift_down(act_timer_heap_t *h, uint32_t i) {
  act_timer_t *t = h->items[i];
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= h->len) break;
    if (child + 1 < h->len && earlier(h->items[child + 1], h->items[child]))
      child++;
    if (!earlier(h->items[child], t)) break;
    place(h, i, h->items[child]);
    i = child;
  }
  place(h, i, t);
}

void act_timer_heap_insert(act_timer_heap_t *h, act_timer_t *t) {
  if (h->len == h->cap) {
    uint32_t cap = h->cap == 0 ? 64 : h->cap * 2;
    act_timer_t **items = realloc(h->items, cap * sizeof *items);
    if (items == NULL) ACT_FATAL("out of memory growing the timer heap");
    h->items = items;
    h->cap = cap;
  }
  h->items[h->len] = t;
  sift_up(h, h->len++);
}

void act_timer_heap_remove(act_timer_heap_t *h, act_timer_t *t) {
  uint32_t i = t->slot - 1;
  t->slot = 0;
  act_timer_t *last = h->items[--h->len];
  if (i == h->len) return; /* t was the last item */
  place(h, i, last);
  if (i > 0 && earlier(last, h->items[(i - 1) / 2]))
    sift_up(h, i);
  else
    sift_down(h, i);
}

act_timer_t *act_timer_heap_min(const act_timer_heap_t *h) {
  return h->len > 0 ? h->items[0] : NULL;
}
