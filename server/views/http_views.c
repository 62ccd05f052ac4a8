/* HTTP bodies of the non-inference endpoints (see http_views.h): views.h's
 * messages printed by json.h, reshaped where Triton's HTTP JSON differs
 * from the message (the repository index is a bare array). */
#include "server/views/http_views.h"

#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/views/http_body.h"
#include "server/views/json.h"
#include "server/views/model_lookup.h"
#include "server/views/views.h"

int srv_http_status_code(const srv_status_t *st) {
  return st == NULL ? 200 : srv_http_code_of_grpc(srv_status_code(st));
}

int srv_http_code_of_grpc(grpc_status_code code) {
  switch (code) {
    case GRPC_STATUS_OK:
      return 200;
    case GRPC_STATUS_INTERNAL:
      return 500;
    case GRPC_STATUS_NOT_FOUND:
      return 404;
    case GRPC_STATUS_UNAVAILABLE:
      return 503;
    case GRPC_STATUS_UNIMPLEMENTED:
      return 501;
    default: /* INVALID_ARGUMENT, UNKNOWN, ALREADY_EXISTS, CANCELLED... */
      return 400;
  }
}

char *srv_http_status_body(const srv_status_t *st, size_t *len) {
  return srv_http_message_body(srv_status_message(st), len);
}

char *srv_http_message_body(const char *msg, size_t *len) {
  json_t *o = json_object();
  json_t *s = o != NULL ? json_string(msg) : NULL;
  if (s == NULL && o != NULL) /* not UTF-8: a name the client sent */
    s = srv_json_string(upb_StringView_FromString(msg));
  if (s == NULL || json_object_set_new_nocheck(o, "error", s) != 0)
    SRV_FATAL("out of memory");
  char *text = srv_json_text(o, len);
  json_decref(o);
  return text;
}

void srv_http_answer_free(srv_http_answer_t *a) {
  free(a->body);
  srv_status_free(a->status);
  *a = (srv_http_answer_t){0};
}

/* Sets *out from st (taken) or, when st is NULL, from json (taken). */
static void answer(srv_http_answer_t *out, srv_status_t *st, json_t *json) {
  *out = (srv_http_answer_t){.code = srv_http_status_code(st), .status = st};
  out->body =
      st != NULL ? srv_http_status_body(st, &out->len) : srv_json_text(json, &out->len);
  json_decref(json);
}

static json_t *message_json(const void *msg, const char *type, unsigned flags) {
  return srv_json_from_message(msg, srv_json_message_def(type), flags);
}

/* Each view builds its message in an arena of its own, freed once printed. */
static upb_Arena *arena_new(void) {
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) SRV_FATAL("out of memory");
  return a;
}

void srv_http_server_metadata(const char *name, srv_http_answer_t *out) {
  upb_Arena *a = arena_new();
  json_t *j = message_json(srv_view_server_metadata(a, name),
                           "inference.ServerMetadataResponse", SRV_JSON_ALL_FIELDS);
  upb_Arena_Free(a);
  answer(out, NULL, j);
}

void srv_http_model_metadata(srv_server_t *srv, upb_StringView name,
                             upb_StringView version, srv_http_answer_t *out) {
  srv_model_t *m;
  srv_status_t *st = srv_model_lookup(srv, name, version, &m);
  if (st != NULL) {
    answer(out, st, NULL);
    return;
  }
  upb_Arena *a = arena_new();
  inference_ModelMetadataResponse *md =
      srv_view_model_metadata(srv, m, version.size > 0, a);
  srv_model_unref(m); /* the message holds copies */
  json_t *j = message_json(md, "inference.ModelMetadataResponse", SRV_JSON_ALL_FIELDS);
  upb_Arena_Free(a);
  answer(out, NULL, j);
}

void srv_http_model_config(srv_server_t *srv, upb_StringView name, upb_StringView version,
                           srv_http_answer_t *out) {
  srv_model_t *m;
  srv_status_t *st = srv_model_lookup(srv, name, version, &m);
  if (st != NULL) {
    answer(out, st, NULL);
    return;
  }
  srv_model_desc_t d;
  srv_model_describe(m, &d);
  *out = (srv_http_answer_t){.code = 200, .len = d.config_json_len};
  out->body = malloc(d.config_json_len + 1);
  if (out->body == NULL) SRV_FATAL("out of memory");
  memcpy(out->body, d.config_json, d.config_json_len + 1);
  srv_model_unref(m);
}

void srv_http_model_statistics(srv_server_t *srv, upb_StringView name,
                               upb_StringView version, srv_http_answer_t *out) {
  upb_Arena *a = arena_new();
  inference_ModelStatisticsResponse *stats;
  srv_status_t *st = srv_view_model_statistics(srv, name, version, a, &stats);
  json_t *j = st == NULL ? message_json(stats, "inference.ModelStatisticsResponse",
                                        SRV_JSON_ALL_FIELDS)
                         : NULL;
  upb_Arena_Free(a);
  answer(out, st, j);
}

void srv_http_repository_index(srv_server_t *srv, const char *body, size_t len,
                               srv_http_answer_t *out) {
  json_t *req = NULL;
  srv_status_t *st = srv_http_body_parse(body, len, &req);
  bool ready = false;
  json_t *r = req != NULL ? json_object_get(req, "ready") : NULL;
  if (st == NULL && r != NULL && !json_is_boolean(r))
    st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "attempt to access JSON non-boolean as boolean: 'ready'");
  if (r != NULL) ready = json_is_true(r);
  json_decref(req);
  if (st != NULL) {
    answer(out, st, NULL);
    return;
  }
  upb_Arena *a = arena_new();
  /* Proto3's rule (no ALL_FIELDS) is Triton's here: a folder never loaded
   * prints its name alone, a model-wide row no version, no empty reason. */
  json_t *o = message_json(srv_view_repository_index(srv, ready, a),
                           "inference.RepositoryIndexResponse", 0);
  upb_Arena_Free(a);
  json_t *models = json_object_get(o, "models");
  models = models != NULL ? json_incref(models) : json_array();
  json_decref(o);
  answer(out, NULL, models);
}
