/* Implicit sequence state (TRITONBACKEND_State*): the backend writes the
 * next value of a state while it executes a request of a sequence. The
 * buffers belong to the request's sequence slot (sched/sequence.h) and are
 * lent with the request, so these calls run on the executing backend's
 * threads without a lock: the slot touches them again only once the
 * request is released. A padding request's updates go to its instance's
 * scratch states and are dropped. */
#include <stdlib.h>
#include <string.h>

#include "server/api/buffer_attributes.h"
#include "server/api/error.h"
#include "server/model/config_limits.h"
#include "server/model/model.h"
#include "server/sched/sequence.h"

/* The update object of state `index` for request r. */
static struct TRITONBACKEND_State *update_of(TRITONBACKEND_Request *r, uint32_t index) {
  srv_seq_sched_t *s = r->model->seq;
  if (!r->seq_padding) return &r->seq_slot->updates[index];
  /* A padding request carries its instance's scheduler state (sequence.c). */
  srv_seq_instance_t *si = (srv_seq_instance_t *)r->seq_slot;
  if (si->null_updates == NULL) {
    si->null_updates = calloc(s->config.state_count, sizeof *si->null_updates);
    if (si->null_updates == NULL) return NULL;
  }
  struct TRITONBACKEND_State *u = &si->null_updates[index];
  u->config = &s->config.states[index];
  u->buf = NULL;
  return u;
}

static bool shape_fits(const srv_seq_state_config_t *sc, bool batching, const int64_t *shape,
                       uint32_t dims_count) {
  uint32_t lead = batching ? 1 : 0;
  if (dims_count != sc->dims_count + lead) return false;
  for (uint32_t i = 0; i < sc->dims_count; i++)
    if (shape[lead + i] < 0 || (sc->dims[i] >= 0 && shape[lead + i] != sc->dims[i]))
      return false;
  return true;
}

TRITONSERVER_Error *TRITONBACKEND_StateNew(TRITONBACKEND_State **state,
                                           TRITONBACKEND_Request *request,
                                           const char *name,
                                           const TRITONSERVER_DataType datatype,
                                           const int64_t *shape,
                                           const uint32_t dims_count) {
  *state = NULL;
  const srv_model_t *m = request->model;
  const srv_seq_sched_t *s = m->seq;
  if (s == NULL || s->config.state_count == 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "unable to add state '%s'. State configuration is missing for "
                         "model '%s'.",
                         name, m->name);
  const srv_seq_state_config_t *sc = srv_seq_config_state_by_output(&s->config, name);
  if (sc == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "state '%s' is not a valid state name.", name);
  if (request->seq_slot == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "state '%s' of model '%s': the request is not part of a sequence",
                         name, m->name);
  if (datatype != sc->datatype)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "state '%s' of model '%s' is %s, not %s", name, m->name,
                         TRITONSERVER_DataTypeString(sc->datatype),
                         TRITONSERVER_DataTypeString(datatype));
  if (dims_count > SRV_CONFIG_DIMS_MAX + 1 ||
      !shape_fits(sc, m->max_batch_size > 0, shape, dims_count))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "state '%s' of model '%s': the shape does not match the state's "
                         "dims%s",
                         name, m->name, m->max_batch_size > 0 ? " (with the batch dimension)" : "");
  struct TRITONBACKEND_State *u = update_of(request, (uint32_t)(sc - s->config.states));
  if (u == NULL) return api_error_new(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  if (u->shape == NULL) {
    u->shape = calloc(SRV_CONFIG_DIMS_MAX + 1, sizeof *u->shape);
    if (u->shape == NULL) return api_error_new(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  memcpy(u->shape, shape, dims_count * sizeof *shape);
  u->dims_count = dims_count;
  *state = u;
  return NULL;
}

/* The buffer the update writes: the one the next step reads, after the
 * swap; or the current one itself with use_same_buffer_for_input_output. */
static uint8_t target_of(const TRITONBACKEND_State *u) {
  return u->config->same_buffer ? u->buf->cur : (uint8_t)(1 - u->buf->cur);
}

TRITONSERVER_Error *TRITONBACKEND_StateBuffer(TRITONBACKEND_State *state, void **buffer,
                                              const uint64_t buffer_byte_size,
                                              TRITONSERVER_MemoryType *memory_type,
                                              int64_t *memory_type_id) {
  if (state == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "state is NULL");
  void **slot_buf;
  uint64_t *cap;
  if (state->buf == NULL) {
    slot_buf = &state->scratch;
    cap = &state->scratch_cap;
  } else {
    uint8_t t = target_of(state);
    slot_buf = &state->buf->buf[t];
    cap = &state->buf->cap[t];
    state->buf->size[t] = buffer_byte_size;
  }
  if (*slot_buf == NULL || buffer_byte_size > *cap) {
    /* realloc keeps the contents: what use_growable_memory promises. */
    void *bigger = realloc(*slot_buf, buffer_byte_size ? buffer_byte_size : 1);
    if (bigger == NULL)
      return api_error_new(TRITONSERVER_ERROR_UNAVAILABLE,
                           "cannot allocate %llu bytes for state '%s'",
                           (unsigned long long)buffer_byte_size, state->config->output_name);
    *slot_buf = bigger;
    *cap = buffer_byte_size;
  }
  *buffer = *slot_buf;
  /* Host memory whatever was asked, as for outputs. */
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_StateBufferAttributes(
    TRITONBACKEND_State *state, TRITONSERVER_BufferAttributes **buffer_attributes) {
  if (state == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "state is NULL");
  if (state->attrs == NULL) {
    state->attrs = calloc(1, sizeof *state->attrs);
    if (state->attrs == NULL)
      return api_error_new(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  }
  api_buffer_attributes_init(state->attrs);
  state->attrs->byte_size =
      state->buf != NULL ? state->buf->size[target_of(state)] : state->scratch_cap;
  *buffer_attributes = state->attrs;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_StateUpdate(TRITONBACKEND_State *state) {
  if (state == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "state is NULL");
  srv_seq_state_buf_t *b = state->buf;
  if (b == NULL) return NULL; /* a padding request's: dropped */
  uint8_t t = target_of(state);
  if (b->buf[t] == NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "state '%s': TRITONBACKEND_StateBuffer was not called before "
                         "the update",
                         state->config->output_name);
  memcpy(b->shape[t], state->shape, state->dims_count * sizeof *state->shape);
  b->dims_count[t] = state->dims_count;
  b->cur = t; /* the next step reads what was written */
  return NULL;
}
