/* The SIGBUS guard (see shm_guard.h). The handler reads the slot table
 * without locks: a slot's range is published (seq_cst) before its mapping
 * is handed to requests and cleared before it is unmapped, and no thread
 * touches a mapping that no request holds, so a fault never races with
 * the removal of its own slot. Adding and removing serialize on a mutex. */
#include "server/shm/shm_guard.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/shm/shm.h"

typedef struct {
  _Atomic uintptr_t start; /* 0: free */
  _Atomic uintptr_t end;
  _Atomic uint32_t faults;
} guard_slot_t;

static guard_slot_t slots[SRV_SHM_REGIONS_MAX];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t installed = PTHREAD_ONCE_INIT;
static struct sigaction previous;
static uintptr_t page_size;

/* Whether the fault at `a` lies in a guarded mapping; if so the page is
 * replaced by a zero page and the fault counted. Async-signal-safe: atomics
 * and the mmap system call. */
static bool fault_absorb(uintptr_t a) {
  for (size_t i = 0; i < SRV_SHM_REGIONS_MAX; i++) {
    uintptr_t start = atomic_load_explicit(&slots[i].start, memory_order_seq_cst);
    if (start == 0 || a < start ||
        a >= atomic_load_explicit(&slots[i].end, memory_order_seq_cst))
      continue;
    void *page = (void *)(a & ~(page_size - 1));
    if (mmap(page, page_size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
      return false;
    atomic_fetch_add_explicit(&slots[i].faults, 1, memory_order_seq_cst);
    return true;
  }
  return false;
}

static void on_sigbus(int sig, siginfo_t *info, void *context) {
  if (fault_absorb((uintptr_t)info->si_addr)) return; /* the access runs again */
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction != NULL) {
      previous.sa_sigaction(sig, info, context);
      return;
    }
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return;
  }
  /* Not ours and nobody else's: the default action, when the access runs
   * again. */
  signal(SIGBUS, SIG_DFL);
}

static void install_once(void) {
  page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &previous);
}

void srv_shm_guard_install(void) { pthread_once(&installed, install_once); }

uint32_t srv_shm_guard_add(void *addr, size_t len) {
  srv_shm_guard_install();
  pthread_mutex_lock(&slots_lock);
  uint32_t found = 0;
  for (uint32_t i = 0; i < SRV_SHM_REGIONS_MAX; i++) {
    if (atomic_load_explicit(&slots[i].start, memory_order_relaxed) != 0) continue;
    atomic_store_explicit(&slots[i].faults, 0, memory_order_relaxed);
    atomic_store_explicit(&slots[i].end, (uintptr_t)addr + len, memory_order_seq_cst);
    atomic_store_explicit(&slots[i].start, (uintptr_t)addr, memory_order_seq_cst);
    found = i + 1;
    break;
  }
  pthread_mutex_unlock(&slots_lock);
  return found;
}

void srv_shm_guard_remove(uint32_t slot) {
  if (slot == 0) return;
  pthread_mutex_lock(&slots_lock);
  atomic_store_explicit(&slots[slot - 1].start, 0, memory_order_seq_cst);
  atomic_store_explicit(&slots[slot - 1].end, 0, memory_order_seq_cst);
  pthread_mutex_unlock(&slots_lock);
}

uint32_t srv_shm_guard_faults(uint32_t slot) {
  if (slot == 0) return 0;
  return atomic_load_explicit(&slots[slot - 1].faults, memory_order_seq_cst);
}
