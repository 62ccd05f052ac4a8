/* The floor for tools/bench/compare: a bare gRPC C-core server that answers
 * every /inference.GRPCInferenceService/ModelInfer call with the bytes it
 * received. No decoding, no actors, no model: whatever Nereid spends above
 * this is its own cost. One completion queue and one thread per core,
 * calls preposted on each queue, one batch per call (initial metadata,
 * message, status, receive-close), as lean as gRPC allows.
 * Usage: echo_server [PORT] [THREADS]; prints "echo listening on PORT". */
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREPOSTED 64

typedef struct {
  grpc_server *server;
  void *method;
  grpc_completion_queue *cq;
} queue_t;

typedef struct {
  queue_t *q;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_metadata_array md;
  grpc_byte_buffer *payload;
  grpc_slice details;
  int cancelled;
  int replying; /* 0: waiting for a call; 1: the reply batch is in flight */
} call_t;

static void call_request(queue_t *q) {
  call_t *c = calloc(1, sizeof *c);
  if (c == NULL) abort();
  c->q = q;
  grpc_metadata_array_init(&c->md);
  if (grpc_server_request_registered_call(q->server, q->method, &c->call, &c->deadline,
                                          &c->md, &c->payload, q->cq, q->cq,
                                          c) != GRPC_CALL_OK)
    abort();
}

static void call_free(call_t *c) {
  if (c->payload != NULL) grpc_byte_buffer_destroy(c->payload);
  grpc_metadata_array_destroy(&c->md);
  if (c->call != NULL) grpc_call_unref(c->call);
  free(c);
}

static void reply(call_t *c) {
  grpc_op ops[4];
  memset(ops, 0, sizeof ops);
  c->details = grpc_empty_slice();
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = c->payload;
  ops[2].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[2].data.send_status_from_server.status = GRPC_STATUS_OK;
  ops[2].data.send_status_from_server.status_details = &c->details;
  ops[3].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[3].data.recv_close_on_server.cancelled = &c->cancelled;
  c->replying = 1;
  size_t n = c->payload != NULL ? 4 : 3;
  if (c->payload == NULL) ops[1] = ops[2], ops[2] = ops[3];
  if (grpc_call_start_batch(c->call, ops, n, c, NULL) != GRPC_CALL_OK) abort();
}

static void *queue_run(void *arg) {
  queue_t *q = arg;
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(q->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC),
                                               NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) return NULL;
    call_t *c = ev.tag;
    if (!c->replying && ev.success) {
      call_request(q); /* replace it first, as Nereid does */
      reply(c);
    } else {
      call_free(c);
    }
  }
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 0;
  long threads = argc > 2 ? atol(argv[2]) : sysconf(_SC_NPROCESSORS_ONLN);
  if (threads < 1) threads = 1;
  grpc_init();
  grpc_server *server = grpc_server_create(NULL, NULL);
  void *method = grpc_server_register_method(
      server, "/inference.GRPCInferenceService/ModelInfer", NULL,
      GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
  queue_t *queues = calloc((size_t)threads, sizeof *queues);
  for (long i = 0; i < threads; i++) {
    queues[i].server = server;
    queues[i].method = method;
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
    for (int k = 0; k < PREPOSTED; k++) call_request(&queues[i]);
    pthread_create(&tids[i], NULL, queue_run, &queues[i]);
  }
  for (long i = 0; i < threads; i++) pthread_join(tids[i], NULL); /* until killed */
  return 0;
}
