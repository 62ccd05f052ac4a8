/* The table of gRPC methods that nereid registers: the 20 RPCs of
 * inference.GRPCInferenceService and grpc.health.v1.Health. Read-only data,
 * any thread. */
#ifndef NEREID_SERVER_GRPC_RPC_H
#define NEREID_SERVER_GRPC_RPC_H

#include <stddef.h>

typedef struct srv_call srv_call_t;

typedef enum {
  SRV_RPC_UNARY,
  SRV_RPC_SERVER_STREAM,
  SRV_RPC_BIDI_STREAM,
} srv_rpc_kind_t;

/* Runs on the call's actor with the request's serialized bytes (valid until
 * the call ends). Must end the call with srv_call_reply or srv_call_fail,
 * now or from a later message to the call. */
typedef void srv_unary_handler_fn(srv_call_t *call, const char *request, size_t len);

/* How calls of one method are served. */
typedef enum {
  SRV_SERVE_UNARY,        /* a unary call actor running `unary` */
  SRV_SERVE_HEALTH_WATCH, /* a health watch stream (server/health.c) */
  SRV_SERVE_STREAM_INFER, /* an inference stream (server/stream_rpc.c) */
} srv_serve_t;

typedef struct {
  const char *name; /* "ModelInfer" */
  const char *path; /* "/inference.GRPCInferenceService/ModelInfer" */
  srv_rpc_kind_t kind;
  srv_serve_t serve;
  srv_unary_handler_fn *unary; /* for SRV_SERVE_UNARY */
  unsigned preposted;          /* calls kept requested on each completion queue */
} srv_rpc_t;

extern const srv_rpc_t srv_rpcs[];
extern const size_t srv_rpc_count;

#endif
