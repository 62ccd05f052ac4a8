/* pyshape: a test backend, built against the API headers only, that makes
 * the calls Triton's Python backend makes (python_backend's python_be.cc,
 * infer_response.cc, request_executor.cc, model_loader.cc), in the order it
 * makes them, with no Python: what a model.py would compute is C here.
 * Modes, from the model's `mode` parameter:
 *   echo       OUTPUT0 = INPUT0; PARAMS = what the request carried
 *   decoupled  INPUT0[0] responses through the factory, then final flags
 *   bls        INPUT0 sent on to model `target` through the in-process API
 *              with this request's parameters and more (a BLS call)
 *   bls_cancel as bls, cancelled at once; PARAMS tells how it ended
 *   control    loads and unloads model `target` (config `target_config`)
 *              from the model's code
 * PARAMS is one BYTES element: "key=T:value,..." for each parameter in
 * order (T: s, i, b, d), then ";timeout=<us>". The instance's thread runs
 * Execute; BLS callbacks run on server threads and post a semaphore. */
#ifndef NEREID_TEST_BACKENDS_PYSHAPE_PYSHAPE_H
#define NEREID_TEST_BACKENDS_PYSHAPE_PYSHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonbackend.h"

#define PS_TEXT_MAX 4096

#define PS_RETURN_IF_ERROR(x)       \
  do {                              \
    TRITONSERVER_Error *err_ = (x); \
    if (err_ != NULL) return err_;  \
  } while (0)

/** A request as python_be.cc saves it for the stub: inputs (host copies),
 *  requested outputs, parameters as text, ids, flags, timeout, factory. */
typedef struct {
  TRITONBACKEND_Request *request;
  const char *id;
  uint64_t correlation_id;
  const char *correlation_id_string; /* NULL for an integer id */
  uint32_t flags;
  uint64_t timeout_us;
  TRITONSERVER_InferenceTrace *trace; /* NULL when not traced */
  char params[PS_TEXT_MAX]; /* PARAMS without the timeout */
  TRITONBACKEND_ResponseFactory *factory;
  const char *input_name;
  TRITONSERVER_DataType input_type;
  int64_t input_shape[8];
  uint32_t input_dims;
  void *input; /* malloc'd host copy of the first input */
  uint64_t input_size;
} ps_request_t;

/** Reads r as SaveRequestsToSharedMemory does. */
TRITONSERVER_Error *ps_request_read(TRITONBACKEND_Request *r, ps_request_t *out);
void ps_request_free(ps_request_t *req);

/** The PARAMS text of a request: its parameters and its timeout. */
void ps_params_text(const ps_request_t *req, char *buf, size_t len);

/** Sends one response as InferResponse::Send does: ResponseOutput,
 *  OutputBuffer and OutputBufferAttributes per output, then ResponseSend
 *  with `flags` (and `error`, which it takes). Outputs: INT32 `data` as
 *  OUTPUT0 (shape [n]) unless NULL, and `text` as PARAMS. */
TRITONSERVER_Error *ps_response_send(TRITONBACKEND_Response *response, uint32_t flags,
                                     TRITONSERVER_Error *error, const int32_t *data,
                                     const int64_t *shape, uint32_t dims,
                                     const char *text);

/** The bls, bls_cancel and control modes (bls.c): what the model's code
 *  answers, as PARAMS text, and OUTPUT0 for bls (*data malloc'd, *count
 *  elements). `target_config` (may be NULL) is the config JSON the control
 *  mode loads `target` with. Errors go into the response. */
TRITONSERVER_Error *ps_bls_run(TRITONSERVER_Server *server, const char *mode,
                               const char *target, const char *target_config,
                               const ps_request_t *req, char *text, size_t len,
                               int32_t **data, uint64_t *count);

TRITONSERVER_Error *ps_bls_init(void);
void ps_bls_fini(void);

#endif
