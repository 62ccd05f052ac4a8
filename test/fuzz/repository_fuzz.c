/* Fuzz target of the repository RPCs' request decoding: the first byte
 * picks the message, the rest is its protobuf encoding, decoded as the
 * RPCs decode it (strings alias the bytes).
 *  - RepositoryModelLoad: the name check (srv_model_name_check_load), the
 *    parameters (srv_load_override_parse: "config" and "file:<path>"), the
 *    config JSON (srv_load_override_config) and the model made from it as
 *    loading does without a backend (fuzz_props.h). Files are not written.
 *  - RepositoryModelUnload: the fields the RPC reads, the repository's name
 *    check.
 *  - RepositoryIndex: the fields the RPC reads.
 * Single-threaded (libFuzzer or fuzz_driver.c). */
#include <string.h>

#include "grpc_service.upb.h"
#include "server/core/core.h"
#include "test/fuzz/fuzz.h"
#include "test/fuzz/fuzz_props.h"
#include "upb/decode.h"

static void load_run(const uint8_t *data, size_t size, upb_Arena *a) {
  inference_RepositoryModelLoadRequest *req = inference_RepositoryModelLoadRequest_new(a);
  if (upb_Decode((const char *)data, size, req,
                 &inference_RepositoryModelLoadRequest_msginit, NULL,
                 kUpb_DecodeOption_AliasString, a) != kUpb_DecodeStatus_Ok)
    return;
  upb_StringView name = inference_RepositoryModelLoadRequest_model_name(req);
  srv_status_t *st = srv_model_name_check_load(name.data, name.size);
  if (st != NULL) {
    fuzz_status_check(st, NULL);
    return;
  }
  char cname[SRV_MODEL_NAME_MAX + 1], quoted[SRV_QUOTE_SIZE];
  FUZZ_CHECK(name.size < sizeof cname && memchr(name.data, '\0', name.size) == NULL);
  memcpy(cname, name.data, name.size);
  cname[name.size] = '\0';
  srv_load_override_t o;
  st = srv_load_override_parse(req, a, &o);
  if (st != NULL) {
    FUZZ_CHECK(o.config_json == NULL && o.files == NULL && o.file_count == 0);
    fuzz_status_check(st, srv_quote(quoted, name.data, name.size));
    return;
  }
  fuzz_load_override_check(&o);
  if (o.config_json != NULL)
    fuzz_config_override_check(cname, o.config_json, o.config_json_len);
}

static void unload_run(const uint8_t *data, size_t size, upb_Arena *a) {
  inference_RepositoryModelUnloadRequest *req =
      inference_RepositoryModelUnloadRequest_new(a);
  if (upb_Decode((const char *)data, size, req,
                 &inference_RepositoryModelUnloadRequest_msginit, NULL,
                 kUpb_DecodeOption_AliasString, a) != kUpb_DecodeStatus_Ok)
    return;
  upb_StringView repo = inference_RepositoryModelUnloadRequest_repository_name(req);
  fuzz_touch(repo.data, repo.size);
  inference_ModelRepositoryParameter *p;
  if (inference_RepositoryModelUnloadRequest_parameters_get(
          req, upb_StringView_FromString("unload_dependents"), &p) &&
      inference_ModelRepositoryParameter_has_bool_param(p))
    (void)inference_ModelRepositoryParameter_bool_param(p);
  upb_StringView name = inference_RepositoryModelUnloadRequest_model_name(req);
  fuzz_touch(name.data, name.size);
  srv_status_t *st = srv_model_name_check(name.data, name.size);
  if (st != NULL) fuzz_status_check(st, NULL);
}

static void index_run(const uint8_t *data, size_t size, upb_Arena *a) {
  inference_RepositoryIndexRequest *req = inference_RepositoryIndexRequest_new(a);
  if (upb_Decode((const char *)data, size, req, &inference_RepositoryIndexRequest_msginit,
                 NULL, kUpb_DecodeOption_AliasString, a) != kUpb_DecodeStatus_Ok)
    return;
  upb_StringView repo = inference_RepositoryIndexRequest_repository_name(req);
  fuzz_touch(repo.data, repo.size);
  (void)inference_RepositoryIndexRequest_ready(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  upb_Arena *a = upb_Arena_New();
  FUZZ_CHECK(a != NULL);
  switch (data[0] % 3) {
    case 0:
      load_run(data + 1, size - 1, a);
      break;
    case 1:
      unload_run(data + 1, size - 1, a);
      break;
    default:
      index_run(data + 1, size - 1, a);
      break;
  }
  upb_Arena_Free(a);
  return 0;
}
