/* Fuzz target of the inference request path that ModelInfer and
 * ModelStreamInfer share: bytes -> upb decode of inference.ModelInferRequest
 * (as both RPCs decode it: strings alias the bytes) -> model lookup by name
 * and version -> srv_infer_request_build with its checks (infer_contents.c,
 * model/infer_check.c) against models made from real configs: INT32 with
 * dynamic batching, BYTES, FP16 and the narrow types, optional and ragged
 * inputs, max_batch_size 0 (`types` has only optional inputs, so that the
 * typed contents of the narrow types can come without a raw FP16 input
 * beside them), and the sequence parameters. A request accepted must be
 * one a backend can read safely; a request refused must get an error
 * naming the model (or Triton's text for a parameter's type).
 * Single-threaded (libFuzzer or test/fuzz/fuzz_driver.c). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grpc_service.upb.h"
#include "server/api/datatype.h"
#include "server/config/model_config.h"
#include "server/core/core.h"
#include "server/grpc/infer_aggregate.h"
#include "server/grpc/infer_request.h"
#include "server/views/model_lookup.h"
#include "server/model/model_bare.h"
#include "test/fuzz/fuzz.h"
#include "test/fuzz/fuzz_props.h"
#include "upb/decode.h"

/* The models requests go to, by name, as a repository would hold them. */
static const char *const kModels[] = {
    "name: 'simple' backend: 'fuzz' max_batch_size: 8\n"
    "input [{name: 'INPUT0' data_type: TYPE_INT32 dims: [16]},\n"
    "       {name: 'INPUT1' data_type: TYPE_INT32 dims: [16]}]\n"
    "output [{name: 'OUTPUT0' data_type: TYPE_INT32 dims: [16]},\n"
    "        {name: 'OUTPUT1' data_type: TYPE_INT32 dims: [16]}]\n"
    "dynamic_batching {preferred_batch_size: [4, 8] priority_levels: 2\n"
    "                  default_priority_level: 1}",
    "name: 'strings' backend: 'fuzz' max_batch_size: 4\n"
    "input [{name: 'TEXT' data_type: TYPE_STRING dims: [-1]},\n"
    "       {name: 'FLAGS' data_type: TYPE_BOOL dims: [2]}]\n"
    "output [{name: 'OUT' data_type: TYPE_STRING dims: [-1]}]",
    "name: 'types' backend: 'fuzz' max_batch_size: 0\n"
    "input [{name: 'F16' data_type: TYPE_FP16 dims: [2, -1] optional: true},\n"
    "       {name: 'BF16' data_type: TYPE_BF16 dims: [2] optional: true},\n"
    "       {name: 'I8' data_type: TYPE_INT8 dims: [4] optional: true},\n"
    "       {name: 'I16' data_type: TYPE_INT16 dims: [-1] optional: true},\n"
    "       {name: 'U16' data_type: TYPE_UINT16 dims: [2] optional: true},\n"
    "       {name: 'U64' data_type: TYPE_UINT64 dims: [1] optional: true},\n"
    "       {name: 'I64' data_type: TYPE_INT64 dims: [-1, 2] optional: true},\n"
    "       {name: 'F64' data_type: TYPE_FP64 dims: [1] optional: true}]\n"
    "output [{name: 'OUT' data_type: TYPE_FP16 dims: [2, -1]}]",
    "name: 'ragged' backend: 'fuzz' max_batch_size: 16\n"
    "input [{name: 'RAGGED' data_type: TYPE_FP32 dims: [-1] allow_ragged_batch: true},\n"
    "       {name: 'OPTIONAL' data_type: TYPE_INT32 dims: [1] optional: true},\n"
    "       {name: 'REQUIRED' data_type: TYPE_UINT32 dims: [2]}]\n"
    "output [{name: 'OUT' data_type: TYPE_FP32 dims: [-1]},\n"
    "        {name: 'INDEX' data_type: TYPE_UINT8 dims: [1]}]\n"
    "dynamic_batching {}",
    "name: 'flat' backend: 'fuzz'\n"
    "input [{name: 'IN' data_type: TYPE_INT32 dims: [2, 2]},\n"
    "       {name: 'WORDS' data_type: TYPE_STRING dims: [3]}]\n"
    "output [{name: 'OUT' data_type: TYPE_INT32 dims: [2, 2]}]",
};
enum { MODEL_COUNT = sizeof kModels / sizeof kModels[0] };

/* A server with nothing but a registry of the models above; never freed
 * (reachable, so LeakSanitizer is content). */
static srv_server_t *server_get(void) {
  static srv_server_t srv;
  if (srv.registry != NULL) return &srv;
  fuzz_registry_make(&srv, kModels, MODEL_COUNT);
  /* One system region, "fuzz_region" (4096 bytes), for tensors that name
   * shared memory; its object is unlinked at once, the mapping stays. */
  srv.shm = srv_shm_new(true);
  char key[64];
  snprintf(key, sizeof key, "/nereid-fuzz-%d", (int)getpid());
  int fd = shm_open(key, O_RDWR | O_CREAT | O_EXCL, 0600);
  FUZZ_CHECK(fd >= 0 && ftruncate(fd, 4096) == 0);
  srv_status_t *st = srv_shm_register_system(srv.shm, "fuzz_region", 11, key, strlen(key),
                                             0, 4096);
  FUZZ_CHECK(st == NULL);
  shm_unlink(key);
  close(fd);
  return &srv;
}

static const srv_tensor_spec_t *spec_of(const srv_model_desc_t *d, const char *name) {
  for (uint32_t i = 0; i < d->input_count; i++)
    if (d->inputs[i].name == name) return &d->inputs[i];
  return NULL;
}

/* The elements the shape claims; false when they do not fit in 64 bits. */
static bool elements_of(const struct TRITONBACKEND_Input *in, uint64_t *out) {
  uint64_t n = 1;
  for (uint32_t k = 0; k < in->dims_count; k++) {
    FUZZ_CHECK(in->shape[k] >= 0);
    if (__builtin_mul_overflow(n, (uint64_t)in->shape[k], &n)) return false;
  }
  *out = n;
  return true;
}

/* Reads every data byte, as a backend would (ASan sees any that is not
 * there), and counts the BYTES elements in it: a 4-byte little-endian
 * length, then that many bytes. */
static volatile unsigned char sink;

static uint64_t data_walk(const struct TRITONBACKEND_Input *in, uint64_t *total) {
  bool bytes = in->datatype == TRITONSERVER_TYPE_BYTES;
  uint64_t elements = 0, skip = 0; /* bytes left of the current element */
  uint32_t len = 0;
  unsigned got = 0; /* bytes of the current length prefix */
  unsigned char x = 0;
  *total = 0;
  for (uint32_t b = 0; b < in->buffer_count; b++) {
    const unsigned char *p = in->buffers[b].base;
    for (uint64_t i = 0; i < in->buffers[b].size; i++) {
      x ^= p[i];
      if (!bytes) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      len |= (uint32_t)p[i] << (8 * got);
      if (++got < 4) continue;
      skip = len;
      len = got = 0;
      elements++;
    }
    *total += in->buffers[b].size;
  }
  sink = x;
  if (bytes) FUZZ_CHECK(skip == 0 && got == 0);
  return elements;
}

static void input_check(const srv_model_desc_t *d, const TRITONBACKEND_Request *r,
                        const struct TRITONBACKEND_Input *in) {
  const srv_tensor_spec_t *spec = spec_of(d, in->name);
  FUZZ_CHECK(spec != NULL && in->datatype == spec->datatype);
  uint32_t skip = d->max_batch_size > 0 ? 1 : 0;
  FUZZ_CHECK(in->dims_count == spec->dims_count + skip);
  if (skip) FUZZ_CHECK(in->shape[0] == (int64_t)r->batch_size);
  for (uint32_t k = 0; k < spec->dims_count; k++)
    FUZZ_CHECK(spec->dims[k] == -1 || in->shape[k + skip] == spec->dims[k]);
  uint64_t elements = 0, total;
  bool fits = elements_of(in, &elements);
  if (!fits)
    fprintf(stderr, "input '%s': the shape's element count overflows\n", in->name);
  FUZZ_CHECK(fits);
  uint64_t found = data_walk(in, &total);
  FUZZ_CHECK(total == in->byte_size);
  if (in->datatype == TRITONSERVER_TYPE_BYTES) {
    FUZZ_CHECK(found == elements);
  } else {
    uint64_t bytes;
    FUZZ_CHECK(
        !__builtin_mul_overflow(elements, api_datatype_byte_size(in->datatype), &bytes));
    FUZZ_CHECK(bytes == in->byte_size);
  }
}

/* The keys the gRPC frontend reads itself, never a backend's. */
static const char *const kReservedKeys[] = {"sequence_id",  "sequence_start",
                                            "sequence_end", "priority",
                                            "timeout",      SRV_AGGREGATE_PARAMETER};

/* What a backend relies on in a request the frontend accepted. */
static void request_check(const srv_model_desc_t *d, const TRITONBACKEND_Request *r) {
  FUZZ_CHECK(r->id != NULL);
  /* A string correlation ID is the arena's own, bounded, NUL-terminated
   * copy (the received bytes are freed with the call); flags are the two
   * of the sequence extension. */
  if (r->correlation_id_string != NULL) {
    FUZZ_CHECK(r->correlation_id == 0);
    FUZZ_CHECK(strnlen(r->correlation_id_string, SRV_GRPC_SEQUENCE_ID_MAX + 1) <=
               SRV_GRPC_SEQUENCE_ID_MAX);
  }
  FUZZ_CHECK((r->flags & ~(uint32_t)(TRITONSERVER_REQUEST_FLAG_SEQUENCE_START |
                                     TRITONSERVER_REQUEST_FLAG_SEQUENCE_END)) == 0);
  if (d->max_batch_size > 0)
    FUZZ_CHECK(r->batch_size >= 1 && r->batch_size <= (uint32_t)d->max_batch_size);
  else
    FUZZ_CHECK(r->batch_size == 1);
  for (uint32_t i = 0; i < r->input_count; i++) {
    input_check(d, r, &r->inputs[i]);
    for (uint32_t j = 0; j < i; j++) FUZZ_CHECK(r->inputs[i].name != r->inputs[j].name);
  }
  for (uint32_t k = 0; k < d->input_count; k++) {
    bool given = d->inputs[k].optional;
    for (uint32_t i = 0; i < r->input_count && !given; i++)
      given = r->inputs[i].name == d->inputs[k].name;
    FUZZ_CHECK(given);
  }
  for (uint32_t i = 0; i < r->output_count; i++) {
    bool known = false;
    for (uint32_t k = 0; k < d->output_count && !known; k++)
      known = r->outputs[i] == d->output_names[k];
    FUZZ_CHECK(known);
  }
  /* Parameters (request_params.h): bounded, typed, none of the server's;
   * of Triton's keys only the stream's empty-final flag may pass. */
  fuzz_request_params_check(r, kReservedKeys,
                            sizeof kReservedKeys / sizeof *kReservedKeys,
                            "triton_enable_empty_final_response");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  srv_server_t *srv = server_get();
  upb_Arena *arena = upb_Arena_New();
  inference_ModelInferRequest *req = inference_ModelInferRequest_new(arena);
  FUZZ_CHECK(req != NULL);
  if (upb_Decode((const char *)data, size, req, &inference_ModelInferRequest_msginit,
                 NULL, kUpb_DecodeOption_AliasString, arena) == kUpb_DecodeStatus_Ok) {
    srv_model_t *m = NULL;
    srv_status_t *st =
        srv_model_lookup(srv, inference_ModelInferRequest_model_name(req),
                         inference_ModelInferRequest_model_version(req), &m);
    if (st != NULL) {
      FUZZ_CHECK(m == NULL);
      fuzz_status_check(st, NULL);
    } else {
      srv_model_desc_t d;
      srv_model_describe(m, &d);
      TRITONBACKEND_Request *r = NULL;
      srv_shm_uses_t *uses = NULL;
      st = srv_infer_request_build(m, &d, req, srv->shm, arena, &r, &uses);
      if (st == NULL)
        request_check(&d, r);
      srv_shm_uses_free(uses);
      /* Triton's shared-memory texts name the tensor and region, not the
       * model. */
      if (st != NULL) {
        const char *msg = srv_status_message(st);
        bool shm = strstr(msg, "shared memory") != NULL || strstr(msg, "shared_memory") != NULL;
        fuzz_status_check(st, shm ? NULL : d.name);
      }
      srv_model_unref(m);
    }
  }
  upb_Arena_Free(arena);
  return 0;
}
