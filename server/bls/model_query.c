/* TRITONSERVER_Server* questions about one model that backends ask before
 * sending it requests (readiness, transaction policy). Any thread: registry
 * reads are lock-free. */
#include "server/api/error.h"
#include "server/bls/bls.h"
#include "server/common/log.h"
#include "server/core/server.h"

/* As Triton: not an error when the model is unknown, just not ready; an
 * error while the server itself is not ready. */
TRITONSERVER_Error *TRITONSERVER_ServerModelIsReady(TRITONSERVER_Server *server,
                                                    const char *model_name,
                                                    const int64_t model_version,
                                                    bool *ready) {
  srv_server_t *srv = (srv_server_t *)server;
  if (ready == NULL || srv == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "TRITONSERVER_ServerModelIsReady: %s must not be NULL",
                         ready == NULL ? "ready" : "server");
  *ready = false;
  if (srv_server_state(srv) != SRV_STATE_READY)
    return api_error_new(TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  srv_model_t *m;
  TRITONSERVER_Error *err = srv_bls_model_find(srv, model_name, model_version, &m);
  if (err != NULL) {
    TRITONSERVER_ErrorDelete(err);
    return NULL;
  }
  srv_model_unref(m);
  *ready = true; /* the registry publishes only versions that loaded */
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_ServerModelTransactionProperties(
    TRITONSERVER_Server *server, const char *model_name, const int64_t model_version,
    uint32_t *txn_flags, void **voidp) {
  if (voidp != NULL) *voidp = NULL;
  if (txn_flags == NULL || server == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "TRITONSERVER_ServerModelTransactionProperties: %s must not be NULL",
                         txn_flags == NULL ? "txn_flags" : "server");
  *txn_flags = 0;
  srv_model_t *m;
  TRITONSERVER_Error *err =
      srv_bls_model_find((srv_server_t *)server, model_name, model_version, &m);
  if (err != NULL) return err;
  *txn_flags = m->decoupled ? TRITONSERVER_TXN_DECOUPLED : TRITONSERVER_TXN_ONE_TO_ONE;
  srv_model_unref(m);
  return NULL;
}
