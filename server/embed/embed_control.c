/* Model control from the API: TRITONSERVER_ServerLoadModel(WithParameters),
 * UnloadModel(AndDependents), PollModelRepository, and the repository
 * (un)registration. Synchronous, as in Triton: the caller blocks until the
 * repository actor answers. So the caller must not be a thread the answer
 * may need: an actor worker, or a thread running an actor's turn inline (a
 * BLS response callback), is refused (srv_embed_thread_check). A backend's
 * own thread (Execute, Initialize: pinned) may call them, as Triton's
 * Python backend does; it must not unload its own model from its Execute
 * (the unload waits for that Execute to end). */
#include <errno.h>
#include <semaphore.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "server/api/error_status.h"
#include "server/api/parameter.h"
#include "server/common/log.h"
#include "server/embed/embed.h"
#include "server/views/views.h"

static void op_answered(srv_repo_op_t *op) { sem_post(op->ctx); }

/* Submits op and waits for its answer. The call counts as inside the
 * server until the submit: after it, the repository answers the op even
 * when it closes, so Stop need not wait for this thread. */
static TRITONSERVER_Error *op_run(TRITONSERVER_Server *server, const char *fn,
                                  srv_repo_op_t *op) {
  TRITONSERVER_Error *err = srv_embed_thread_check(fn, true);
  if (err != NULL) return err;
  srv_embed_t *e;
  err = srv_embed_enter_ready(server, fn, &e);
  if (err != NULL) return err;
  srv_server_t *srv = (srv_server_t *)server;
  srv_status_t *st = op->kind != SRV_REPO_POLL ? srv_view_model_control_check(srv) : NULL;
  if (st != NULL) {
    srv_embed_leave(e);
    return api_error_from_status(st);
  }
  sem_t done;
  sem_init(&done, 0, 0);
  op->done = op_answered;
  op->ctx = &done;
  srv_repository_submit(srv->repository, op);
  srv_embed_leave(e);
  while (sem_wait(&done) != 0 && errno == EINTR) continue;
  sem_destroy(&done); /* the post made op->status visible */
  return op->status != NULL ? api_error_from_status(op->status) : NULL;
}

static TRITONSERVER_Error *unload(TRITONSERVER_Server *server, const char *fn,
                                  const char *name, bool dependents) {
  if (server == NULL) return SRV_EMBED_NULL(fn, "server");
  if (name == NULL) return SRV_EMBED_NULL(fn, "model_name");
  srv_repo_op_t op = {
      .kind = SRV_REPO_UNLOAD, .name = name, .unload_dependents = dependents};
  return op_run(server, fn, &op);
}

TRITONSERVER_Error *TRITONSERVER_ServerUnloadModel(TRITONSERVER_Server *server,
                                                   const char *model_name) {
  return unload(server, "TRITONSERVER_ServerUnloadModel", model_name, false);
}

TRITONSERVER_Error *TRITONSERVER_ServerUnloadModelAndDependents(
    TRITONSERVER_Server *server, const char *model_name) {
  return unload(server, "TRITONSERVER_ServerUnloadModelAndDependents", model_name, true);
}

/* One load parameter into the RepositoryModelLoad request that the gRPC
 * frontend would have received; srv_load_override_parse then reads it with
 * the same checks and texts. */
static TRITONSERVER_Error *parameter_put(inference_RepositoryModelLoadRequest *req,
                                         const TRITONSERVER_Parameter *p, const char *fn,
                                         upb_Arena *a) {
  if (p == NULL) return SRV_EMBED_NULL(fn, "parameter");
  const char *key = api_parameter_name(p);
  upb_StringView k = upb_StringView_FromString(key);
  if (inference_RepositoryModelLoadRequest_parameters_get(req, k, NULL))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s: parameter '%s' given twice",
                         fn, key);
  inference_ModelRepositoryParameter *v = inference_ModelRepositoryParameter_new(a);
  const void *value = api_parameter_value(p);
  upb_StringView bytes =
      upb_StringView_FromDataAndSize(value, (size_t)api_parameter_byte_size(p));
  switch (api_parameter_type(p)) {
    case TRITONSERVER_PARAMETER_STRING:
      inference_ModelRepositoryParameter_set_string_param(v, bytes);
      break;
    case TRITONSERVER_PARAMETER_BYTES:
      inference_ModelRepositoryParameter_set_bytes_param(v, bytes);
      break;
    case TRITONSERVER_PARAMETER_INT:
      inference_ModelRepositoryParameter_set_int64_param(v, *(const int64_t *)value);
      break;
    case TRITONSERVER_PARAMETER_BOOL:
      inference_ModelRepositoryParameter_set_bool_param(v, *(const bool *)value);
      break;
    default:
      return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                           "%s: parameter '%s' has a type no load parameter has", fn, key);
  }
  if (v == NULL || !inference_RepositoryModelLoadRequest_parameters_set(req, k, v, a))
    SRV_FATAL("out of memory");
  return NULL;
}

static TRITONSERVER_Error *load(TRITONSERVER_Server *server, const char *fn,
                                const char *name, const TRITONSERVER_Parameter **params,
                                uint64_t count) {
  if (server == NULL) return SRV_EMBED_NULL(fn, "server");
  if (name == NULL) return SRV_EMBED_NULL(fn, "model_name");
  if (params == NULL && count != 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: load parameters are not provided while parameter count is "
                         "non-zero",
                         fn);
  srv_status_t *st = srv_model_name_check_load(name, strlen(name));
  if (st != NULL) return api_error_from_status(st);
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) SRV_FATAL("out of memory");
  inference_RepositoryModelLoadRequest *req = inference_RepositoryModelLoadRequest_new(a);
  if (req == NULL) SRV_FATAL("out of memory");
  inference_RepositoryModelLoadRequest_set_model_name(req, upb_StringView_FromString(name));
  TRITONSERVER_Error *err = NULL;
  for (uint64_t i = 0; i < count && err == NULL; i++)
    err = parameter_put(req, params[i], fn, a);
  srv_repo_op_t op = {.kind = SRV_REPO_LOAD, .name = name};
  if (err == NULL) {
    st = srv_load_override_parse(req, a, &op.override);
    err = st != NULL ? api_error_from_status(st) : op_run(server, fn, &op);
  }
  upb_Arena_Free(a); /* the override's bytes: the op is answered */
  return err;
}

TRITONSERVER_Error *TRITONSERVER_ServerLoadModel(TRITONSERVER_Server *server,
                                                 const char *model_name) {
  return load(server, "TRITONSERVER_ServerLoadModel", model_name, NULL, 0);
}

TRITONSERVER_Error *TRITONSERVER_ServerLoadModelWithParameters(
    TRITONSERVER_Server *server, const char *model_name,
    const TRITONSERVER_Parameter **parameters, const uint64_t parameter_count) {
  return load(server, "TRITONSERVER_ServerLoadModelWithParameters", model_name, parameters,
              parameter_count);
}

/* Poll mode only (Triton's "polling is disabled" otherwise); a server that
 * is not READY yet is not polled, and that is no error, as in Triton. */
TRITONSERVER_Error *TRITONSERVER_ServerPollModelRepository(TRITONSERVER_Server *server) {
  const char *fn = "TRITONSERVER_ServerPollModelRepository";
  if (server == NULL) return SRV_EMBED_NULL(fn, "server");
  srv_server_t *srv = (srv_server_t *)server;
  if (strcmp(srv->options->model_control_mode, "poll") != 0)
    return api_error_new(TRITONSERVER_ERROR_UNAVAILABLE, "polling is disabled");
  if (srv_server_state(srv) == SRV_STATE_STARTING) return NULL;
  srv_repo_op_t op = {.kind = SRV_REPO_POLL, .name = ""};
  return op_run(server, fn, &op);
}
