/* Writer slot indices (see thread_slot.h). */
#include "server/stats/thread_slot.h"

#include <stdatomic.h>

_Thread_local uint32_t srv_thread_slot_plus1 __attribute__((tls_model("initial-exec")));

uint32_t srv_thread_slot_take(void) {
  /* Relaxed: only the spread of threads over slots depends on it. */
  static _Atomic uint32_t next;
  uint32_t i = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) &
               (SRV_THREAD_SLOTS - 1);
  srv_thread_slot_plus1 = i + 1;
  return i;
}
