/* The embedding tests' helpers (see embed_testing.h). Callbacks run on the
 * server's threads and hand results to the test through semaphores. */
#include "server/embed/embed_testing.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool embed_ok(TRITONSERVER_Error *err) {
  if (err == NULL) return true;
  fprintf(stderr, "  unexpected error %s: %s\n", TRITONSERVER_ErrorCodeString(err),
          TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  return false;
}

bool embed_fails(TRITONSERVER_Error *err, TRITONSERVER_Error_Code code, const char *text) {
  if (err == NULL) {
    fprintf(stderr, "  no error where '%s' was expected\n", text);
    return false;
  }
  bool ok = TRITONSERVER_ErrorCode(err) == code &&
            strstr(TRITONSERVER_ErrorMessage(err), text) != NULL;
  if (!ok)
    fprintf(stderr, "  got %s: '%s', expected code %d with '%s'\n",
            TRITONSERVER_ErrorCodeString(err), TRITONSERVER_ErrorMessage(err), (int)code,
            text);
  TRITONSERVER_ErrorDelete(err);
  return ok;
}

bool embed_model_add(const char *root, const char *name, const char *config) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", root, name);
  if (mkdir(path, 0700) != 0) return false;
  snprintf(path, sizeof path, "%s/%s/1", root, name);
  if (mkdir(path, 0700) != 0) return false;
  snprintf(path, sizeof path, "%s/%s/config.pbtxt", root, name);
  FILE *f = fopen(path, "w");
  if (f == NULL) return false;
  bool ok = fputs(config, f) >= 0;
  return fclose(f) == 0 && ok;
}

static TRITONSERVER_Error *host_alloc(TRITONSERVER_ResponseAllocator *a, const char *name,
                                      size_t size, TRITONSERVER_MemoryType mt, int64_t id,
                                      void *userp, void **buffer, void **buffer_userp,
                                      TRITONSERVER_MemoryType *actual, int64_t *actual_id) {
  *buffer = size > 0 ? malloc(size) : NULL;
  *buffer_userp = NULL;
  *actual = TRITONSERVER_MEMORY_CPU;
  *actual_id = 0;
  return NULL;
}

static TRITONSERVER_Error *host_release(TRITONSERVER_ResponseAllocator *a, void *buffer,
                                        void *buffer_userp, size_t size,
                                        TRITONSERVER_MemoryType mt, int64_t id) {
  free(buffer);
  return NULL;
}

/* One allocator for every call: it holds no state. */
static TRITONSERVER_ResponseAllocator *allocator(void) {
  static TRITONSERVER_ResponseAllocator *a;
  if (a == NULL) CHECK(embed_ok(TRITONSERVER_ResponseAllocatorNew(&a, host_alloc,
                                                                  host_release, NULL)));
  return a;
}

static void released(TRITONSERVER_InferenceRequest *r, const uint32_t flags, void *userp) {
  TRITONSERVER_InferenceRequestDelete(r);
  sem_post(&((embed_call_t *)userp)->released);
}

static void outputs_copy(embed_call_t *c, TRITONSERVER_InferenceResponse *r) {
  uint32_t n = 0;
  CHECK(embed_ok(TRITONSERVER_InferenceResponseOutputCount(r, &n)));
  for (uint32_t i = 0; i < n && c->output_count < 2; i++) {
    const char *name;
    TRITONSERVER_DataType dt;
    const int64_t *shape;
    uint64_t dims;
    const void *base;
    size_t size;
    TRITONSERVER_MemoryType mt;
    int64_t id;
    void *u;
    CHECK(embed_ok(TRITONSERVER_InferenceResponseOutput(r, i, &name, &dt, &shape, &dims,
                                                        &base, &size, &mt, &id, &u)));
    snprintf(c->names[c->output_count], sizeof c->names[0], "%s", name);
    memcpy(c->values[c->output_count++], base,
           size < sizeof c->values[0] ? size : sizeof c->values[0]);
  }
}

static void responded(TRITONSERVER_InferenceResponse *r, const uint32_t flags,
                      void *userp) {
  embed_call_t *c = userp;
  if (r != NULL) {
    TRITONSERVER_Error *err = TRITONSERVER_InferenceResponseError(r); /* the response's */
    if (err != NULL) {
      c->failed = true;
      c->code = TRITONSERVER_ErrorCode(err);
      snprintf(c->message, sizeof c->message, "%s", TRITONSERVER_ErrorMessage(err));
    } else {
      outputs_copy(c, r);
    }
    /* This thread runs the request's owner actor: a blocking call is refused. */
    c->callback_blocking_refused =
        embed_fails(TRITONSERVER_ServerLoadModel(c->server, "any"),
                    TRITONSERVER_ERROR_UNAVAILABLE,
                    "cannot be called from a callback the server runs");
    TRITONSERVER_InferenceResponseDelete(r);
  }
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) sem_post(&c->final);
}

bool embed_call_send(embed_call_t *c, TRITONSERVER_Server *s, const char *model,
                     const char *const *names, const int32_t *const *data, int inputs,
                     int n) {
  memset(c, 0, sizeof *c);
  c->server = s;
  sem_init(&c->final, 0, 0);
  sem_init(&c->released, 0, 0);
  TRITONSERVER_InferenceRequest *r = NULL;
  if (!embed_ok(TRITONSERVER_InferenceRequestNew(&r, s, model, -1))) return false;
  const int64_t shape[] = {1, n};
  bool ok = true;
  for (int i = 0; i < inputs; i++) {
    ok = ok && embed_ok(TRITONSERVER_InferenceRequestAddInput(
                   r, names[i], TRITONSERVER_TYPE_INT32, shape, 2));
    ok = ok && embed_ok(TRITONSERVER_InferenceRequestAppendInputData(
                   r, names[i], data[i], (size_t)n * sizeof(int32_t),
                   TRITONSERVER_MEMORY_CPU, 0));
  }
  ok = ok && embed_ok(TRITONSERVER_InferenceRequestSetReleaseCallback(r, released, c));
  ok = ok && embed_ok(TRITONSERVER_InferenceRequestSetResponseCallback(r, allocator(), NULL,
                                                                      responded, c));
  ok = ok && embed_ok(TRITONSERVER_ServerInferAsync(s, r, NULL));
  if (!ok) TRITONSERVER_InferenceRequestDelete(r);
  CHECK(ok);
  return ok;
}

void embed_call_wait(embed_call_t *c) {
  sem_wait(&c->final);
  sem_wait(&c->released);
  sem_destroy(&c->final);
  sem_destroy(&c->released);
}

const int32_t *embed_call_output(const embed_call_t *c, const char *name) {
  for (uint32_t i = 0; i < c->output_count; i++)
    if (strcmp(c->names[i], name) == 0) return c->values[i];
  return NULL;
}
