/* Writer slots: each thread that writes per-request counters takes a small
 * index, round robin, at its first write, so that counters kept per slot
 * (statistics, the model's send gate) are written by one thread each as
 * long as no more than SRV_THREAD_SLOTS threads write them. Any thread. */
#ifndef NEREID_SERVER_STATS_THREAD_SLOT_H
#define NEREID_SERVER_STATS_THREAD_SLOT_H

#include <stdint.h>

/* A power of two. More threads than this share slots, still correctly:
 * whatever is kept per slot must be an atomic read-modify-write. */
#define SRV_THREAD_SLOTS 16u
/* What a slot aligns to, so that two slots never share a line. */
#define SRV_SLOT_LINE 64u

/* The calling thread's index + 1 (0: none taken yet). Initial-exec: the
 * variable sits in static TLS and a read is one %fs-relative load, not a
 * call to __tls_get_addr (a dlopen of the library needs room for it:
 * ../common/block_pool.md, "Cost"). */
extern _Thread_local uint32_t srv_thread_slot_plus1 __attribute__((tls_model("initial-exec")));

/** Takes the calling thread's index (the next one, round robin) and
 *  returns it. Once per thread; lock-free. */
uint32_t srv_thread_slot_take(void);

/** The calling thread's slot index, in [0, SRV_THREAD_SLOTS). Any thread;
 *  wait-free (a thread-local read; srv_thread_slot_take the first time).
 *  A thread keeps its index for its life. */
static inline uint32_t srv_thread_slot(void) {
  uint32_t i = srv_thread_slot_plus1;
  if (__builtin_expect(i == 0, 0)) return srv_thread_slot_take();
  return i - 1;
}

#endif
