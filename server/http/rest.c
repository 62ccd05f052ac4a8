/* The HTTP/REST frontend (KServe v2 and Triton's extensions): routes each
 * exchange to its endpoint. Endpoints that only read the core (health,
 * readiness) answer on the loop thread; see http.md. */
#include "server/http/rest.h"

#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/http/exchange.h"
#include "server/http/infer_json.h"
#include "server/http/rest_infer.h"
#include "server/http/rest_restrict.h"
#include "server/http/rest_views.h"
#include "server/views/http_views.h"

struct srv_rest {
  srv_server_t *srv;
  srv_http_t *http;
  srv_rest_restrict_t restricted; /* --http-restricted-api */
};

/* A path split at '/': at most ROUTE_SEGMENTS segments. */
#define ROUTE_SEGMENTS 8

typedef struct {
  srv_http_bytes_t seg[ROUTE_SEGMENTS];
  size_t count;
} route_t;

static bool route_split(srv_http_bytes_t path, route_t *r) {
  r->count = 0;
  size_t i = 0;
  if (path.len == 0 || path.base[0] != '/') return false;
  i = 1;
  while (i <= path.len) {
    size_t start = i;
    while (i < path.len && path.base[i] != '/') i++;
    if (r->count == ROUTE_SEGMENTS) return false;
    r->seg[r->count++] = (srv_http_bytes_t){path.base + start, i - start};
    i++;
  }
  return true;
}

static bool seg_is(srv_http_bytes_t s, const char *text) {
  return s.len == strlen(text) && memcmp(s.base, text, s.len) == 0;
}

static bool method_is(srv_http_exchange_t *x, const char *m) {
  return seg_is(srv_http_method(x), m);
}

/* Whether the server takes requests now: live until it exits. */
static bool server_live(srv_server_t *srv) {
  return srv_server_state(srv) != SRV_STATE_EXITING;
}

/* Strict readiness, tritonserver's default: every model must be ready. */
static bool server_ready(srv_server_t *srv) {
  return srv_server_state(srv) == SRV_STATE_READY &&
         (!srv->options->strict_readiness || srv_registry_all_ready(srv->registry));
}

/* Health answers have no body: 200 when true, 400 when not (Triton). */
static void health_reply(srv_http_exchange_t *x, bool ok) {
  srv_http_reply(x, ok ? 200 : 400, NULL, NULL);
}

/* /v2/models/{name}[/versions/{version}]/ready */
static void model_ready(srv_rest_t *rest, srv_http_exchange_t *x, srv_http_bytes_t name,
                        srv_http_bytes_t version) {
  bool ready;
  srv_status_t *st = srv_registry_ready(rest->srv->registry, name.base, name.len,
                                        version.base, version.len, &ready);
  if (st != NULL) {
    srv_http_reply_error(x, 400, "%s", srv_status_message(st));
    srv_status_free(st);
    return;
  }
  health_reply(x, ready);
}

/* /v2/health/{live,ready} */
static void health(srv_rest_t *rest, srv_http_exchange_t *x, srv_http_bytes_t what) {
  if (!method_is(x, "GET"))
    srv_http_reply_error(x, 405, "Method Not Allowed");
  else if (seg_is(what, "live"))
    health_reply(x, server_live(rest->srv));
  else if (seg_is(what, "ready"))
    health_reply(x, server_ready(rest->srv));
  else
    srv_http_reply_error(x, 404, "Not Found");
}

/* GET and POST /v2/trace/setting, /v2/models/{name}/trace/setting. */
static void trace_setting(srv_rest_t *rest, srv_http_exchange_t *x,
                          srv_http_bytes_t name) {
  bool post = method_is(x, "POST");
  if (!post && !method_is(x, "GET")) {
    srv_http_reply_error(x, 405, "Method Not Allowed");
    return;
  }
  srv_http_bytes_t body = post ? srv_http_body(x) : (srv_http_bytes_t){"", 0};
  srv_http_answer_t a;
  srv_http_trace_setting(rest->srv, upb_StringView_FromDataAndSize(name.base, name.len),
                         body.base, body.len, &a);
  srv_rest_answer(x, &a);
}

/* /v2/models/{name}[/versions/{version}]/... */
static void model_route(srv_rest_t *rest, srv_http_exchange_t *x, const route_t *r) {
  srv_http_bytes_t name = r->seg[2], version = {"", 0};
  size_t at = 3;
  if (r->count >= 5 && seg_is(r->seg[3], "versions")) {
    version = r->seg[4];
    at = 5;
  }
  if (at == 3 && r->count == 5 && seg_is(r->seg[3], "trace") &&
      seg_is(r->seg[4], "setting")) {
    trace_setting(rest, x, name);
    return;
  }
  srv_rest_mode_t mode = SRV_REST_INFER;
  bool infer = r->count == at + 1 && seg_is(r->seg[at], "infer");
  if (r->count == at + 1 && seg_is(r->seg[at], "generate")) {
    infer = true;
    mode = SRV_REST_GENERATE;
  } else if (r->count == at + 1 && seg_is(r->seg[at], "generate_stream")) {
    infer = true;
    mode = SRV_REST_GENERATE_STREAM;
  }
  if (infer) {
    if (!method_is(x, "POST")) {
      srv_http_reply_error(x, 405, "Method Not Allowed");
      return;
    }
    srv_model_t *m;
    srv_status_t *st = srv_registry_lookup(rest->srv->registry, name.base, name.len,
                                           version.base, version.len, &m);
    if (st != NULL) {
      srv_http_reply_error(x, srv_http_code_of_grpc(srv_status_code(st)), "%s",
                           srv_status_message(st));
      srv_status_free(st);
      return;
    }
    srv_rest_infer(rest->srv, x, m, mode);
    return;
  }
  if (r->count == at || (r->count == at + 1 &&
                         (seg_is(r->seg[at], "config") || seg_is(r->seg[at], "stats")))) {
    srv_rest_view_t what = r->count == at                 ? SRV_REST_METADATA
                           : seg_is(r->seg[at], "config") ? SRV_REST_CONFIG
                                                          : SRV_REST_STATS;
    if (!method_is(x, "GET"))
      srv_http_reply_error(x, 405, "Method Not Allowed");
    else
      srv_rest_model_view(rest->srv, x, what, name, version);
    return;
  }
  if (r->count == at + 1 && seg_is(r->seg[at], "ready")) {
    if (!method_is(x, "GET"))
      srv_http_reply_error(x, 405, "Method Not Allowed");
    else
      model_ready(rest, x, name, version);
    return;
  }
  srv_http_reply_error(x, 404, "Not Found");
}

/* /v2/repository/index, /v2/repository/models/{name}/load|unload */
static void repository_route(srv_rest_t *rest, srv_http_exchange_t *x, const route_t *r) {
  bool index = r->count == 3 && seg_is(r->seg[2], "index");
  bool op = r->count == 5 && seg_is(r->seg[2], "models") &&
            (seg_is(r->seg[4], "load") || seg_is(r->seg[4], "unload"));
  if (!index && !op) {
    srv_http_reply_error(x, 404, "Not Found");
  } else if (!method_is(x, "POST")) {
    srv_http_reply_error(x, 405, "Method Not Allowed");
  } else if (index) {
    srv_http_bytes_t body = srv_http_body(x);
    srv_http_answer_t a;
    srv_http_repository_index(rest->srv, body.base, body.len, &a);
    srv_rest_answer(x, &a);
  } else {
    srv_rest_repository_op(rest->srv, x, seg_is(r->seg[4], "load"), r->seg[3]);
  }
}

/* /v2/{system,cuda}sharedmemory[/region/{name}]/{status,register,unregister}
 * (Triton's routes): status by GET, the others by POST. */
static void shm_route(srv_rest_t *rest, srv_http_exchange_t *x, const route_t *r,
                      srv_shm_kind_t kind) {
  srv_http_bytes_t region = {"", 0}, action = r->seg[r->count - 1];
  bool known = r->count == 3 ||
               (r->count == 5 && seg_is(r->seg[2], "region") && r->seg[3].len > 0);
  if (r->count == 5) region = r->seg[3];
  srv_rest_shm_op_t op = SRV_REST_SHM_STATUS;
  if (seg_is(action, "register"))
    op = SRV_REST_SHM_REGISTER;
  else if (seg_is(action, "unregister"))
    op = SRV_REST_SHM_UNREGISTER;
  else if (!seg_is(action, "status"))
    known = false;
  if (!known)
    srv_http_reply_error(x, 404, "Not Found");
  else if (!method_is(x, op == SRV_REST_SHM_STATUS ? "GET" : "POST"))
    srv_http_reply_error(x, 405, "Method Not Allowed");
  else
    srv_rest_shm(rest->srv, x, kind, region, op);
}

/* /v2/logging: GET reads the log settings, POST changes them. */
static void logging_route(srv_http_exchange_t *x) {
  bool post = method_is(x, "POST");
  if (!post && !method_is(x, "GET")) {
    srv_http_reply_error(x, 405, "Method Not Allowed");
    return;
  }
  srv_http_bytes_t body = srv_http_body(x);
  srv_http_answer_t a;
  srv_http_logging(post, body.base, body.len, &a);
  srv_rest_answer(x, &a);
}

/* The restricted group of /v2/models/{name}[/versions/{v}]/{kind}, as
 * tritonserver's routes: SRV_GROUP_NONE where it answers 404. */
static srv_group_t model_group(const route_t *r) {
  size_t at = r->count >= 5 && seg_is(r->seg[3], "versions") ? 5 : 3;
  if (r->count == at) return SRV_GROUP_METADATA;
  if (r->count == at + 2 && seg_is(r->seg[at], "trace") &&
      seg_is(r->seg[at + 1], "setting"))
    return at == 3 ? SRV_GROUP_TRACE : SRV_GROUP_NONE;
  if (r->count != at + 1) return SRV_GROUP_NONE;
  srv_http_bytes_t kind = r->seg[at];
  if (seg_is(kind, "infer") || seg_is(kind, "generate") ||
      seg_is(kind, "generate_stream"))
    return SRV_GROUP_INFERENCE;
  if (seg_is(kind, "ready")) return SRV_GROUP_HEALTH;
  if (seg_is(kind, "config")) return SRV_GROUP_MODEL_CONFIG;
  if (seg_is(kind, "stats")) return SRV_GROUP_STATISTICS;
  return SRV_GROUP_NONE;
}

/* The restricted group of a /v2 path (Triton's assignment, http.md). */
static srv_group_t route_group(const route_t *r) {
  if (r->count == 1) return SRV_GROUP_METADATA;
  srv_http_bytes_t top = r->seg[1];
  if (r->count == 2 && seg_is(top, "logging")) return SRV_GROUP_LOGGING;
  if (r->count == 3 && seg_is(top, "trace") && seg_is(r->seg[2], "setting"))
    return SRV_GROUP_TRACE;
  if (r->count == 3 && seg_is(top, "health")) return SRV_GROUP_HEALTH;
  if (r->count == 3 && seg_is(top, "models") && seg_is(r->seg[2], "stats"))
    return SRV_GROUP_STATISTICS;
  if (r->count >= 3 && seg_is(top, "models")) return model_group(r);
  if (r->count >= 3 && seg_is(top, "repository")) return SRV_GROUP_MODEL_REPOSITORY;
  if (r->count >= 3 &&
      (seg_is(top, "systemsharedmemory") || seg_is(top, "cudasharedmemory")))
    return SRV_GROUP_SHARED_MEMORY;
  return SRV_GROUP_NONE;
}

static void route(void *ctx, srv_http_exchange_t *x) {
  srv_rest_t *rest = ctx;
  route_t r;
  bool v2 = route_split(srv_http_path(x), &r) && r.count >= 1 && seg_is(r.seg[0], "v2");
  /* Before the method and the endpoint, as tritonserver; nothing to do
   * when no group is restricted. */
  if (v2 && rest->restricted.any &&
      srv_rest_refused(&rest->restricted, route_group(&r), x))
    return;
  if (!v2) {
    srv_http_reply_error(x, 404, "Not Found");
  } else if (r.count == 1) { /* GET /v2: server metadata */
    if (!method_is(x, "GET")) {
      srv_http_reply_error(x, 405, "Method Not Allowed");
      return;
    }
    srv_http_answer_t a;
    srv_http_server_metadata(rest->srv->options->server_id, &a);
    srv_rest_answer(x, &a);
  } else if (r.count == 2 && seg_is(r.seg[1], "logging")) {
    logging_route(x);
  } else if (r.count == 3 && seg_is(r.seg[1], "health")) {
    health(rest, x, r.seg[2]);
  } else if (r.count == 3 && seg_is(r.seg[1], "models") && seg_is(r.seg[2], "stats")) {
    if (!method_is(x, "GET"))
      srv_http_reply_error(x, 405, "Method Not Allowed");
    else
      srv_rest_model_view(rest->srv, x, SRV_REST_STATS, (srv_http_bytes_t){"", 0},
                          (srv_http_bytes_t){"", 0});
  } else if (r.count >= 3 && seg_is(r.seg[1], "models")) {
    model_route(rest, x, &r);
  } else if (r.count == 3 && seg_is(r.seg[1], "trace") && seg_is(r.seg[2], "setting")) {
    trace_setting(rest, x, (srv_http_bytes_t){"", 0});
  } else if (r.count >= 3 && seg_is(r.seg[1], "repository")) {
    repository_route(rest, x, &r);
  } else if (r.count >= 3 && seg_is(r.seg[1], "systemsharedmemory")) {
    shm_route(rest, x, &r, SRV_SHM_SYSTEM);
  } else if (r.count >= 3 && seg_is(r.seg[1], "cudasharedmemory")) {
    shm_route(rest, x, &r, SRV_SHM_CUDA);
  } else {
    srv_http_reply_error(x, 404, "Not Found");
  }
}

srv_status_t *srv_rest_start(srv_server_t *srv, srv_rest_t **out) {
  const srv_options_t *o = srv->options;
  srv_rest_t *rest = calloc(1, sizeof *rest);
  if (rest == NULL) SRV_FATAL("out of memory");
  rest->srv = srv;
  srv_rest_restrict_init(&rest->restricted, o);
  srv_http_config_t cfg = {
      .name = "HTTP",
      .address = o->http_address,
      .port = o->http_port,
      .threads = o->http_threads,
      .reuse_port = o->reuse_http_port,
      .max_body = (size_t)o->http_max_input_size,
      .handler = route,
      .ctx = rest,
  };
  srv_status_t *st = srv_http_start(&cfg, &rest->http);
  if (st != NULL) {
    srv_rest_restrict_free(&rest->restricted);
    free(rest);
    return st;
  }
  SRV_INFO("Started HTTPService at %s:%d", o->http_address, srv_http_port(rest->http));
  *out = rest;
  return NULL;
}

void srv_rest_close(srv_rest_t *rest) { srv_http_close(rest->http); }

bool srv_rest_wait(srv_rest_t *rest, uint64_t deadline_ns) {
  return srv_http_wait(rest->http, deadline_ns);
}

void srv_rest_free(srv_rest_t *rest) {
  srv_http_free(rest->http);
  srv_rest_restrict_free(&rest->restricted);
  free(rest);
}
