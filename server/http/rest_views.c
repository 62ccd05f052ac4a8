/* The REST frontend's endpoints that read the core or ask the repository
 * (see rest_views.h): bodies from server/views (one copy for both
 * frontends); loads and unloads answered when the repository is done. */
#include "server/http/rest_views.h"

#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/views/http_views.h"
#include "server/views/views.h"

void srv_rest_answer(srv_http_exchange_t *x, srv_http_answer_t *a) {
  if (a->body == NULL) /* success without a body (shared memory) */
    srv_http_reply(x, a->code, "application/json", NULL);
  else
    srv_http_reply_json(x, a->code, a->body, a->len); /* takes the body */
  a->body = NULL;
  srv_http_answer_free(a);
}

static upb_StringView view_of(srv_http_bytes_t b) {
  return upb_StringView_FromDataAndSize(b.base, b.len);
}

void srv_rest_model_view(srv_server_t *srv, srv_http_exchange_t *x, srv_rest_view_t what,
                         srv_http_bytes_t name, srv_http_bytes_t version) {
  srv_http_answer_t a;
  switch (what) {
    case SRV_REST_METADATA:
      srv_http_model_metadata(srv, view_of(name), view_of(version), &a);
      break;
    case SRV_REST_CONFIG:
      srv_http_model_config(srv, view_of(name), view_of(version), &a);
      break;
    case SRV_REST_STATS:
      srv_http_model_statistics(srv, view_of(name), view_of(version), &a);
      break;
  }
  srv_rest_answer(x, &a);
}

/* ---- load and unload ---- */

/* An operation of the repository and what it needs until done: the
 * override's bytes live in the arena. */
typedef struct {
  srv_repo_op_t op;
  srv_http_exchange_t *x;
  upb_Arena *arena;
  char *name;
} repo_ask_t;

/* On the repository actor: the answer goes to the exchange's loop. */
static void repo_done(srv_repo_op_t *op) {
  repo_ask_t *q = (repo_ask_t *)op;
  if (op->status == NULL) {
    srv_http_reply(q->x, 200, NULL, NULL); /* Triton's: no body */
  } else {
    srv_http_reply_error(q->x, srv_http_status_code(op->status), "%s",
                         srv_status_message(op->status));
    srv_status_free(op->status);
  }
  upb_Arena_Free(q->arena);
  free(q->name);
  free(q);
}

void srv_rest_repository_op(srv_server_t *srv, srv_http_exchange_t *x, bool load,
                            srv_http_bytes_t name) {
  srv_status_t *st = srv_view_model_control_check(srv);
  if (st != NULL) {
    srv_http_reply_error(x, srv_http_status_code(st), "%s", srv_status_message(st));
    srv_status_free(st);
    return;
  }
  repo_ask_t *q = calloc(1, sizeof *q);
  if (q == NULL) SRV_FATAL("out of memory");
  q->arena = upb_Arena_New();
  if (q->arena == NULL) SRV_FATAL("out of memory");
  srv_http_bytes_t body = srv_http_body(x);
  int code = 400;
  if (load)
    st = srv_http_load_parse(view_of(name), body.base, body.len, q->arena,
                             &q->op.override, &code);
  else
    st = srv_http_unload_parse(view_of(name), body.base, body.len,
                               &q->op.unload_dependents, &code);
  if (st != NULL) {
    srv_http_reply_error(x, code, "%s", srv_status_message(st));
    srv_status_free(st);
    upb_Arena_Free(q->arena);
    free(q);
    return;
  }
  q->x = x;
  q->name = malloc(name.len + 1);
  if (q->name == NULL) SRV_FATAL("out of memory");
  memcpy(q->name, name.base, name.len);
  q->name[name.len] = '\0';
  q->op.kind = load ? SRV_REPO_LOAD : SRV_REPO_UNLOAD;
  q->op.name = q->name;
  q->op.done = repo_done;
  srv_repository_submit(srv->repository, &q->op);
}

/* ---- shared memory ---- */

void srv_rest_shm(srv_server_t *srv, srv_http_exchange_t *x, srv_shm_kind_t kind,
                  srv_http_bytes_t region, srv_rest_shm_op_t op) {
  srv_http_answer_t a;
  srv_http_bytes_t body = srv_http_body(x);
  switch (op) {
    case SRV_REST_SHM_STATUS:
      srv_http_shm_status(srv->shm, kind, view_of(region), &a);
      break;
    case SRV_REST_SHM_REGISTER:
      srv_http_shm_register(srv->shm, kind, view_of(region), body.base, body.len, &a);
      break;
    case SRV_REST_SHM_UNREGISTER:
      srv_http_shm_unregister(srv->shm, kind, view_of(region), &a);
      break;
  }
  srv_rest_answer(x, &a);
}
