/* Timers (see timer.h and README.md "Timers"): a heap under a mutex and one
 * timer thread sleeping on a futex until the earliest deadline. Arm and
 * cancel: any thread. Delivery: the timer thread, through act_send. */
#define _GNU_SOURCE /* pthread_setname_np */
#include "actors/timer.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "actors/futex.h"
#include "actors/runtime_internal.h"
#include "actors/timer_heap.h"

enum { FIRE_BATCH = 64 }; /* deliveries per lock release */

struct act_timers {
  pthread_mutex_t mu;
  act_timer_heap_t heap; /* under mu */
  uint64_t next_seq;     /* under mu */
  uint64_t sleep_until;  /* under mu: what the thread sleeps towards */
  bool stop;             /* under mu */
  /* Futex word the thread sleeps on; bumped to wake it early. */
  _Alignas(ACT_CACHE_LINE) atomic_uint kick;
  act_runtime_t *rt;
  pthread_t thread;
};

void act_timer_init(act_timer_t *t) { memset(t, 0, sizeof *t); }

static void kick(struct act_timers *tm) {
  /* relaxed: the heap travels under the mutex; the bump only has to differ
   * from the value the thread read under that mutex before sleeping. */
  atomic_fetch_add_explicit(&tm->kick, 1, memory_order_relaxed);
  act_futex_wake(&tm->kick, 1);
}

void act_timer_arm(act_runtime_t *rt, act_timer_t *t, uint64_t deadline_ns,
                   act_actor_t *to, act_msg_t *msg) {
  struct act_timers *tm = rt->timers;
  pthread_mutex_lock(&tm->mu);
  assert(t->slot == 0 && "act_timer_arm on an armed timer");
  t->deadline_ns = deadline_ns;
  t->seq = tm->next_seq++;
  t->to = to;
  t->msg = msg;
  act_timer_heap_insert(&tm->heap, t);
  /* Wake the thread only if it would otherwise sleep past this deadline. */
  bool wake = deadline_ns < tm->sleep_until;
  if (wake) tm->sleep_until = deadline_ns;
  pthread_mutex_unlock(&tm->mu);
  if (wake) kick(tm);
}

bool act_timer_cancel(act_runtime_t *rt, act_timer_t *t) {
  struct act_timers *tm = rt->timers;
  pthread_mutex_lock(&tm->mu);
  bool armed = t->slot != 0;
  if (armed) act_timer_heap_remove(&tm->heap, t);
  pthread_mutex_unlock(&tm->mu);
  return armed;
}

typedef struct {
  act_actor_t *to;
  act_msg_t *msg;
} delivery_t;

/* Pops due timers (lock held). Once popped a timer is unarmed: cancel says
 * false, and the owner may re-arm it while we deliver from our copy. */
static size_t take_due(struct act_timers *tm, delivery_t *due, uint64_t now) {
  size_t n = 0;
  act_timer_t *t;
  while (n < FIRE_BATCH && (t = act_timer_heap_min(&tm->heap)) != NULL &&
         t->deadline_ns <= now) {
    act_timer_heap_remove(&tm->heap, t);
    due[n].to = t->to;
    due[n].msg = t->msg;
    n++;
  }
  return n;
}

/* Most we wake before a deadline and spin (bounds the CPU spent per fire). */
#define EARLY_MAX_NS 50000u

/* Learns the lateness of our timed waits (moving average, 1/8 weight): we
 * wake that much before a deadline and spin the rest. On a VM the kernel
 * wakes us ~20 us late; on bare metal the margin shrinks by itself. */
static uint64_t learn_early(uint64_t early, uint64_t late) {
  if (late > EARLY_MAX_NS) late = EARLY_MAX_NS;
  return early - early / 8 + late / 8;
}

/* Lock held on entry and exit. Waits until `until` (or a kick: an arm of an
 * earlier deadline, or stop), sleeping while it is far and spinning for
 * the last `*early` ns. */
static void wait_towards(struct act_timers *tm, uint64_t until,
                         uint64_t *early) {
  tm->sleep_until = until; /* arms of an earlier deadline kick us */
  /* relaxed, under mu: any arm after our unlock bumps it afterwards. */
  unsigned seen = atomic_load_explicit(&tm->kick, memory_order_relaxed);
  pthread_mutex_unlock(&tm->mu);
  uint64_t now = act_now_ns();
  if (until != UINT64_MAX && until - now <= *early) {
    /* relaxed: a change only means "look again"; the heap is under mu. */
    while (act_now_ns() < until &&
           atomic_load_explicit(&tm->kick, memory_order_relaxed) == seen)
      act_cpu_relax();
  } else {
    uint64_t wake_at = until == UINT64_MAX ? UINT64_MAX : until - *early;
    act_futex_wait(&tm->kick, seen, wake_at);
    now = act_now_ns();
    if (wake_at != UINT64_MAX && now >= wake_at)
      *early = learn_early(*early, now - wake_at);
  }
  pthread_mutex_lock(&tm->mu);
}

static void *timer_main(void *arg) {
  struct act_timers *tm = arg;
  /* Default slack (50 us) would be most of our lateness budget. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  delivery_t due[FIRE_BATCH];
  uint64_t early = 0;
  pthread_mutex_lock(&tm->mu);
  while (!tm->stop) {
    size_t n = take_due(tm, due, act_now_ns());
    if (n > 0) {
      tm->sleep_until = 0; /* awake: arms need not kick */
      pthread_mutex_unlock(&tm->mu);
      for (size_t i = 0; i < n; i++) act_send(due[i].to, due[i].msg);
      pthread_mutex_lock(&tm->mu);
      continue;
    }
    act_timer_t *first = act_timer_heap_min(&tm->heap);
    wait_towards(tm, first != NULL ? first->deadline_ns : UINT64_MAX, &early);
  }
  pthread_mutex_unlock(&tm->mu);
  return NULL;
}

struct act_timers *act_timers_start(act_runtime_t *rt) {
  struct act_timers *tm = aligned_alloc(ACT_CACHE_LINE, sizeof *tm);
  if (tm == NULL) return NULL;
  memset(tm, 0, sizeof *tm);
  pthread_mutex_init(&tm->mu, NULL);
  act_timer_heap_init(&tm->heap);
  tm->sleep_until = UINT64_MAX;
  atomic_init(&tm->kick, 0);
  tm->rt = rt;
  if (pthread_create(&tm->thread, NULL, timer_main, tm) != 0) {
    pthread_mutex_destroy(&tm->mu);
    free(tm);
    return NULL;
  }
  pthread_setname_np(tm->thread, "act-timer"); /* there on return */
  return tm;
}

void act_timers_stop(struct act_timers *tm) {
  pthread_mutex_lock(&tm->mu);
  tm->stop = true;
  pthread_mutex_unlock(&tm->mu);
  kick(tm);
  pthread_join(tm->thread, NULL);
  act_timer_heap_free(&tm->heap);
  pthread_mutex_destroy(&tm->mu);
  free(tm);
}
