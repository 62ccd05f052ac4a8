/* The server's life: parse flags, load the models, start the gRPC frontend,
 * wait for SIGINT/SIGTERM, then shut down in order. Exported from
 * libtritonserver.so as nereid_main; main thread only. Signals are blocked
 * in every other thread, so only sigwait here sees them. */
#include <grpc/grpc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/common/deadline.h"
#include "server/common/log.h"
#include "server/core/core.h"
#include "server/grpc/frontend.h"
#include "server/grpc/tls_check.h"
#include "server/http/metrics_endpoint.h"
#include "server/http/rest.h"
#include "server/options.h"
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"
#include "server/trace/trace_config.h"

static void signals_block(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, set, NULL);
  signal(SIGPIPE, SIG_IGN);
}

/* --log-*: before anything logs, so that every line follows them. */
static srv_status_t *log_options_apply(const srv_options_t *opt) {
  srv_log_format_t format = SRV_LOG_FORMAT_DEFAULT;
  srv_log_format_parse(opt->log_format, &format); /* validated already */
  srv_log_set_format(format);
  srv_log_set_info(opt->log_info);
  srv_log_set_warning(opt->log_warning);
  srv_log_set_error(opt->log_error);
  srv_log_set_verbose(opt->log_verbose);
  if (opt->log_file == NULL) return NULL;
  return srv_log_set_file(opt->log_file);
}

static int options_load(srv_options_t *opt, int argc, char **argv) {
  srv_status_t *st = srv_options_parse(opt, argc, argv);
  if (st == NULL && opt->help) {
    srv_options_usage(stdout);
    return 0;
  }
  if (st == NULL && opt->version) {
    printf("%s %s (answers as %s %s: TRITONSERVER API %d.%d, TRITONBACKEND API %d.%d)\n",
           NEREID_NAME, NEREID_VERSION, TRITON_COMPAT_NAME, TRITON_COMPAT_VERSION,
           TRITONSERVER_API_VERSION_MAJOR, TRITONSERVER_API_VERSION_MINOR,
           TRITONBACKEND_API_VERSION_MAJOR, TRITONBACKEND_API_VERSION_MINOR);
    return 0;
  }
  if (st == NULL) st = srv_options_validate(opt);
  if (st == NULL) st = srv_tls_check(opt); /* before the models load */
  if (st == NULL) st = log_options_apply(opt);
  if (st == NULL) st = srv_trace_config_check(opt);
  if (st == NULL) return -1; /* go on */
  fprintf(stderr, "error: %s\n\n", srv_status_message(st));
  if (srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT) srv_options_usage(stderr);
  srv_status_free(st);
  return 1;
}

/* How long backends get, once the exit timeout expired and every request
 * was cancelled, to give their requests back before the process exits
 * without them (README.md, "Limits"). */
#define EXIT_GRACE_SECS 5

/* How far shutdown got; the main thread's. */
typedef struct {
  bool calls_done;  /* no call object is left (srv_frontend_wait) */
  bool models_told; /* every model was sent its stop (srv_core_stop_until) */
  bool models_done; /* every model stopped (srv_core_wait_until) */
  bool cancelled;   /* the exit timeout expired */
} shutdown_t;

/* The HTTP/REST frontend (--allow-http) and the metrics endpoint
 * (--allow-metrics) when they serve; the main thread's. */
static srv_rest_t *rest;
static srv_metrics_endpoint_t *metrics;

/* Both frontends' calls and exchanges have their answers. */
static bool frontends_wait(srv_frontend_t *fe, uint64_t deadline) {
  return (fe == NULL || srv_frontend_wait(fe, deadline)) &&
         (rest == NULL || srv_rest_wait(rest, deadline));
}

/* Within the exit timeout: in-flight calls finish (their requests still
 * run), then the models stop. True when both happened in time. */
static bool shutdown_in_time(srv_server_t *srv, srv_frontend_t *fe, shutdown_t *sd) {
  uint64_t deadline = srv_deadline_in_secs(srv->options->exit_timeout_secs);
  sd->calls_done = frontends_wait(fe, deadline);
  if (!sd->calls_done) return false;
  sd->models_told = srv_core_stop_until(srv, deadline);
  sd->models_done = sd->models_told && srv_core_wait_until(srv, deadline);
  return sd->models_done;
}

/* Past it: every call and every request is cancelled, the models stop
 * (what waits in their queues is answered CANCELLED) as soon as their
 * backends give back what they execute, and the calls end with them. */
static bool shutdown_cancelled(srv_server_t *srv, srv_frontend_t *fe, shutdown_t *sd) {
  SRV_WARN(
      "exit timeout (%d s) reached: cancelling every call and request still in "
      "flight; backends have %d s to give them back",
      srv->options->exit_timeout_secs, EXIT_GRACE_SECS);
  sd->cancelled = true;
  srv_core_cancel(srv);
  if (!sd->calls_done && fe != NULL) srv_frontend_cancel(fe);
  uint64_t deadline = srv_deadline_in_secs(EXIT_GRACE_SECS);
  if (!sd->models_told) sd->models_told = srv_core_stop_until(srv, deadline);
  if (sd->models_told && !sd->models_done)
    sd->models_done = srv_core_wait_until(srv, deadline);
  if (!sd->calls_done) sd->calls_done = frontends_wait(fe, deadline);
  return sd->calls_done && sd->models_done;
}

/* Backends kept requests past the grace period: their threads may still
 * use the requests, the calls that own them, the models and the runtime,
 * so nothing is freed and no static destructor may run (_exit). What did
 * stop is finalized. Exit status 1, as tritonserver when its exit timeout
 * expires. */
static _Noreturn void shutdown_abandon(srv_server_t *srv, srv_frontend_t *fe,
                                       const shutdown_t *sd) {
  SRV_ERROR("shutdown did not finish %d s after the exit timeout's cancel",
            EXIT_GRACE_SECS);
  if (!sd->calls_done && fe != NULL)
    SRV_ERROR("%ld gRPC call(s) still wait for their requests; abandoned",
              srv_frontend_calls(fe));
  srv_core_abandon(srv);
  SRV_ERROR("nereid exits with status 1 without finalizing what is abandoned");
  _exit(1);
}

/* Stops accepting, lets in-flight calls finish (up to the exit timeout),
 * cancels what is left, then takes everything down in the reverse order
 * of start-up; see server/README.md, "Shutdown order". */
static void server_shutdown(srv_server_t *srv, srv_frontend_t *fe) {
  atomic_store_explicit(&srv->state, SRV_STATE_EXITING, memory_order_release);
  if (fe != NULL) {
    srv_frontend_state_changed(fe); /* watches see NOT_SERVING, then end */
    srv_frontend_shutdown(fe);
  }
  if (rest != NULL) srv_rest_close(rest);
  if (metrics != NULL) srv_metrics_endpoint_stop(metrics); /* scrapes read models */
  metrics = NULL;
  shutdown_t sd = {0};
  if (!shutdown_in_time(srv, fe, &sd) && !shutdown_cancelled(srv, fe, &sd))
    shutdown_abandon(srv, fe, &sd);
  if (fe != NULL) srv_frontend_close(fe);
  srv_core_quiesce(srv);
  if (fe != NULL) srv_frontend_free(fe);
  if (rest != NULL) srv_rest_free(rest);
  rest = NULL;
  srv_core_free(srv);
  SRV_INFO("nereid stopped%s", sd.cancelled ? " (in-flight calls were cancelled)" : "");
}

__attribute__((visibility("default"))) int nereid_main(int argc, char **argv);

int nereid_main(int argc, char **argv) {
  srv_options_t opt;
  int rc = options_load(&opt, argc, argv);
  if (rc >= 0) {
    srv_options_free(&opt);
    return rc;
  }
  SRV_INFO("%s %s starting (answers as %s %s)", NEREID_NAME, NEREID_VERSION,
           TRITON_COMPAT_NAME, TRITON_COMPAT_VERSION);
  sigset_t signals;
  signals_block(&signals);

  grpc_init();
  srv_server_t srv;
  srv_frontend_t *fe = NULL;
  bool all_loaded = false;
  srv_status_t *st = srv_core_start(&srv, &opt, &all_loaded);
  if (st != NULL) SRV_FATAL("%s", srv_status_message(st));
  /* tritonserver's default: a model that fails at start-up stops the server. */
  if (opt.exit_on_error && !all_loaded)
    st = srv_status_new(GRPC_STATUS_INTERNAL,
                        "failed to load all models (--exit-on-error=false serves the "
                        "others)");
  /* --allow-grpc=false: HTTP (and metrics) only, as tritonserver. */
  if (st == NULL && opt.allow_grpc) st = srv_frontend_start(&srv, &fe);
  if (st != NULL) {
    fprintf(stderr, "error: creating server: %s\n", srv_status_message(st));
    srv_status_free(st);
    srv_core_stop(&srv);
    srv_core_free(&srv);
    grpc_shutdown();
    srv_options_free(&opt);
    return 1;
  }
  if (opt.allow_http) st = srv_rest_start(&srv, &rest);
  if (st == NULL && opt.allow_metrics) st = srv_metrics_endpoint_start(&srv, &metrics);
  if (st != NULL) {
    fprintf(stderr, "error: creating server: %s\n", srv_status_message(st));
    srv_status_free(st);
    server_shutdown(&srv, fe);
    grpc_shutdown();
    srv_options_free(&opt);
    return 1;
  }
  atomic_store_explicit(&srv.state, SRV_STATE_READY, memory_order_release);
  if (fe == NULL) {
    SRV_INFO("gRPC is off (--allow-grpc=false); %u workers", act_runtime_workers(srv.runtime));
  } else {
    srv_frontend_state_changed(fe);
    SRV_INFO("Started GRPCInferenceService at %s:%d (%u workers, %u gRPC threads)",
             opt.grpc_address, srv_frontend_port(fe), act_runtime_workers(srv.runtime),
             srv_frontend_cq_count(fe));
  }
  if (fe != NULL && srv_frontend_health_port(fe) != 0)
    SRV_INFO("Started GRPCHealthService at %s:%d (plaintext, grpc.health.v1 only)",
             opt.grpc_health_address != NULL ? opt.grpc_health_address
                                             : opt.grpc_address,
             srv_frontend_health_port(fe));

  int sig = 0;
  sigwait(&signals, &sig);
  SRV_INFO("received %s: shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
  server_shutdown(&srv, fe);
  grpc_shutdown();
  srv_options_free(&opt);
  return 0;
}
