/* TRITONSERVER_BufferAttributes: where a buffer lives (memory type and id),
 * its size and its CUDA IPC handle. The struct is visible here so the server
 * can embed one (e.g. the object it passes to a response allocator's
 * buffer_attributes_fn) instead of allocating it. Not synchronised: one
 * thread uses an object at a time, as in Triton. */
#ifndef NEREID_SERVER_API_BUFFER_ATTRIBUTES_H
#define NEREID_SERVER_API_BUFFER_ATTRIBUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

/** Bytes of a cudaIpcMemHandle_t, the size Triton copies from the pointer it
 *  is given. */
#define API_CUDA_IPC_HANDLE_SIZE 64

struct TRITONSERVER_BufferAttributes {
  size_t byte_size;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  bool has_cuda_ipc_handle;
  /* A copy, as in Triton: the setter's handle may go away after the call. */
  unsigned char cuda_ipc_handle[API_CUDA_IPC_HANDLE_SIZE];
};

/** Sets the defaults of a new object: 0 bytes of CPU memory, id 0, no handle. */
void api_buffer_attributes_init(TRITONSERVER_BufferAttributes *attrs);

/** Describes one buffer in attrs: all four fields at once; the handle
 *  (API_CUDA_IPC_HANDLE_SIZE bytes, or NULL for none) is copied. */
void api_buffer_attributes_describe(TRITONSERVER_BufferAttributes *attrs, size_t byte_size,
                                    TRITONSERVER_MemoryType memory_type,
                                    int64_t memory_type_id, const void *cuda_ipc_handle);

#endif
