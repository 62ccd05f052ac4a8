/* The shared-memory extensions' RPCs (system and CUDA): register, status
 * and unregister, over the core's region table (server/shm). They run on
 * the call's actor; registering maps memory, which is quick for system
 * regions and, for CUDA ones, as quick as the driver opens the handle. */
#ifndef NEREID_SERVER_GRPC_SHM_RPCS_H
#define NEREID_SERVER_GRPC_SHM_RPCS_H

#include <stddef.h>

#include "server/grpc/call.h"

void srv_rpc_system_shm_status(srv_call_t *call, const char *request, size_t len);
void srv_rpc_system_shm_register(srv_call_t *call, const char *request, size_t len);
void srv_rpc_system_shm_unregister(srv_call_t *call, const char *request, size_t len);
void srv_rpc_cuda_shm_status(srv_call_t *call, const char *request, size_t len);
void srv_rpc_cuda_shm_register(srv_call_t *call, const char *request, size_t len);
void srv_rpc_cuda_shm_unregister(srv_call_t *call, const char *request, size_t len);

#endif
