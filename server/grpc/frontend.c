/* The gRPC frontend (see frontend.h). The main thread starts and stops it;
 * each completion queue has one thread that only forwards events to the
 * actors that own their tags; calls live on actor workers. */
#include "server/grpc/frontend.h"

#include <grpc/grpc_security.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actors/inline.h"
#include "actors/timer.h"
#include "server/common/deadline.h"
#include "server/common/log.h"
#include "server/grpc/call.h"
#include "server/grpc/handoff.h"
#include "server/grpc/health.h"
#include "server/grpc/health_port.h"
#include "server/grpc/restrict.h"
#include "server/grpc/stream_rpc.h"
#include "server/grpc/tag.h"
#include "server/grpc/tls.h"

enum { CONTROL_SHUTDOWN_DONE = 1, CONTROL_STOP };

struct srv_frontend {
  srv_server_t *srv;
  srv_health_t *health; /* grpc.health.v1: its actor owns the watches */
  grpc_server *server;
  unsigned cq_count;
  grpc_completion_queue **cqs;
  pthread_t *cq_threads;
  unsigned cq_threads_started;
  void **methods;                           /* registered handle of each srv_rpcs entry */
  srv_grpc_restrict_t restricted;           /* --grpc-restricted-protocol, per method */
  grpc_compression_level infer_compression; /* of inference responses */
  int port;
  int health_port; /* the plaintext health port's; 0: none */
  /* The control actor turns the server's shutdown event into a semaphore
   * post for the main thread, which waits on it with a timeout. */
  act_actor_t control;
  srv_tag_t shutdown_tag;
  act_msg_t control_stop;
  sem_t shutdown_done;
  _Atomic long calls_handled; /* calls between their arrival and their end */
  /* The main thread's, at shutdown. */
  bool shutdown_seen;   /* shutdown_done was posted */
  bool cancelled_calls; /* grpc_server_cancel_all_calls was called */
};

typedef struct {
  srv_frontend_t *fe;
  unsigned index;
} cq_thread_arg_t;

static void *cq_thread_main(void *p) {
  cq_thread_arg_t arg = *(cq_thread_arg_t *)p;
  free(p);
  grpc_completion_queue *cq = arg.fe->cqs[arg.index];
  for (;;) {
    grpc_event ev =
        grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    if (ev.type != GRPC_OP_COMPLETE) continue;
    srv_tag_t *tag = ev.tag;
    SRV_HANDOFF_FROM_GRPC(tag);
    tag->success = ev.success != 0;
    /* The owner (a call, a stream) runs on this thread unless it is busy
     * elsewhere: one wake of a worker less per event (actors/inline.h). */
    act_send_inline(tag->owner, &tag->msg);
  }
  return NULL;
}

static void control_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_frontend_t *fe = act_actor_state(self);
  if (msg->kind == CONTROL_SHUTDOWN_DONE) sem_post(&fe->shutdown_done);
  /* CONTROL_STOP: nothing to release; the actor is embedded in fe. */
}

/* Relaxed: the increment publishes nothing (see srv_frontend_call_end). */
void srv_frontend_call_begin(srv_frontend_t *fe) {
  atomic_fetch_add_explicit(&fe->calls_handled, 1, memory_order_relaxed);
}

/* Release: every batch the call started happens before the decrement, so
 * shutdown, which acquires the count at zero, shuts the queues down after
 * the last batch was started (a batch on a shut-down queue is a gRPC
 * assertion). */
void srv_frontend_call_end(srv_frontend_t *fe) {
  atomic_fetch_sub_explicit(&fe->calls_handled, 1, memory_order_release);
}

long srv_frontend_calls(srv_frontend_t *fe) {
  /* Acquire: pairs with srv_frontend_call_end. */
  return atomic_load_explicit(&fe->calls_handled, memory_order_acquire);
}

srv_server_t *srv_frontend_server(const srv_frontend_t *fe) { return fe->srv; }
srv_health_t *srv_frontend_health(const srv_frontend_t *fe) { return fe->health; }
void srv_frontend_state_changed(srv_frontend_t *fe) { srv_health_changed(fe->health); }
grpc_server *srv_frontend_grpc(const srv_frontend_t *fe) { return fe->server; }
grpc_completion_queue *srv_frontend_cq(const srv_frontend_t *fe, unsigned cq) {
  return fe->cqs[cq];
}
void *srv_frontend_method(const srv_frontend_t *fe, size_t rpc) {
  return fe->methods[rpc];
}
int srv_frontend_port(const srv_frontend_t *fe) { return fe->port; }
const srv_restriction_t *srv_frontend_restriction(const srv_frontend_t *fe, size_t rpc) {
  return fe->restricted.of_rpc[rpc];
}
grpc_compression_level srv_frontend_infer_compression(const srv_frontend_t *fe) {
  return fe->infer_compression;
}
int srv_frontend_health_port(const srv_frontend_t *fe) { return fe->health_port; }
unsigned srv_frontend_cq_count(const srv_frontend_t *fe) { return fe->cq_count; }

void srv_frontend_request(srv_frontend_t *fe, size_t rpc, unsigned cq) {
  srv_serve_t serve = rpc < srv_rpc_count ? srv_rpcs[rpc].serve : SRV_SERVE_UNARY;
  if (serve == SRV_SERVE_HEALTH_WATCH)
    srv_health_watch_request(fe, rpc, cq);
  else if (serve == SRV_SERVE_STREAM_INFER)
    srv_stream_infer_request(fe, rpc, cq);
  else
    srv_call_request(fe, rpc, cq);
}

static void arg_int(grpc_arg *a, const char *key, int value) {
  a->type = GRPC_ARG_INTEGER;
  a->key = (char *)key;
  a->value.integer = value;
}

/* HTTP/2 settings and keepalive (README.md, "Limits"): how often the
 * server pings, which client pings it tolerates, how long a connection
 * lives, and how many calls one connection may have open. Returns how
 * many args it set. */
static size_t transport_args(const srv_options_t *opt, grpc_arg *a) {
  size_t n = 0;
  arg_int(&a[n++], GRPC_ARG_KEEPALIVE_TIME_MS, opt->grpc_keepalive_time_ms);
  arg_int(&a[n++], GRPC_ARG_KEEPALIVE_TIMEOUT_MS, opt->grpc_keepalive_timeout_ms);
  arg_int(&a[n++], GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS,
          opt->grpc_keepalive_permit_without_calls ? 1 : 0);
  arg_int(&a[n++], GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA,
          opt->grpc_http2_max_pings_without_data);
  arg_int(&a[n++], GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
          opt->grpc_http2_min_recv_ping_interval_ms);
  arg_int(&a[n++], GRPC_ARG_HTTP2_MAX_PING_STRIKES, opt->grpc_http2_max_ping_strikes);
  arg_int(&a[n++], GRPC_ARG_MAX_CONCURRENT_STREAMS, opt->grpc_max_concurrent_streams);
  /* Unset, gRPC's own default: a connection may live for ever. */
  if (opt->grpc_max_connection_age_ms > 0)
    arg_int(&a[n++], GRPC_ARG_MAX_CONNECTION_AGE_MS, opt->grpc_max_connection_age_ms);
  if (opt->grpc_max_connection_age_grace_ms > 0)
    arg_int(&a[n++], GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
            opt->grpc_max_connection_age_grace_ms);
  return n;
}

static grpc_server *server_create(const srv_options_t *opt) {
  grpc_arg args[4 + 9];
  memset(args, 0, sizeof args);
  /* Core checks this on the bytes as they came, compressed or not, and
   * answers RESOURCE_EXHAUSTED in its own words. */
  args[0].type = GRPC_ARG_INTEGER;
  args[0].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  args[0].value.integer = opt->grpc_max_receive_message_size;
  /* Core would inflate a compressed message whole before anyone checks its
   * size (a 1 MB gzip message becomes 1 GiB in 1 KiB slices); with this
   * off, message_bytes.c inflates it once, bounded by the same limit. */
  args[1].type = GRPC_ARG_INTEGER;
  args[1].key = GRPC_ARG_ENABLE_PER_MESSAGE_DECOMPRESSION;
  args[1].value.integer = 0;
  /* Tensors can be large: no send limit, as tritonserver. */
  args[2].type = GRPC_ARG_INTEGER;
  args[2].key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
  args[2].value.integer = -1;
  /* A port already in use is an error, not a second silent listener,
   * unless --reuse-grpc-port asks for SO_REUSEPORT. */
  args[3].type = GRPC_ARG_INTEGER;
  args[3].key = GRPC_ARG_ALLOW_REUSEPORT;
  args[3].value.integer = opt->reuse_grpc_port ? 1 : 0;
  size_t n = 4 + transport_args(opt, &args[4]);
  grpc_channel_args channel_args = {n, args};
  return grpc_server_create(&channel_args, NULL);
}

static void methods_register(srv_frontend_t *fe) {
  fe->methods = calloc(srv_rpc_count, sizeof *fe->methods);
  if (fe->methods == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < srv_rpc_count; i++) {
    grpc_server_register_method_payload_handling payload =
        srv_rpcs[i].kind == SRV_RPC_BIDI_STREAM
            ? GRPC_SRM_PAYLOAD_NONE
            : GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER;
    fe->methods[i] =
        grpc_server_register_method(fe->server, srv_rpcs[i].path, NULL, payload, 0);
    if (fe->methods[i] == NULL) SRV_FATAL("registering %s failed", srv_rpcs[i].path);
  }
}

static srv_status_t *port_bind(srv_frontend_t *fe, const srv_options_t *opt) {
  char addr[300];
  /* IPv6 literals need brackets in a target address. */
  const char *fmt = strchr(opt->grpc_address, ':') ? "[%s]:%d" : "%s:%d";
  snprintf(addr, sizeof addr, fmt, opt->grpc_address, opt->grpc_port);
  /* Plaintext, TLS or mutual TLS (tls.c). */
  grpc_server_credentials *creds = srv_tls_credentials(opt);
  fe->port = grpc_server_add_http2_port(fe->server, addr, creds);
  grpc_server_credentials_release(creds);
  if (fe->port == 0)
    return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                          "cannot listen on %s (address in use or invalid)", addr);
  return srv_health_port_bind(fe->server, opt, &fe->health_port);
}

static void threads_start(srv_frontend_t *fe) {
  for (unsigned i = 0; i < fe->cq_count; i++) {
    cq_thread_arg_t *arg = malloc(sizeof *arg);
    if (arg == NULL) SRV_FATAL("out of memory");
    arg->fe = fe;
    arg->index = i;
    int rc = pthread_create(&fe->cq_threads[i], NULL, cq_thread_main, arg);
    if (rc != 0) SRV_FATAL("cannot start a completion-queue thread: %s", strerror(rc));
    fe->cq_threads_started++;
  }
}

static void calls_request_all(srv_frontend_t *fe) {
  for (unsigned q = 0; q < fe->cq_count; q++) {
    for (size_t r = 0; r < srv_rpc_count; r++)
      for (unsigned k = 0; k < srv_rpcs[r].preposted; k++) srv_frontend_request(fe, r, q);
    srv_frontend_request(fe, srv_rpc_count, q); /* unregistered methods */
  }
}

/* Fewer queues than cores by default: each queue's thread polls every
 * connection, so more threads contend for the same transports (gRPC then
 * hands the loser's work to its executor thread), and the cores are also
 * needed by instance threads and the workers. On 2 cores, `simple` took
 * 10.6-11.1 us of CPU per request with one queue and 14.5-14.9 us with two
 * (docs/perf.md, "CPU per request, by thread"). */
static unsigned cq_count(const srv_options_t *opt) {
  if (opt->grpc_threads > 0) return (unsigned)opt->grpc_threads;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores >= 4 ? (unsigned)(cores / 2) : 1;
}

srv_status_t *srv_frontend_start(srv_server_t *srv, srv_frontend_t **out) {
  srv_frontend_t *fe = calloc(1, sizeof *fe);
  if (fe == NULL) SRV_FATAL("out of memory");
  fe->srv = srv;
  fe->health = srv_health_new(srv);
  fe->cq_count = cq_count(srv->options);
  fe->cqs = calloc(fe->cq_count, sizeof *fe->cqs);
  fe->cq_threads = calloc(fe->cq_count, sizeof *fe->cq_threads);
  if (fe->cqs == NULL || fe->cq_threads == NULL) SRV_FATAL("out of memory");
  sem_init(&fe->shutdown_done, 0, 0);
  act_actor_init(&fe->control, srv->runtime, control_behaviour, fe);
  srv_tag_init(&fe->shutdown_tag, &fe->control, CONTROL_SHUTDOWN_DONE);

  srv_grpc_restrict_init(&fe->restricted, srv->options);
  fe->infer_compression =
      (grpc_compression_level)srv_options_compression_level(srv->options);
  fe->server = server_create(srv->options);
  for (unsigned i = 0; i < fe->cq_count; i++) {
    fe->cqs[i] = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(fe->server, fe->cqs[i], NULL);
  }
  methods_register(fe);
  srv_status_t *st = port_bind(fe, srv->options);
  if (st != NULL) {
    /* Never started: destroy directly; nothing is outstanding. */
    grpc_server_destroy(fe->server);
    fe->server = NULL;
    srv_frontend_close(fe);
    srv_frontend_free(fe);
    return st;
  }
  grpc_server_start(fe->server);
  threads_start(fe);
  calls_request_all(fe);
  *out = fe;
  return NULL;
}

/* The main thread's pace while it waits: the shutdown event is waited
 * for in 50 ms steps, the last calls' end polled every 10 ms. */
#define EVENT_STEP_NS 50000000ull
#define CALLS_STEP_NS 10000000ull

static uint64_t step_until(uint64_t step_ns, uint64_t deadline_ns) {
  uint64_t now = act_now_ns();
  if (deadline_ns <= now || deadline_ns - now < step_ns) return deadline_ns;
  return now + step_ns;
}

static void sleep_until(uint64_t at_ns) {
  uint64_t now = act_now_ns();
  if (at_ns <= now) return;
  struct timespec ts = {(time_t)((at_ns - now) / 1000000000ull),
                        (long)((at_ns - now) % 1000000000ull)};
  nanosleep(&ts, NULL);
}

/* Waits until gRPC reported its shutdown and no call object is left, or
 * the deadline. gRPC reports shutdown once its calls are over for it,
 * which after a cancel can be before our call objects have ended: a
 * cancelled call still receives its backend's answer and its release, and
 * must not start a batch on a queue that is shut down. gRPC core can also
 * hold a call it accepted just as shutdown began but never matched to a
 * handler, until that call's own deadline; once no handled call is left
 * (seen twice, 50 ms apart, so that a call whose arrival is still queued
 * is not missed), only such calls remain, and they are cancelled. */
static bool drain_until(srv_frontend_t *fe, uint64_t deadline_ns) {
  int idle_checks = 0;
  for (;;) {
    if (!fe->shutdown_seen)
      fe->shutdown_seen =
          srv_sem_wait_until(&fe->shutdown_done, step_until(EVENT_STEP_NS, deadline_ns));
    else
      sleep_until(step_until(CALLS_STEP_NS, deadline_ns));
    bool idle = srv_frontend_calls(fe) == 0;
    if (idle && fe->shutdown_seen) return true;
    idle_checks = idle ? idle_checks + 1 : 0;
    if (idle_checks >= 2 && !fe->cancelled_calls) {
      SRV_VERBOSE(1, "shutdown: cancelling calls that never reached a handler");
      grpc_server_cancel_all_calls(fe->server);
      fe->cancelled_calls = true;
    }
    if (act_now_ns() >= deadline_ns) return false;
  }
}

void srv_frontend_shutdown(srv_frontend_t *fe) {
  if (fe->server == NULL) return;
  /* New calls are refused from here on; in-flight ones go on. */
  SRV_HANDOFF_TO_GRPC(&fe->shutdown_tag);
  grpc_server_shutdown_and_notify(fe->server, fe->cqs[0], &fe->shutdown_tag);
}

bool srv_frontend_wait(srv_frontend_t *fe, uint64_t deadline_ns) {
  return fe->server == NULL || drain_until(fe, deadline_ns);
}

void srv_frontend_cancel(srv_frontend_t *fe) {
  if (fe->server == NULL) return;
  SRV_INFO("cancelling %ld in-flight calls", srv_frontend_calls(fe));
  grpc_server_cancel_all_calls(fe->server);
  fe->cancelled_calls = true;
}

void srv_frontend_close(srv_frontend_t *fe) {
  /* No call is left; pending requests complete with success=0. */
  for (unsigned i = 0; i < fe->cq_count; i++) grpc_completion_queue_shutdown(fe->cqs[i]);
  for (unsigned i = 0; i < fe->cq_threads_started; i++)
    pthread_join(fe->cq_threads[i], NULL);
  fe->cq_threads_started = 0;
  act_send_stop(&fe->control, &fe->control_stop);
  srv_health_stop(fe->health); /* no watch can be left: every call is done */
}

void srv_frontend_free(srv_frontend_t *fe) {
  if (fe->server != NULL) grpc_server_destroy(fe->server);
  for (unsigned i = 0; i < fe->cq_count; i++)
    if (fe->cqs[i] != NULL) grpc_completion_queue_destroy(fe->cqs[i]);
  sem_destroy(&fe->shutdown_done);
  free(fe->methods);
  srv_grpc_restrict_free(&fe->restricted);
  free(fe->cqs);
  free(fe->cq_threads);
  free(fe);
}
