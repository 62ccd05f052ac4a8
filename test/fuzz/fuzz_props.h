/* Properties that several fuzz targets check: what a client reads in an
 * error, and what the server makes of a model configuration it accepts.
 * Each check aborts (FUZZ_CHECK) when a property fails. Single-threaded. */
#ifndef NEREID_TEST_FUZZ_FUZZ_PROPS_H
#define NEREID_TEST_FUZZ_FUZZ_PROPS_H

#include <stdbool.h>
#include <stddef.h>

#include "model_config.upb.h"
#include "server/common/status.h"
#include "server/core/core.h"

/** Reads the `len` bytes at p, as a user of them would: ASan reports any
 *  that is not there (or, with detect_stack_use_after_return, a stack
 *  frame that returned). */
void fuzz_touch(const void *p, size_t len);

/** st is an error a client may read: not NULL, a code that is not OK, a
 *  message that is not empty, within SRV_STATUS_MESSAGE_MAX, and naming
 *  `name` when it is not NULL. Frees st. */
void fuzz_status_check(srv_status_t *st, const char *name);

/** Makes model `name` (a valid model name) from `config` as loading does
 *  without a backend (srv_model_bare_new). When that succeeds, checks what
 *  requests and backends will rely on: tensors named, unique, of a valid
 *  type, with dimensions > 0 or -1; max_batch_size >= 0; instance groups
 *  that can run here; a config JSON that parses back as a ModelConfig of
 *  that name. Otherwise checks the error (fuzz_status_check, naming the
 *  model). Frees what it made; returns whether the model was made. */
bool fuzz_model_config_check(const char *name, const inference_ModelConfig *config);

/** A load of model `name` with the config override `json` (len bytes), as
 *  the loader thread takes it: srv_load_override_config, then
 *  fuzz_model_config_check on what it decodes, or fuzz_status_check (naming
 *  the model) on its error. */
void fuzz_config_override_check(const char *name, const char *json, size_t len);

/** What srv_load_override_parse gave, as materializing a folder relies on
 *  it: within the file count, size and path limits, normalized relative
 *  paths sorted and unique, files only with a config, every byte there
 *  (fuzz_touch). */
void fuzz_load_override_check(const srv_load_override_t *o);

/** Publishes in srv (a server with nothing else) a new registry of the
 *  models `configs` (config.pbtxt texts, at most FUZZ_MODELS_MAX in the
 *  process), each READY with one version made by srv_model_bare_new.
 *  Never freed: reachable, so LeakSanitizer is content. */
#define FUZZ_MODELS_MAX 16
void fuzz_registry_make(srv_server_t *srv, const char *const *configs, size_t n);

/** The parameters an accepted request hands to backends (request_params.h,
 *  TRITONBACKEND_RequestParameter): at most SRV_REQUEST_PARAMS_MAX and
 *  within the room reserved; each key there, of at most
 *  SRV_REQUEST_PARAM_KEY_MAX bytes, none of the `reserved_count` keys in
 *  `reserved` (those the frontend reads itself) and none starting with
 *  "triton_" unless it is `triton_ok` (NULL: none); a type of the four
 *  (STRING, INT, BOOL, DOUBLE), a STRING value there, NUL-terminated
 *  within SRV_REQUEST_PARAM_STRING_MAX bytes and every byte readable. */
void fuzz_request_params_check(const TRITONBACKEND_Request *r,
                               const char *const *reserved, size_t reserved_count,
                               const char *triton_ok);

#endif
