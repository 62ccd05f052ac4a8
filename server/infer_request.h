/* Turns a decoded ModelInferRequest into a TRITONBACKEND_Request for one
 * model version, checking it against the model's configuration with
 * Triton's wording. Runs on the call's actor; the request and its inputs
 * live in the call's arena and alias the received bytes. */
#ifndef NEREID_SERVER_INFER_REQUEST_H
#define NEREID_SERVER_INFER_REQUEST_H

#include "grpc_service.upb.h"
#include "server/core/model.h"
#include "server/status.h"

/** Builds *out in `arena`. On error nothing needs freeing. */
srv_status_t *srv_infer_request_build(srv_model_t *m,
                                      const inference_ModelInferRequest *req,
                                      upb_Arena *arena, TRITONBACKEND_Request **out);

#endif
