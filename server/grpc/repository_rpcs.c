/* Repository RPC handlers (see repository_rpcs.h). The index is views/'s
 * (the registry and the repositories' folders); load and
 * unload are operations of the repository actor, answered when it is done
 * with them. */
#include "server/grpc/repository_rpcs.h"

#include <stdlib.h>
#include <string.h>

#include "grpc_service.upb.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/core.h"
#include "server/views/views.h"

enum { MSG_REPO_OP_DONE = 0x3f0 };

void srv_rpc_repository_index(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_RepositoryIndexRequest, "RepositoryIndex",
                           request, len);
  SRV_CALL_REPLY(call, inference_RepositoryIndexResponse,
                 srv_view_repository_index(srv_call_server(call),
                                           inference_RepositoryIndexRequest_ready(req),
                                           srv_call_arena(call)));
}

static bool refused_by_control_mode(srv_call_t *call) {
  srv_status_t *st = srv_view_model_control_check(srv_call_server(call));
  if (st != NULL) srv_call_fail(call, st);
  return st != NULL;
}

/* ---- Operations: the call waits for the repository actor ---------------- */

static void op_done(srv_repo_op_t *op) {
  op->msg.kind = MSG_REPO_OP_DONE;
  act_send(srv_call_actor(op->ctx), &op->msg);
}

static void op_answered(srv_call_t *call, void *ctx, act_msg_t *msg) {
  srv_repo_op_t *op = ctx;
  if (msg->kind != MSG_REPO_OP_DONE || msg != &op->msg)
    SRV_FATAL("repository RPC: unexpected message kind %u", msg->kind);
  upb_Arena *a = srv_call_arena(call);
  if (op->status != NULL) {
    srv_call_fail(call, op->status);
  } else if (op->kind == SRV_REPO_LOAD) {
    SRV_CALL_REPLY(call, inference_RepositoryModelLoadResponse,
                   inference_RepositoryModelLoadResponse_new(a));
  } else {
    SRV_CALL_REPLY(call, inference_RepositoryModelUnloadResponse,
                   inference_RepositoryModelUnloadResponse_new(a));
  }
  srv_call_unhold(call); /* may free the call: nothing after this */
}

static srv_repo_op_t *op_new(srv_call_t *call, srv_repo_op_kind_t kind,
                             upb_StringView name) {
  upb_Arena *a = srv_call_arena(call);
  srv_repo_op_t *op = srv_arena_zalloc(a, sizeof *op);
  op->kind = kind;
  op->name = srv_arena_strview(a, name);
  op->done = op_done;
  op->ctx = call;
  return op;
}

static void op_submit(srv_call_t *call, srv_repo_op_t *op) {
  srv_call_on_message(call, op_answered, op);
  srv_call_hold(call); /* the op and the override's bytes live in the call */
  srv_repository_submit(srv_call_server(call)->repository, op);
}

/* A request cannot name a repository (a namespace, with
 * --model-namespacing): tritonserver refuses the field, and a load or
 * unload by name acts in every repository holding the name. */
static bool names_refused(srv_call_t *call, upb_StringView repository,
                          upb_StringView name, const char *rpc) {
  if (repository.size > 0) {
    srv_call_fail(call, srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                                       "%s: 'repository_name' specification is not "
                                       "supported",
                                       rpc));
    return true;
  }
  if (name.size > 0) return false;
  srv_call_fail(call, srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                     "%s: model_name must be given", rpc));
  return true;
}

void srv_rpc_repository_model_load(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_RepositoryModelLoadRequest,
                           "RepositoryModelLoad", request, len);
  if (refused_by_control_mode(call)) return;
  upb_StringView name = inference_RepositoryModelLoadRequest_model_name(req);
  if (names_refused(call, inference_RepositoryModelLoadRequest_repository_name(req), name,
                    "RepositoryModelLoad"))
    return;
  /* Here, where the name is still bytes: the core sees it up to a NUL. */
  srv_status_t *st = srv_model_name_check_load(name.data, name.size);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  srv_repo_op_t *op = op_new(call, SRV_REPO_LOAD, name);
  st = srv_load_override_parse(req, srv_call_arena(call), &op->override);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  op_submit(call, op);
}

void srv_rpc_repository_model_unload(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_RepositoryModelUnloadRequest,
                           "RepositoryModelUnload", request, len);
  if (refused_by_control_mode(call)) return;
  upb_StringView name = inference_RepositoryModelUnloadRequest_model_name(req);
  if (names_refused(call, inference_RepositoryModelUnloadRequest_repository_name(req),
                    name, "RepositoryModelUnload"))
    return;
  srv_repo_op_t *op = op_new(call, SRV_REPO_UNLOAD, name);
  inference_ModelRepositoryParameter *p;
  if (inference_RepositoryModelUnloadRequest_parameters_get(
          req, upb_StringView_FromString("unload_dependents"), &p)) {
    if (!inference_ModelRepositoryParameter_has_bool_param(p)) {
      char q[SRV_QUOTE_SIZE];
      srv_call_fail(call, srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                         "failed to unload '%s': parameter "
                                         "'unload_dependents' must be a bool",
                                         srv_quote(q, name.data, name.size)));
      return;
    }
    op->unload_dependents = inference_ModelRepositoryParameter_bool_param(p);
  }
  if (memchr(name.data, '\0', name.size) != NULL) {
    /* No model has such a name, and the core would see it cut at the NUL:
     * done, as for any name that is not loaded. */
    SRV_CALL_REPLY(call, inference_RepositoryModelUnloadResponse,
                   inference_RepositoryModelUnloadResponse_new(srv_call_arena(call)));
    return;
  }
  op_submit(call, op);
}
