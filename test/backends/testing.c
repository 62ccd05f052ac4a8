/* Backend test helpers. Test thread only. */
#include "test/backends/testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/bytes.h"

bool bt_load(mock_loaded_t *m, const char *lib, const char *backend, const char *model,
             const char *config_json) {
  TRITONSERVER_Error *err = mock_load(m, lib, backend, NULL, model, config_json);
  if (err == NULL) return true;
  fprintf(stderr, "  loading %s: %s\n", model, mock_take_error(err));
  return false;
}

bool bt_execute(mock_loaded_t *m, TRITONBACKEND_Request **requests, uint32_t count) {
  TRITONSERVER_Error *err = m->lib.execute(&m->instance, requests, count);
  if (err == NULL) return true;
  fprintf(stderr, "  execute: %s\n", mock_take_error(err));
  return false;
}

bool bt_bytes_at(const struct TRITONBACKEND_Output *out, size_t i, char *buf,
                 size_t len) {
  bk_bytes_reader_t r;
  bk_bytes_reader_init(&r, out->data, out->size);
  const char *elem = NULL;
  uint32_t n = 0;
  for (size_t k = 0; k <= i; k++) {
    if (bk_bytes_next(&r, &elem, &n) != BK_BYTES_ELEMENT) return false;
  }
  snprintf(buf, len, "%.*s", (int)n, elem);
  return true;
}

size_t bt_bytes_make(uint8_t *buf, const char *const *elems, size_t count) {
  uint8_t *p = buf;
  for (size_t i = 0; i < count; i++)
    p = bk_bytes_put(p, elems[i], (uint32_t)strlen(elems[i]));
  return (size_t)(p - buf);
}

int bt_ms(int ms) {
  const char *s = getenv("NEREID_TEST_SLOWDOWN");
  int k = s ? atoi(s) : 1;
  return ms * (k > 1 ? k : 1);
}

char *bt_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (cap - len - 1 == 0) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  buf[len] = '\0';
  return buf;
}
