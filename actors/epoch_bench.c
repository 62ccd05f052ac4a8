/* Benchmark of epoch reclamation (not a test): the cost of an
 * act_epoch_enter/exit pair on one thread, on two threads at once, and with
 * a writer retiring and polling meanwhile; a pthread rwlock for scale.
 * Main thread plus up to three bench threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "actors/epoch.h"
#include "actors/timer.h"

enum { PAIRS = 50000000 };

static act_epoch_t *dom;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static atomic_bool writer_stop;
static atomic_int ready;
static int nthreads;

/* Starts together with the other bench threads, so that they overlap. */
static void start_line(void) {
  atomic_fetch_add(&ready, 1);
  while (atomic_load(&ready) < nthreads) {
  }
}

static void *pairs_epoch(void *arg) {
  start_line();
  uint64_t t0 = act_now_ns();
  for (int i = 0; i < PAIRS; i++) {
    act_epoch_enter(dom);
    act_epoch_exit(dom);
  }
  *(double *)arg = (double)(act_now_ns() - t0) / PAIRS;
  return NULL;
}

static void *pairs_nested(void *arg) {
  start_line();
  act_epoch_enter(dom);
  uint64_t t0 = act_now_ns();
  for (int i = 0; i < PAIRS; i++) {
    act_epoch_enter(dom);
    act_epoch_exit(dom);
  }
  *(double *)arg = (double)(act_now_ns() - t0) / PAIRS;
  act_epoch_exit(dom);
  return NULL;
}

static void *pairs_rwlock(void *arg) {
  start_line();
  uint64_t t0 = act_now_ns();
  for (int i = 0; i < PAIRS; i++) {
    pthread_rwlock_rdlock(&rw);
    pthread_rwlock_unlock(&rw);
  }
  *(double *)arg = (double)(act_now_ns() - t0) / PAIRS;
  return NULL;
}

static void noop(act_epoch_entry_t *e) { (void)e; }

/* Retires and polls as fast as it can: every poll scans the readers'
 * records, pulling their lines away from them. */
static void *writer(void *arg) {
  act_epoch_entry_t *entries = calloc(1024, sizeof *entries);
  unsigned long polls = 0;
  start_line();
  while (!atomic_load_explicit(&writer_stop, memory_order_relaxed)) {
    for (int i = 0; i < 1024; i++) {
      act_epoch_retire(dom, &entries[i], noop);
      act_epoch_poll(dom);
      polls++;
    }
    act_epoch_synchronize(dom); /* the entries are reused next round */
  }
  *(unsigned long *)arg = polls;
  free(entries);
  return NULL;
}

/* Runs n readers (and a writer if asked); prints ns per pair per thread. */
static void run(const char *what, void *(*fn)(void *), int n, bool with_writer) {
  pthread_t th[2], wr;
  double ns[2] = {0};
  unsigned long polls = 0;
  dom = act_epoch_new();
  atomic_store(&ready, 0);
  atomic_store(&writer_stop, false);
  nthreads = n + (with_writer ? 1 : 0);
  uint64_t t0 = act_now_ns();
  if (with_writer) pthread_create(&wr, NULL, writer, &polls);
  for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, fn, &ns[i]);
  for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
  double secs = (double)(act_now_ns() - t0) / 1e9;
  atomic_store(&writer_stop, true);
  if (with_writer) pthread_join(wr, NULL);
  printf("%-40s", what);
  for (int i = 0; i < n; i++) printf(" %6.2f ns", ns[i]);
  if (with_writer) printf("   (writer: %.1f M polls/s)", (double)polls / secs / 1e6);
  printf("\n");
  act_epoch_free(dom);
}

int main(int argc, char **argv) {
  int repeat = argc > 1 ? atoi(argv[1]) : 1;
  printf("ns per enter+exit pair, per reader thread (%d pairs each)\n", PAIRS);
  for (int r = 0; r < repeat; r++) {
    run("epoch, 1 thread", pairs_epoch, 1, false);
    run("epoch nested (inner pair), 1 thread", pairs_nested, 1, false);
    run("epoch, 2 threads", pairs_epoch, 2, false);
    run("epoch, 1 thread + writer polling", pairs_epoch, 1, true);
    run("epoch, 2 threads + writer polling", pairs_epoch, 2, true);
    run("pthread_rwlock rdlock+unlock, 1 thread", pairs_rwlock, 1, false);
    run("pthread_rwlock rdlock+unlock, 2 threads", pairs_rwlock, 2, false);
  }
  return 0;
}
