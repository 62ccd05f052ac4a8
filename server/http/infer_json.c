/* KServe v2 REST inference request -> TRITONBACKEND_Request (see
 * infer_json.h). Runs on the HTTP frontend's actor. The JSON tree is
 * jansson's (heap) and freed before returning: whatever the request keeps
 * of it is copied into the arena first. */
#include "server/http/infer_json.h"

#include <jansson.h>
#include <string.h>

#include "server/api/datatype.h"
#include "server/common/memory.h"
#include "server/http/header_memo.h"
#include "server/http/json_params.h"
#include "server/http/json_shm.h"
#include "server/http/json_tensor.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* The binary section after the JSON header, consumed in input order. */
typedef struct {
  const char *at;
  size_t left;
  bool has_header; /* Inference-Header-Content-Length was given */
} binary_t;

/* Where inputs' data comes from besides JSON: the binary section, and
 * shared-memory regions (the references taken so far). */
typedef struct {
  binary_t bin;
  srv_json_shm_binds_t *shm;
} source_t;

static srv_status_t *shape_read(const json_t *in, upb_Arena *arena, int64_t **shape,
                                uint32_t *n) {
  const json_t *s = json_object_get(in, "shape");
  if (!json_is_array(s)) return BAD("Unable to parse 'shape'");
  size_t count = json_array_size(s);
  if (count > SRV_JSON_DIMS_MAX)
    return BAD("Unable to parse 'shape': %zu dimensions, above the limit of %u", count,
               SRV_JSON_DIMS_MAX);
  *shape = srv_arena_alloc(arena, (count ? count : 1) * sizeof **shape);
  for (size_t i = 0; i < count; i++) {
    const json_t *d = json_array_get(s, i);
    if (!json_is_integer(d) || json_integer_value(d) < 0)
      return BAD("Unable to parse 'shape'");
    (*shape)[i] = json_integer_value(d);
  }
  *n = (uint32_t)count;
  return NULL;
}

/* `binary_data_size` of an input, when it has one. */
static srv_status_t *binary_size_read(const json_t *in, bool *is_binary, uint64_t *size) {
  const json_t *p = json_object_get(in, "parameters");
  *is_binary = false;
  if (p == NULL) return NULL;
  if (!json_is_object(p)) return BAD("Unable to parse 'parameters'");
  const json_t *b = json_object_get(p, "binary_data_size");
  if (b == NULL) return NULL;
  if (!json_is_integer(b) || json_integer_value(b) < 0)
    return BAD("Unable to parse 'binary_data_size'");
  *is_binary = true;
  *size = (uint64_t)json_integer_value(b);
  return NULL;
}

static srv_status_t *binary_take(const srv_model_desc_t *d, const char *name,
                                 uint64_t size, binary_t *bin, srv_buffer_t *buf) {
  if (size > 0 && !bin->has_header)
    return BAD(
        "must specify valid 'Inference-Header-Content-Length' in request header and "
        "'binary_data_size' when passing inputs in binary data format");
  if (size > bin->left)
    return BAD(
        "unexpected size for input '%s', expecting %llu additional bytes for model "
        "'%s'",
        name, (unsigned long long)(size - bin->left), d->name);
  buf->base = bin->at;
  buf->size = size;
  bin->at += size;
  bin->left -= size;
  return NULL;
}

/* Triton's rule: an input has exactly one of `data`, `binary_data_size`
 * and `shared_memory_region` (the latter two in its `parameters`). */
static srv_status_t *one_source(const json_t *in) {
  const json_t *p = json_object_get(in, "parameters");
  bool has_data = json_object_get(in, "data") != NULL;
  bool has_binary = json_is_object(p) && json_object_get(p, "binary_data_size") != NULL;
  bool has_shm = srv_json_shm_named(p);
  if (has_data + has_binary + has_shm == 1) return NULL;
  return BAD(
      "Input must set only one of the following fields: 'data', 'binary_data_size' "
      "in 'parameters', 'shared_memory_region' in 'parameters'. But%s%s%s%s",
      has_data + has_binary + has_shm == 0 ? " no field is set" : " set",
      has_data ? " 'data'" : "", has_binary ? " 'binary_data_size'" : "",
      has_shm ? " 'shared_memory_region'" : "");
}

/* The data of one input: in a shared-memory region (read in place), binary,
 * or JSON `data` checked against the shape before anything is allocated
 * for it. */
static srv_status_t *data_read(const srv_model_desc_t *d, const json_t *in,
                               const srv_tensor_spec_t *spec, TRITONSERVER_DataType type,
                               const int64_t *shape, uint32_t dims, source_t *src,
                               upb_Arena *arena, srv_buffer_t *buf) {
  srv_status_t *st = one_source(in);
  if (st != NULL) return st;
  const json_t *p = json_object_get(in, "parameters");
  if (srv_json_shm_named(p)) {
    const srv_shm_ref_t *ref;
    st = srv_json_shm_bind(src->shm, p, NULL, &ref);
    if (st != NULL) return st;
    *buf = (srv_buffer_t){.base = ref->addr,
                          .size = ref->byte_size,
                          .memory_type = ref->memory_type,
                          .memory_type_id = ref->memory_type_id};
    return NULL;
  }
  bool is_binary;
  uint64_t size = 0;
  st = binary_size_read(in, &is_binary, &size);
  if (st != NULL) return st;
  if (is_binary) return binary_take(d, spec->name, size, &src->bin, buf);
  const json_t *data = json_object_get(in, "data");
  uint64_t count = srv_json_tensor_count(shape, dims);
  if (!srv_json_tensor_fits(data, shape, dims, count)) return BAD(SRV_JSON_SHAPE_TEXT);
  return srv_json_tensor_read(data, type, count, spec->name, arena, buf);
}

static srv_status_t *input_read(srv_model_t *m, const srv_model_desc_t *d,
                                const json_t *in, source_t *src, upb_Arena *arena,
                                struct TRITONBACKEND_Input *out) {
  if (!json_is_object(in)) return BAD("Unable to parse 'inputs'");
  const json_t *name = json_object_get(in, "name");
  if (!json_is_string(name)) return BAD("Unable to parse 'name'");
  const srv_tensor_spec_t *spec;
  srv_status_t *st =
      srv_check_input_spec(m, json_string_value(name), json_string_length(name), &spec);
  if (st != NULL) return st;
  const json_t *dt = json_object_get(in, "datatype");
  if (!json_is_string(dt)) return BAD("Unable to parse 'datatype'");
  TRITONSERVER_DataType type =
      api_datatype_from_protocol(json_string_value(dt), json_string_length(dt));
  st = srv_check_input_datatype(m, spec, type, json_string_value(dt),
                                json_string_length(dt));
  int64_t *shape = NULL;
  uint32_t dims = 0;
  if (st == NULL) st = shape_read(in, arena, &shape, &dims);
  if (st == NULL) st = srv_check_input_shape(m, spec, shape, dims);
  if (st != NULL) return st;
  /* Zeroed: the arena's blocks are reused (pooled), and a buffer read from
   * the body or from JSON sets only its bytes; its memory type must read
   * CPU, not what the block held before. */
  srv_buffer_t *buf = srv_arena_zalloc(arena, sizeof *buf);
  st = data_read(d, in, spec, type, shape, dims, src, arena, buf);
  if (st == NULL)
    st = srv_check_input_data(m, spec, type, shape, dims, buf, 1, &out->byte_size);
  if (st != NULL) return st;
  srv_json_input_set(out, spec, type, shape, dims, buf);
  return NULL;
}

/* Triton's input count check, on the names as sent. Triton runs it after
 * its frontend parsed every input and before the core looks at any; here
 * parse and checks go input by input, so it runs where Triton's answer
 * would be the count: an input the model does not have, in a request with
 * too many or too few inputs; otherwise srv_check_required_inputs ends the
 * reading with the same text. */
static srv_status_t *inputs_count_check(srv_model_t *m, const json_t *inputs,
                                        upb_Arena *arena) {
  size_t n = json_array_size(inputs);
  srv_input_name_t *names = srv_arena_alloc(arena, (n ? n : 1) * sizeof *names);
  for (size_t i = 0; i < n; i++) {
    const json_t *in = json_array_get(inputs, i);
    if (!json_is_object(in)) return BAD("Unable to parse 'inputs'");
    const json_t *name = json_object_get(in, "name");
    if (!json_is_string(name)) return BAD("Unable to parse 'name'");
    names[i] = (srv_input_name_t){json_string_value(name), json_string_length(name)};
  }
  return srv_check_input_count(m, names, n);
}

/* Whether `in` names an input the model does not have. */
static bool unknown_input(srv_model_t *m, const json_t *in) {
  const json_t *name = json_object_get(in, "name");
  if (!json_is_string(name)) return false;
  const srv_tensor_spec_t *spec;
  srv_status_t *st =
      srv_check_input_spec(m, json_string_value(name), json_string_length(name), &spec);
  srv_status_free(st);
  return st != NULL;
}

static srv_status_t *inputs_read(srv_model_t *m, const srv_model_desc_t *d,
                                 const json_t *inputs, source_t *src, upb_Arena *arena,
                                 TRITONBACKEND_Request *r) {
  size_t n = json_array_size(inputs);
  /* Zeroed: fields the parse does not set (a GPU input's host copy) start
   * empty, as the release expects. */
  r->inputs = srv_arena_zalloc(arena, (n ? n : 1) * sizeof *r->inputs);
  for (size_t i = 0; i < n; i++) {
    srv_status_t *st =
        input_read(m, d, json_array_get(inputs, i), src, arena, &r->inputs[i]);
    if (st != NULL && unknown_input(m, json_array_get(inputs, i))) {
      srv_status_t *count = inputs_count_check(m, inputs, arena);
      if (count != NULL) {
        srv_status_free(st);
        st = count;
      }
    }
    if (st != NULL) return st;
    for (size_t j = 0; j < i; j++)
      if (r->inputs[j].name == r->inputs[i].name)
        return BAD("input '%s' already exists in request for model '%s'",
                   r->inputs[i].name, d->name);
  }
  r->input_count = (uint32_t)n;
  if (src->bin.left != 0)
    return BAD("unexpected additional input data for model '%s'", d->name);
  return srv_check_required_inputs(m, r);
}

/* An output's `parameters` naming a region: Triton's refusals of
 * classification and binary_data beside it, then the reference. */
static srv_status_t *output_shm_read(const json_t *p, const char *name,
                                     srv_json_shm_binds_t *shm,
                                     srv_http_output_opt_t *opt) {
  if (json_object_get(p, "classification") != NULL)
    return BAD("Output can't set both 'shared_memory_region' and 'classification'");
  if (opt->binary)
    return BAD("Output can't set both 'shared_memory_region' and 'binary_data'");
  const srv_shm_ref_t *ref;
  srv_status_t *st = srv_json_shm_bind(shm, p, name, &ref);
  if (st == NULL) opt->shm = true;
  return st;
}

/* One entry of `outputs`: its name and parameters (binary_data,
 * classification, shared memory). */
static srv_status_t *output_read(srv_model_t *m, const json_t *o, const char **name,
                                 srv_json_shm_binds_t *shm, srv_http_output_opt_t *opt) {
  if (!json_is_object(o)) return BAD("Unable to parse 'outputs'");
  const json_t *n = json_object_get(o, "name");
  if (!json_is_string(n)) return BAD("Unable to parse 'name'");
  srv_status_t *st =
      srv_check_output_name(m, json_string_value(n), json_string_length(n), name);
  if (st != NULL) return st;
  /* A listed output is JSON unless it says binary_data. */
  *opt = (srv_http_output_opt_t){0};
  const json_t *p = json_object_get(o, "parameters");
  if (p == NULL) return NULL;
  if (!json_is_object(p)) return BAD("Unable to parse 'parameters'");
  const json_t *b = json_object_get(p, "binary_data");
  if (b != NULL && !json_is_boolean(b)) return BAD("Unable to parse 'binary_data'");
  if (b != NULL) opt->binary = json_is_true(b);
  if (srv_json_shm_named(p)) return output_shm_read(p, *name, shm, opt);
  const json_t *c = json_object_get(p, "classification");
  if (c == NULL) return NULL;
  if (!json_is_integer(c) || json_integer_value(c) < 0 ||
      json_integer_value(c) > UINT32_MAX)
    return BAD("Unable to parse 'classification'");
  opt->class_count = (uint32_t)json_integer_value(c);
  return NULL;
}

static srv_status_t *outputs_read(srv_model_t *m, const srv_model_desc_t *d,
                                  const json_t *outputs, srv_json_shm_binds_t *shm,
                                  upb_Arena *arena, TRITONBACKEND_Request *r,
                                  srv_http_infer_opts_t *opts) {
  size_t n = outputs ? json_array_size(outputs) : 0;
  if (n == 0) { /* all of the model's outputs */
    r->outputs = (const char **)d->output_names;
    r->output_count = d->output_count;
  } else {
    r->outputs = srv_arena_alloc(arena, n * sizeof *r->outputs);
    r->output_count = (uint32_t)n;
  }
  opts->output_count = r->output_count;
  opts->outputs = srv_arena_alloc(
      arena, (r->output_count ? r->output_count : 1) * sizeof *opts->outputs);
  for (uint32_t i = 0; i < r->output_count; i++)
    opts->outputs[i] = (srv_http_output_opt_t){.binary = opts->binary_data_output};
  for (size_t i = 0; i < n; i++) {
    srv_status_t *st = output_read(m, json_array_get(outputs, i), &r->outputs[i], shm,
                                   &opts->outputs[i]);
    if (st != NULL) return st;
  }
  return NULL;
}

/* The JSON header, parsed; Triton's text when it is not JSON. */
static srv_status_t *header_load(const char *body, size_t len, json_t **root) {
  json_error_t err;
  *root = srv_header_memo_load(body, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
  if (*root == NULL)
    return BAD("failed to parse the request JSON buffer: %s at %d", err.text,
               err.position);
  if (!json_is_object(*root)) {
    json_decref(*root);
    return BAD("failed to parse the request JSON buffer: not a JSON object");
  }
  return NULL;
}

static srv_status_t *request_read(srv_model_t *m, const srv_model_desc_t *d,
                                  const json_t *root, source_t *src, upb_Arena *arena,
                                  TRITONBACKEND_Request *r, srv_http_infer_opts_t *opts) {
  const json_t *id = json_object_get(root, "id");
  if (id != NULL && !json_is_string(id)) return BAD("Unable to parse 'id'");
  r->id = id ? srv_arena_strview(
                   arena, (upb_StringView){json_string_value(id), json_string_length(id)})
             : "";
  const json_t *inputs = json_object_get(root, "inputs");
  if (!json_is_array(inputs)) return BAD("Unable to parse 'inputs'");
  const json_t *outputs = json_object_get(root, "outputs");
  if (outputs != NULL && !json_is_array(outputs)) return BAD("Unable to parse 'outputs'");
  srv_status_t *st = srv_json_params_read(m, json_object_get(root, "parameters"), arena,
                                          r, &opts->binary_data_output);
  if (st == NULL) st = inputs_read(m, d, inputs, src, arena, r);
  if (st == NULL) st = srv_check_batch(m, r);
  if (st == NULL) st = outputs_read(m, d, outputs, src->shm, arena, r, opts);
  return st;
}

srv_status_t *srv_http_infer_parse(srv_model_t *m, const srv_model_desc_t *d,
                                   const char *body, size_t body_len, size_t header_len,
                                   srv_shm_t *shm, upb_Arena *arena,
                                   TRITONBACKEND_Request **out, srv_shm_uses_t **uses,
                                   srv_http_infer_opts_t *opts) {
  *uses = NULL;
  if (header_len > body_len)
    return BAD(
        "Inference-Header-Content-Length %zu is larger than the request body of %zu "
        "bytes",
        header_len, body_len);
  json_t *root;
  srv_status_t *st = header_load(body, header_len, &root);
  if (st != NULL) return st;
  TRITONBACKEND_Request *r = srv_arena_zalloc(arena, sizeof *r);
  memset(opts, 0, sizeof *opts);
  r->model = m;
  srv_json_shm_binds_t binds = {.shm = shm, .arena = arena};
  source_t src = {.bin = {.at = body + header_len,
                          .left = body_len - header_len,
                          .has_header = header_len < body_len},
                  .shm = &binds};
  st = request_read(m, d, root, &src, arena, r, opts);
  json_decref(root);
  if (st != NULL) {
    srv_json_shm_release(&binds); /* no reference outlives a refused request */
    return st;
  }
  *uses = srv_shm_uses_new(binds.refs, binds.count);
  *out = r;
  return NULL;
}
