/* Mock server: responses, outputs, response factories and what the client
 * would receive. Responses are built by one thread each; sending appends
 * to the call's record under its lock, so a backend thread may send while
 * the test thread waits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test/backends/harness/mock_server.h"

/* Orders sends across calls, so tests can check interleaving. */
static atomic_ullong next_seq;

static void die(const char *why) {
  fprintf(stderr, "mock: %s\n", why);
  abort();
}

static TRITONBACKEND_Response *response_new(mock_call_t *call) {
  TRITONBACKEND_Response *r = calloc(1, sizeof *r);
  r->call = call;
  return r;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseNew(TRITONBACKEND_Response **response,
                                              TRITONBACKEND_Request *request) {
  *response = response_new(request->call);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseNewFromFactory(
    TRITONBACKEND_Response **response, TRITONBACKEND_ResponseFactory *factory) {
  *response = response_new(factory->call);
  return NULL;
}

static void free_outputs(struct TRITONBACKEND_Output *outputs, uint32_t count) {
  for (uint32_t i = 0; i < count; i++) free(outputs[i].data);
}

TRITONSERVER_Error *TRITONBACKEND_ResponseDelete(TRITONBACKEND_Response *response) {
  free_outputs(response->outputs, response->output_count);
  free(response);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseOutput(TRITONBACKEND_Response *response,
                                                 TRITONBACKEND_Output **output,
                                                 const char *name,
                                                 const TRITONSERVER_DataType datatype,
                                                 const int64_t *shape,
                                                 const uint32_t dims_count) {
  if (response->output_count == MOCK_MAX_TENSORS || dims_count > MOCK_MAX_DIMS) {
    die("too many outputs or dims");
  }
  for (uint32_t i = 0; i < response->output_count; i++) {
    if (strcmp(response->outputs[i].name, name) == 0) {
      return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_ALREADY_EXISTS, "output twice");
    }
  }
  struct TRITONBACKEND_Output *o = &response->outputs[response->output_count++];
  memset(o, 0, sizeof *o);
  snprintf(o->name, sizeof o->name, "%s", name);
  o->datatype = datatype;
  if (dims_count > 0) memcpy(o->shape, shape, dims_count * sizeof *shape);
  o->dims = dims_count;
  *output = o;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_OutputBuffer(TRITONBACKEND_Output *output,
                                               void **buffer,
                                               const uint64_t buffer_byte_size,
                                               TRITONSERVER_MemoryType *memory_type,
                                               int64_t *memory_type_id) {
  if (output->data != NULL) die("output buffer requested twice");
  /* Never NULL, even for zero bytes, like a real allocator would give. */
  output->data = malloc(buffer_byte_size ? buffer_byte_size : 1);
  output->size = buffer_byte_size;
  *buffer = output->data;
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return NULL;
}

/* Appends to the call's record; checks the rule that nothing follows the
 * final flag. Takes the outputs (not the error). */
static void record(mock_call_t *c, bool is_response, uint32_t flags,
                   TRITONSERVER_Error *error, struct TRITONBACKEND_Output *outputs,
                   uint32_t count) {
  pthread_mutex_lock(&c->mu);
  if (c->final_seen) die("something was sent after the final flag");
  if (c->sent_count == MOCK_MAX_SENT) die("too many responses");
  mock_sent_t *s = &c->sent[c->sent_count++];
  memset(s, 0, sizeof *s);
  s->seq = atomic_fetch_add(&next_seq, 1);
  s->is_response = is_response;
  s->flags = flags;
  if (error != NULL) {
    s->code = error->code;
    s->error = strdup(error->msg);
    free_outputs(outputs, count); /* an error response carries no outputs */
  } else {
    if (count > 0) memcpy(s->outputs, outputs, count * sizeof *outputs);
    s->output_count = count;
  }
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) c->final_seen = true;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

TRITONSERVER_Error *TRITONBACKEND_ResponseSend(TRITONBACKEND_Response *response,
                                               const uint32_t send_flags,
                                               TRITONSERVER_Error *error) {
  record(response->call, true, send_flags, error, response->outputs,
         response->output_count);
  free(response);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseFactoryNew(
    TRITONBACKEND_ResponseFactory **factory, TRITONBACKEND_Request *request) {
  *factory = calloc(1, sizeof **factory);
  (*factory)->call = request->call;
  pthread_mutex_lock(&request->call->mu);
  request->call->factories_live++;
  pthread_mutex_unlock(&request->call->mu);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseFactoryDelete(
    TRITONBACKEND_ResponseFactory *factory) {
  mock_call_t *c = factory->call;
  pthread_mutex_lock(&c->mu);
  c->factories_live--;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  free(factory);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseFactorySendFlags(
    TRITONBACKEND_ResponseFactory *factory, const uint32_t send_flags) {
  record(factory->call, false, send_flags, NULL, NULL, 0);
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ResponseFactoryIsCancelled(
    TRITONBACKEND_ResponseFactory *factory, bool *is_cancelled) {
  *is_cancelled = atomic_load(&factory->call->cancelled);
  return NULL;
}

bool mock_call_wait_done(mock_call_t *c, int timeout_ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&c->mu);
  bool done;
  while (!(done = c->final_seen && c->released && c->factories_live == 0)) {
    if (pthread_cond_timedwait(&c->cv, &c->mu, &until) != 0) {
      done = c->final_seen && c->released && c->factories_live == 0;
      break;
    }
  }
  pthread_mutex_unlock(&c->mu);
  return done;
}

mock_sent_t mock_call_sent(mock_call_t *c, size_t i) {
  pthread_mutex_lock(&c->mu);
  mock_sent_t s = c->sent[i];
  pthread_mutex_unlock(&c->mu);
  return s;
}

size_t mock_call_sent_count(mock_call_t *c) {
  pthread_mutex_lock(&c->mu);
  size_t n = c->sent_count;
  pthread_mutex_unlock(&c->mu);
  return n;
}

const struct TRITONBACKEND_Output *mock_sent_output(const mock_sent_t *sent,
                                                    const char *name) {
  for (uint32_t i = 0; i < sent->output_count; i++) {
    if (strcmp(sent->outputs[i].name, name) == 0) return &sent->outputs[i];
  }
  return NULL;
}
