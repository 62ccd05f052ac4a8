/* Shared-memory RPC handlers (see shm_rpcs.h). */
#include "server/grpc/shm_rpcs.h"

#include <string.h>

#include "grpc_service.upb.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/core.h"

static srv_shm_t *shm_of(srv_call_t *call) { return srv_call_server(call)->shm; }

/* Ends the call with an empty reply of `type`, or with st. */
#define REPLY_EMPTY_OR_FAIL(call, st, type)                               \
  do {                                                                    \
    if ((st) != NULL)                                                     \
      srv_call_fail(call, st);                                            \
    else                                                                  \
      SRV_CALL_REPLY(call, type, type##_new(srv_call_arena(call)));       \
  } while (0)

/* ---- system shared memory ---- */

typedef struct {
  inference_SystemSharedMemoryStatusResponse *resp;
  upb_Arena *arena;
} system_status_t;

/* A region's string, copied into the call's arena: the reply outlives the
 * table's lock. */
static upb_StringView arena_copy(upb_Arena *a, const char *s) {
  size_t n = strlen(s);
  return upb_StringView_FromDataAndSize(srv_arena_copy(a, s, n + 1), n);
}

static void system_region_add(void *ctx, const srv_shm_info_t *info) {
  system_status_t *x = ctx;
  inference_SystemSharedMemoryStatusResponse_RegionStatus *r =
      inference_SystemSharedMemoryStatusResponse_RegionStatus_new(x->arena);
  if (r == NULL) SRV_FATAL("out of memory");
  upb_StringView name = arena_copy(x->arena, info->name);
  inference_SystemSharedMemoryStatusResponse_RegionStatus_set_name(r, name);
  inference_SystemSharedMemoryStatusResponse_RegionStatus_set_key(
      r, arena_copy(x->arena, info->key));
  inference_SystemSharedMemoryStatusResponse_RegionStatus_set_offset(r, info->offset);
  inference_SystemSharedMemoryStatusResponse_RegionStatus_set_byte_size(r, info->byte_size);
  if (!inference_SystemSharedMemoryStatusResponse_regions_set(x->resp, name, r, x->arena))
    SRV_FATAL("out of memory");
}

void srv_rpc_system_shm_status(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_SystemSharedMemoryStatusRequest,
                           "SystemSharedMemoryStatus", request, len);
  upb_Arena *a = srv_call_arena(call);
  system_status_t x = {.resp = inference_SystemSharedMemoryStatusResponse_new(a), .arena = a};
  if (x.resp == NULL) SRV_FATAL("out of memory");
  upb_StringView name = inference_SystemSharedMemoryStatusRequest_name(req);
  srv_status_t *st =
      srv_shm_status(shm_of(call), SRV_SHM_SYSTEM, name.data, name.size, system_region_add, &x);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  SRV_CALL_REPLY(call, inference_SystemSharedMemoryStatusResponse, x.resp);
}

void srv_rpc_system_shm_register(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_SystemSharedMemoryRegisterRequest,
                           "SystemSharedMemoryRegister", request, len);
  upb_StringView name = inference_SystemSharedMemoryRegisterRequest_name(req);
  upb_StringView key = inference_SystemSharedMemoryRegisterRequest_key(req);
  srv_status_t *st = srv_shm_register_system(
      shm_of(call), name.data, name.size, key.data, key.size,
      inference_SystemSharedMemoryRegisterRequest_offset(req),
      inference_SystemSharedMemoryRegisterRequest_byte_size(req));
  REPLY_EMPTY_OR_FAIL(call, st, inference_SystemSharedMemoryRegisterResponse);
}

void srv_rpc_system_shm_unregister(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_SystemSharedMemoryUnregisterRequest,
                           "SystemSharedMemoryUnregister", request, len);
  upb_StringView name = inference_SystemSharedMemoryUnregisterRequest_name(req);
  srv_status_t *st = srv_shm_unregister(shm_of(call), SRV_SHM_SYSTEM, name.data, name.size);
  REPLY_EMPTY_OR_FAIL(call, st, inference_SystemSharedMemoryUnregisterResponse);
}

/* ---- CUDA shared memory ---- */

typedef struct {
  inference_CudaSharedMemoryStatusResponse *resp;
  upb_Arena *arena;
} cuda_status_t;

static void cuda_region_add(void *ctx, const srv_shm_info_t *info) {
  cuda_status_t *x = ctx;
  inference_CudaSharedMemoryStatusResponse_RegionStatus *r =
      inference_CudaSharedMemoryStatusResponse_RegionStatus_new(x->arena);
  if (r == NULL) SRV_FATAL("out of memory");
  upb_StringView name = arena_copy(x->arena, info->name);
  inference_CudaSharedMemoryStatusResponse_RegionStatus_set_name(r, name);
  inference_CudaSharedMemoryStatusResponse_RegionStatus_set_device_id(
      r, (uint64_t)info->device_id);
  inference_CudaSharedMemoryStatusResponse_RegionStatus_set_byte_size(r, info->byte_size);
  if (!inference_CudaSharedMemoryStatusResponse_regions_set(x->resp, name, r, x->arena))
    SRV_FATAL("out of memory");
}

void srv_rpc_cuda_shm_status(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_CudaSharedMemoryStatusRequest,
                           "CudaSharedMemoryStatus", request, len);
  upb_Arena *a = srv_call_arena(call);
  cuda_status_t x = {.resp = inference_CudaSharedMemoryStatusResponse_new(a), .arena = a};
  if (x.resp == NULL) SRV_FATAL("out of memory");
  upb_StringView name = inference_CudaSharedMemoryStatusRequest_name(req);
  srv_status_t *st =
      srv_shm_status(shm_of(call), SRV_SHM_CUDA, name.data, name.size, cuda_region_add, &x);
  if (st != NULL) {
    srv_call_fail(call, st);
    return;
  }
  SRV_CALL_REPLY(call, inference_CudaSharedMemoryStatusResponse, x.resp);
}

void srv_rpc_cuda_shm_register(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_CudaSharedMemoryRegisterRequest,
                           "CudaSharedMemoryRegister", request, len);
  upb_StringView name = inference_CudaSharedMemoryRegisterRequest_name(req);
  upb_StringView handle = inference_CudaSharedMemoryRegisterRequest_raw_handle(req);
  srv_status_t *st = srv_shm_register_cuda(
      shm_of(call), name.data, name.size, handle.data, handle.size,
      inference_CudaSharedMemoryRegisterRequest_device_id(req),
      inference_CudaSharedMemoryRegisterRequest_byte_size(req));
  REPLY_EMPTY_OR_FAIL(call, st, inference_CudaSharedMemoryRegisterResponse);
}

void srv_rpc_cuda_shm_unregister(srv_call_t *call, const char *request, size_t len) {
  SRV_CALL_PARSE_OR_RETURN(req, call, inference_CudaSharedMemoryUnregisterRequest,
                           "CudaSharedMemoryUnregister", request, len);
  upb_StringView name = inference_CudaSharedMemoryUnregisterRequest_name(req);
  srv_status_t *st = srv_shm_unregister(shm_of(call), SRV_SHM_CUDA, name.data, name.size);
  REPLY_EMPTY_OR_FAIL(call, st, inference_CudaSharedMemoryUnregisterResponse);
}
