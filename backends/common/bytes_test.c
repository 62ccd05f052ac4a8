/* BYTES serialization: walking, counting, writing, and malformed buffers. */
#include "backends/common/bytes.h"

#include <string.h>

#include "test/unit/unit.h"

static void round_trip(void) {
  uint8_t buf[64];
  uint8_t *p = buf;
  p = bk_bytes_put(p, "12", 2);
  p = bk_bytes_put(p, "", 0);
  p = bk_bytes_put(p, "-345", 4);
  size_t size = (size_t)(p - buf);
  CHECK_EQ_U64(size, 4 + 2 + 4 + 0 + 4 + 4);
  CHECK(buf[0] == 2 && buf[1] == 0 && buf[2] == 0 && buf[3] == 0);

  uint64_t count = 0;
  CHECK(bk_bytes_count(buf, size, &count) && count == 3);

  bk_bytes_reader_t r;
  bk_bytes_reader_init(&r, buf, size);
  const char *e = NULL;
  uint32_t len = 0;
  CHECK(bk_bytes_next(&r, &e, &len) == BK_BYTES_ELEMENT && len == 2 &&
        !memcmp(e, "12", 2));
  CHECK(bk_bytes_next(&r, &e, &len) == BK_BYTES_ELEMENT && len == 0);
  CHECK(bk_bytes_next(&r, &e, &len) == BK_BYTES_ELEMENT && len == 4 &&
        !memcmp(e, "-345", 4));
  CHECK(bk_bytes_next(&r, &e, &len) == BK_BYTES_END);
}

static void empty_buffer_has_no_elements(void) {
  uint64_t count = 7;
  CHECK(bk_bytes_count(NULL, 0, &count) && count == 0);
  bk_bytes_reader_t r;
  bk_bytes_reader_init(&r, NULL, 10); /* a NULL buffer is empty whatever the size */
  const char *e;
  uint32_t len;
  CHECK(bk_bytes_next(&r, &e, &len) == BK_BYTES_END);
}

static void truncation_is_detected(void) {
  uint8_t buf[16];
  bk_bytes_put(buf, "abcd", 4);
  uint64_t count = 0;
  CHECK(!bk_bytes_count(buf, 3, &count)); /* partial length prefix */
  CHECK(!bk_bytes_count(buf, 7, &count)); /* element runs past the end */
  CHECK(bk_bytes_count(buf, 8, &count) && count == 1);
  /* A huge length must not wrap the bounds check. */
  uint8_t huge[8] = {0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c', 'd'};
  CHECK(!bk_bytes_count(huge, sizeof huge, &count));
}

static void length_is_little_endian(void) {
  static uint8_t big[300 + 4];
  bk_bytes_put(big, memset(big + 4, 'x', 300), 300);
  CHECK(big[0] == (300 & 0xff) && big[1] == 1 && big[2] == 0 && big[3] == 0);
  uint64_t count = 0;
  CHECK(bk_bytes_count(big, sizeof big, &count) && count == 1);
}

UNIT_MAIN("bytes", UNIT_CASE(round_trip), UNIT_CASE(empty_buffer_has_no_elements),
          UNIT_CASE(truncation_is_detected), UNIT_CASE(length_is_little_endian))
