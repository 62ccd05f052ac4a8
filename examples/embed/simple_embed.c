/* Nereid in process: an application that links libtritonserver.so, makes a
 * server with TRITONSERVER_ServerNew (no network endpoints), loads the
 * example model `simple` in explicit mode, runs one inference through
 * TRITONSERVER_ServerInferAsync with its own response allocator, checks
 * the sums and differences, reads the model's statistics and the metrics,
 * then unloads, stops and deletes the server. See README.md.
 *
 * Usage: simple_embed [--model-repository=DIR] [--backend-directory=DIR]
 *                     [--verbose=N]
 * The main thread drives everything; the server's threads run the
 * callbacks, which hand the results back through a semaphore. */
#define _GNU_SOURCE /* memmem */
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "triton/core/tritonserver.h"

/* Prints the error, frees it and leaves: an example's error handling. */
static void check(TRITONSERVER_Error *err, const char *what) {
  if (err == NULL) return;
  fprintf(stderr, "error: %s: %s (%s)\n", what, TRITONSERVER_ErrorMessage(err),
          TRITONSERVER_ErrorCodeString(err));
  TRITONSERVER_ErrorDelete(err);
  exit(1);
}

static void message_print(const char *label, TRITONSERVER_Message *m) {
  const char *json;
  size_t size;
  check(TRITONSERVER_MessageSerializeToJson(m, &json, &size), "reading a message");
  printf("%s: %.*s\n", label, (int)size, json);
  check(TRITONSERVER_MessageDelete(m), "deleting a message");
}

/* ---- Outputs land in buffers this program allocates ----------------------- */

static TRITONSERVER_Error *buffer_alloc(TRITONSERVER_ResponseAllocator *allocator,
                                        const char *tensor, size_t size,
                                        TRITONSERVER_MemoryType preferred, int64_t id,
                                        void *userp, void **buffer, void **buffer_userp,
                                        TRITONSERVER_MemoryType *type, int64_t *type_id) {
  /* Host memory, whatever the server would prefer. */
  *type = TRITONSERVER_MEMORY_CPU;
  *type_id = 0;
  *buffer_userp = NULL;
  *buffer = NULL;
  if (size == 0) return NULL;
  *buffer = malloc(size);
  if (*buffer == NULL)
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "out of host memory");
  return NULL;
}

static TRITONSERVER_Error *buffer_release(TRITONSERVER_ResponseAllocator *allocator,
                                          void *buffer, void *buffer_userp, size_t size,
                                          TRITONSERVER_MemoryType type, int64_t type_id) {
  free(buffer);
  return NULL;
}

/* What the callbacks hand to the main thread. */
typedef struct {
  sem_t response, released;
  TRITONSERVER_InferenceResponse *first; /* kept until the main thread reads it */
} exchange_t;

static void on_release(TRITONSERVER_InferenceRequest *request, const uint32_t flags,
                       void *userp) {
  exchange_t *x = userp;
  sem_post(&x->released); /* the main thread deletes the request */
}

static void on_response(TRITONSERVER_InferenceResponse *response, const uint32_t flags,
                        void *userp) {
  exchange_t *x = userp;
  if (response != NULL && x->first == NULL)
    x->first = response;
  else if (response != NULL)
    TRITONSERVER_InferenceResponseDelete(response);
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) sem_post(&x->response);
}

/* ---- The program ------------------------------------------------------------ */

static TRITONSERVER_Server *server_start(const char *repository, const char *backends,
                                         int verbose) {
  TRITONSERVER_ServerOptions *options;
  check(TRITONSERVER_ServerOptionsNew(&options), "creating options");
  check(TRITONSERVER_ServerOptionsSetModelRepositoryPath(options, repository),
        "setting the model repository");
  check(TRITONSERVER_ServerOptionsSetBackendDirectory(options, backends),
        "setting the backend directory");
  check(TRITONSERVER_ServerOptionsSetModelControlMode(options,
                                                     TRITONSERVER_MODEL_CONTROL_EXPLICIT),
        "setting the model control mode");
  check(TRITONSERVER_ServerOptionsSetLogVerbose(options, verbose), "setting the log");
  check(TRITONSERVER_ServerOptionsSetStrictReadiness(options, true), "setting readiness");
  TRITONSERVER_Server *server;
  check(TRITONSERVER_ServerNew(&server, options), "creating the server");
  check(TRITONSERVER_ServerOptionsDelete(options), "deleting options");
  /* An in-process server is live and ready once ServerNew returns; a
   * program that starts it elsewhere would wait like this. */
  for (int i = 0;; i++) {
    bool live = false, ready = false;
    check(TRITONSERVER_ServerIsLive(server, &live), "asking if live");
    check(TRITONSERVER_ServerIsReady(server, &ready), "asking if ready");
    if (live && ready) break;
    if (i == 100) {
      fprintf(stderr, "error: the server did not become ready in 10 s\n");
      exit(1);
    }
    usleep(100 * 1000);
  }
  printf("server is live and ready\n");
  return server;
}

static TRITONSERVER_InferenceRequest *request_make(TRITONSERVER_Server *server,
                                                   const int32_t *in0, const int32_t *in1,
                                                   size_t bytes) {
  TRITONSERVER_InferenceRequest *request;
  check(TRITONSERVER_InferenceRequestNew(&request, server, "simple", -1),
        "creating the request");
  check(TRITONSERVER_InferenceRequestSetId(request, "embed-1"), "setting the id");
  const int64_t shape[2] = {1, 16};
  check(TRITONSERVER_InferenceRequestAddInput(request, "INPUT0", TRITONSERVER_TYPE_INT32,
                                              shape, 2),
        "adding INPUT0");
  check(TRITONSERVER_InferenceRequestAddInput(request, "INPUT1", TRITONSERVER_TYPE_INT32,
                                              shape, 2),
        "adding INPUT1");
  check(TRITONSERVER_InferenceRequestAppendInputData(request, "INPUT0", in0, bytes,
                                                     TRITONSERVER_MEMORY_CPU, 0),
        "giving INPUT0's data");
  check(TRITONSERVER_InferenceRequestAppendInputData(request, "INPUT1", in1, bytes,
                                                     TRITONSERVER_MEMORY_CPU, 0),
        "giving INPUT1's data");
  check(TRITONSERVER_InferenceRequestAddRequestedOutput(request, "OUTPUT0"),
        "asking for OUTPUT0");
  check(TRITONSERVER_InferenceRequestAddRequestedOutput(request, "OUTPUT1"),
        "asking for OUTPUT1");
  return request;
}

/* Compares each output with what `simple` computes; returns the mistakes. */
static int outputs_check(TRITONSERVER_InferenceResponse *response, const int32_t *in0,
                         const int32_t *in1) {
  /* The response keeps its error: print it, do not delete it. */
  TRITONSERVER_Error *failed = TRITONSERVER_InferenceResponseError(response);
  if (failed != NULL) {
    fprintf(stderr, "error: the inference: %s (%s)\n", TRITONSERVER_ErrorMessage(failed),
            TRITONSERVER_ErrorCodeString(failed));
    return 1;
  }
  uint32_t count;
  check(TRITONSERVER_InferenceResponseOutputCount(response, &count), "counting outputs");
  int wrong = count == 2 ? 0 : 1;
  for (uint32_t o = 0; o < count; o++) {
    const char *name;
    TRITONSERVER_DataType type;
    const int64_t *shape;
    uint64_t dims;
    const void *base;
    size_t size;
    TRITONSERVER_MemoryType memory;
    int64_t memory_id;
    void *userp;
    check(TRITONSERVER_InferenceResponseOutput(response, o, &name, &type, &shape, &dims,
                                               &base, &size, &memory, &memory_id, &userp),
          "reading an output");
    bool sum = strcmp(name, "OUTPUT0") == 0;
    const int32_t *out = base;
    if (type != TRITONSERVER_TYPE_INT32 || size != 16 * sizeof(int32_t)) return wrong + 1;
    for (int i = 0; i < 16; i++) {
      int32_t want = sum ? in0[i] + in1[i] : in0[i] - in1[i];
      if (out[i] != want) {
        fprintf(stderr, "%s[%d] = %d, expected %d\n", name, i, out[i], want);
        wrong++;
      }
    }
    printf("%s = INPUT0 %s INPUT1: 16 values checked\n", name, sum ? "+" : "-");
  }
  return wrong;
}

static int infer(TRITONSERVER_Server *server) {
  int32_t in0[16], in1[16];
  for (int i = 0; i < 16; i++) {
    in0[i] = i;
    in1[i] = 1;
  }
  TRITONSERVER_ResponseAllocator *allocator;
  check(TRITONSERVER_ResponseAllocatorNew(&allocator, buffer_alloc, buffer_release, NULL),
        "creating the allocator");
  exchange_t x = {.first = NULL};
  sem_init(&x.response, 0, 0);
  sem_init(&x.released, 0, 0);
  TRITONSERVER_InferenceRequest *request = request_make(server, in0, in1, sizeof in0);
  check(TRITONSERVER_InferenceRequestSetReleaseCallback(request, on_release, &x),
        "setting the release callback");
  check(TRITONSERVER_InferenceRequestSetResponseCallback(request, allocator, NULL,
                                                         on_response, &x),
        "setting the response callback");
  check(TRITONSERVER_ServerInferAsync(server, request, NULL), "sending the request");
  sem_wait(&x.response);
  sem_wait(&x.released);
  int wrong = x.first != NULL ? outputs_check(x.first, in0, in1) : 1;
  if (x.first != NULL) check(TRITONSERVER_InferenceResponseDelete(x.first), "response");
  check(TRITONSERVER_InferenceRequestDelete(request), "deleting the request");
  check(TRITONSERVER_ResponseAllocatorDelete(allocator), "deleting the allocator");
  sem_destroy(&x.response);
  sem_destroy(&x.released);
  return wrong;
}

/* The metrics page's line for `simple`'s successful requests. */
static void metrics_print(TRITONSERVER_Server *server) {
  TRITONSERVER_Metrics *metrics;
  check(TRITONSERVER_ServerMetrics(server, &metrics), "reading metrics");
  const char *text;
  size_t size;
  check(TRITONSERVER_MetricsFormatted(metrics, TRITONSERVER_METRIC_PROMETHEUS, &text, &size),
        "formatting metrics");
  const char *key = "nv_inference_request_success{model=\"simple\"";
  const char *line = memmem(text, size, key, strlen(key));
  const char *end = line != NULL ? memchr(line, '\n', size - (size_t)(line - text)) : NULL;
  if (line != NULL) printf("metrics: %.*s\n", (int)(end ? end - line : 80), line);
  check(TRITONSERVER_MetricsDelete(metrics), "deleting metrics");
}

int main(int argc, char **argv) {
  const char *repository = "examples/models", *backends = "backends";
  int verbose = 0;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--model-repository=", 19) == 0)
      repository = argv[i] + 19;
    else if (strncmp(argv[i], "--backend-directory=", 20) == 0)
      backends = argv[i] + 20;
    else if (strncmp(argv[i], "--verbose=", 10) == 0)
      verbose = atoi(argv[i] + 10);
    else {
      fprintf(stderr, "usage: %s [--model-repository=DIR] [--backend-directory=DIR] "
                      "[--verbose=N]\n", argv[0]);
      return 2;
    }
  }
  TRITONSERVER_Server *server = server_start(repository, backends, verbose);
  TRITONSERVER_Message *message;
  check(TRITONSERVER_ServerMetadata(server, &message), "reading server metadata");
  message_print("server metadata", message);
  check(TRITONSERVER_ServerLoadModel(server, "simple"), "loading simple");
  bool ready = false;
  check(TRITONSERVER_ServerModelIsReady(server, "simple", -1, &ready), "asking for simple");
  printf("loaded simple: %s\n", ready ? "ready" : "NOT ready");
  check(TRITONSERVER_ServerModelMetadata(server, "simple", -1, &message), "model metadata");
  message_print("model metadata", message);
  int wrong = infer(server);
  check(TRITONSERVER_ServerModelStatistics(server, "simple", -1, &message), "statistics");
  message_print("statistics", message);
  metrics_print(server);
  check(TRITONSERVER_ServerUnloadModel(server, "simple"), "unloading simple");
  printf("unloaded simple\n");
  check(TRITONSERVER_ServerStop(server), "stopping the server");
  check(TRITONSERVER_ServerDelete(server), "deleting the server");
  printf(wrong == 0 && ready ? "PASS: simple_embed\n" : "FAIL: simple_embed\n");
  return wrong == 0 && ready ? 0 : 1;
}
