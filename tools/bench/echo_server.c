/* The floor for tools/bench/compare: a bare gRPC C-core server that answers
 * every /inference.GRPCInferenceService/ModelInfer call with the bytes it
 * received. No decoding, no actors, no model: whatever Nereid spends above
 * this is its own cost. One completion queue and one thread per core,
 * calls preposted on each queue, one batch per call (initial metadata,
 * message, status, receive-close), as lean as gRPC allows.
 * So that nereid-perf can load it too, ModelMetadata and ModelConfig on
 * `simple` answer what Nereid answers for examples/models/simple (canned,
 * built with upb at start-up); every other method, ModelStatistics
 * included, answers UNIMPLEMENTED (nereid-perf then shows no server split).
 * Usage: echo_server [PORT] [THREADS]; prints "echo listening on PORT". */
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grpc_service.upb.h"
#include "model_config.upb.h"
#include "server/mutex_checks.h"

#define PREPOSTED 64 /* ModelInfer calls per queue; one of each other kind */
#define METHOD_PREFIX "/inference.GRPCInferenceService/"

/* Registered kinds first: they index queue_t.methods. */
typedef enum { CALL_INFER, CALL_METADATA, CALL_CONFIG, CALL_OTHER } call_kind_t;

static const char *const method_names[CALL_OTHER] = {METHOD_PREFIX "ModelInfer",
                                                     METHOD_PREFIX "ModelMetadata",
                                                     METHOD_PREFIX "ModelConfig"};

/* The serialized replies for `simple`, by kind (CALL_METADATA, CALL_CONFIG).
 * Written by main before the threads start, only read (and ref'd) after. */
static grpc_slice canned[CALL_OTHER];

typedef struct {
  grpc_server *server;
  void *methods[CALL_OTHER];
  grpc_completion_queue *cq;
} queue_t;

typedef struct {
  queue_t *q;
  call_kind_t kind;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_metadata_array md;
  grpc_byte_buffer *payload; /* the request; then the reply it sends */
  grpc_call_details method;  /* CALL_OTHER only: which method was called */
  grpc_slice details;
  int cancelled;
  int replying; /* 0: waiting for a call; 1: the reply batch is in flight */
} call_t;

static void call_request(queue_t *q, call_kind_t kind) {
  call_t *c = calloc(1, sizeof *c);
  if (c == NULL) abort();
  c->q = q;
  c->kind = kind;
  grpc_metadata_array_init(&c->md);
  grpc_call_error e;
  if (kind == CALL_OTHER) {
    grpc_call_details_init(&c->method);
    e = grpc_server_request_call(q->server, &c->call, &c->method, &c->md, q->cq, q->cq,
                                 c);
  } else {
    e = grpc_server_request_registered_call(q->server, q->methods[kind], &c->call,
                                            &c->deadline, &c->md, &c->payload, q->cq,
                                            q->cq, c);
  }
  if (e != GRPC_CALL_OK) abort();
}

static void call_free(call_t *c) {
  if (c->payload != NULL) grpc_byte_buffer_destroy(c->payload);
  grpc_metadata_array_destroy(&c->md);
  if (c->kind != CALL_INFER) grpc_slice_unref(c->details);
  if (c->kind == CALL_OTHER) grpc_call_details_destroy(&c->method);
  if (c->call != NULL) grpc_call_unref(c->call);
  free(c);
}

/* Sends c->payload (none when NULL) and the status; c owns details after. */
static void reply(call_t *c, grpc_status_code status, grpc_slice details) {
  grpc_op ops[4];
  memset(ops, 0, sizeof ops);
  c->details = details;
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = c->payload;
  ops[2].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[2].data.send_status_from_server.status = status;
  ops[2].data.send_status_from_server.status_details = &c->details;
  ops[3].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[3].data.recv_close_on_server.cancelled = &c->cancelled;
  c->replying = 1;
  size_t n = c->payload != NULL ? 4 : 3;
  if (c->payload == NULL) ops[1] = ops[2], ops[2] = ops[3];
  if (grpc_call_start_batch(c->call, ops, n, c, NULL) != GRPC_CALL_OK) abort();
}

/* Whether a ModelMetadata or ModelConfig request (same fields: name = 1,
 * version = 2) asks for `simple` version 1 or the default; if not, Nereid's
 * message for an unknown model goes into msg. */
static int asks_for_simple(grpc_byte_buffer *request, char *msg, size_t cap) {
  grpc_slice bytes = grpc_empty_slice();
  grpc_byte_buffer_reader reader;
  if (request != NULL && grpc_byte_buffer_reader_init(&reader, request)) {
    bytes = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
  }
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) abort();
  inference_ModelMetadataRequest *req = inference_ModelMetadataRequest_parse(
      (const char *)GRPC_SLICE_START_PTR(bytes), GRPC_SLICE_LENGTH(bytes), a);
  upb_StringView name = {"", 0}, version = {"", 0};
  if (req != NULL) {
    name = inference_ModelMetadataRequest_name(req);
    version = inference_ModelMetadataRequest_version(req);
  }
  int is_simple = name.size == 6 && memcmp(name.data, "simple", 6) == 0;
  int known =
      is_simple && (version.size == 0 || (version.size == 1 && *version.data == '1'));
  if (!is_simple)
    snprintf(msg, cap, "Request for unknown model: '%.*s' is not found", (int)name.size,
             name.data);
  else if (!known)
    snprintf(msg, cap, "Request for unknown model: '%.*s' version %.*s is not found",
             (int)name.size, name.data, (int)version.size, version.data);
  upb_Arena_Free(a);
  grpc_slice_unref(bytes);
  return known;
}

/* Not on the ModelInfer path: the canned reply, or an error like Nereid's. */
static void control_reply(call_t *c) {
  char msg[256];
  grpc_status_code status = GRPC_STATUS_OK;
  if (c->kind == CALL_OTHER) {
    status = GRPC_STATUS_UNIMPLEMENTED;
    snprintf(msg, sizeof msg, "echo_server: '%.*s' is not implemented",
             (int)GRPC_SLICE_LENGTH(c->method.method),
             (const char *)GRPC_SLICE_START_PTR(c->method.method));
  } else if (!asks_for_simple(c->payload, msg, sizeof msg)) {
    status = GRPC_STATUS_UNAVAILABLE;
  }
  if (c->payload != NULL) grpc_byte_buffer_destroy(c->payload);
  c->payload = NULL;
  if (status == GRPC_STATUS_OK) {
    c->payload = grpc_raw_byte_buffer_create(&canned[c->kind], 1); /* refs the slice */
    reply(c, status, grpc_empty_slice());
  } else {
    reply(c, status, grpc_slice_from_copied_string(msg));
  }
}

static void *queue_run(void *arg) {
  queue_t *q = arg;
  for (;;) {
    grpc_event ev =
        grpc_completion_queue_next(q->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) return NULL;
    call_t *c = ev.tag;
    if (!c->replying && ev.success) {
      call_request(q, c->kind); /* replace it first, as Nereid does */
      if (c->kind == CALL_INFER)
        reply(c, GRPC_STATUS_OK, grpc_empty_slice());
      else
        control_reply(c);
    } else {
      call_free(c);
    }
  }
}

/* INT32 [-1, 16], as Nereid reports simple's tensors (batch dimension first). */
static void tensor_metadata(inference_ModelMetadataResponse_TensorMetadata *t,
                            const char *name, upb_Arena *a) {
  if (t == NULL) abort();
  inference_ModelMetadataResponse_TensorMetadata_set_name(
      t, upb_StringView_FromString(name));
  inference_ModelMetadataResponse_TensorMetadata_set_datatype(
      t, upb_StringView_FromString("INT32"));
  if (!inference_ModelMetadataResponse_TensorMetadata_add_shape(t, -1, a) ||
      !inference_ModelMetadataResponse_TensorMetadata_add_shape(t, 16, a))
    abort();
}

static grpc_slice metadata_reply(upb_Arena *a) {
  inference_ModelMetadataResponse *r = inference_ModelMetadataResponse_new(a);
  if (r == NULL) abort();
  inference_ModelMetadataResponse_set_name(r, upb_StringView_FromString("simple"));
  if (!inference_ModelMetadataResponse_add_versions(r, upb_StringView_FromString("1"), a))
    abort();
  inference_ModelMetadataResponse_set_platform(r, upb_StringView_FromString("addsub"));
  tensor_metadata(inference_ModelMetadataResponse_add_inputs(r, a), "INPUT0", a);
  tensor_metadata(inference_ModelMetadataResponse_add_inputs(r, a), "INPUT1", a);
  tensor_metadata(inference_ModelMetadataResponse_add_outputs(r, a), "OUTPUT0", a);
  tensor_metadata(inference_ModelMetadataResponse_add_outputs(r, a), "OUTPUT1", a);
  size_t len;
  char *bytes = inference_ModelMetadataResponse_serialize(r, a, &len);
  if (bytes == NULL) abort();
  return grpc_slice_from_copied_buffer(bytes, len);
}

/* examples/models/simple/config.pbtxt as Nereid completes it: the instance
 * group gets the model's name and count 1; the version policy and the
 * pinned-memory switches get tritonserver's defaults. */
static grpc_slice config_reply(upb_Arena *a) {
  inference_ModelConfigResponse *r = inference_ModelConfigResponse_new(a);
  inference_ModelConfig *cfg =
      r ? inference_ModelConfigResponse_mutable_config(r, a) : NULL;
  if (cfg == NULL) abort();
  inference_ModelConfig_set_name(cfg, upb_StringView_FromString("simple"));
  inference_ModelVersionPolicy *policy =
      inference_ModelConfig_mutable_version_policy(cfg, a);
  inference_ModelVersionPolicy_Latest *latest =
      policy ? inference_ModelVersionPolicy_mutable_latest(policy, a) : NULL;
  if (latest == NULL) abort();
  inference_ModelVersionPolicy_Latest_set_num_versions(latest, 1);
  inference_ModelConfig_set_max_batch_size(cfg, 8);
  static const char *const ins[] = {"INPUT0", "INPUT1"};
  static const char *const outs[] = {"OUTPUT0", "OUTPUT1"};
  for (int i = 0; i < 2; i++) {
    inference_ModelInput *in = inference_ModelConfig_add_input(cfg, a);
    if (in == NULL) abort();
    inference_ModelInput_set_name(in, upb_StringView_FromString(ins[i]));
    inference_ModelInput_set_data_type(in, inference_TYPE_INT32);
    if (!inference_ModelInput_add_dims(in, 16, a)) abort();
  }
  for (int i = 0; i < 2; i++) {
    inference_ModelOutput *out = inference_ModelConfig_add_output(cfg, a);
    if (out == NULL) abort();
    inference_ModelOutput_set_name(out, upb_StringView_FromString(outs[i]));
    inference_ModelOutput_set_data_type(out, inference_TYPE_INT32);
    if (!inference_ModelOutput_add_dims(out, 16, a)) abort();
  }
  inference_ModelInstanceGroup *g = inference_ModelConfig_add_instance_group(cfg, a);
  if (g == NULL) abort();
  inference_ModelInstanceGroup_set_name(g, upb_StringView_FromString("simple"));
  inference_ModelInstanceGroup_set_count(g, 1);
  inference_ModelInstanceGroup_set_kind(g, inference_ModelInstanceGroup_KIND_CPU);
  inference_ModelOptimizationPolicy *opt =
      inference_ModelConfig_mutable_optimization(cfg, a);
  inference_ModelOptimizationPolicy_PinnedMemoryBuffer *pin_in =
      opt ? inference_ModelOptimizationPolicy_mutable_input_pinned_memory(opt, a) : NULL;
  inference_ModelOptimizationPolicy_PinnedMemoryBuffer *pin_out =
      opt ? inference_ModelOptimizationPolicy_mutable_output_pinned_memory(opt, a) : NULL;
  if (pin_in == NULL || pin_out == NULL) abort();
  inference_ModelOptimizationPolicy_PinnedMemoryBuffer_set_enable(pin_in, true);
  inference_ModelOptimizationPolicy_PinnedMemoryBuffer_set_enable(pin_out, true);
  inference_ModelConfig_set_backend(cfg, upb_StringView_FromString("addsub"));
  size_t len;
  char *bytes = inference_ModelConfigResponse_serialize(r, a, &len);
  if (bytes == NULL) abort();
  return grpc_slice_from_copied_buffer(bytes, len);
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 0;
  long threads = argc > 2 ? atol(argv[2]) : sysconf(_SC_NPROCESSORS_ONLN);
  if (threads < 1) threads = 1;
  /* ECHO_MUTEX_CHECKS=off: abseil's deadlock detection off, as nereid runs
   * (server/mutex_checks.cc), for a comparison on equal terms; by default
   * the floor is gRPC as Debian ships it. */
  const char *checks = getenv("ECHO_MUTEX_CHECKS");
  if (checks != NULL && strcmp(checks, "off") == 0) srv_mutex_checks_off();
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) abort();
  canned[CALL_METADATA] = metadata_reply(a);
  canned[CALL_CONFIG] = config_reply(a);
  upb_Arena_Free(a);
  grpc_init();
  grpc_server *server = grpc_server_create(NULL, NULL);
  void *methods[CALL_OTHER];
  for (int k = 0; k < CALL_OTHER; k++)
    methods[k] = grpc_server_register_method(
        server, method_names[k], NULL, GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
  queue_t *queues = calloc((size_t)threads, sizeof *queues);
  for (long i = 0; i < threads; i++) {
    queues[i].server = server;
    memcpy(queues[i].methods, methods, sizeof methods);
    queues[i].cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(server, queues[i].cq, NULL);
  }
  char addr[64];
  snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
  grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
  int bound = grpc_server_add_http2_port(server, addr, creds);
  grpc_server_credentials_release(creds);
  if (bound == 0) {
    fprintf(stderr, "echo: cannot bind %s\n", addr);
    return 1;
  }
  grpc_server_start(server);
  printf("echo listening on %d\n", bound);
  fflush(stdout);
  pthread_t *tids = calloc((size_t)threads, sizeof *tids);
  for (long i = 0; i < threads; i++) {
    for (int k = 0; k < PREPOSTED; k++) call_request(&queues[i], CALL_INFER);
    for (call_kind_t kind = CALL_METADATA; kind <= CALL_OTHER; kind++)
      call_request(&queues[i], kind);
    pthread_create(&tids[i], NULL, queue_run, &queues[i]);
  }
  for (long i = 0; i < threads; i++) pthread_join(tids[i], NULL); /* until killed */
  return 0;
}
