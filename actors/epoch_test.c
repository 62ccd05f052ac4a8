/* Epoch reclamation tests: nesting, grace periods against a reader on
 * another thread, pending counts, record reuse after thread exit, then a
 * torture of readers (some exiting and replaced) against a swapping writer. */
#include "actors/epoch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "actors/testing.h"
#include "test/unit/unit.h"

/* ---- single-threaded and small cases ------------------------------------ */

typedef struct {
  act_epoch_entry_t entry; /* first: the callback casts back */
  int id;
  int *log; /* callbacks append their id here */
  int *logged;
  act_epoch_t *d; /* non-NULL: the callback retires `child` into d */
  act_epoch_entry_t *child;
} counted_t;

static void counted_done(act_epoch_entry_t *e) {
  counted_t *c = (counted_t *)e;
  c->log[(*c->logged)++] = c->id;
  if (c->d != NULL) act_epoch_retire(c->d, c->child, counted_done);
}

static void nesting_blocks_until_outermost_exit(void) {
  act_epoch_t *d = act_epoch_new();
  int log[4], logged = 0;
  counted_t a = {.id = 1, .log = log, .logged = &logged};
  act_epoch_enter(d);
  act_epoch_enter(d); /* nested */
  act_epoch_retire(d, &a.entry, counted_done);
  CHECK_EQ_U64(act_epoch_pending(d), 1);
  CHECK(!act_epoch_poll(d));
  CHECK(!act_epoch_poll(d));
  act_epoch_exit(d); /* inner: still inside */
  CHECK(!act_epoch_poll(d));
  CHECK_EQ_U64(logged, 0);
  act_epoch_exit(d);
  CHECK(act_epoch_poll(d)); /* two advances and the callback, in one call */
  CHECK_EQ_U64(logged, 1);
  CHECK_EQ_U64(act_epoch_pending(d), 0);
  CHECK(act_epoch_poll(d)); /* nothing pending */
  CHECK_EQ_U64(act_epoch_records(d), 1);
  act_epoch_free(d);
}

static void pending_counts_and_retire_order(void) {
  act_epoch_t *d = act_epoch_new();
  int log[8], logged = 0;
  counted_t c[5];
  for (int i = 0; i < 5; i++) {
    c[i] = (counted_t){.id = i, .log = log, .logged = &logged};
    act_epoch_retire(d, &c[i].entry, counted_done);
    CHECK_EQ_U64(act_epoch_pending(d), (unsigned)i + 1);
  }
  CHECK(act_epoch_poll(d)); /* no reader at all: everything goes */
  CHECK_EQ_U64(act_epoch_pending(d), 0);
  CHECK_EQ_U64(logged, 5);
  for (int i = 0; i < 5; i++) CHECK_EQ_U64(log[i], i);
  CHECK_EQ_U64(act_epoch_records(d), 0); /* writers need no record */
  act_epoch_free(d);
}

static void callback_may_retire_and_free_runs_the_rest(void) {
  act_epoch_t *d = act_epoch_new();
  int log[8], logged = 0;
  counted_t child = {.id = 2, .log = log, .logged = &logged};
  counted_t parent = {
      .id = 1, .log = log, .logged = &logged, .d = d, .child = &child.entry};
  counted_t late = {.id = 3, .log = log, .logged = &logged};
  act_epoch_retire(d, &parent.entry, counted_done);
  act_epoch_synchronize(d); /* parent's callback retires child; both run */
  CHECK_EQ_U64(logged, 2);
  CHECK_EQ_U64(act_epoch_pending(d), 0);
  /* free runs what is pending, even with grace periods still open. */
  parent.child = &late.entry;
  act_epoch_enter(d);
  act_epoch_retire(d, &parent.entry, counted_done);
  CHECK(!act_epoch_poll(d));
  act_epoch_exit(d);
  act_epoch_free(d);
  CHECK_EQ_U64(logged, 4);
  CHECK_EQ_U64(log[2], 1);
  CHECK_EQ_U64(log[3], 3);
}

static void two_domains_are_independent(void) {
  act_epoch_t *d1 = act_epoch_new(), *d2 = act_epoch_new();
  int log[4], logged = 0;
  counted_t a = {.id = 1, .log = log, .logged = &logged};
  counted_t b = {.id = 2, .log = log, .logged = &logged};
  act_epoch_enter(d1);
  act_epoch_enter(d2);
  act_epoch_enter(d1); /* alternating domains: the thread's link list */
  act_epoch_exit(d2);
  act_epoch_retire(d1, &a.entry, counted_done);
  act_epoch_retire(d2, &b.entry, counted_done);
  CHECK(act_epoch_poll(d2)); /* only a d1 section is open */
  CHECK(!act_epoch_poll(d1));
  act_epoch_exit(d1);
  CHECK(!act_epoch_poll(d1));
  act_epoch_exit(d1);
  CHECK(act_epoch_poll(d1));
  CHECK_EQ_U64(logged, 2);
  act_epoch_free(d1);
  act_epoch_free(d2);
}

/* ---- a reader on another thread ------------------------------------------ */

typedef struct {
  act_epoch_t *d;
  atomic_int step;  /* 1: reader inside; 2: main says exit; 3: reader outside */
  unsigned hold_us; /* > 0: exit on its own after that long */
} reader_ctl_t;

static void wait_step(atomic_int *step, int want) {
  uint64_t end = act_now_ns() + 20ull * 1000000000u;
  while (atomic_load(step) < want && act_now_ns() < end) sched_yield();
}

static void *held_reader(void *arg) {
  reader_ctl_t *c = arg;
  act_epoch_enter(c->d);
  atomic_store(&c->step, 1);
  if (c->hold_us > 0) {
    act_test_sleep_us(c->hold_us);
  } else {
    wait_step(&c->step, 2);
  }
  atomic_store(&c->step, 3); /* before exit: synchronize must see it */
  act_epoch_exit(c->d);
  return NULL;
}

static void poll_fails_while_another_thread_reads(void) {
  act_epoch_t *d = act_epoch_new();
  int log[2], logged = 0;
  counted_t a = {.id = 1, .log = log, .logged = &logged};
  reader_ctl_t c = {.d = d};
  pthread_t th;
  pthread_create(&th, NULL, held_reader, &c);
  wait_step(&c.step, 1);
  act_epoch_retire(d, &a.entry, counted_done);
  for (int i = 0; i < 100; i++) CHECK(!act_epoch_poll(d));
  CHECK_EQ_U64(act_epoch_pending(d), 1);
  CHECK_EQ_U64(logged, 0);
  atomic_store(&c.step, 2);
  wait_step(&c.step, 3);
  pthread_join(th, NULL);
  CHECK(act_epoch_poll(d));
  CHECK_EQ_U64(logged, 1);
  act_epoch_free(d);
}

static void synchronize_waits_for_the_reader(void) {
  act_epoch_t *d = act_epoch_new();
  int log[2], logged = 0;
  counted_t a = {.id = 1, .log = log, .logged = &logged};
  reader_ctl_t c = {.d = d, .hold_us = 20000};
  pthread_t th;
  pthread_create(&th, NULL, held_reader, &c);
  wait_step(&c.step, 1);
  act_epoch_retire(d, &a.entry, counted_done);
  act_epoch_synchronize(d);
  CHECK_EQ_U64(atomic_load(&c.step), 3);
  CHECK_EQ_U64(logged, 1);
  pthread_join(th, NULL);
  act_epoch_free(d);
}

/* ---- records: reuse after thread exit, threads outliving a domain -------- */

static void *enter_exit_twice(void *arg) {
  act_epoch_t **d = arg; /* two domains */
  for (int i = 0; i < 2; i++) {
    act_epoch_enter(d[i]);
    act_epoch_exit(d[i]);
  }
  return NULL;
}

static void records_are_reused_after_thread_exit(void) {
  act_epoch_t *d[2] = {act_epoch_new(), act_epoch_new()};
  act_epoch_enter(d[0]); /* the main thread holds one record throughout */
  for (int round = 0; round < 40; round++) {
    pthread_t th[3];
    for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, enter_exit_twice, d);
    act_test_join(th, 3);
  }
  act_epoch_exit(d[0]);
  CHECK(act_epoch_records(d[0]) <= 4); /* main + at most 3 at a time */
  CHECK(act_epoch_records(d[1]) <= 3);
  CHECK(act_epoch_records(d[1]) >= 1);
  act_epoch_free(d[0]);
  act_epoch_free(d[1]);
}

typedef struct {
  act_epoch_t *d;
  atomic_int step; /* 1: registered; 2: main freed d */
} outlive_t;

static void *outlive_main(void *arg) {
  outlive_t *o = arg;
  act_epoch_enter(o->d);
  act_epoch_exit(o->d);
  atomic_store(&o->step, 1);
  wait_step(&o->step, 2);
  /* d is gone: registering elsewhere drops our link to it, and our exit
   * hook must skip it (ASan reports the use after free otherwise). */
  act_epoch_t *d2 = act_epoch_new();
  act_epoch_enter(d2);
  act_epoch_exit(d2);
  act_epoch_free(d2);
  return NULL;
}

static void thread_may_outlive_its_domain(void) {
  outlive_t o = {.d = act_epoch_new()};
  pthread_t th;
  pthread_create(&th, NULL, outlive_main, &o);
  wait_step(&o.step, 1);
  act_epoch_free(o.d);
  atomic_store(&o.step, 2);
  pthread_join(th, NULL);
}

/* ---- torture ------------------------------------------------------------- */

enum {
  STEADY = 4, /* readers that live through the whole run */
  CHURN = 2,  /* slots whose reader threads exit and are replaced */
  CHURN_SECTIONS = 200,
  PAYLOAD = 6,
  MAX_PENDING = 4096,     /* the writer waits (polling) above this */
  BASE_OBJECTS = 8000000, /* divided by NEREID_TEST_SLOWDOWN */
  MAX_SECONDS = 4,        /* the writer stops early on a slow machine */
};

#define LIVE 0x4c49564521u
#define DEAD 0xdeaddeaddeadull

typedef struct {
  act_epoch_entry_t entry; /* first; malloc's free-list link lands here */
  uint64_t magic;
  uint64_t serial;
  uint64_t payload[PAYLOAD];
} obj_t;

typedef struct {
  act_epoch_t *d;
  _Atomic(obj_t *) cur;
  atomic_bool stop;
  atomic_ullong sections, bad, freed, churned;
  atomic_uchar *freed_by_serial;
  uint64_t objects; /* serials allocated: the freed_by_serial bound */
  uint64_t written; /* serials published, set by the writer at its end */
} torture_t;

static torture_t *g_torture; /* the callback's context */

static obj_t *obj_new(uint64_t serial) {
  obj_t *o = malloc(sizeof *o);
  if (o == NULL) abort();
  o->magic = LIVE;
  o->serial = serial;
  for (int j = 0; j < PAYLOAD; j++) o->payload[j] = serial * 31 + (uint64_t)j;
  return o;
}

/* Poisons then frees: a reader that still holds it reads DEAD (or ASan
 * reports the use after free; TSan the race with these plain stores). */
static void obj_reclaim(act_epoch_entry_t *e) {
  obj_t *o = (obj_t *)e;
  torture_t *t = g_torture;
  if (o->magic != LIVE || o->serial >= t->objects) {
    atomic_fetch_add(&t->bad, 1);
    return;
  }
  atomic_fetch_add(&t->freed_by_serial[o->serial], 1);
  o->magic = DEAD;
  o->serial = DEAD;
  for (int j = 0; j < PAYLOAD; j++) o->payload[j] = DEAD;
  free(o);
  atomic_fetch_add_explicit(&t->freed, 1, memory_order_relaxed);
}

/* Re-reads through volatile so each check really loads again. */
static bool obj_ok(const volatile obj_t *o, uint64_t serial) {
  if (o->magic != LIVE || o->serial != serial) return false;
  for (int j = 0; j < PAYLOAD; j++)
    if (o->payload[j] != serial * 31 + (uint64_t)j) return false;
  return true;
}

static void read_section(torture_t *t, unsigned i) {
  act_epoch_enter(t->d);
  obj_t *o = atomic_load_explicit(&t->cur, memory_order_seq_cst);
  uint64_t serial = ((const volatile obj_t *)o)->serial;
  for (int k = 0; k < 4; k++) {
    if (!obj_ok(o, serial)) atomic_fetch_add(&t->bad, 1);
    if (k == 1 && i % 64 == 0) sched_yield(); /* widen the window */
    if (k == 2 && i % 8 == 0) {               /* a nested section */
      act_epoch_enter(t->d);
      obj_t *inner = atomic_load_explicit(&t->cur, memory_order_seq_cst);
      if (!obj_ok(inner, ((const volatile obj_t *)inner)->serial))
        atomic_fetch_add(&t->bad, 1);
      act_epoch_exit(t->d);
    }
  }
  act_epoch_exit(t->d);
}

static void *steady_reader(void *arg) {
  torture_t *t = arg;
  unsigned i = 0;
  while (!atomic_load_explicit(&t->stop, memory_order_relaxed)) read_section(t, i++);
  atomic_fetch_add(&t->sections, i);
  return NULL;
}

static void *churn_reader(void *arg) {
  torture_t *t = arg;
  for (unsigned i = 0; i < CHURN_SECTIONS; i++) read_section(t, i);
  atomic_fetch_add(&t->sections, CHURN_SECTIONS);
  return NULL; /* the exit hook releases our record */
}

static void *churn_slot(void *arg) {
  torture_t *t = arg;
  while (!atomic_load_explicit(&t->stop, memory_order_relaxed)) {
    pthread_t th;
    pthread_create(&th, NULL, churn_reader, t);
    pthread_join(th, NULL);
    atomic_fetch_add(&t->churned, 1);
  }
  return NULL;
}

static void *writer_main(void *arg) {
  torture_t *t = arg;
  uint64_t end = act_now_ns() + MAX_SECONDS * 1000000000ull, s;
  for (s = 1; s < t->objects && (s % 1024 != 0 || act_now_ns() < end); s++) {
    obj_t *old = atomic_exchange_explicit(&t->cur, obj_new(s), memory_order_seq_cst);
    act_epoch_retire(t->d, &old->entry, obj_reclaim);
    if (s % 8 == 0) act_epoch_poll(t->d);
    while (act_epoch_pending(t->d) > MAX_PENDING && !act_epoch_poll(t->d)) sched_yield();
  }
  t->written = s; /* read after the join */
  return NULL;
}

static uint64_t slowdown(void) { return (uint64_t)unit_slowdown(); }

static void torture_readers_against_swapping_writer(void) {
  torture_t *t = calloc(1, sizeof *t);
  REQUIRE(t != NULL);
  t->objects = BASE_OBJECTS / slowdown();
  t->freed_by_serial = calloc(t->objects, sizeof *t->freed_by_serial);
  REQUIRE(t->freed_by_serial != NULL);
  t->d = act_epoch_new();
  g_torture = t;
  atomic_init(&t->cur, obj_new(0));
  pthread_t rd[STEADY], ch[CHURN], wr;
  for (int i = 0; i < STEADY; i++) pthread_create(&rd[i], NULL, steady_reader, t);
  for (int i = 0; i < CHURN; i++) pthread_create(&ch[i], NULL, churn_slot, t);
  uint64_t t0 = act_now_ns();
  pthread_create(&wr, NULL, writer_main, t);
  pthread_join(wr, NULL);
  uint64_t freed_during_run = atomic_load(&t->freed);
  atomic_store(&t->stop, true);
  act_test_join(rd, STEADY);
  act_test_join(ch, CHURN);
  double secs = (double)(act_now_ns() - t0) / 1e9;
  obj_t *last = atomic_load(&t->cur);
  act_epoch_retire(t->d, &last->entry, obj_reclaim);
  act_epoch_synchronize(t->d);
  fprintf(stderr,
          "  %llu objects, %llu sections, %llu churn threads, %zu records,"
          " %llu freed during the run, %.2f s\n",
          (unsigned long long)t->written, atomic_load(&t->sections),
          atomic_load(&t->churned), act_epoch_records(t->d),
          (unsigned long long)freed_during_run, secs);
  CHECK_EQ_U64(atomic_load(&t->bad), 0);
  CHECK_EQ_U64(atomic_load(&t->freed), t->written);
  CHECK_EQ_U64(act_epoch_pending(t->d), 0);
  uint64_t not_once = 0;
  for (uint64_t s = 0; s < t->written; s++) not_once += t->freed_by_serial[s] != 1;
  CHECK_EQ_U64(not_once, 0);
  CHECK(freed_during_run > 0); /* grace periods end while readers run */
  CHECK(atomic_load(&t->churned) > 0);
  CHECK(act_epoch_records(t->d) <= STEADY + CHURN); /* exited threads' reused */
  act_epoch_free(t->d);
  free(t->freed_by_serial);
  free(t);
}

UNIT_MAIN("epoch", UNIT_CASE(nesting_blocks_until_outermost_exit),
          UNIT_CASE(pending_counts_and_retire_order),
          UNIT_CASE(callback_may_retire_and_free_runs_the_rest),
          UNIT_CASE(two_domains_are_independent),
          UNIT_CASE(poll_fails_while_another_thread_reads),
          UNIT_CASE(synchronize_waits_for_the_reader),
          UNIT_CASE(records_are_reused_after_thread_exit),
          UNIT_CASE(thread_may_outlive_its_domain),
          UNIT_CASE(torture_readers_against_swapping_writer))
