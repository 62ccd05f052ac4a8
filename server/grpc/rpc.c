/* The method table (see rpc.h). Read-only data. */
#include "server/grpc/rpc.h"

#include "server/grpc/health.h"
#include "server/grpc/infer_rpc.h"
#include "server/grpc/model_rpcs.h"
#include "server/grpc/repository_rpcs.h"
#include "server/grpc/server_rpcs.h"
#include "server/grpc/shm_rpcs.h"

#define INFERENCE(m) "/inference.GRPCInferenceService/" m
#define HEALTH(m) "/grpc.health.v1.Health/" m

const srv_rpc_t srv_rpcs[] = {
    {"ServerLive", INFERENCE("ServerLive"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_server_live, 2},
    {"ServerReady", INFERENCE("ServerReady"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_server_ready, 2},
    {"ServerMetadata", INFERENCE("ServerMetadata"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_server_metadata, 2},
    {"ModelReady", INFERENCE("ModelReady"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_model_ready, 2},
    {"ModelMetadata", INFERENCE("ModelMetadata"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_model_metadata, 2},
    {"ModelInfer", INFERENCE("ModelInfer"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_model_infer, 32},
    {"ModelStreamInfer", INFERENCE("ModelStreamInfer"), SRV_RPC_BIDI_STREAM,
     SRV_SERVE_STREAM_INFER, NULL, 2},
    {"ModelConfig", INFERENCE("ModelConfig"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_model_config, 2},
    {"ModelStatistics", INFERENCE("ModelStatistics"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_model_statistics, 2},
    {"RepositoryIndex", INFERENCE("RepositoryIndex"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_repository_index, 2},
    {"RepositoryModelLoad", INFERENCE("RepositoryModelLoad"), SRV_RPC_UNARY,
     SRV_SERVE_UNARY, srv_rpc_repository_model_load, 2},
    {"RepositoryModelUnload", INFERENCE("RepositoryModelUnload"), SRV_RPC_UNARY,
     SRV_SERVE_UNARY, srv_rpc_repository_model_unload, 2},
    {"SystemSharedMemoryStatus", INFERENCE("SystemSharedMemoryStatus"), SRV_RPC_UNARY,
     SRV_SERVE_UNARY, srv_rpc_system_shm_status, 1},
    {"SystemSharedMemoryRegister", INFERENCE("SystemSharedMemoryRegister"), SRV_RPC_UNARY,
     SRV_SERVE_UNARY, srv_rpc_system_shm_register, 1},
    {"SystemSharedMemoryUnregister", INFERENCE("SystemSharedMemoryUnregister"),
     SRV_RPC_UNARY, SRV_SERVE_UNARY, srv_rpc_system_shm_unregister, 1},
    {"CudaSharedMemoryStatus", INFERENCE("CudaSharedMemoryStatus"), SRV_RPC_UNARY,
     SRV_SERVE_UNARY, srv_rpc_cuda_shm_status, 1},
    {"CudaSharedMemoryRegister", INFERENCE("CudaSharedMemoryRegister"), SRV_RPC_UNARY,
     SRV_SERVE_UNARY, srv_rpc_cuda_shm_register, 1},
    {"CudaSharedMemoryUnregister", INFERENCE("CudaSharedMemoryUnregister"), SRV_RPC_UNARY,
     SRV_SERVE_UNARY, srv_rpc_cuda_shm_unregister, 1},
    {"TraceSetting", INFERENCE("TraceSetting"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_trace_setting, 1},
    {"LogSettings", INFERENCE("LogSettings"), SRV_RPC_UNARY, SRV_SERVE_UNARY,
     srv_rpc_log_settings, 1},
    {"Check", HEALTH("Check"), SRV_RPC_UNARY, SRV_SERVE_UNARY, srv_health_check, 2},
    {"Watch", HEALTH("Watch"), SRV_RPC_SERVER_STREAM, SRV_SERVE_HEALTH_WATCH, NULL, 2},
};

const size_t srv_rpc_count = sizeof srv_rpcs / sizeof srv_rpcs[0];
