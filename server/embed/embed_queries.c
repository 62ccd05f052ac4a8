/* The questions an application or a backend asks a server: liveness,
 * readiness, server and model metadata, model config, statistics, the
 * repository index, batch properties. Each answer is the JSON of Triton's
 * HTTP endpoint (Triton's in-process answers are the same documents),
 * built by views/http_views.h. Any thread: the views read the registry
 * lock-free and the calls do not block (the index reads the repository
 * folders). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/error_status.h"
#include "server/api/message.h"
#include "server/common/log.h"
#include "server/embed/embed.h"
#include "server/views/http_views.h"

/* Liveness (ready == false) or readiness. Live once started: a server
 * still loading its models is not. Ready: started, and under strict
 * readiness every model ready. An exiting server answers UNAVAILABLE
 * "Server exiting": an embedded one at srv_embed_enter, the nereid
 * process's from its state. */
static TRITONSERVER_Error *health(TRITONSERVER_Server *server, const char *fn,
                                  const char *what, bool ready, bool *out) {
  if (out == NULL) return SRV_EMBED_NULL(fn, what);
  *out = false;
  srv_embed_t *e;
  TRITONSERVER_Error *err = srv_embed_enter(server, fn, &e);
  if (err != NULL) return err;
  srv_server_t *srv = (srv_server_t *)server;
  srv_state_t state = srv_server_state(srv);
  if (state == SRV_STATE_EXITING)
    err = api_error_new(TRITONSERVER_ERROR_UNAVAILABLE, "Server exiting");
  else if (state == SRV_STATE_READY)
    *out = !ready || !srv->options->strict_readiness ||
           srv_registry_all_ready(srv->registry);
  srv_embed_leave(e);
  return err;
}

TRITONSERVER_Error *TRITONSERVER_ServerIsLive(TRITONSERVER_Server *server, bool *live) {
  return health(server, "TRITONSERVER_ServerIsLive", "live", false, live);
}

TRITONSERVER_Error *TRITONSERVER_ServerIsReady(TRITONSERVER_Server *server, bool *ready) {
  return health(server, "TRITONSERVER_ServerIsReady", "ready", true, ready);
}

/* The answer as a message, or its status as the error; takes what `a`
 * holds. */
static TRITONSERVER_Error *answer_take(srv_http_answer_t *a, TRITONSERVER_Message **out) {
  if (a->status != NULL) {
    TRITONSERVER_Error *err = api_error_from_status(a->status);
    a->status = NULL;
    srv_http_answer_free(a);
    return err;
  }
  *out = api_message_new_take(a->body, a->len);
  a->body = NULL;
  srv_http_answer_free(a);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_ServerMetadata(TRITONSERVER_Server *server,
                                                TRITONSERVER_Message **metadata) {
  const char *fn = "TRITONSERVER_ServerMetadata";
  if (metadata == NULL) return SRV_EMBED_NULL(fn, "server_metadata");
  srv_embed_t *e;
  TRITONSERVER_Error *err = srv_embed_enter(server, fn, &e);
  if (err != NULL) return err;
  srv_http_answer_t a;
  /* The server's own --id (the nereid process's server has no srv_embed_t). */
  srv_http_server_metadata(((srv_server_t *)server)->options->server_id, &a);
  srv_embed_leave(e);
  return answer_take(&a, metadata);
}

/* A version as the views take it: empty for -1 (the latest, or all), else
 * its decimal text; other negatives stay negative, and the lookup refuses
 * them as it refuses a malformed version string. */
static upb_StringView version_text(int64_t version, char buf[24]) {
  if (version == -1) return upb_StringView_FromDataAndSize(buf, 0);
  snprintf(buf, 24, "%" PRId64, version);
  return upb_StringView_FromString(buf);
}

typedef void model_view_fn(srv_server_t *srv, upb_StringView name, upb_StringView version,
                           srv_http_answer_t *out);

/* The common path of the per-model questions: arguments, entry, readiness. */
static TRITONSERVER_Error *model_question(TRITONSERVER_Server *server, const char *fn,
                                          const char *name, int64_t version,
                                          model_view_fn *view,
                                          TRITONSERVER_Message **out) {
  if (name == NULL) return SRV_EMBED_NULL(fn, "model_name");
  if (out == NULL) return SRV_EMBED_NULL(fn, "message");
  srv_embed_t *e;
  TRITONSERVER_Error *err = srv_embed_enter_ready(server, fn, &e);
  if (err != NULL) return err;
  char buf[24];
  srv_http_answer_t a;
  view((srv_server_t *)server, upb_StringView_FromString(name), version_text(version, buf),
       &a);
  srv_embed_leave(e);
  return answer_take(&a, out);
}

TRITONSERVER_Error *TRITONSERVER_ServerModelMetadata(TRITONSERVER_Server *server,
                                                     const char *model_name,
                                                     const int64_t model_version,
                                                     TRITONSERVER_Message **metadata) {
  return model_question(server, "TRITONSERVER_ServerModelMetadata", model_name,
                        model_version, srv_http_model_metadata, metadata);
}

TRITONSERVER_Error *TRITONSERVER_ServerModelConfig(TRITONSERVER_Server *server,
                                                   const char *model_name,
                                                   const int64_t model_version,
                                                   const uint32_t config_version,
                                                   TRITONSERVER_Message **config) {
  if (config_version != 1)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "TRITONSERVER_ServerModelConfig: model configuration version %u "
                         "is not supported: only 1 is",
                         config_version);
  return model_question(server, "TRITONSERVER_ServerModelConfig", model_name,
                        model_version, srv_http_model_config, config);
}

/* An empty name asks for every model, version -1 for every ready version. */
TRITONSERVER_Error *TRITONSERVER_ServerModelStatistics(TRITONSERVER_Server *server,
                                                       const char *model_name,
                                                       const int64_t model_version,
                                                       TRITONSERVER_Message **stats) {
  return model_question(server, "TRITONSERVER_ServerModelStatistics", model_name,
                        model_version, srv_http_model_statistics, stats);
}

/* Flags other than READY are ignored, as in Triton. */
TRITONSERVER_Error *TRITONSERVER_ServerModelIndex(TRITONSERVER_Server *server,
                                                  uint32_t flags,
                                                  TRITONSERVER_Message **index) {
  const char *fn = "TRITONSERVER_ServerModelIndex";
  if (index == NULL) return SRV_EMBED_NULL(fn, "repository_index");
  srv_embed_t *e;
  TRITONSERVER_Error *err = srv_embed_enter_ready(server, fn, &e);
  if (err != NULL) return err;
  /* The HTTP body that asks the same: the view's one reading of it. */
  const char *ready = (flags & TRITONSERVER_INDEX_FLAG_READY) ? "{\"ready\":true}" : "";
  srv_http_answer_t a;
  srv_http_repository_index((srv_server_t *)server, ready, strlen(ready), &a);
  srv_embed_leave(e);
  return answer_take(&a, index);
}

TRITONSERVER_Error *TRITONSERVER_ServerModelBatchProperties(TRITONSERVER_Server *server,
                                                            const char *model_name,
                                                            const int64_t model_version,
                                                            uint32_t *flags,
                                                            void **voidp) {
  const char *fn = "TRITONSERVER_ServerModelBatchProperties";
  if (voidp != NULL) *voidp = NULL; /* no batch object: as Triton */
  if (model_name == NULL) return SRV_EMBED_NULL(fn, "model_name");
  if (flags == NULL) return SRV_EMBED_NULL(fn, "flags");
  srv_embed_t *e;
  TRITONSERVER_Error *err = srv_embed_enter_ready(server, fn, &e);
  if (err != NULL) return err;
  srv_server_t *srv = (srv_server_t *)server;
  char buf[24];
  upb_StringView v = version_text(model_version, buf);
  srv_model_t *m = NULL;
  srv_status_t *st = srv_registry_lookup(srv->registry, model_name, strlen(model_name),
                                         v.data, v.size, &m);
  if (st != NULL) err = api_error_from_status(st);
  if (m != NULL) {
    srv_model_desc_t d;
    srv_model_describe(m, &d);
    *flags = d.max_batch_size > 0 ? TRITONSERVER_BATCH_FIRST_DIM : TRITONSERVER_BATCH_UNKNOWN;
    srv_model_unref(m);
  }
  srv_embed_leave(e);
  return err;
}
