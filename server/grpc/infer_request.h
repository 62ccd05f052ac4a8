/* Turns a decoded ModelInferRequest into a TRITONBACKEND_Request for one
 * model version, checking it against the model's configuration with
 * Triton's wording. Runs on the call's actor; the request and its inputs
 * live in the call's arena and alias the received bytes. */
#ifndef NEREID_SERVER_GRPC_INFER_REQUEST_H
#define NEREID_SERVER_GRPC_INFER_REQUEST_H

#include "grpc_service.upb.h"
#include "server/common/status.h"
#include "server/core/core.h"

/** Longest string `sequence_id`, in bytes: the core's bound. */
#define SRV_GRPC_SEQUENCE_ID_MAX SRV_SEQUENCE_ID_MAX

/** Builds *out in `arena`; d is m's description (srv_model_describe).
 *  Tensors that name shared-memory regions of `shm` alias them: *uses gets
 *  the references (NULL when none), for the request's state to own. On
 *  error nothing needs freeing. */
srv_status_t *srv_infer_request_build(srv_model_t *m, const srv_model_desc_t *d,
                                      const inference_ModelInferRequest *req,
                                      srv_shm_t *shm, upb_Arena *arena,
                                      TRITONBACKEND_Request **out, srv_shm_uses_t **uses);

#endif
