/* Sequence mode without a server: the id range check, the lanes' ids (never
 * two live ones alike, wrapping within the range), lengths within the
 * variation, the START/END of each step, and the parameters appended to a
 * request, decoded back with upb. */
#include <stdlib.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "test/unit/unit.h"
#include "tools/perf/seq.h"

static perf_seq_plan_t plan(unsigned length, unsigned variation, uint64_t start,
                            uint64_t end, unsigned lanes) {
  return (perf_seq_plan_t){length, variation, start, end, lanes, false};
}

static void id_range_must_hold_every_lane(void) {
  perf_err_t err;
  perf_seq_plan_t p = plan(20, 0, 1, 0, 1000);
  CHECK(perf_seq_plan_check(&p, "--concurrency-range", &err)); /* no end */
  p.id_end = 1001;                                             /* ids 1..1000 */
  CHECK(perf_seq_plan_check(&p, "--concurrency-range", &err));
  p.id_end = 1000;
  CHECK(!perf_seq_plan_check(&p, "--concurrency-range", &err));
  CHECK_STREQ(err.msg,
              "--sequence-id-range 1:1000 holds 999 ids, fewer than the 1000 sequences "
              "kept at once (--concurrency-range): ids would collide");
}

static void lanes_take_disjoint_ids_from_the_start(void) {
  perf_seq_plan_t p = plan(20, 0, 5, 0, 3);
  CHECK_EQ_U64(perf_seq_id_next(&p, 0, 0), 5);
  CHECK_EQ_U64(perf_seq_id_next(&p, 1, 0), 6);
  CHECK_EQ_U64(perf_seq_id_next(&p, 2, 0), 7);
  CHECK_EQ_U64(perf_seq_id_next(&p, 1, 6), 9);
  CHECK_EQ_U64(perf_seq_id_next(&p, 1, 9), 12);
  /* Without an end, ids stay within int64_param and wrap only there. */
  CHECK_EQ_U64(perf_seq_id_next(&p, 2, PERF_SEQ_ID_MAX - 2), 7);
  CHECK_EQ_U64(perf_seq_id_next(&p, 2, PERF_SEQ_ID_MAX - 3), PERF_SEQ_ID_MAX);
}

/* Lanes that end their sequences at different paces never hold the same id
 * at once, and stay within [start, end). */
static void bounded_ids_wrap_without_collisions(void) {
  enum { LANES = 7 };
  perf_seq_plan_t p = plan(1, 0, 10, 10 + LANES + 3, LANES); /* 10 ids for 7 lanes */
  uint64_t live[LANES];
  unsigned seen[LANES + 3] = {0};
  for (unsigned k = 0; k < LANES; k++) live[k] = perf_seq_id_next(&p, k, 0);
  uint64_t rng = 42;
  for (int round = 0; round < 10000; round++) {
    uint64_t x = rng = rng * 6364136223846793005ull + 1;
    unsigned lane = (unsigned)(x >> 33) % LANES;
    if ((x >> 50) % (lane + 1)) continue; /* lane k ends 1/(k+1) as often */
    live[lane] = perf_seq_id_next(&p, lane, live[lane]);
    REQUIRE(live[lane] >= 10 && live[lane] < 10 + LANES + 3);
    seen[live[lane] - 10]++;
    for (unsigned k = 0; k < LANES; k++) CHECK(k == lane || live[k] != live[lane]);
  }
  for (unsigned id = 0; id < LANES + 3; id++) CHECK(seen[id] > 0);
}

static void lengths_stay_within_the_variation(void) {
  perf_seq_plan_t p = plan(20, 20, 1, 0, 1);
  uint64_t rng = 7;
  unsigned hits[41] = {0};
  for (int i = 0; i < 20000; i++) {
    uint32_t len = perf_seq_length_draw(&p, &rng);
    REQUIRE(len >= 16 && len <= 24);
    hits[len]++;
  }
  for (unsigned len = 16; len <= 24; len++) CHECK(hits[len] > 20000 / 9 / 2);
  p.variation = 0;
  CHECK_EQ_U64(perf_seq_length_draw(&p, &rng), 20);
  p = plan(1, 100, 1, 0, 1); /* 0..2, and never 0 */
  for (int i = 0; i < 100; i++) CHECK(perf_seq_length_draw(&p, &rng) >= 1);
}

static void steps_mark_start_and_end(void) {
  perf_seq_plan_t p = plan(3, 0, 1, 0, 2);
  perf_seq_t s;
  perf_seq_init(&s, 1);
  uint64_t rng = 1;
  CHECK(!perf_seq_open(&s));
  perf_seq_advance(&s, &p, &rng);
  CHECK_EQ_U64(s.id, 2);
  CHECK(perf_seq_is_start(&s) && !perf_seq_is_end(&s) && perf_seq_open(&s));
  perf_seq_advance(&s, &p, &rng);
  CHECK(!perf_seq_is_start(&s) && !perf_seq_is_end(&s));
  perf_seq_advance(&s, &p, &rng);
  CHECK(perf_seq_is_end(&s) && !perf_seq_open(&s));
  perf_seq_advance(&s, &p, &rng); /* a new sequence, the lane's next id */
  CHECK_EQ_U64(s.id, 4);
  CHECK(perf_seq_is_start(&s));
  /* The load stops: the next step ends the sequence. */
  perf_seq_end_next(&s);
  perf_seq_advance(&s, &p, &rng);
  CHECK_EQ_U64(s.id, 4);
  CHECK(perf_seq_is_end(&s) && !perf_seq_open(&s));
  perf_seq_end_next(&s); /* nothing open: no change */
  perf_seq_advance(&s, &p, &rng);
  CHECK_EQ_U64(s.id, 6);
  /* A one-step sequence is both START and END; abandoning starts anew. */
  p.length = 1;
  perf_seq_abandon(&s);
  perf_seq_advance(&s, &p, &rng);
  CHECK_EQ_U64(s.id, 8);
  CHECK(perf_seq_is_start(&s) && perf_seq_is_end(&s));
}

/* The request with the step's parameters appended, decoded. */
typedef struct {
  upb_Arena *arena;
  inference_ModelInferRequest *req;
  size_t slices;
} decoded_t;

static decoded_t decode_step(const perf_seq_t *s, bool string_ids) {
  decoded_t d = {upb_Arena_New(), NULL, 0};
  inference_ModelInferRequest *base = inference_ModelInferRequest_new(d.arena);
  inference_ModelInferRequest_set_model_name(base, upb_StringView_FromString("m"));
  size_t len;
  char *body = inference_ModelInferRequest_serialize(base, d.arena, &len);
  grpc_slice parts[PERF_SEQ_SLICES];
  d.slices = perf_seq_params(s, string_ids, parts);
  size_t total = len;
  for (size_t k = 0; k < d.slices; k++) total += GRPC_SLICE_LENGTH(parts[k]);
  char *bytes = upb_Arena_Malloc(d.arena, total);
  memcpy(bytes, body, len);
  for (size_t k = 0, at = len; k < d.slices; k++) {
    memcpy(bytes + at, GRPC_SLICE_START_PTR(parts[k]), GRPC_SLICE_LENGTH(parts[k]));
    at += GRPC_SLICE_LENGTH(parts[k]);
    CHECK(parts[k].refcount == NULL || k == d.slices - 1); /* inlined, or static */
    grpc_slice_unref(parts[k]);
  }
  d.req = inference_ModelInferRequest_parse(bytes, total, d.arena);
  return d;
}

static const inference_InferParameter *param(const decoded_t *d, const char *key) {
  inference_InferParameter *p = NULL;
  if (!inference_ModelInferRequest_parameters_get(d->req, upb_StringView_FromString(key),
                                                  &p))
    return NULL;
  return p;
}

static void check_flags(const decoded_t *d, bool start, bool end) {
  const inference_InferParameter *ps = param(d, "sequence_start");
  const inference_InferParameter *pe = param(d, "sequence_end");
  REQUIRE(ps != NULL && pe != NULL);
  CHECK(inference_InferParameter_has_bool_param(ps));
  CHECK(inference_InferParameter_bool_param(ps) == start);
  CHECK(inference_InferParameter_has_bool_param(pe));
  CHECK(inference_InferParameter_bool_param(pe) == end);
}

static void params_decode_as_triton_clients_send_them(void) {
  uint64_t ids[] = {1, 127, 128, 300, (1ull << 35) + 5, PERF_SEQ_ID_MAX};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
    perf_seq_t s = {.id = ids[i], .length = 3, .sent = 1};
    decoded_t d = decode_step(&s, false);
    REQUIRE(d.req != NULL);
    CHECK(upb_StringView_IsEqual(inference_ModelInferRequest_model_name(d.req),
                                 upb_StringView_FromString("m")));
    const inference_InferParameter *id = param(&d, "sequence_id");
    REQUIRE(id != NULL);
    CHECK(inference_InferParameter_has_int64_param(id));
    CHECK_EQ_U64(inference_InferParameter_int64_param(id), ids[i]);
    check_flags(&d, true, false);
    upb_Arena_Free(d.arena);
  }
  perf_seq_t s = {.id = PERF_SEQ_ID_MAX, .length = 3, .sent = 3};
  decoded_t d = decode_step(&s, true);
  REQUIRE(d.req != NULL);
  const inference_InferParameter *id = param(&d, "sequence_id");
  REQUIRE(id != NULL);
  CHECK(inference_InferParameter_has_string_param(id));
  CHECK(upb_StringView_IsEqual(inference_InferParameter_string_param(id),
                               upb_StringView_FromString("9223372036854775807")));
  check_flags(&d, false, true);
  CHECK_EQ_U64(d.slices, 3); /* the longest id: two inlined slices and the flags */
  upb_Arena_Free(d.arena);
  s = (perf_seq_t){.id = 12, .length = 1, .sent = 1};
  d = decode_step(&s, true);
  REQUIRE(d.req != NULL);
  check_flags(&d, true, true);
  CHECK_EQ_U64(d.slices, 2);
  upb_Arena_Free(d.arena);
  s.length = 2;
  s.sent = 2;
  d = decode_step(&s, false);
  REQUIRE(d.req != NULL);
  check_flags(&d, false, true);
  upb_Arena_Free(d.arena);
}

UNIT_MAIN("seq", UNIT_CASE(id_range_must_hold_every_lane),
          UNIT_CASE(lanes_take_disjoint_ids_from_the_start),
          UNIT_CASE(bounded_ids_wrap_without_collisions),
          UNIT_CASE(lengths_stay_within_the_variation),
          UNIT_CASE(steps_mark_start_and_end),
          UNIT_CASE(params_decode_as_triton_clients_send_them))
