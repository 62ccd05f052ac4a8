/* Sequence lanes, their ids and the step parameters (see seq.h). */
#include "tools/perf/seq.h"

#include <stdio.h>
#include <string.h>

bool perf_seq_plan_check(const perf_seq_plan_t *p, const char *lanes_flag,
                         perf_err_t *err) {
  if (p->id_end == 0 || p->id_end - p->id_start >= p->lanes) return true;
  return perf_fail(err,
                   "--sequence-id-range %llu:%llu holds %llu ids, fewer than the %u "
                   "sequences kept at once (%s): ids would collide",
                   (unsigned long long)p->id_start, (unsigned long long)p->id_end,
                   (unsigned long long)(p->id_end - p->id_start), p->lanes, lanes_flag);
}

uint64_t perf_seq_id_next(const perf_seq_plan_t *p, uint32_t index, uint64_t prev) {
  uint64_t first = p->id_start + index;
  uint64_t end = p->id_end ? p->id_end : PERF_SEQ_ID_MAX + 1;
  if (prev == 0 || prev >= end - p->lanes) return first; /* also where +lanes overflows */
  return prev + p->lanes;
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}

uint32_t perf_seq_length_draw(const perf_seq_plan_t *p, uint64_t *rng) {
  uint64_t spread = (uint64_t)p->length * p->variation / 100; /* either way */
  if (spread == 0) return p->length;
  uint64_t len = p->length - spread + rng_next(rng) % (2 * spread + 1);
  return len > 0 ? (uint32_t)len : 1;
}

void perf_seq_init(perf_seq_t *s, uint32_t index) {
  memset(s, 0, sizeof *s);
  s->index = index;
}

void perf_seq_advance(perf_seq_t *s, const perf_seq_plan_t *p, uint64_t *rng) {
  if (s->sent == s->length) { /* the last one ended (or none began) */
    s->id = perf_seq_id_next(p, s->index, s->id);
    s->length = perf_seq_length_draw(p, rng);
    s->sent = 0;
  }
  s->sent++;
}

void perf_seq_end_next(perf_seq_t *s) {
  if (perf_seq_open(s)) s->length = s->sent + 1;
}

void perf_seq_abandon(perf_seq_t *s) { s->length = s->sent; }

/* The flags' map entries, prebuilt: indexed by start * 2 + end. Each is
 * {0x22 len {0x0a len key} {0x12 2 {0x08 value}}}: sequence_start, then
 * sequence_end. */
#define START_ENTRY(v) "\x22\x14\x0a\x0esequence_start\x12\x02\x08" v
#define END_ENTRY(v) "\x22\x12\x0a\x0csequence_end\x12\x02\x08" v
static const char flags[4][43] = {
    START_ENTRY("\x00") END_ENTRY("\x00"),
    START_ENTRY("\x00") END_ENTRY("\x01"),
    START_ENTRY("\x01") END_ENTRY("\x00"),
    START_ENTRY("\x01") END_ENTRY("\x01"),
};
#define FLAGS_LEN 42

static size_t varint(uint8_t *out, uint64_t v) {
  size_t n = 0;
  do {
    out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return n;
}

size_t perf_seq_params(const perf_seq_t *s, bool string_ids,
                       grpc_slice out[PERF_SEQ_SLICES]) {
  /* {0x22 len {0x0a 11 "sequence_id"} {0x12 len {0x10 varint | 0x1a n digits}}} */
  uint8_t value[24], entry[48];
  size_t vlen;
  if (string_ids) {
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)s->id);
    value[0] = 0x1a;
    value[1] = (uint8_t)n;
    memcpy(value + 2, digits, (size_t)n);
    vlen = 2 + (size_t)n;
  } else {
    value[0] = 0x10;
    vlen = 1 + varint(value + 1, s->id);
  }
  static const char key[] = "\x0a\x0bsequence_id\x12";
  size_t at = 0;
  entry[at++] = 0x22;
  entry[at++] = (uint8_t)(sizeof key - 1 + 1 + vlen);
  memcpy(entry + at, key, sizeof key - 1);
  at += sizeof key - 1;
  entry[at++] = (uint8_t)vlen;
  memcpy(entry + at, value, vlen);
  at += vlen;
  /* At most 41 bytes: two slices short enough to be inlined. */
  size_t first = at < GRPC_SLICE_INLINED_SIZE ? at : GRPC_SLICE_INLINED_SIZE, n = 0;
  out[n++] = grpc_slice_from_copied_buffer((const char *)entry, first);
  if (at > first)
    out[n++] = grpc_slice_from_copied_buffer((const char *)entry + first, at - first);
  int f = (perf_seq_is_start(s) ? 2 : 0) + (perf_seq_is_end(s) ? 1 : 0);
  out[n++] = grpc_slice_from_static_buffer(flags[f], FLAGS_LEN);
  return n;
}
