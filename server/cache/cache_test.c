/* The local cache's store and its request key: the key tells apart every
 * input property and ignores order; LRU order, the byte budget and
 * oversize entries; many threads looking up, inserting and evicting at
 * once (run under TSan and ASan too). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cache/cache.h"
#include "server/cache/key.h"
#include "test/unit/unit.h"

/* ---- the key ---- */

typedef struct {
  struct TRITONBACKEND_Input in[2];
  srv_buffer_t buf[3];
  int64_t shape[2][2];
  int32_t data[8];
  const char *outs[2];
  TRITONBACKEND_Request r;
} req_t;

/* Two INT32 inputs [1,4]: A = 0..3, B = 4..7, one buffer each. */
static void req_init(req_t *q) {
  memset(q, 0, sizeof *q);
  for (int i = 0; i < 8; i++) q->data[i] = i;
  for (int i = 0; i < 2; i++) {
    q->shape[i][0] = 1;
    q->shape[i][1] = 4;
    q->buf[i] = (srv_buffer_t){.base = &q->data[4 * i], .size = 16};
    q->in[i] = (struct TRITONBACKEND_Input){.name = i == 0 ? "A" : "B",
                                            .datatype = TRITONSERVER_TYPE_INT32,
                                            .shape = q->shape[i],
                                            .dims_count = 2,
                                            .byte_size = 16,
                                            .buffers = &q->buf[i],
                                            .buffer_count = 1};
  }
  q->r.inputs = q->in;
  q->r.input_count = 2;
}

static srv_cache_key_t key_of(const req_t *q, const char *model, int64_t version) {
  srv_cache_key_t k;
  CHECK(srv_cache_key_of(42, model, version, &q->r, &k));
  return k;
}

static void test_key_equal(void) {
  req_t a, b;
  req_init(&a);
  req_init(&b);
  srv_cache_key_t ka = key_of(&a, "m", 1);
  CHECK(srv_cache_key_eq(
      &ka, &(srv_cache_key_t){key_of(&b, "m", 1).hi, key_of(&b, "m", 1).lo}));
  /* Inputs in the other order: the same request. */
  struct TRITONBACKEND_Input t = b.in[0];
  b.in[0] = b.in[1];
  b.in[1] = t;
  srv_cache_key_t kb = key_of(&b, "m", 1);
  CHECK(srv_cache_key_eq(&ka, &kb));
  /* The same bytes split over two buffers. */
  req_init(&b);
  b.buf[0].size = 5;
  b.buf[2] = (srv_buffer_t){.base = (const char *)&b.data[0] + 5, .size = 11};
  srv_buffer_t two[2] = {b.buf[0], b.buf[2]};
  b.in[0].buffers = two;
  b.in[0].buffer_count = 2;
  kb = key_of(&b, "m", 1);
  CHECK(srv_cache_key_eq(&ka, &kb));
  /* Another seed: another key (keys are private to a process). */
  srv_cache_key_t other;
  CHECK(srv_cache_key_of(43, "m", 1, &a.r, &other));
  CHECK(!srv_cache_key_eq(&ka, &other));
}

/* Every property of the request changes the key. */
static void test_key_differs(void) {
  req_t base;
  req_init(&base);
  srv_cache_key_t k0 = key_of(&base, "m", 1), k;
  req_t q;
#define DIFFERS(change)                \
  do {                                 \
    req_init(&q);                      \
    change;                            \
    k = key_of(&q, "m", 1);            \
    CHECK(!srv_cache_key_eq(&k0, &k)); \
  } while (0)
  DIFFERS(q.data[3] = 99);                                                  /* contents */
  DIFFERS(q.in[1].name = "C");                                              /* name */
  DIFFERS(q.in[0].datatype = TRITONSERVER_TYPE_FP32);                       /* datatype */
  DIFFERS((q.shape[0][0] = 4, q.shape[0][1] = 1));                          /* shape */
  DIFFERS((q.in[0].byte_size = 12, q.buf[0].size = 12));                    /* size */
  DIFFERS(q.r.input_count = 1);                                             /* inputs */
  DIFFERS((q.outs[0] = "OUT", q.r.outputs = q.outs, q.r.output_count = 1)); /* outputs */
  /* Swapping contents between inputs is another request. */
  DIFFERS((q.buf[0].base = &q.data[4], q.buf[1].base = &q.data[0]));
#undef DIFFERS
  k = key_of(&base, "n", 1);
  CHECK(!srv_cache_key_eq(&k0, &k)); /* model */
  k = key_of(&base, "m", 2);
  CHECK(!srv_cache_key_eq(&k0, &k)); /* version */
  /* A GPU input: not cacheable. */
  req_init(&q);
  q.buf[1].memory_type = TRITONSERVER_MEMORY_GPU;
  CHECK(!srv_cache_key_of(42, "m", 1, &q.r, &k));
}

static void test_hasher_streaming(void) {
  char text[100];
  for (int i = 0; i < 100; i++) text[i] = (char)(i * 7);
  srv_cache_hasher_t whole, parts;
  srv_cache_hasher_init(&whole, 1);
  srv_cache_hasher_update(&whole, text, sizeof text);
  srv_cache_key_t w = srv_cache_hasher_final(&whole);
  for (size_t cut = 0; cut <= sizeof text; cut += 3) {
    srv_cache_hasher_init(&parts, 1);
    srv_cache_hasher_update(&parts, text, cut);
    srv_cache_hasher_update(&parts, text + cut, sizeof text - cut);
    srv_cache_key_t p = srv_cache_hasher_final(&parts);
    CHECK(srv_cache_key_eq(&w, &p));
  }
  /* A trailing zero byte is more data. */
  srv_cache_hasher_init(&parts, 1);
  srv_cache_hasher_update(&parts, text, sizeof text - 1);
  srv_cache_key_t shorter = srv_cache_hasher_final(&parts);
  CHECK(!srv_cache_key_eq(&w, &shorter));
}

/* ---- the store ---- */

static srv_cache_key_t K(uint64_t i) {
  return (srv_cache_key_t){.hi = i * 7919, .lo = i};
}

/* One output "OUT" of `bytes` bytes, each byte `fill` (a buffer of the
 * caller's thread: workers insert at once). */
static srv_cache_insert_t put(srv_cache_t *c, uint64_t key, size_t bytes,
                              unsigned char fill) {
  unsigned char *data = malloc(bytes ? bytes : 1);
  if (data == NULL) abort();
  memset(data, fill, bytes);
  int64_t shape[1] = {(int64_t)bytes};
  srv_cache_output_t o = {.name = "OUT",
                          .datatype = TRITONSERVER_TYPE_UINT8,
                          .shape = shape,
                          .dims_count = 1,
                          .data = data,
                          .byte_size = bytes};
  srv_cache_key_t k = K(key);
  srv_cache_insert_t got = srv_cache_insert(c, &k, &o, 1);
  free(data);
  return got;
}

static bool has(srv_cache_t *c, uint64_t key) {
  srv_cache_key_t k = K(key);
  srv_cache_entry_t *e = srv_cache_lookup(c, &k);
  if (e != NULL) srv_cache_entry_release(c, e);
  return e != NULL;
}

static uint64_t entry_size(size_t bytes) {
  int64_t shape[1] = {0};
  srv_cache_output_t o = {
      .name = "OUT", .shape = shape, .dims_count = 1, .byte_size = bytes};
  return srv_cache_entry_bytes(&o, 1);
}

static void test_hit_contents(void) {
  srv_cache_t *c;
  REQUIRE(srv_cache_new(1 << 20, &c) == NULL);
  CHECK(put(c, 1, 100, 0xab) == SRV_CACHE_INSERTED);
  CHECK(put(c, 1, 100, 0xcd) == SRV_CACHE_PRESENT); /* the first one stays */
  srv_cache_key_t k = K(1);
  srv_cache_entry_t *e = srv_cache_lookup(c, &k);
  REQUIRE(e != NULL);
  const srv_cache_output_t *o;
  CHECK_EQ_U64(srv_cache_entry_outputs(e, &o), 1);
  CHECK_STREQ(o[0].name, "OUT");
  CHECK_EQ_U64(o[0].byte_size, 100);
  CHECK_EQ_U64(o[0].shape[0], 100);
  CHECK_EQ_U64(((const unsigned char *)o[0].data)[99], 0xab);
  srv_cache_entry_release(c, e);
  k = K(2);
  CHECK(srv_cache_lookup(c, &k) == NULL);
  srv_cache_free(c);
}

/* A cache with room for exactly `n` entries of `bytes`: its index is the
 * smallest (16 slots), as in any cache below 32 KiB. */
static srv_cache_t *cache_for(uint32_t n, size_t bytes) {
  srv_cache_t *c;
  if (srv_cache_new(1024, &c) != NULL) abort();
  srv_cache_usage_t u;
  srv_cache_usage(c, &u);
  srv_cache_free(c);
  if (srv_cache_new(u.bytes + n * entry_size(bytes), &c) != NULL) abort();
  return c;
}

/* Room for exactly three entries: the least recently used goes first. */
static void test_lru_order(void) {
  srv_cache_t *c = cache_for(3, 1000);
  srv_cache_usage_t u;
  CHECK(put(c, 1, 1000, 1) == SRV_CACHE_INSERTED);
  CHECK(put(c, 2, 1000, 2) == SRV_CACHE_INSERTED);
  CHECK(put(c, 3, 1000, 3) == SRV_CACHE_INSERTED);
  CHECK(has(c, 1)); /* 1 becomes the most recent: 2 is the oldest */
  CHECK(put(c, 4, 1000, 4) == SRV_CACHE_INSERTED);
  CHECK(!has(c, 2) && has(c, 1) && has(c, 3) && has(c, 4));
  CHECK(put(c, 5, 1000, 5) == SRV_CACHE_INSERTED); /* now 1 is the oldest */
  CHECK(!has(c, 1) && has(c, 3) && has(c, 4) && has(c, 5));
  srv_cache_usage(c, &u);
  CHECK_EQ_U64(u.entries, 3);
  CHECK_EQ_U64(u.evictions, 2);
  CHECK(u.bytes <= u.budget);
  srv_cache_free(c);
}

/* Larger than the whole cache: never stored, nothing evicted for it. */
static void test_oversize(void) {
  srv_cache_t *c;
  REQUIRE(srv_cache_new(8192, &c) == NULL);
  CHECK(put(c, 1, 100, 1) == SRV_CACHE_INSERTED);
  CHECK(put(c, 2, 9000, 2) == SRV_CACHE_TOO_BIG);
  CHECK(has(c, 1) && !has(c, 2));
  srv_cache_usage_t u;
  srv_cache_usage(c, &u);
  CHECK_EQ_U64(u.evictions, 0);
  srv_cache_free(c);
  /* A budget that leaves nothing beside the index is refused. */
  srv_status_t *st = srv_cache_new(64, &c);
  CHECK(st != NULL && strstr(srv_status_message(st), "leaves no room") != NULL);
  srv_status_free(st);
}

/* An evicted entry a lookup still holds stays valid and charged. */
static void test_evicted_while_held(void) {
  srv_cache_t *c = cache_for(1, 1000);
  srv_cache_usage_t u;
  CHECK(put(c, 1, 1000, 7) == SRV_CACHE_INSERTED);
  srv_cache_key_t k = K(1);
  srv_cache_entry_t *e = srv_cache_lookup(c, &k);
  REQUIRE(e != NULL);
  /* Evicts 1 from the index, but its bytes are still held: no room. */
  CHECK(put(c, 2, 1000, 8) == SRV_CACHE_NO_ROOM);
  CHECK(!has(c, 1));
  const srv_cache_output_t *o;
  srv_cache_entry_outputs(e, &o);
  CHECK_EQ_U64(((const unsigned char *)o[0].data)[500], 7);
  srv_cache_entry_release(c, e); /* the last holder gives the bytes back */
  CHECK(put(c, 2, 1000, 8) == SRV_CACHE_INSERTED);
  srv_cache_usage(c, &u);
  CHECK(u.bytes <= u.budget);
  srv_cache_free(c);
}

/* ---- many threads ---- */

enum { THREADS = 4, OPS = 20000, KEYS = 64 };

typedef struct {
  srv_cache_t *c;
  unsigned seed;
  uint64_t bad, over;
} worker_t;

/* Each entry's bytes all equal its key's low byte: a reader checks that
 * what it copies out is whole, whatever evictions run meanwhile. */
static void *worker(void *arg) {
  worker_t *w = arg;
  for (int i = 0; i < OPS; i++) {
    w->seed = w->seed * 1103515245u + 12345u;
    uint64_t key = (w->seed >> 8) % KEYS;
    size_t size = 200 + (size_t)(key * 37 % 1500);
    if ((w->seed >> 4) % 3 == 0) {
      put(w->c, key, size, (unsigned char)key);
    } else {
      srv_cache_key_t k = K(key);
      srv_cache_entry_t *e = srv_cache_lookup(w->c, &k);
      if (e == NULL) continue;
      const srv_cache_output_t *o;
      srv_cache_entry_outputs(e, &o);
      const unsigned char *d = o[0].data;
      if (o[0].byte_size != size || d[0] != (unsigned char)key ||
          d[size - 1] != (unsigned char)key)
        w->bad++;
      srv_cache_entry_release(w->c, e);
    }
    if (i % 256 == 0) {
      srv_cache_usage_t u;
      srv_cache_usage(w->c, &u);
      if (u.bytes > u.budget) w->over++;
    }
  }
  return NULL;
}

static void test_threads(void) {
  srv_cache_t *c;
  REQUIRE(srv_cache_new(16384, &c) == NULL); /* a few entries: constant eviction */
  pthread_t t[THREADS];
  worker_t w[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker_t){.c = c, .seed = (unsigned)i * 7 + 1};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  uint64_t bad = 0, over = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    bad += w[i].bad;
    over += w[i].over;
  }
  CHECK_EQ_U64(bad, 0);
  CHECK_EQ_U64(over, 0);
  srv_cache_usage_t u;
  srv_cache_usage(c, &u);
  CHECK(u.evictions > 0);
  CHECK(u.bytes <= u.budget);
  srv_cache_free(c);
}

UNIT_MAIN("cache", UNIT_CASE(test_key_equal), UNIT_CASE(test_key_differs),
          UNIT_CASE(test_hasher_streaming), UNIT_CASE(test_hit_contents),
          UNIT_CASE(test_lru_order), UNIT_CASE(test_oversize),
          UNIT_CASE(test_evicted_while_held), UNIT_CASE(test_threads))
