/* TRITONSERVER_BufferAttributes (see buffer_attributes.h). One thread per
 * object at a time; nothing here synchronises. */
#include "server/api/buffer_attributes.h"

#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/api/log.h"

void api_buffer_attributes_init(TRITONSERVER_BufferAttributes *attrs) {
  memset(attrs, 0, sizeof *attrs);
  attrs->memory_type = TRITONSERVER_MEMORY_CPU;
}

static void handle_set(TRITONSERVER_BufferAttributes *attrs, const void *handle) {
  attrs->has_cuda_ipc_handle = handle != NULL;
  if (handle != NULL) memcpy(attrs->cuda_ipc_handle, handle, API_CUDA_IPC_HANDLE_SIZE);
}

void api_buffer_attributes_describe(TRITONSERVER_BufferAttributes *attrs, size_t byte_size,
                                    TRITONSERVER_MemoryType memory_type,
                                    int64_t memory_type_id, const void *cuda_ipc_handle) {
  attrs->byte_size = byte_size;
  attrs->memory_type = memory_type;
  attrs->memory_type_id = memory_type_id;
  handle_set(attrs, cuda_ipc_handle);
}

/* Triton dereferences without checking; a NULL here is a caller bug that we
 * report instead of crashing on. */
static TRITONSERVER_Error *null_arg(const char *what) {
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s must not be NULL", what);
}

/* ---- Exported API --------------------------------------------------------- */

TRITONSERVER_Error *TRITONSERVER_BufferAttributesNew(
    TRITONSERVER_BufferAttributes **buffer_attributes) {
  if (buffer_attributes == NULL) return null_arg("buffer_attributes");
  TRITONSERVER_BufferAttributes *attrs = malloc(sizeof *attrs);
  if (attrs == NULL) API_FATAL("out of memory making buffer attributes");
  api_buffer_attributes_init(attrs);
  *buffer_attributes = attrs;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_BufferAttributesDelete(
    TRITONSERVER_BufferAttributes *buffer_attributes) {
  free(buffer_attributes);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_BufferAttributesSetMemoryTypeId(
    TRITONSERVER_BufferAttributes *buffer_attributes, int64_t memory_type_id) {
  if (buffer_attributes == NULL) return null_arg("buffer_attributes");
  buffer_attributes->memory_type_id = memory_type_id;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_BufferAttributesSetMemoryType(
    TRITONSERVER_BufferAttributes *buffer_attributes,
    TRITONSERVER_MemoryType memory_type) {
  if (buffer_attributes == NULL) return null_arg("buffer_attributes");
  buffer_attributes->memory_type = memory_type;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    TRITONSERVER_BufferAttributes *buffer_attributes, void *cuda_ipc_handle) {
  if (buffer_attributes == NULL) return null_arg("buffer_attributes");
  /* Triton copies the handle's 64 bytes, so the getter returns a pointer to
   * the copy; NULL (a crash in Triton) clears the handle. */
  handle_set(buffer_attributes, cuda_ipc_handle);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_BufferAttributesSetByteSize(
    TRITONSERVER_BufferAttributes *buffer_attributes, size_t byte_size) {
  if (buffer_attributes == NULL) return null_arg("buffer_attributes");
  buffer_attributes->byte_size = byte_size;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_BufferAttributesMemoryTypeId(
    TRITONSERVER_BufferAttributes *buffer_attributes, int64_t *memory_type_id) {
  if (buffer_attributes == NULL || memory_type_id == NULL) {
    return null_arg("buffer_attributes and memory_type_id");
  }
  *memory_type_id = buffer_attributes->memory_type_id;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_BufferAttributesMemoryType(
    TRITONSERVER_BufferAttributes *buffer_attributes,
    TRITONSERVER_MemoryType *memory_type) {
  if (buffer_attributes == NULL || memory_type == NULL) {
    return null_arg("buffer_attributes and memory_type");
  }
  *memory_type = buffer_attributes->memory_type;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_BufferAttributesCudaIpcHandle(
    TRITONSERVER_BufferAttributes *buffer_attributes, void **cuda_ipc_handle) {
  if (buffer_attributes == NULL || cuda_ipc_handle == NULL) {
    return null_arg("buffer_attributes and cuda_ipc_handle");
  }
  *cuda_ipc_handle =
      buffer_attributes->has_cuda_ipc_handle ? buffer_attributes->cuda_ipc_handle : NULL;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_BufferAttributesByteSize(
    TRITONSERVER_BufferAttributes *buffer_attributes, size_t *byte_size) {
  if (buffer_attributes == NULL || byte_size == NULL) {
    return null_arg("buffer_attributes and byte_size");
  }
  *byte_size = buffer_attributes->byte_size;
  return NULL;
}
