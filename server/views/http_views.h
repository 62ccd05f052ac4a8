/* The HTTP/REST bodies of the non-inference endpoints (KServe v2 with
 * Triton's extensions), as pure functions over views.h's messages: the
 * JSON text and the HTTP status code to answer with. The HTTP frontend
 * routes, reads the body and writes the answer; nothing here touches a
 * connection. Any thread: the same reads as views.h. */
#ifndef NEREID_SERVER_VIEWS_HTTP_VIEWS_H
#define NEREID_SERVER_VIEWS_HTTP_VIEWS_H

#include <stdbool.h>
#include <stddef.h>

#include "server/core/core.h"
#include "upb/upb.h"

/** An answer: on success code 200 and the JSON body; on error `status`
 *  (Triton's message), the code Triton's HTTP frontend gives its error
 *  code, and the body {"error": "<message>"}. */
typedef struct {
  int code;
  char *body;           /**< malloc'ed, NUL-terminated JSON text: the caller frees */
  size_t len;           /**< of body */
  srv_status_t *status; /**< NULL on success; else the caller frees it */
} srv_http_answer_t;

/** Triton's HTTP status for an error code (HttpCodeFromError): INTERNAL
 *  500, NOT_FOUND 404, UNAVAILABLE 503, UNIMPLEMENTED 501, the rest 400;
 *  200 for NULL. */
int srv_http_status_code(const srv_status_t *st);

/** The same for a status code. */
int srv_http_code_of_grpc(grpc_status_code code);

/** {"error": "<message>"} (malloc'ed; *len its length); a message that is
 *  not UTF-8 (a name the client sent) is kept as text JSON can carry. */
char *srv_http_message_body(const char *message, size_t *len);

/** {"error": "<st's message>"} (malloc'ed; *len its length). */
char *srv_http_status_body(const srv_status_t *st, size_t *len);

/** Frees what an answer holds (not the struct). */
void srv_http_answer_free(srv_http_answer_t *a);

/** GET /v2: {"name", "version", "extensions"}; `name` is the server id
 *  (--id). */
void srv_http_server_metadata(const char *name, srv_http_answer_t *out);

/** GET /v2/models/{name}[/versions/{version}] (version empty when the
 *  path has none): {"name", "versions", "platform", "inputs", "outputs"},
 *  shapes as numbers, "versions" as Triton lists them. */
void srv_http_model_metadata(srv_server_t *srv, upb_StringView name,
                             upb_StringView version, srv_http_answer_t *out);

/** GET .../config: the model's config JSON, as TRITONBACKEND_ModelConfig
 *  gives it (Triton's HTTP returns the same text: snake_case names, every
 *  scalar printed, 64-bit integers as numbers). */
void srv_http_model_config(srv_server_t *srv, upb_StringView name, upb_StringView version,
                           srv_http_answer_t *out);

/** GET /v2/models/stats (name empty), /v2/models/{name}/stats (version
 *  empty) and .../versions/{version}/stats: {"model_stats": [...]} with
 *  every field of Triton's printed (empty lists and maps included). */
void srv_http_model_statistics(srv_server_t *srv, upb_StringView name,
                               upb_StringView version, srv_http_answer_t *out);

/** POST /v2/repository/index with its body (may be empty: every model):
 *  {"ready": true} lists ready versions only. A JSON array of
 *  {"name"[, "version"], "state"[, "reason"]}, a folder never loaded with
 *  its name alone. A body that is not a JSON object, or whose "ready" is
 *  not a boolean, is 400. */
void srv_http_repository_index(srv_server_t *srv, const char *body, size_t len,
                               srv_http_answer_t *out);

/** Most bytes of a load or unload body these parsers read (the bound on
 *  the files of a load, base64-encoded, plus room for the config). */
#define SRV_HTTP_REPOSITORY_BODY_MAX (SRV_LOAD_OVERRIDE_BYTES_MAX / 3 * 4 + (64u << 20))

/** The body of POST /v2/repository/models/{model}/load:
 *  {"parameters": {"config": "<json>", "file:<path>": "<base64>", ...}}
 *  (empty body: no override) into *out, as srv_load_override_parse reads
 *  the gRPC request (same checks and texts: paths that leave the model
 *  folder, limits, files without config, unknown parameters). The decoded
 *  files and paths live in `arena`; *out references them. A body that is
 *  not JSON, a "parameters" that is not an object, a value that is not a
 *  string, or base64 that does not decode is INVALID_ARGUMENT naming the
 *  model and parameter. *http_code gets the status's HTTP code (200 when
 *  NULL). *out is all zero on error. */
srv_status_t *srv_http_load_parse(upb_StringView model, const char *body, size_t len,
                                  upb_Arena *arena, srv_load_override_t *out,
                                  int *http_code);

/** The body of POST /v2/repository/models/{model}/unload:
 *  {"parameters": {"unload_dependents": true}} (empty body: false).
 *  Not JSON, or a non-boolean unload_dependents, is INVALID_ARGUMENT
 *  ("Unable to parse 'unload_dependents': ..." as Triton says). */
srv_status_t *srv_http_unload_parse(upb_StringView model, const char *body, size_t len,
                                    bool *unload_dependents, int *http_code);

/** GET /v2/logging (update false) and POST /v2/logging with its body
 *  (update true): applies the body's settings as log_view.h says (Triton's
 *  keys; TritonJson's texts for a value of the wrong kind; "invalid
 *  argument for --log_format, got: <name>"; null values and unknown keys
 *  skipped; log_file refused, 501), then answers every setting:
 *  {"log_file","log_info","log_warning","log_error","log_verbose_level",
 *  "log_format"}. */
void srv_http_logging(bool update, const char *body, size_t len, srv_http_answer_t *out);

/** Most bytes of a POST /v2/logging body (six settings fit in far fewer);
 *  past it, 400 naming the bound. */
#define SRV_HTTP_LOGGING_BODY_MAX 65536u

/** GET /v2/systemsharedmemory[/region/{name}]/status (kind SYSTEM) and
 *  /v2/cudasharedmemory[...]/status (CUDA), name empty without a region:
 *  a JSON array of {"name", "key", "offset", "byte_size"} (system) or
 *  {"name", "device_id", "byte_size"} (CUDA), in name order; the table's
 *  NOT_FOUND (404) for an unknown name or one of the other kind. */
void srv_http_shm_status(srv_shm_t *shm, srv_shm_kind_t kind, upb_StringView name,
                         srv_http_answer_t *out);

/** POST .../region/{name}/register with its body: system
 *  {"key": "/obj", "offset": N (optional), "byte_size": N}, CUDA
 *  {"raw_handle": {"b64": "<base64 cudaIpcMemHandle_t>"}, "device_id": N,
 *  "byte_size": N}, read with Triton's texts (missing fields, wrong
 *  types, a handle that is not base64 of 64 bytes), then registered as
 *  the gRPC RPC does. An empty name (no region in the route) is Triton's
 *  "'region name' is necessary" 400. Success: 200 and no body. */
void srv_http_shm_register(srv_shm_t *shm, srv_shm_kind_t kind, upb_StringView name,
                           const char *body, size_t len, srv_http_answer_t *out);

/** POST .../[region/{name}/]unregister: one region, or every region of
 *  kind when name is empty; an unknown name is no error (Triton). 200 and
 *  no body. */
void srv_http_shm_unregister(srv_shm_t *shm, srv_shm_kind_t kind, upb_StringView name,
                             srv_http_answer_t *out);

/** GET (body NULL) and POST /v2/trace/setting and
 *  /v2/models/{model}/trace/setting: the body's settings (each a string,
 *  an array of strings, or null to clear it) applied as
 *  srv_view_trace_setting does, then every setting in force as Triton's
 *  JSON: {"trace_level": [..], "trace_rate": "..", "trace_count": "..",
 *  "log_frequency": "..", "trace_file": "..", "trace_mode": "triton"}. */
void srv_http_trace_setting(srv_server_t *srv, upb_StringView model, const char *body,
                            size_t len, srv_http_answer_t *out);

#endif
