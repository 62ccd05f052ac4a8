/* A sampled trace tree's JSON text (see trace_record.h). Any thread that
 * reports for a request of the tree; the mutex orders them. */
#include "server/trace/trace_record.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/trace/trace_writer.h"

srv_trace_record_t *srv_trace_record_new(struct srv_trace_writer *w,
                                         uint32_t log_frequency) {
  srv_trace_record_t *r = calloc(1, sizeof *r);
  if (r == NULL) SRV_FATAL("out of memory");
  pthread_mutex_init(&r->mu, NULL);
  atomic_init(&r->shares, 1);
  r->writer = w;
  r->log_frequency = log_frequency;
  return r;
}

void srv_trace_record_free(srv_trace_record_t *r) {
  pthread_mutex_destroy(&r->mu);
  free(r->text);
  free(r);
}

void srv_trace_record_share(srv_trace_record_t *r) {
  /* Relaxed: the sharer holds a share already. */
  atomic_fetch_add_explicit(&r->shares, 1, memory_order_relaxed);
}

void srv_trace_record_drop(srv_trace_record_t *r) {
  /* Acq_rel: the writer must see every sharer's text (the mutex orders
   * the appends themselves; this orders the last unlock before the push). */
  if (atomic_fetch_sub_explicit(&r->shares, 1, memory_order_acq_rel) != 1) return;
  srv_trace_writer_push(r->writer, r);
}

void srv_trace_text_grow(char **p, size_t *cap, size_t need, size_t first) {
  if (need <= *cap) return;
  size_t n = *cap ? *cap : first;
  while (n < need) n *= 2;
  char *grown = realloc(*p, n);
  if (grown == NULL) SRV_FATAL("out of memory");
  *p = grown;
  *cap = n;
}

/* A growable text, built outside the record's lock, then appended whole. */
typedef struct {
  char *p;
  size_t len, cap;
  bool over; /* past SRV_TRACE_RECORD_MAX: the entry is dropped */
} text_t;

static void text_reserve(text_t *t, size_t more) {
  if (t->over) return;
  if (t->len + more > SRV_TRACE_RECORD_MAX) {
    t->over = true;
    return;
  }
  srv_trace_text_grow(&t->p, &t->cap, t->len + more, 256);
}

static void text_put(text_t *t, const char *s, size_t n) {
  text_reserve(t, n);
  if (t->over) return;
  memcpy(t->p + t->len, s, n);
  t->len += n;
}

static void text_printf(text_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void text_printf(text_t *t, const char *fmt, ...) {
  char buf[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) text_put(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* A JSON string's content: quotes, backslashes and control characters
 * escaped, and bytes of 0x80 and up as \u00XX, so that any client's bytes
 * (request ids, BYTES tensors) leave the file valid UTF-8 JSON. */
static void text_escaped(text_t *t, const char *s, size_t n) {
  for (size_t i = 0; i < n && !t->over; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      text_put(t, e, 2);
    } else if (c < 0x20 || c >= 0x80) {
      text_printf(t, "\\u%04x", c);
    } else {
      text_put(t, (const char *)&c, 1);
    }
  }
}

static void text_string(text_t *t, const char *s) {
  text_put(t, "\"", 1);
  text_escaped(t, s, strlen(s));
  text_put(t, "\"", 1);
}

static void record_append(srv_trace_record_t *r, text_t *t) {
  pthread_mutex_lock(&r->mu);
  if (t->over || r->len + t->len + 1 > SRV_TRACE_RECORD_MAX) {
    r->dropped++;
  } else {
    srv_trace_text_grow(&r->text, &r->cap, r->len + t->len + 1, 1024);
    if (r->len > 0) r->text[r->len++] = ',';
    memcpy(r->text + r->len, t->p, t->len);
    r->len += t->len;
  }
  pthread_mutex_unlock(&r->mu);
  free(t->p);
}

void srv_trace_record_info(srv_trace_record_t *r, uint64_t id, const char *model,
                           int64_t version, const char *request_id, uint64_t parent_id) {
  text_t t = {0};
  text_printf(&t, "{\"id\":%" PRIu64 ",\"model_name\":", id);
  text_string(&t, model != NULL ? model : "");
  text_printf(&t, ",\"model_version\":%" PRId64, version);
  if (request_id != NULL && request_id[0] != '\0') {
    text_put(&t, ",\"request_id\":", 14);
    text_string(&t, request_id);
  }
  if (parent_id != 0) text_printf(&t, ",\"parent_id\":%" PRIu64, parent_id);
  text_put(&t, "}", 1);
  record_append(r, &t);
}

void srv_trace_record_stamp(srv_trace_record_t *r, uint64_t id, const char *name,
                            uint64_t ns) {
  text_t t = {0};
  text_printf(&t, "{\"id\":%" PRIu64 ",\"timestamps\":[{\"name\":", id);
  text_string(&t, name);
  text_printf(&t, ",\"ns\":%" PRIu64 "}]}", ns);
  record_append(r, &t);
}

/* Element e of a fixed-size type, printed into d (raw, escaped later). */
static void element_print(text_t *d, TRITONSERVER_DataType dt, const char *p) {
  switch (dt) {
    case TRITONSERVER_TYPE_BOOL:
      text_printf(d, "%d", *p != 0);
      break;
    case TRITONSERVER_TYPE_UINT8:
      text_printf(d, "%u", *(const uint8_t *)p);
      break;
    case TRITONSERVER_TYPE_UINT16: {
      uint16_t v;
      memcpy(&v, p, 2);
      text_printf(d, "%u", v);
      break;
    }
    case TRITONSERVER_TYPE_UINT32: {
      uint32_t v;
      memcpy(&v, p, 4);
      text_printf(d, "%" PRIu32, v);
      break;
    }
    case TRITONSERVER_TYPE_UINT64: {
      uint64_t v;
      memcpy(&v, p, 8);
      text_printf(d, "%" PRIu64, v);
      break;
    }
    case TRITONSERVER_TYPE_INT8:
      text_printf(d, "%d", *(const int8_t *)p);
      break;
    case TRITONSERVER_TYPE_INT16: {
      int16_t v;
      memcpy(&v, p, 2);
      text_printf(d, "%d", v);
      break;
    }
    case TRITONSERVER_TYPE_INT32: {
      int32_t v;
      memcpy(&v, p, 4);
      text_printf(d, "%" PRId32, v);
      break;
    }
    case TRITONSERVER_TYPE_INT64: {
      int64_t v;
      memcpy(&v, p, 8);
      text_printf(d, "%" PRId64, v);
      break;
    }
    case TRITONSERVER_TYPE_FP32: {
      float v;
      memcpy(&v, p, 4);
      text_printf(d, "%g", (double)v);
      break;
    }
    case TRITONSERVER_TYPE_FP64: {
      double v;
      memcpy(&v, p, 8);
      text_printf(d, "%g", v);
      break;
    }
    default:
      break;
  }
}

/* The tensor's elements as Triton's "data" text, raw. Elements are as many
 * as the shape says, never past byte_size. */
static void data_print(text_t *d, TRITONSERVER_DataType dt, const char *base,
                       size_t byte_size, uint64_t elements) {
  if (dt == TRITONSERVER_TYPE_BYTES) {
    size_t off = 0;
    for (uint64_t e = 0; e < elements && !d->over; e++) {
      uint32_t len;
      if (off + 4 > byte_size) return;
      memcpy(&len, base + off, 4);
      off += 4;
      if (len > byte_size - off) return;
      if (e > 0) text_put(d, ",", 1);
      text_put(d, "\"", 1);
      text_put(d, base + off, len);
      text_put(d, "\"", 1);
      off += len;
    }
    return;
  }
  uint32_t size = TRITONSERVER_DataTypeByteSize(dt);
  /* FP16 and BF16 have no text in Triton's file either. */
  if (size == 0 || dt == TRITONSERVER_TYPE_FP16 || dt == TRITONSERVER_TYPE_BF16) return;
  if (elements > byte_size / size) elements = byte_size / size;
  for (uint64_t e = 0; e < elements && !d->over; e++) {
    if (e > 0) text_put(d, ",", 1);
    element_print(d, dt, base + e * size);
  }
}

void srv_trace_record_tensor(srv_trace_record_t *r, uint64_t id, const char *activity,
                             const char *name, TRITONSERVER_DataType datatype,
                             const void *base, size_t byte_size, const int64_t *shape,
                             uint64_t dims) {
  uint64_t elements = 1;
  for (uint64_t i = 0; i < dims; i++)
    elements = shape[i] <= 0 ? 0 : elements * (uint64_t)shape[i];
  text_t d = {0};
  if (base != NULL) data_print(&d, datatype, base, byte_size, elements);
  text_t t = {0};
  text_printf(&t, "{\"id\":%" PRIu64 ",\"activity\":", id);
  text_string(&t, activity);
  text_put(&t, ",\"tensor\":{\"name\":", 18);
  text_string(&t, name);
  text_put(&t, ",\"data\":\"", 9);
  text_escaped(&t, d.p != NULL ? d.p : "", d.len);
  t.over |= d.over;
  text_put(&t, "\",\"shape\":\"", 11);
  for (uint64_t i = 0; i < dims; i++)
    text_printf(&t, i ? ",%" PRId64 : "%" PRId64, shape[i]);
  text_put(&t, "\",\"dtype\":", 10);
  text_string(&t, TRITONSERVER_DataTypeString(datatype));
  text_put(&t, "}}", 2);
  free(d.p);
  record_append(r, &t);
}
