/* The KServe v2 REST inference codec with Triton's extensions (binary
 * tensor data, classification, sequences): a request body into a checked
 * TRITONBACKEND_Request, a TRITONBACKEND_Response into a JSON header and
 * the binary parts that follow it, and error bodies with their HTTP
 * status. Pure functions (no h2o, no threads of their own): the HTTP
 * frontend's actor calls them. What they make lives in the caller's arena;
 * bytes are referenced, not copied, where the wire allows (infer_json.md). */
#ifndef NEREID_SERVER_HTTP_INFER_JSON_H
#define NEREID_SERVER_HTTP_INFER_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/common/status.h"
#include "server/core/core.h"

/** How one requested output is sent back. */
typedef struct {
  bool binary;          /* in a binary part after the JSON header */
  bool shm;             /* in a client's shared-memory region: no data sent */
  uint32_t class_count; /* top-k classification; 0: the tensor itself */
} srv_http_output_opt_t;

/** What a request asks of its response beyond the TRITONBACKEND_Request:
 *  one entry per r->outputs, in the same order. A listed output is binary
 *  when its `binary_data` says so; when the request lists none, every
 *  output takes `binary_data_output` (Triton's rule). */
typedef struct {
  srv_http_output_opt_t *outputs;
  uint32_t output_count;
  bool binary_data_output;
} srv_http_infer_opts_t;

/** Builds *out from the `body_len` bytes at `body` for model m (d its
 *  description): the first `header_len` bytes are the JSON header (the
 *  value of Inference-Header-Content-Length; body_len when absent), the
 *  rest the binary data of the inputs with `binary_data_size`, in input
 *  order. Inputs point into `body` for binary data (the body must outlive
 *  the request), into `arena` for JSON `data`, and into a region of `shm`
 *  for those that name one (Triton's shared-memory parameters); every
 *  check is the core's (infer_check.h). *uses gets the region references
 *  the request took (inputs read in place, outputs to write; NULL when
 *  none): the caller moves it into the request's state, which releases
 *  it. *opts says how to send each output. Decoupled models are the
 *  caller's to refuse first (Triton's HTTP infer does not serve them). On
 *  error no reference is held and nothing needs freeing but the status. */
srv_status_t *srv_http_infer_parse(srv_model_t *m, const srv_model_desc_t *d,
                                   const char *body, size_t body_len, size_t header_len,
                                   srv_shm_t *shm, upb_Arena *arena,
                                   TRITONBACKEND_Request **out, srv_shm_uses_t **uses,
                                   srv_http_infer_opts_t *opts);

/** A response as HTTP sends it: `json` (json_len bytes, NUL-terminated),
 *  then, when part_count > 0, the parts in order (parts_size bytes in all;
 *  Inference-Header-Content-Length is json_len). Parts point into the
 *  response's output buffers or the arena: send before freeing either. */
typedef struct {
  const char *json;
  size_t json_len;
  const srv_buffer_t *parts;
  uint32_t part_count;
  uint64_t parts_size;
} srv_http_infer_reply_t;

/** Encodes response r to `request` of the model described by d, with the
 *  options the parse gave: model_name, model_version, id, parameters, and
 *  the requested outputs in the backend's order (data as JSON, or
 *  parameters.binary_data_size and a part; classification as BYTES
 *  "score:index" strings, Triton's format; an output in shared memory as
 *  name, datatype and shape alone, its bytes being in the region). A status when an
 * output cannot be sent as asked (Triton's texts). Built in arena a. */
srv_status_t *srv_http_infer_encode(const srv_model_desc_t *d,
                                    const TRITONBACKEND_Request *request,
                                    const srv_http_infer_opts_t *opts,
                                    const TRITONBACKEND_Response *r, upb_Arena *a,
                                    srv_http_infer_reply_t *out);

/** Triton's HTTP status for an error code (400 where HTTP has no match). */
int srv_http_status_of(TRITONSERVER_Error_Code code);

/** `{"error":"<message>"}`, escaped, NUL-terminated, in arena a. */
const char *srv_http_error_body(const char *message, upb_Arena *a, size_t *len);

#endif
