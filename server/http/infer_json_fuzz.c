/* Fuzz target of the HTTP inference codec: bytes -> srv_http_infer_parse
 * (JSON header and binary parts) or srv_http_generate_parse, against models
 * made from real configs (a batching INT32 model, every datatype, BYTES
 * with a variable dimension). The first byte picks the model and the path,
 * the next two the header length (modulo the body's plus one). An accepted
 * request must be one a backend reads safely: inputs of the model, data
 * bytes readable and as many as the input's byte size, binary data inside
 * the body, options for every output; its reply, from a backend echoing
 * the inputs, must encode or fail with a status; a refusal's text must
 * make a valid `{"error":...}` body. One system shared-memory region,
 * "fuzz_region" (4096 bytes), serves tensors that name one: an accepted
 * request holds exactly the references of its tensors in shared memory,
 * inputs read there lie inside the mapping, outputs placed there are sent
 * without data; a refused one holds none. Single-threaded (libFuzzer or
 * fuzz_driver.c). */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/config/model_config.h"
#include "server/core/core.h"
#include "server/http/generate_json.h"
#include "server/http/infer_json.h"
#include "server/model/model_bare.h"
#include "test/fuzz/fuzz.h"
#include "test/fuzz/fuzz_props.h"

static const char *const kModels[] = {
    "name: 'simple' backend: 'fuzz' max_batch_size: 8\n"
    "input [{name: 'INPUT0' data_type: TYPE_INT32 dims: [16]},\n"
    "       {name: 'INPUT1' data_type: TYPE_INT32 dims: [16]}]\n"
    "output [{name: 'OUTPUT0' data_type: TYPE_INT32 dims: [16]},\n"
    "        {name: 'OUTPUT1' data_type: TYPE_INT32 dims: [16]}]",
    "name: 'types' backend: 'fuzz' max_batch_size: 0\n"
    "input [{name: 'B' data_type: TYPE_BOOL dims: [2] optional: true},\n"
    "  {name: 'I8' data_type: TYPE_INT8 dims: [-1] optional: true},\n"
    "  {name: 'U16' data_type: TYPE_UINT16 dims: [2, 2] optional: true},\n"
    "  {name: 'I64' data_type: TYPE_INT64 dims: [-1, 2] optional: true},\n"
    "  {name: 'U64' data_type: TYPE_UINT64 dims: [1] optional: true},\n"
    "  {name: 'H' data_type: TYPE_FP16 dims: [2] optional: true},\n"
    "  {name: 'F' data_type: TYPE_FP32 dims: [-1] optional: true},\n"
    "  {name: 'D' data_type: TYPE_FP64 dims: [1] optional: true}]\n"
    "output [{name: 'OUT' data_type: TYPE_FP32 dims: [-1]}]",
    "name: 'text' backend: 'fuzz' max_batch_size: 4\n"
    "input [{name: 'text_input' data_type: TYPE_STRING dims: [-1]},\n"
    "  {name: 'n' data_type: TYPE_INT32 dims: [1] optional: true}]\n"
    "output [{name: 'text_output' data_type: TYPE_STRING dims: [-1]}]",
};
enum { MODEL_COUNT = sizeof kModels / sizeof kModels[0] };

/* Made once, never freed (reachable, so LeakSanitizer is content). */
static srv_model_t *models[MODEL_COUNT];
static srv_model_desc_t descs[MODEL_COUNT];

static srv_shm_t *shm;

/* The region tensors may name; its object is unlinked at once, the mapping
 * stays. */
static void region_make(void) {
  shm = srv_shm_new(true);
  char key[64];
  snprintf(key, sizeof key, "/nereid-http-fuzz-%d", (int)getpid());
  int fd = shm_open(key, O_RDWR | O_CREAT | O_EXCL, 0600);
  FUZZ_CHECK(fd >= 0 && ftruncate(fd, 4096) == 0);
  srv_status_t *st =
      srv_shm_register_system(shm, "fuzz_region", 11, key, strlen(key), 0, 4096);
  FUZZ_CHECK(st == NULL);
  shm_unlink(key);
  close(fd);
}

static void models_make(void) {
  if (models[0] != NULL) return;
  region_make();
  upb_Arena *a = upb_Arena_New();
  for (size_t i = 0; i < MODEL_COUNT; i++) {
    char err[256];
    inference_ModelConfig *c = cfg_model_config_parse(kModels[i], strlen(kModels[i]),
                                                      "model", a, err, sizeof err);
    FUZZ_CHECK(c != NULL);
    upb_StringView name = inference_ModelConfig_name(c);
    char n[32];
    snprintf(n, sizeof n, "%.*s", (int)name.size, name.data);
    FUZZ_CHECK(srv_model_bare_new(n, c, &models[i]) == NULL);
    srv_model_describe(models[i], &descs[i]);
  }
  upb_Arena_Free(a);
}

static volatile unsigned char sink;

/* The keys the HTTP frontend reads itself, never a backend's. */
static const char *const kReservedKeys[] = {"sequence_id",  "sequence_start",
                                            "sequence_end", "priority",
                                            "timeout",      "binary_data_output"};

/* Every data byte read, as a backend would; inputs are the model's. */
static void request_walk(const srv_model_desc_t *d, const TRITONBACKEND_Request *r) {
  unsigned char x = 0;
  FUZZ_CHECK(r->batch_size >= 1);
  /* Parameters (request_params.h): bounded, typed, none of the server's
   * and none of Triton's (triton_*), for infer and generate alike. */
  fuzz_request_params_check(r, kReservedKeys,
                            sizeof kReservedKeys / sizeof *kReservedKeys, NULL);
  for (uint32_t i = 0; i < r->input_count; i++) {
    const struct TRITONBACKEND_Input *in = &r->inputs[i];
    bool known = false;
    for (uint32_t k = 0; k < d->input_count; k++) known |= d->inputs[k].name == in->name;
    FUZZ_CHECK(known);
    uint64_t total = 0;
    for (uint32_t b = 0; b < in->buffer_count; b++) {
      const unsigned char *p = in->buffers[b].base;
      for (uint64_t j = 0; j < in->buffers[b].size; j++) x ^= p[j];
      total += in->buffers[b].size;
    }
    FUZZ_CHECK(total == in->byte_size);
  }
  sink = x;
}

/* The reply to r as if the backend echoed input i % n as output i: any
 * datatype, shape and bytes the parse let through, with the options the
 * request asked (binary, classification). The header must be JSON whose
 * outputs are as many as those sent, and the parts as large as they say;
 * an output that cannot be sent as asked is a status, never a crash. */
static void reply_check(const srv_model_desc_t *d, const TRITONBACKEND_Request *r,
                        const srv_http_infer_opts_t *opts, upb_Arena *a) {
  if (r->input_count == 0) return;
  struct TRITONBACKEND_Output *o = upb_Arena_Malloc(a, r->output_count * sizeof *o + 1);
  for (uint32_t i = 0; i < r->output_count; i++) {
    const struct TRITONBACKEND_Input *in = &r->inputs[i % r->input_count];
    o[i] = (struct TRITONBACKEND_Output){.name = (char *)r->outputs[i],
                                         .datatype = in->datatype,
                                         .shape = (int64_t *)in->shape,
                                         .dims_count = in->dims_count,
                                         .buffer = (void *)in->buffers[0].base,
                                         .byte_size = in->byte_size};
  }
  TRITONBACKEND_Response resp;
  memset(&resp, 0, sizeof resp);
  resp.outputs = o;
  resp.output_count = r->output_count;
  srv_http_infer_reply_t out;
  srv_status_t *st = srv_http_infer_encode(d, r, opts, &resp, a, &out);
  if (st != NULL) {
    grpc_status_code c = srv_status_code(st);
    FUZZ_CHECK(c == GRPC_STATUS_INTERNAL || c == GRPC_STATUS_INVALID_ARGUMENT);
    srv_status_free(st);
    return;
  }
  json_t *back = json_loadb(out.json, out.json_len, JSON_ALLOW_NUL, NULL);
  FUZZ_CHECK(json_array_size(json_object_get(back, "outputs")) == r->output_count);
  json_decref(back);
  uint64_t total = 0;
  for (uint32_t i = 0; i < out.part_count; i++) total += out.parts[i].size;
  FUZZ_CHECK(total == out.parts_size);
}

/* The references of an accepted request: one per input read from the
 * region (its bytes inside the mapping) and one per output placed there. */
static void uses_check(const TRITONBACKEND_Request *r, const srv_http_infer_opts_t *opts,
                       const srv_shm_uses_t *uses) {
  uint32_t outputs = 0, n = uses != NULL ? uses->count : 0;
  for (uint32_t j = 0; j < n; j++) {
    const srv_shm_ref_t *ref = &uses->refs[j];
    FUZZ_CHECK(ref->byte_size <= 4096);
    outputs += ref->output != NULL;
    bool read = ref->output != NULL; /* an input's: some input's data */
    for (uint32_t i = 0; i < r->input_count && !read; i++)
      read = r->inputs[i].buffers[0].base == ref->addr &&
             r->inputs[i].buffers[0].size == ref->byte_size;
    FUZZ_CHECK(read);
  }
  uint32_t placed = 0;
  for (uint32_t i = 0; i < opts->output_count; i++) {
    placed += opts->outputs[i].shm;
    FUZZ_CHECK(!opts->outputs[i].shm || srv_shm_uses_output(uses, r->outputs[i]) != NULL);
  }
  FUZZ_CHECK(placed == outputs);
}

/* A refusal: a message that makes a valid error body; a region that is not
 * there is NOT_FOUND, as in Triton. */
static void refusal_check(srv_status_t *st, upb_Arena *a) {
  grpc_status_code c = srv_status_code(st);
  FUZZ_CHECK(c == GRPC_STATUS_INVALID_ARGUMENT || c == GRPC_STATUS_NOT_FOUND);
  size_t len;
  const char *body = srv_http_error_body(srv_status_message(st), a, &len);
  json_t *back = json_loadb(body, len, 0, NULL);
  FUZZ_CHECK(json_is_string(json_object_get(back, "error")));
  json_decref(back);
  srv_status_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  models_make();
  if (size < 3) return 0;
  unsigned pick = data[0];
  size_t header = (size_t)data[1] | (size_t)data[2] << 8;
  const char *body = (const char *)data + 3;
  size_t len = size - 3;
  header %= len + 1;
  srv_model_t *m = models[pick % MODEL_COUNT];
  const srv_model_desc_t *d = &descs[pick % MODEL_COUNT];
  upb_Arena *a = upb_Arena_New();
  TRITONBACKEND_Request *r = NULL;
  srv_status_t *st;
  srv_http_infer_opts_t opts;
  srv_shm_uses_t *uses = NULL;
  if (pick & 0x80) {
    st = srv_http_generate_parse(m, d, body, len, a, &r);
  } else {
    st = srv_http_infer_parse(m, d, body, len, header, shm, a, &r, &uses, &opts);
    FUZZ_CHECK(st == NULL || uses == NULL);
    if (st == NULL) {
      uses_check(r, &opts, uses);
      FUZZ_CHECK(opts.output_count == r->output_count);
      for (uint32_t i = 0; i < r->input_count; i++)
        for (uint32_t b = 0; b < r->inputs[i].buffer_count; b++) {
          const char *p = r->inputs[i].buffers[b].base;
          /* binary data lies in the body, after the header */
          if (p >= body && p < body + len)
            FUZZ_CHECK(p >= body + header &&
                       r->inputs[i].buffers[b].size <= (uint64_t)(body + len - p));
        }
    }
  }
  if (st == NULL && !(pick & 0x80)) reply_check(d, r, &opts, a);
  if (st == NULL)
    request_walk(d, r);
  else
    refusal_check(st, a);
  srv_shm_uses_free(uses);
  upb_Arena_Free(a);
  return 0;
}
