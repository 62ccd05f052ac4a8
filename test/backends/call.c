/* A call's description and record (see call.h), and the in-process route:
 * the request is built with TRITONSERVER_InferenceRequest* when sent and
 * deleted in its release callback; each response is copied into the
 * record and deleted in the response callback. Callbacks run on the
 * runtime's workers, one at a time per call (the flight actor's). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/common/bytes.h"
#include "test/backends/call_internal.h"

/* Order of arrival across every call of the process (relaxed: the call's
 * lock orders each call's own records). */
static atomic_ullong next_seq;

uint64_t bt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- description ---- */

bt_call_t *bt_call_new(bt_server_t *s, const char *model) {
  bt_call_t *c = calloc(1, sizeof *c);
  if (c == NULL) abort();
  c->server = s;
  snprintf(c->model, sizeof c->model, "%s", model);
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  return c;
}

void bt_call_id(bt_call_t *c, const char *id) {
  free(c->id);
  c->id = strdup(id);
}

void bt_call_input(bt_call_t *c, const char *name, TRITONSERVER_DataType datatype,
                   const int64_t *shape, uint32_t dims, const void *data, uint64_t size,
                   uint32_t pieces) {
  if (c->input_count == BT_MAX_TENSORS || dims > BT_MAX_DIMS || pieces > BT_MAX_PIECES)
    abort();
  bt_input_t *in = &c->inputs[c->input_count++];
  snprintf(in->name, sizeof in->name, "%s", name);
  in->datatype = datatype;
  if (dims > 0) memcpy(in->shape, shape, dims * sizeof *shape);
  in->dims = dims;
  in->data = data;
  in->size = size;
  in->pieces = pieces > 0 ? pieces : 1;
}

void bt_call_raw_input(bt_call_t *c, const char *name, const void *data, uint64_t size,
                       uint32_t pieces) {
  bt_call_input(c, name, TRITONSERVER_TYPE_INVALID, NULL, 0, data, size, pieces);
  c->inputs[c->input_count - 1].raw = true;
}

void bt_call_output(bt_call_t *c, const char *name) {
  if (c->output_count == BT_MAX_TENSORS) abort();
  c->outputs[c->output_count++] = strdup(name);
}

static bt_param_t *param_add(bt_call_t *c, const char *key,
                             TRITONSERVER_ParameterType type) {
  if (c->param_count == BT_MAX_PARAMS) abort(); /* a test's mistake */
  bt_param_t *p = &c->params[c->param_count++];
  memset(p, 0, sizeof *p);
  snprintf(p->key, sizeof p->key, "%s", key);
  p->type = type;
  return p;
}

void bt_call_param_string(bt_call_t *c, const char *key, const char *value) {
  snprintf(param_add(c, key, TRITONSERVER_PARAMETER_STRING)->s, 256, "%s", value);
}

void bt_call_param_int(bt_call_t *c, const char *key, int64_t value) {
  param_add(c, key, TRITONSERVER_PARAMETER_INT)->i = value;
}

void bt_call_param_bool(bt_call_t *c, const char *key, bool value) {
  param_add(c, key, TRITONSERVER_PARAMETER_BOOL)->b = value;
}

void bt_call_param_double(bt_call_t *c, const char *key, double value) {
  param_add(c, key, TRITONSERVER_PARAMETER_DOUBLE)->d = value;
}

void bt_call_timeout(bt_call_t *c, uint64_t timeout_us) { c->timeout_us = timeout_us; }

void bt_call_priority(bt_call_t *c, uint64_t priority) { c->priority = priority; }

void bt_input_piece(const bt_input_t *in, uint32_t k, uint64_t *from, uint64_t *to) {
  *from = in->size * k / in->pieces;
  *to = in->size * (k + 1) / in->pieces;
}

void bt_call_free(bt_call_t *c) {
  for (size_t i = 0; i < c->sent_count; i++) {
    free(c->sent[i].error);
    for (uint32_t k = 0; k < c->sent[i].output_count; k++)
      free(c->sent[i].outputs[k].data);
  }
  for (uint32_t i = 0; i < c->output_count; i++) free(c->outputs[i]);
  if (c->allocator != NULL) TRITONSERVER_ResponseAllocatorDelete(c->allocator);
  if (c->direct != NULL) bt_direct_free(c->direct);
  pthread_mutex_destroy(&c->mu);
  pthread_cond_destroy(&c->cv);
  free(c->id);
  free(c);
}

/* ---- record ---- */

void bt_record_sent(bt_call_t *c, bt_sent_t *s) {
  pthread_mutex_lock(&c->mu);
  s->seq = atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed);
  if (c->sent_count < BT_MAX_SENT) {
    c->sent[c->sent_count++] = *s;
  } else {
    free(s->error);
    for (uint32_t k = 0; k < s->output_count; k++) free(s->outputs[k].data);
  }
  if (s->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) c->final_seen = true;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

void bt_record_released(bt_call_t *c) {
  pthread_mutex_lock(&c->mu);
  c->released = true;
  c->sent_before_release = c->sent_count;
  c->released_ns = bt_now_ns();
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

void bt_record_owner_done(bt_call_t *c) {
  pthread_mutex_lock(&c->mu);
  c->owner_done = true;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static bool done_locked(const bt_call_t *c) {
  return c->final_seen && c->released && (c->direct == NULL || c->owner_done);
}

bool bt_call_wait_done(bt_call_t *c, int timeout_ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&c->mu);
  while (!done_locked(c) && pthread_cond_timedwait(&c->cv, &c->mu, &until) == 0) {
  }
  bool done = done_locked(c);
  pthread_mutex_unlock(&c->mu);
  return done;
}

size_t bt_call_sent_count(bt_call_t *c) {
  pthread_mutex_lock(&c->mu);
  size_t n = c->sent_count;
  pthread_mutex_unlock(&c->mu);
  return n;
}

bt_sent_t bt_call_sent(bt_call_t *c, size_t i) {
  bt_sent_t s = {.error = NULL};
  pthread_mutex_lock(&c->mu);
  if (i < c->sent_count) s = c->sent[i];
  pthread_mutex_unlock(&c->mu);
  return s;
}

bool bt_call_released(bt_call_t *c, size_t *sent_before, uint64_t *after_ns) {
  pthread_mutex_lock(&c->mu);
  bool released = c->released;
  if (sent_before != NULL) *sent_before = c->sent_before_release;
  if (after_ns != NULL) *after_ns = c->released_ns - c->sent_ns;
  pthread_mutex_unlock(&c->mu);
  return released;
}

const bt_tensor_t *bt_sent_output(const bt_sent_t *sent, const char *name) {
  for (uint32_t i = 0; i < sent->output_count; i++)
    if (strcmp(sent->outputs[i].name, name) == 0) return &sent->outputs[i];
  return NULL;
}

/* ---- the in-process route ---- */

/* Host memory for every output; the response callback copies it out. */
static TRITONSERVER_Error *alloc_fn(TRITONSERVER_ResponseAllocator *a, const char *name,
                                    size_t size, TRITONSERVER_MemoryType type,
                                    int64_t type_id, void *userp, void **buffer,
                                    void **buffer_userp, TRITONSERVER_MemoryType *actual,
                                    int64_t *actual_id) {
  (void)a, (void)name, (void)type, (void)type_id, (void)userp;
  *buffer = size > 0 ? malloc(size) : NULL;
  *buffer_userp = NULL;
  *actual = TRITONSERVER_MEMORY_CPU;
  *actual_id = 0;
  return NULL;
}

static TRITONSERVER_Error *release_fn(TRITONSERVER_ResponseAllocator *a, void *buffer,
                                      void *buffer_userp, size_t size,
                                      TRITONSERVER_MemoryType type, int64_t type_id) {
  (void)a, (void)buffer_userp, (void)size, (void)type, (void)type_id;
  free(buffer);
  return NULL;
}

/* Copies output i of resp into t. */
static void output_copy(TRITONSERVER_InferenceResponse *resp, uint32_t i,
                        bt_tensor_t *t) {
  const char *name = "";
  const int64_t *shape = NULL;
  const void *base = NULL;
  size_t size = 0;
  uint64_t dims = 0;
  TRITONSERVER_MemoryType type;
  int64_t type_id;
  void *userp;
  TRITONSERVER_Error *err = TRITONSERVER_InferenceResponseOutput(
      resp, i, &name, &t->datatype, &shape, &dims, &base, &size, &type, &type_id, &userp);
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->dims = dims < BT_MAX_DIMS ? (uint32_t)dims : BT_MAX_DIMS;
  if (shape != NULL) memcpy(t->shape, shape, t->dims * sizeof *shape);
  t->size = size;
  t->data = size > 0 ? malloc(size) : NULL;
  if (t->data != NULL) memcpy(t->data, base, size);
}

static void on_response(TRITONSERVER_InferenceResponse *resp, const uint32_t flags,
                        void *userp) {
  bt_sent_t s = {.flags = flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL,
                 .is_response = resp != NULL};
  if (resp != NULL) {
    TRITONSERVER_Error *err = TRITONSERVER_InferenceResponseError(resp); /* resp's */
    if (err != NULL) {
      s.code = TRITONSERVER_ErrorCode(err);
      s.error = strdup(TRITONSERVER_ErrorMessage(err));
    }
    uint32_t n = 0;
    TRITONSERVER_Error *e = TRITONSERVER_InferenceResponseOutputCount(resp, &n);
    if (e != NULL) TRITONSERVER_ErrorDelete(e);
    s.output_count = n < BT_MAX_TENSORS ? n : BT_MAX_TENSORS;
    for (uint32_t i = 0; i < s.output_count; i++) output_copy(resp, i, &s.outputs[i]);
    TRITONSERVER_InferenceResponseDelete(resp);
  }
  bt_record_sent(userp, &s);
}

/* Released, the request is the client's again: nothing reuses it. */
static void on_release(TRITONSERVER_InferenceRequest *request, const uint32_t flags,
                       void *userp) {
  (void)flags;
  TRITONSERVER_InferenceRequestDelete(request);
  bt_record_released(userp);
}

static TRITONSERVER_Error *inputs_add(bt_call_t *c, TRITONSERVER_InferenceRequest *r) {
  for (uint32_t i = 0; i < c->input_count; i++) {
    const bt_input_t *in = &c->inputs[i];
    TRITONSERVER_Error *err =
        in->raw ? TRITONSERVER_InferenceRequestAddRawInput(r, in->name)
                : TRITONSERVER_InferenceRequestAddInput(r, in->name, in->datatype, in->shape,
                                                        in->dims);
    for (uint32_t k = 0; err == NULL && k < in->pieces; k++) {
      uint64_t from, to;
      bt_input_piece(in, k, &from, &to);
      if (to > from)
        err = TRITONSERVER_InferenceRequestAppendInputData(
            r, in->name, in->data + from, to - from, TRITONSERVER_MEMORY_CPU, 0);
    }
    if (err != NULL) return err;
  }
  return NULL;
}

static TRITONSERVER_Error *params_add(bt_call_t *c, TRITONSERVER_InferenceRequest *r) {
  TRITONSERVER_Error *err = TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(r, c->timeout_us);
  if (err == NULL) err = TRITONSERVER_InferenceRequestSetPriorityUInt64(r, c->priority);
  for (uint32_t i = 0; err == NULL && i < c->param_count; i++) {
    const bt_param_t *p = &c->params[i];
    switch (p->type) {
      case TRITONSERVER_PARAMETER_STRING:
        err = TRITONSERVER_InferenceRequestSetStringParameter(r, p->key, p->s);
        break;
      case TRITONSERVER_PARAMETER_INT:
        err = TRITONSERVER_InferenceRequestSetIntParameter(r, p->key, p->i);
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        err = TRITONSERVER_InferenceRequestSetBoolParameter(r, p->key, p->b);
        break;
      default:
        err = TRITONSERVER_InferenceRequestSetDoubleParameter(r, p->key, p->d);
    }
  }
  return err;
}

/* The request as the in-process API builds it; NULL (and *err) when the
 * builder refuses something. */
static TRITONSERVER_InferenceRequest *request_build(bt_call_t *c,
                                                    TRITONSERVER_Error **err) {
  TRITONSERVER_InferenceRequest *r = NULL;
  *err = TRITONSERVER_InferenceRequestNew(&r, bt_server(c->server), c->model, -1);
  if (*err != NULL) return NULL;
  if (c->id != NULL) *err = TRITONSERVER_InferenceRequestSetId(r, c->id);
  if (*err == NULL) *err = inputs_add(c, r);
  if (*err == NULL) *err = params_add(c, r);
  for (uint32_t i = 0; *err == NULL && i < c->output_count; i++)
    *err = TRITONSERVER_InferenceRequestAddRequestedOutput(r, c->outputs[i]);
  if (*err == NULL && c->allocator == NULL)
    *err = TRITONSERVER_ResponseAllocatorNew(&c->allocator, alloc_fn, release_fn, NULL);
  if (*err == NULL)
    *err = TRITONSERVER_InferenceRequestSetReleaseCallback(r, on_release, c);
  if (*err == NULL)
    *err = TRITONSERVER_InferenceRequestSetResponseCallback(r, c->allocator, NULL,
                                                            on_response, c);
  if (*err == NULL) return r;
  TRITONSERVER_InferenceRequestDelete(r);
  return NULL;
}

/* Sends the request; the server's refusal (caller deletes) or NULL. */
static TRITONSERVER_Error *send_in_process(bt_call_t *c) {
  TRITONSERVER_Error *err = NULL;
  TRITONSERVER_InferenceRequest *r = request_build(c, &err);
  if (r == NULL) return err;
  c->sent_ns = bt_now_ns();
  err = TRITONSERVER_ServerInferAsync(bt_server(c->server), r, c->trace);
  if (err != NULL) TRITONSERVER_InferenceRequestDelete(r); /* still ours */
  return err;
}

void bt_call_trace(bt_call_t *c, TRITONSERVER_InferenceTrace *trace) { c->trace = trace; }

bool bt_call_send(bt_call_t *c) {
  TRITONSERVER_Error *err = send_in_process(c);
  if (err == NULL) return true;
  fprintf(stderr, "  request for %s refused: %s\n", c->model,
          TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  return false;
}

bool bt_call_refused(bt_call_t *c, TRITONSERVER_Error_Code code, const char *needle) {
  TRITONSERVER_Error *err = send_in_process(c);
  bool ok = err != NULL && TRITONSERVER_ErrorCode(err) == code &&
            strstr(TRITONSERVER_ErrorMessage(err), needle) != NULL;
  if (!ok)
    fprintf(stderr, "  request for %s: wanted refusal %d '%s', got %d '%s'\n", c->model,
            (int)code, needle, err != NULL ? (int)TRITONSERVER_ErrorCode(err) : -1,
            err != NULL ? TRITONSERVER_ErrorMessage(err) : "(accepted)");
  if (err != NULL) TRITONSERVER_ErrorDelete(err);
  return ok;
}

/* ---- BYTES tensors ---- */

bool bt_bytes_at(const bt_tensor_t *t, size_t i, char *buf, size_t len) {
  bk_bytes_reader_t r;
  bk_bytes_reader_init(&r, t->data, t->size);
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
