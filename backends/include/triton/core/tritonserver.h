/* Nereid's ABI-compatible declaration of the Triton server C API (TRITONSERVER,
 * API 1.34). Every name, signature, enum value and flag matches Triton's
 * tritonserver.h so code built against Triton compiles and links unchanged. */
#ifndef NEREID_TRITON_CORE_TRITONSERVER_H
#define NEREID_TRITON_CORE_TRITONSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TRITONSERVER_DECLSPEC marks what the server library provides. Nereid's
 * libtritonserver.so is built with _COMPILING_TRITONSERVER so these symbols
 * stay exported even under -fvisibility=hidden; users see plain declarations. */
#if defined(_COMPILING_TRITONSERVER)
#if defined(_MSC_VER)
#define TRITONSERVER_DECLSPEC __declspec(dllexport)
#elif defined(__GNUC__)
#define TRITONSERVER_DECLSPEC __attribute__((__visibility__("default")))
#else
#define TRITONSERVER_DECLSPEC
#endif
#else /* user of the API */
#if defined(_MSC_VER)
#define TRITONSERVER_DECLSPEC __declspec(dllimport)
#else
#define TRITONSERVER_DECLSPEC
#endif
#endif

/* Version of this API. A client built against MAJOR.MINOR runs on a server
 * whose TRITONSERVER_ApiVersion reports the same MAJOR and MINOR >= ours. */
#define TRITONSERVER_API_VERSION_MAJOR 1
#define TRITONSERVER_API_VERSION_MINOR 34

/* ---- Opaque objects ------------------------------------------------------
 * Only pointers cross the API. The typedefs let C code name them without the
 * 'struct' keyword, as Triton's C++ users already do; the types are the same. */
typedef struct TRITONSERVER_BufferAttributes TRITONSERVER_BufferAttributes;
typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONSERVER_InferenceRequest TRITONSERVER_InferenceRequest;
typedef struct TRITONSERVER_InferenceResponse TRITONSERVER_InferenceResponse;
typedef struct TRITONSERVER_InferenceTrace TRITONSERVER_InferenceTrace;
typedef struct TRITONSERVER_Message TRITONSERVER_Message;
typedef struct TRITONSERVER_Metrics TRITONSERVER_Metrics;
typedef struct TRITONSERVER_Parameter TRITONSERVER_Parameter;
typedef struct TRITONSERVER_ResponseAllocator TRITONSERVER_ResponseAllocator;
typedef struct TRITONSERVER_Server TRITONSERVER_Server;
typedef struct TRITONSERVER_ServerOptions TRITONSERVER_ServerOptions;
typedef struct TRITONSERVER_Metric TRITONSERVER_Metric;
typedef struct TRITONSERVER_MetricFamily TRITONSERVER_MetricFamily;
typedef struct TRITONSERVER_MetricArgs TRITONSERVER_MetricArgs;

/* ---- Error convention ----------------------------------------------------
 * Functions returning TRITONSERVER_Error* return NULL on success. A non-NULL
 * error belongs to the caller, who must release it with
 * TRITONSERVER_ErrorDelete (unless a function says it keeps ownership, e.g.
 * TRITONSERVER_InferenceResponseError). Strings returned through 'const
 * char**' out-parameters belong to the object they were read from and live as
 * long as it does; never free them. */

/* Writes the API version the running server implements. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ApiVersion(uint32_t *major,
                                                                  uint32_t *minor);

/* ---- Data types ---------------------------------------------------------- */

/* Tensor element types. */
typedef enum TRITONSERVER_datatype_enum {
  TRITONSERVER_TYPE_INVALID = 0,
  TRITONSERVER_TYPE_BOOL = 1,
  TRITONSERVER_TYPE_UINT8 = 2,
  TRITONSERVER_TYPE_UINT16 = 3,
  TRITONSERVER_TYPE_UINT32 = 4,
  TRITONSERVER_TYPE_UINT64 = 5,
  TRITONSERVER_TYPE_INT8 = 6,
  TRITONSERVER_TYPE_INT16 = 7,
  TRITONSERVER_TYPE_INT32 = 8,
  TRITONSERVER_TYPE_INT64 = 9,
  TRITONSERVER_TYPE_FP16 = 10,
  TRITONSERVER_TYPE_FP32 = 11,
  TRITONSERVER_TYPE_FP64 = 12,
  TRITONSERVER_TYPE_BYTES = 13,
  TRITONSERVER_TYPE_BF16 = 14
} TRITONSERVER_DataType;

/* Protocol name of a type ("INT32", "BYTES", ...). Static string, never freed. */
TRITONSERVER_DECLSPEC const char *TRITONSERVER_DataTypeString(
    TRITONSERVER_DataType datatype);

/* Inverse of TRITONSERVER_DataTypeString; TYPE_INVALID for unknown names. */
TRITONSERVER_DECLSPEC TRITONSERVER_DataType
TRITONSERVER_StringToDataType(const char *dtype);

/* Element size in bytes; 0 for BYTES (variable length) and INVALID. */
TRITONSERVER_DECLSPEC uint32_t
TRITONSERVER_DataTypeByteSize(TRITONSERVER_DataType datatype);

/* Where a buffer lives. Paired everywhere with an int64_t memory_type_id
 * (the GPU ordinal for GPU memory, 0 otherwise). */
typedef enum TRITONSERVER_memorytype_enum {
  TRITONSERVER_MEMORY_CPU = 0,
  TRITONSERVER_MEMORY_CPU_PINNED = 1,
  TRITONSERVER_MEMORY_GPU = 2
} TRITONSERVER_MemoryType;

/* Static name of a memory type, never freed. */
TRITONSERVER_DECLSPEC const char *TRITONSERVER_MemoryTypeString(
    TRITONSERVER_MemoryType memtype);

/* ---- Parameters ----------------------------------------------------------
 * Named, typed values: request/response parameters, metric labels, model-load
 * parameters. The 'const void*' value points to: char (NUL-terminated) for
 * STRING, int64_t for INT, bool for BOOL, double for DOUBLE, raw bytes for
 * BYTES. */
typedef enum TRITONSERVER_parametertype_enum {
  TRITONSERVER_PARAMETER_STRING = 0,
  TRITONSERVER_PARAMETER_INT = 1,
  TRITONSERVER_PARAMETER_BOOL = 2,
  TRITONSERVER_PARAMETER_DOUBLE = 3,
  TRITONSERVER_PARAMETER_BYTES = 4
} TRITONSERVER_ParameterType;

/* Static name of a parameter type, never freed. */
TRITONSERVER_DECLSPEC const char *TRITONSERVER_ParameterTypeString(
    TRITONSERVER_ParameterType paramtype);

/* New parameter holding its own copy of 'name' and '*value'. Returns NULL for
 * TYPE_BYTES (use TRITONSERVER_ParameterBytesNew). Caller owns the result and
 * frees it with TRITONSERVER_ParameterDelete. */
TRITONSERVER_DECLSPEC TRITONSERVER_Parameter *TRITONSERVER_ParameterNew(
    const char *name, const TRITONSERVER_ParameterType type, const void *value);

/* New BYTES parameter. Only the pointer is kept: 'byte_ptr' must stay valid
 * until the parameter is deleted. Caller owns the result. */
TRITONSERVER_DECLSPEC TRITONSERVER_Parameter *TRITONSERVER_ParameterBytesNew(
    const char *name, const void *byte_ptr, const uint64_t size);

/* Frees a parameter made by ParameterNew / ParameterBytesNew. */
TRITONSERVER_DECLSPEC void TRITONSERVER_ParameterDelete(
    TRITONSERVER_Parameter *parameter);

/* ---- Instance groups ----------------------------------------------------- */

/* Kind of a model instance (instance_group.kind in the model config). */
typedef enum TRITONSERVER_instancegroupkind_enum {
  TRITONSERVER_INSTANCEGROUPKIND_AUTO = 0,
  TRITONSERVER_INSTANCEGROUPKIND_CPU = 1,
  TRITONSERVER_INSTANCEGROUPKIND_GPU = 2,
  TRITONSERVER_INSTANCEGROUPKIND_MODEL = 3
} TRITONSERVER_InstanceGroupKind;

/* Static name of an instance-group kind, never freed. */
TRITONSERVER_DECLSPEC const char *TRITONSERVER_InstanceGroupKindString(
    TRITONSERVER_InstanceGroupKind kind);

/* ---- Logging ------------------------------------------------------------- */

typedef enum TRITONSERVER_loglevel_enum {
  TRITONSERVER_LOG_INFO = 0,
  TRITONSERVER_LOG_WARN = 1,
  TRITONSERVER_LOG_ERROR = 2,
  TRITONSERVER_LOG_VERBOSE = 3
} TRITONSERVER_LogLevel;

/* Line prefix style: DEFAULT is glog-like ("I0520 20:03:25.829575 ..."),
 * ISO8601 starts with "YYYY-MM-DDThh:mm:ssZ L". */
typedef enum TRITONSERVER_logformat_enum {
  TRITONSERVER_LOG_DEFAULT = 0,
  TRITONSERVER_LOG_ISO8601 = 1
} TRITONSERVER_LogFormat;

/* True when messages at 'level' would be written. Thread-safe. */
TRITONSERVER_DECLSPEC bool TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel level);

/* Writes 'msg' at 'level' (dropped if the level is off), tagged with the
 * caller's file and line. Thread-safe; the strings are only read. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_LogMessage(
    TRITONSERVER_LogLevel level, const char *filename, const int line, const char *msg);

/* ---- Errors -------------------------------------------------------------- */

typedef enum TRITONSERVER_errorcode_enum {
  TRITONSERVER_ERROR_UNKNOWN = 0,
  TRITONSERVER_ERROR_INTERNAL = 1,
  TRITONSERVER_ERROR_NOT_FOUND = 2,
  TRITONSERVER_ERROR_INVALID_ARG = 3,
  TRITONSERVER_ERROR_UNAVAILABLE = 4,
  TRITONSERVER_ERROR_UNSUPPORTED = 5,
  TRITONSERVER_ERROR_ALREADY_EXISTS = 6,
  TRITONSERVER_ERROR_CANCELLED = 7
} TRITONSERVER_Error_Code;

/* New error with a copy of 'msg'. Caller owns it (TRITONSERVER_ErrorDelete),
 * or hands it on to a call that takes ownership (e.g. responding with it). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ErrorNew(
    TRITONSERVER_Error_Code code, const char *msg);

/* Frees an error. */
TRITONSERVER_DECLSPEC void TRITONSERVER_ErrorDelete(TRITONSERVER_Error *error);

/* The error's code. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error_Code
TRITONSERVER_ErrorCode(TRITONSERVER_Error *error);

/* Name of the error's code; owned by 'error', valid until it is deleted. */
TRITONSERVER_DECLSPEC const char *TRITONSERVER_ErrorCodeString(TRITONSERVER_Error *error);

/* The error's message; owned by 'error', valid until it is deleted. */
TRITONSERVER_DECLSPEC const char *TRITONSERVER_ErrorMessage(TRITONSERVER_Error *error);

/* ---- Response allocator --------------------------------------------------
 * Supplies the buffers that output tensors are written into. Callbacks may
 * run on any server thread, concurrently for different requests; keep state
 * per request (the 'userp' given to
 * TRITONSERVER_InferenceRequestSetResponseCallback) to avoid locking.
 * Order per response: start_fn (optional, marks a new response of a
 * decoupled request), then query_fn/alloc_fn/buffer_attributes_fn once per
 * output; release_fn once per buffer when the response is deleted. */

/* Allocates 'byte_size' bytes for output 'tensor_name', preferably in
 * (memory_type, memory_type_id). Writes the buffer, an opaque per-buffer
 * 'buffer_userp' (returned later by release_fn and InferenceResponseOutput),
 * and where the memory really is. A returned error fails the output and the
 * other out-values are ignored. */
typedef TRITONSERVER_Error *(*TRITONSERVER_ResponseAllocatorAllocFn_t)(
    TRITONSERVER_ResponseAllocator *allocator, const char *tensor_name, size_t byte_size,
    TRITONSERVER_MemoryType memory_type, int64_t memory_type_id, void *userp,
    void **buffer, void **buffer_userp, TRITONSERVER_MemoryType *actual_memory_type,
    int64_t *actual_memory_type_id);

/* Optional; called right after alloc_fn to fill in attributes (e.g. a CUDA
 * IPC handle) of the buffer just allocated. 'buffer_attributes' stays owned by
 * the server. */
typedef TRITONSERVER_Error *(*TRITONSERVER_ResponseAllocatorBufferAttributesFn_t)(
    TRITONSERVER_ResponseAllocator *allocator, const char *tensor_name,
    TRITONSERVER_BufferAttributes *buffer_attributes, void *userp, void *buffer_userp);

/* Optional; asks where the allocator would place a buffer. 'tensor_name' and
 * 'byte_size' may be NULL when not yet known. memory_type / memory_type_id
 * carry the caller's preference in and the allocator's choice out; a hint
 * only, alloc_fn decides. */
typedef TRITONSERVER_Error *(*TRITONSERVER_ResponseAllocatorQueryFn_t)(
    TRITONSERVER_ResponseAllocator *allocator, void *userp, const char *tensor_name,
    size_t *byte_size, TRITONSERVER_MemoryType *memory_type, int64_t *memory_type_id);

/* The server holds no more references to 'buffer' (normally because its
 * response was deleted); the allocator frees it. Not retried on error. */
typedef TRITONSERVER_Error *(*TRITONSERVER_ResponseAllocatorReleaseFn_t)(
    TRITONSERVER_ResponseAllocator *allocator, void *buffer, void *buffer_userp,
    size_t byte_size, TRITONSERVER_MemoryType memory_type, int64_t memory_type_id);

/* Following alloc_fn calls belong to a new response. */
typedef TRITONSERVER_Error *(*TRITONSERVER_ResponseAllocatorStartFn_t)(
    TRITONSERVER_ResponseAllocator *allocator, void *userp);

/* New allocator; 'start_fn' may be NULL. Caller owns it and deletes it with
 * TRITONSERVER_ResponseAllocatorDelete once no request uses it. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ResponseAllocatorNew(
    TRITONSERVER_ResponseAllocator **allocator,
    TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn,
    TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn,
    TRITONSERVER_ResponseAllocatorStartFn_t start_fn);

/* Installs the optional buffer-attributes callback. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction(
    TRITONSERVER_ResponseAllocator *allocator,
    TRITONSERVER_ResponseAllocatorBufferAttributesFn_t buffer_attributes_fn);

/* Installs the optional placement-query callback. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ResponseAllocatorSetQueryFunction(
    TRITONSERVER_ResponseAllocator *allocator,
    TRITONSERVER_ResponseAllocatorQueryFn_t query_fn);

/* Frees an allocator. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ResponseAllocatorDelete(
    TRITONSERVER_ResponseAllocator *allocator);

/* ---- Messages (JSON documents) ------------------------------------------- */

/* New message from a copy of 'byte_size' bytes of JSON at 'base'. Caller owns
 * the message (TRITONSERVER_MessageDelete). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MessageNewFromSerializedJson(
    TRITONSERVER_Message **message, const char *base, size_t byte_size);

/* Frees a message. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MessageDelete(
    TRITONSERVER_Message *message);

/* The message as JSON text. The buffer belongs to 'message' and lives until
 * it is deleted; it is not NUL-terminated by contract, use 'byte_size'. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message *message, const char **base, size_t *byte_size);

/* ---- Server metrics snapshot --------------------------------------------- */

typedef enum tritonserver_metricformat_enum {
  TRITONSERVER_METRIC_PROMETHEUS = 0
} TRITONSERVER_MetricFormat;

/* Frees a metrics snapshot from TRITONSERVER_ServerMetrics. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricsDelete(
    TRITONSERVER_Metrics *metrics);

/* The snapshot rendered in 'format' (PROMETHEUS: one multi-line text). The
 * buffer belongs to 'metrics' and lives until it is deleted. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricsFormatted(
    TRITONSERVER_Metrics *metrics, TRITONSERVER_MetricFormat format, const char **base,
    size_t *byte_size);

/* ---- Inference tracing --------------------------------------------------- */

/* Trace level bits; may be OR-ed. MIN and MAX are deprecated aliases. */
typedef enum tritonserver_tracelevel_enum {
  TRITONSERVER_TRACE_LEVEL_DISABLED = 0,
  TRITONSERVER_TRACE_LEVEL_MIN = 1,
  TRITONSERVER_TRACE_LEVEL_MAX = 2,
  TRITONSERVER_TRACE_LEVEL_TIMESTAMPS = 0x4,
  TRITONSERVER_TRACE_LEVEL_TENSORS = 0x8
} TRITONSERVER_InferenceTraceLevel;

/* Static name of a trace level, never freed. */
TRITONSERVER_DECLSPEC const char *TRITONSERVER_InferenceTraceLevelString(
    TRITONSERVER_InferenceTraceLevel level);

/* Points in a request's life that a trace reports. */
typedef enum tritonserver_traceactivity_enum {
  TRITONSERVER_TRACE_REQUEST_START = 0,
  TRITONSERVER_TRACE_QUEUE_START = 1,
  TRITONSERVER_TRACE_COMPUTE_START = 2,
  TRITONSERVER_TRACE_COMPUTE_INPUT_END = 3,
  TRITONSERVER_TRACE_COMPUTE_OUTPUT_START = 4,
  TRITONSERVER_TRACE_COMPUTE_END = 5,
  TRITONSERVER_TRACE_REQUEST_END = 6,
  TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT = 7,
  TRITONSERVER_TRACE_TENSOR_BACKEND_INPUT = 8,
  TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT = 9,
  TRITONSERVER_TRACE_CUSTOM_ACTIVITY = 10
} TRITONSERVER_InferenceTraceActivity;

/* Static name of a trace activity, never freed. */
TRITONSERVER_DECLSPEC const char *TRITONSERVER_InferenceTraceActivityString(
    TRITONSERVER_InferenceTraceActivity activity);

/* Reports a timestamped activity of 'trace' or of one of its children. The
 * trace is only borrowed for the call: copy what you need. */
typedef void (*TRITONSERVER_InferenceTraceActivityFn_t)(
    TRITONSERVER_InferenceTrace *trace, TRITONSERVER_InferenceTraceActivity activity,
    uint64_t timestamp_ns, void *userp);

/* Reports a tensor seen by the trace. All pointers are borrowed for the call
 * only. */
typedef void (*TRITONSERVER_InferenceTraceTensorActivityFn_t)(
    TRITONSERVER_InferenceTrace *trace, TRITONSERVER_InferenceTraceActivity activity,
    const char *name, TRITONSERVER_DataType datatype, const void *base, size_t byte_size,
    const int64_t *shape, uint64_t dim_count, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, void *userp);

/* All activity of 'trace' is over; ownership of 'trace' passes to the
 * callback, which normally deletes it. */
typedef void (*TRITONSERVER_InferenceTraceReleaseFn_t)(TRITONSERVER_InferenceTrace *trace,
                                                       void *userp);

/* New trace (parent_id 0 = no parent). The callbacks serve this trace and
 * every child spawned from it. Caller owns the trace until it hands it to
 * TRITONSERVER_ServerInferAsync, which takes it unconditionally. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceNew(
    TRITONSERVER_InferenceTrace **trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void *trace_userp);

/* As TRITONSERVER_InferenceTraceNew, with a tensor-activity callback too. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceTensorNew(
    TRITONSERVER_InferenceTrace **trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceTensorActivityFn_t tensor_activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void *trace_userp);

/* Records a named custom activity (reported as TRACE_CUSTOM_ACTIVITY). The
 * name is copied. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceReportActivity(
    TRITONSERVER_InferenceTrace *trace, uint64_t timestamp, const char *activity_name);

/* Frees a trace the caller owns. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceDelete(
    TRITONSERVER_InferenceTrace *trace);

/* The trace's id, unique within this server. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceId(
    TRITONSERVER_InferenceTrace *trace, uint64_t *id);

/* The parent trace's id, 0 when there is none. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceParentId(
    TRITONSERVER_InferenceTrace *trace, uint64_t *parent_id);

/* Name of the traced model; owned by 'trace'. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceModelName(
    TRITONSERVER_InferenceTrace *trace, const char **model_name);

/* Version of the traced model. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceModelVersion(
    TRITONSERVER_InferenceTrace *trace, int64_t *model_version);

/* Id of the traced request; owned by 'trace'. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceRequestId(
    TRITONSERVER_InferenceTrace *trace, const char **request_id);

/* New child of 'trace' (shares its callbacks). Caller owns the child, as for
 * TRITONSERVER_InferenceTraceNew. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceSpawnChildTrace(
    TRITONSERVER_InferenceTrace *trace, TRITONSERVER_InferenceTrace **child_trace);

/* Attaches a propagation context string (e.g. OpenTelemetry); copied. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceSetContext(
    TRITONSERVER_InferenceTrace *trace, const char *trace_context);

/* The trace's context string; owned by 'trace'. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceTraceContext(
    TRITONSERVER_InferenceTrace *trace, const char **trace_context);

/* ---- Inference requests -------------------------------------------------- */

/* Request flags (bit values, OR-ed). */
typedef enum tritonserver_requestflag_enum {
  TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1,
  TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
} TRITONSERVER_RequestFlag;

/* How a request is released (bit values). RELEASE_ALL hands the request back
 * to its owner; RESCHEDULE is used by a backend to send it back to the model
 * and is never seen by a release callback. */
typedef enum tritonserver_requestreleaseflag_enum {
  TRITONSERVER_REQUEST_RELEASE_ALL = 1,
  TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2
} TRITONSERVER_RequestReleaseFlag;

/* Response flags (bit values). FINAL: no more responses for this request. */
typedef enum tritonserver_responsecompleteflag_enum {
  TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
} TRITONSERVER_ResponseCompleteFlag;

/* The server is done with 'request'. With RELEASE_ALL in 'flags' ownership of
 * the request and of every input buffer it referenced returns to the
 * callback, which may then reuse or delete them. Check the flag before taking
 * ownership. */
typedef void (*TRITONSERVER_InferenceRequestReleaseFn_t)(
    TRITONSERVER_InferenceRequest *request, const uint32_t flags, void *userp);

/* Delivers one response; the callback owns 'response' and deletes it with
 * TRITONSERVER_InferenceResponseDelete. With RESPONSE_COMPLETE_FINAL set this
 * is the last call for the request, and 'response' may be NULL (flags only).
 * After FINAL the server no longer touches the allocator or response userp. */
typedef void (*TRITONSERVER_InferenceResponseCompleteFn_t)(
    TRITONSERVER_InferenceResponse *response, const uint32_t flags, void *userp);

/* New request for 'model_name' at 'model_version' (-1: the version policy
 * chooses). Caller owns it; delete only while it is not in flight. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestNew(
    TRITONSERVER_InferenceRequest **inference_request, TRITONSERVER_Server *server,
    const char *model_name, const int64_t model_version);

/* Frees a request the caller owns (never one still in flight). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestDelete(
    TRITONSERVER_InferenceRequest *inference_request);

/* The request id; owned by the request. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestId(
    TRITONSERVER_InferenceRequest *inference_request, const char **id);

/* Sets the request id (copied). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetId(
    TRITONSERVER_InferenceRequest *inference_request, const char *id);

/* The request's TRITONSERVER_RequestFlag bits. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestFlags(
    TRITONSERVER_InferenceRequest *inference_request, uint32_t *flags);

/* Replaces the request's TRITONSERVER_RequestFlag bits. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetFlags(
    TRITONSERVER_InferenceRequest *inference_request, uint32_t flags);

/* Numeric sequence (correlation) id, 0 = none. Fails if the id is a string. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestCorrelationId(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t *correlation_id);

/* String sequence id, "" = none; owned by the request. Fails if the id is
 * numeric. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceRequestCorrelationIdString(
    TRITONSERVER_InferenceRequest *inference_request, const char **correlation_id);

/* Sets a numeric sequence id. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetCorrelationId(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t correlation_id);

/* Sets a string sequence id (copied). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceRequestSetCorrelationIdString(
    TRITONSERVER_InferenceRequest *inference_request, const char *correlation_id);

/* Asks, best effort, that an in-flight request stop early. The flag is reset
 * when the request is (re)submitted, so cancelling before
 * TRITONSERVER_ServerInferAsync has no effect. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestCancel(
    TRITONSERVER_InferenceRequest *inference_request);

/* Whether the request has been cancelled. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestIsCancelled(
    TRITONSERVER_InferenceRequest *inference_request, bool *is_cancelled);

/* Deprecated 32-bit form of TRITONSERVER_InferenceRequestPriorityUInt64. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestPriority(
    TRITONSERVER_InferenceRequest *inference_request, uint32_t *priority);

/* Priority level; 0 = the model's default. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestPriorityUInt64(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t *priority);

/* Deprecated 32-bit form of TRITONSERVER_InferenceRequestSetPriorityUInt64. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetPriority(
    TRITONSERVER_InferenceRequest *inference_request, uint32_t priority);

/* Sets the priority level; 0 = the model's default. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetPriorityUInt64(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t priority);

/* Timeout in microseconds; 0 = none. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceRequestTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t *timeout_us);

/* Sets the timeout in microseconds; 0 = none. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest *inference_request, uint64_t timeout_us);

/* Declares input 'name' with its type and shape (copied); data is attached
 * with the AppendInputData calls. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestAddInput(
    TRITONSERVER_InferenceRequest *inference_request, const char *name,
    const TRITONSERVER_DataType datatype, const int64_t *shape, uint64_t dim_count);

/* Declares the request's single raw input; name, type and shape come from the
 * model config and 'name' is only a handle for the other calls. Must be the
 * only input. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestAddRawInput(
    TRITONSERVER_InferenceRequest *inference_request, const char *name);

/* Removes an input and drops its data references. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestRemoveInput(
    TRITONSERVER_InferenceRequest *inference_request, const char *name);

/* Removes every input. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestRemoveAllInputs(
    TRITONSERVER_InferenceRequest *inference_request);

/* Appends a data buffer to input 'name'. The buffer is referenced, not
 * copied: the caller keeps it alive and unchanged until the request is
 * released (release callback) or the input/data is removed. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestAppendInputData(
    TRITONSERVER_InferenceRequest *inference_request, const char *name, const void *base,
    size_t byte_size, TRITONSERVER_MemoryType memory_type, int64_t memory_type_id);

/* As AppendInputData, but only for instances running under host policy
 * 'host_policy_name'; others use the data from AppendInputData, which must
 * also be given. Same lifetime rule. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
    TRITONSERVER_InferenceRequest *inference_request, const char *name, const void *base,
    size_t byte_size, TRITONSERVER_MemoryType memory_type, int64_t memory_type_id,
    const char *host_policy_name);

/* As AppendInputData, with size and placement taken from
 * 'buffer_attributes' (read during the call; the caller keeps ownership of
 * the attributes object). Same lifetime rule for 'base'. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
    TRITONSERVER_InferenceRequest *inference_request, const char *name, const void *base,
    TRITONSERVER_BufferAttributes *buffer_attributes);

/* Drops every data buffer of input 'name', ending the request's references to
 * them. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestRemoveAllInputData(
    TRITONSERVER_InferenceRequest *inference_request, const char *name);

/* Asks for output 'name' (copied). With none requested, all are returned. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestAddRequestedOutput(
    TRITONSERVER_InferenceRequest *inference_request, const char *name);

/* Withdraws a requested output. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceRequestRemoveRequestedOutput(
    TRITONSERVER_InferenceRequest *inference_request, const char *name);

/* Withdraws every requested output. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(
    TRITONSERVER_InferenceRequest *inference_request);

/* Sets the callback through which the server returns the request. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetReleaseCallback(
    TRITONSERVER_InferenceRequest *inference_request,
    TRITONSERVER_InferenceRequestReleaseFn_t request_release_fn,
    void *request_release_userp);

/* Sets the allocator for output buffers and the callback that receives
 * responses. The allocator stays owned by the caller and must outlive the
 * request's final response. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceRequestSetResponseCallback(
    TRITONSERVER_InferenceRequest *inference_request,
    TRITONSERVER_ResponseAllocator *response_allocator, void *response_allocator_userp,
    TRITONSERVER_InferenceResponseCompleteFn_t response_fn, void *response_userp);

/* Adds a request parameter; key and value are copied. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetStringParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const char *value);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetIntParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const int64_t value);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetBoolParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const bool value);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceRequestSetDoubleParameter(
    TRITONSERVER_InferenceRequest *request, const char *key, const double value);

/* ---- Inference responses -------------------------------------------------
 * Everything read from a response (names, shapes, data, labels, parameter
 * values) belongs to it and stays valid until it is deleted. */

/* Frees a response; output buffers go back through the allocator's
 * release_fn. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceResponseDelete(
    TRITONSERVER_InferenceResponse *inference_response);

/* NULL if the response succeeded, else its error. The error is owned by the
 * response: do NOT delete it. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceResponseError(
    TRITONSERVER_InferenceResponse *inference_response);

/* Name and version of the model that produced the response. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceResponseModel(
    TRITONSERVER_InferenceResponse *inference_response, const char **model_name,
    int64_t *model_version);

/* Id of the request this response answers. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceResponseId(
    TRITONSERVER_InferenceResponse *inference_response, const char **request_id);

/* Number of response parameters. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceResponseParameterCount(
    TRITONSERVER_InferenceResponse *inference_response, uint32_t *count);

/* Parameter 'index' (< count); cast 'vvalue' by 'type' as described under
 * Parameters above. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceResponseParameter(
    TRITONSERVER_InferenceResponse *inference_response, const uint32_t index,
    const char **name, TRITONSERVER_ParameterType *type, const void **vvalue);

/* Number of output tensors. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceResponseOutputCount(
    TRITONSERVER_InferenceResponse *inference_response, uint32_t *count);

/* Output 'index' (< count): name, type, shape, data and where it lives, plus
 * the 'buffer_userp' the allocator attached to its buffer. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_InferenceResponseOutput(
    TRITONSERVER_InferenceResponse *inference_response, const uint32_t index,
    const char **name, TRITONSERVER_DataType *datatype, const int64_t **shape,
    uint64_t *dim_count, const void **base, size_t *byte_size,
    TRITONSERVER_MemoryType *memory_type, int64_t *memory_type_id, void **userp);

/* Classification label for 'class_index' of output 'index'; NULL if none. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_InferenceResponseOutputClassificationLabel(
    TRITONSERVER_InferenceResponse *inference_response, const uint32_t index,
    const size_t class_index, const char **label);

/* ---- Buffer attributes ---------------------------------------------------
 * Describes one buffer: memory type and id, byte size, CUDA IPC handle. */

/* New attributes object; caller owns it (TRITONSERVER_BufferAttributesDelete). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesNew(
    TRITONSERVER_BufferAttributes **buffer_attributes);

/* Frees an attributes object the caller owns. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesDelete(
    TRITONSERVER_BufferAttributes *buffer_attributes);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesSetMemoryTypeId(
    TRITONSERVER_BufferAttributes *buffer_attributes, int64_t memory_type_id);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesSetMemoryType(
    TRITONSERVER_BufferAttributes *buffer_attributes,
    TRITONSERVER_MemoryType memory_type);

/* Stores the handle pointer as given (not the handle's bytes). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    TRITONSERVER_BufferAttributes *buffer_attributes, void *cuda_ipc_handle);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesSetByteSize(
    TRITONSERVER_BufferAttributes *buffer_attributes, size_t byte_size);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesMemoryTypeId(
    TRITONSERVER_BufferAttributes *buffer_attributes, int64_t *memory_type_id);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesMemoryType(
    TRITONSERVER_BufferAttributes *buffer_attributes,
    TRITONSERVER_MemoryType *memory_type);

/* The stored CUDA IPC handle pointer, NULL if none. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesCudaIpcHandle(
    TRITONSERVER_BufferAttributes *buffer_attributes, void **cuda_ipc_handle);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_BufferAttributesByteSize(
    TRITONSERVER_BufferAttributes *buffer_attributes, size_t *byte_size);

/* ---- Server options ------------------------------------------------------
 * Settings gathered before TRITONSERVER_ServerNew. String arguments are
 * copied. */

/* NONE: load the repositories at start, ignore later changes. POLL: load at
 * start, apply changes on TRITONSERVER_ServerPollModelRepository. EXPLICIT:
 * load nothing at start except startup models; load/unload on request. */
typedef enum tritonserver_modelcontrolmode_enum {
  TRITONSERVER_MODEL_CONTROL_NONE = 0,
  TRITONSERVER_MODEL_CONTROL_POLL = 1,
  TRITONSERVER_MODEL_CONTROL_EXPLICIT = 2
} TRITONSERVER_ModelControlMode;

/* OFF: run whenever an instance is free. EXEC_COUNT: prioritise by execution
 * count, subject to the instances' resource constraints. */
typedef enum tritonserver_ratelimitmode_enum {
  TRITONSERVER_RATE_LIMIT_OFF = 0,
  TRITONSERVER_RATE_LIMIT_EXEC_COUNT = 1
} TRITONSERVER_RateLimitMode;

/* New options object; caller owns it (TRITONSERVER_ServerOptionsDelete). It
 * may be deleted once TRITONSERVER_ServerNew returns. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsNew(
    TRITONSERVER_ServerOptions **options);

/* Frees an options object. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsDelete(
    TRITONSERVER_ServerOptions *options);

/* Server id reported in server metadata. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetServerId(
    TRITONSERVER_ServerOptions *options, const char *server_id);

/* Adds an absolute model repository path; may be called repeatedly. A model
 * name found in more than one repository is unavailable. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetModelRepositoryPath(TRITONSERVER_ServerOptions *options,
                                                 const char *model_repository_path);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelControlMode(
    TRITONSERVER_ServerOptions *options, TRITONSERVER_ModelControlMode mode);

/* Adds a model to load at start ("*" = all); EXPLICIT mode only. May be
 * called repeatedly. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetStartupModel(
    TRITONSERVER_ServerOptions *options, const char *model_name);

/* Strict model config: when true, no auto-completion of missing fields. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetStrictModelConfig(
    TRITONSERVER_ServerOptions *options, bool strict);

/* Config file name to look for in every model directory instead of
 * config.pbtxt (falls back to config.pbtxt when empty or absent). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelConfigName(
    TRITONSERVER_ServerOptions *options, const char *model_config_name);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetRateLimiterMode(
    TRITONSERVER_ServerOptions *options, TRITONSERVER_RateLimitMode mode);

/* Declares 'resource_count' units of rate-limiter resource 'resource_name' on
 * 'device' (-1: on every device; ignored for global resources). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsAddRateLimiterResource(TRITONSERVER_ServerOptions *options,
                                                 const char *resource_name,
                                                 const size_t resource_count,
                                                 const int device);

/* Size of the pinned host memory pool shared with backends. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize(TRITONSERVER_ServerOptions *options,
                                                      uint64_t size);

/* Size of the CUDA memory pool on 'gpu_device'. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(TRITONSERVER_ServerOptions *options,
                                                    int gpu_device, uint64_t size);

/* Virtual address space reserved on 'gpu_device' for growable implicit
 * state buffers. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize(TRITONSERVER_ServerOptions *options,
                                                    int gpu_device,
                                                    size_t cuda_virtual_address_size);

/* Deprecated: use TRITONSERVER_ServerOptionsSetCacheConfig. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetResponseCacheByteSize(TRITONSERVER_ServerOptions *options,
                                                   uint64_t size);

/* JSON configuration for response cache implementation 'cache_name', found
 * at <cache dir>/<cache_name>/libtritoncache_<cache_name>.so. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheConfig(
    TRITONSERVER_ServerOptions *options, const char *cache_name, const char *config_json);

/* Directory searched for cache implementations. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheDirectory(
    TRITONSERVER_ServerOptions *options, const char *cache_dir);

/* Lowest CUDA compute capability a GPU must have to be used. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(
    TRITONSERVER_ServerOptions *options, double cc);

/* Whether a start-up error (e.g. a model failing to load) aborts ServerNew. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetExitOnError(
    TRITONSERVER_ServerOptions *options, bool exit);

/* Strict readiness: the server is ready only when every model is. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetStrictReadiness(
    TRITONSERVER_ServerOptions *options, bool strict);

/* Seconds to wait for in-flight work at shutdown. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetExitTimeout(
    TRITONSERVER_ServerOptions *options, unsigned int timeout);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetBufferManagerThreadCount(TRITONSERVER_ServerOptions *options,
                                                      unsigned int thread_count);

/* Number of models loaded in parallel. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetModelLoadThreadCount(TRITONSERVER_ServerOptions *options,
                                                  unsigned int thread_count);

/* Extra attempts made when a model fails to load. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetModelLoadRetryCount(TRITONSERVER_ServerOptions *options,
                                                 unsigned int retry_count);

/* Allows equal model names in different repositories (namespaces). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetModelNamespacing(
    TRITONSERVER_ServerOptions *options, bool enable_namespace);

/* Try to enable GPU peer-to-peer access (best effort). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetEnablePeerAccess(
    TRITONSERVER_ServerOptions *options, bool enable_peer_access);

/* Log to 'file'; "" logs to the console. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogFile(
    TRITONSERVER_ServerOptions *options, const char *file);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogInfo(
    TRITONSERVER_ServerOptions *options, bool log);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogWarn(
    TRITONSERVER_ServerOptions *options, bool log);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogError(
    TRITONSERVER_ServerOptions *options, bool log);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogFormat(
    TRITONSERVER_ServerOptions *options, const TRITONSERVER_LogFormat format);

/* Verbose log level; 0 turns verbose logging off. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetLogVerbose(
    TRITONSERVER_ServerOptions *options, int level);

/* Master switch for metrics collection. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMetrics(
    TRITONSERVER_ServerOptions *options, bool metrics);

/* GPU metrics (only when metrics are on). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetGpuMetrics(
    TRITONSERVER_ServerOptions *options, bool gpu_metrics);

/* CPU metrics (only when metrics are on). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCpuMetrics(
    TRITONSERVER_ServerOptions *options, bool cpu_metrics);

/* Milliseconds between metric refreshes (default 2000). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMetricsInterval(
    TRITONSERVER_ServerOptions *options, uint64_t metrics_interval_ms);

/* Global backend directory, searched last: <backend_dir>/<B>/libtriton_<B>.so. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetBackendDirectory(
    TRITONSERVER_ServerOptions *options, const char *backend_dir);

/* Repository-agent directory: <repoagent_dir>/<A>/libtritonrepoagent_<A>.so. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetRepoAgentDirectory(
    TRITONSERVER_ServerOptions *options, const char *repoagent_dir);

/* Refuse model loads on device (kind, device_id) while its memory use is
 * above 'fraction'. Only KIND_GPU is meaningful. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit(
    TRITONSERVER_ServerOptions *options, const TRITONSERVER_InstanceGroupKind kind,
    const int device_id, const double fraction);

/* Setting passed to backend 'backend_name' (seen in TRITONBACKEND_BackendConfig
 * under "cmdline"). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetBackendConfig(
    TRITONSERVER_ServerOptions *options, const char *backend_name, const char *setting,
    const char *value);

/* Setting of host policy 'policy_name'. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetHostPolicy(
    TRITONSERVER_ServerOptions *options, const char *policy_name, const char *setting,
    const char *value);

/* Metrics setting in group 'name' ("" = global). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetMetricsConfig(
    TRITONSERVER_ServerOptions *options, const char *name, const char *setting,
    const char *value);

/* ---- Server -------------------------------------------------------------- */

/* Batch properties of a model (bit values). */
typedef enum tritonserver_batchflag_enum {
  TRITONSERVER_BATCH_UNKNOWN = 1,
  TRITONSERVER_BATCH_FIRST_DIM = 2
} TRITONSERVER_ModelBatchFlag;

/* TRITONSERVER_ServerModelIndex filter bits. */
typedef enum tritonserver_modelindexflag_enum {
  TRITONSERVER_INDEX_FLAG_READY = 1
} TRITONSERVER_ModelIndexFlag;

/* Transaction policy of a model (bit values): one response per request, or
 * any number (decoupled). */
typedef enum tritonserver_txn_property_flag_enum {
  TRITONSERVER_TXN_ONE_TO_ONE = 1,
  TRITONSERVER_TXN_DECOUPLED = 2
} TRITONSERVER_ModelTxnPropertyFlag;

/* Creates and starts a server. Caller owns it (TRITONSERVER_ServerDelete);
 * 'options' stays owned by the caller. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerNew(
    TRITONSERVER_Server **server, TRITONSERVER_ServerOptions *options);

/* Stops the server if needed and frees it. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerDelete(
    TRITONSERVER_Server *server);

/* Stops the server for good (no restart). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerStop(
    TRITONSERVER_Server *server);

/* Changes the shutdown wait, in seconds, of a running server. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerSetExitTimeout(
    TRITONSERVER_Server *server, unsigned int timeout);

/* Adds a model repository at run time (not in POLL mode). 'name_mapping'
 * holds 'mapping_count' STRING parameters: directory name -> model name. The
 * parameters stay owned by the caller. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerRegisterModelRepository(
    TRITONSERVER_Server *server, const char *repository_path,
    const TRITONSERVER_Parameter **name_mapping, const uint32_t mapping_count);

/* Removes a repository added at run time (not in POLL mode). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerUnregisterModelRepository(
    TRITONSERVER_Server *server, const char *repository_path);

/* Rescans the repositories and applies changes (POLL mode). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerPollModelRepository(
    TRITONSERVER_Server *server);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerIsLive(
    TRITONSERVER_Server *server, bool *live);

TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerIsReady(
    TRITONSERVER_Server *server, bool *ready);

/* Whether a model version (-1: by policy) can serve requests. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerModelIsReady(
    TRITONSERVER_Server *server, const char *model_name, const int64_t model_version,
    bool *ready);

/* TRITONSERVER_ModelBatchFlag bits of a model; '*voidp' (if non-NULL) gets
 * flag-specific data, NULL for the flags defined today. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerModelBatchProperties(
    TRITONSERVER_Server *server, const char *model_name, const int64_t model_version,
    uint32_t *flags, void **voidp);

/* TRITONSERVER_ModelTxnPropertyFlag bits of a model; '*voidp' as above. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerModelTransactionProperties(
    TRITONSERVER_Server *server, const char *model_name, const int64_t model_version,
    uint32_t *txn_flags, void **voidp);

/* Server metadata as JSON; caller owns the message. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerMetadata(
    TRITONSERVER_Server *server, TRITONSERVER_Message **server_metadata);

/* Model metadata as JSON; caller owns the message. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerModelMetadata(
    TRITONSERVER_Server *server, const char *model_name, const int64_t model_version,
    TRITONSERVER_Message **model_metadata);

/* Statistics as JSON; "" = every model. Caller owns the message. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerModelStatistics(
    TRITONSERVER_Server *server, const char *model_name, const int64_t model_version,
    TRITONSERVER_Message **model_stats);

/* Model configuration as JSON in format 'config_version' (only 1 exists).
 * Caller owns the message. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerModelConfig(
    TRITONSERVER_Server *server, const char *model_name, const int64_t model_version,
    const uint32_t config_version, TRITONSERVER_Message **model_config);

/* Index of the repositories' models as JSON (INDEX_FLAG_READY: ready models
 * only). Caller owns the message. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerModelIndex(
    TRITONSERVER_Server *server, uint32_t flags, TRITONSERVER_Message **model_index);

/* Loads or reloads a model; returns once it is loaded or has failed. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerLoadModel(
    TRITONSERVER_Server *server, const char *model_name);

/* As ServerLoadModel with parameters: "config" (STRING, JSON model config
 * override) and "file:<path>" (BYTES, file content override). The parameters
 * stay owned by the caller. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerLoadModelWithParameters(
    TRITONSERVER_Server *server, const char *model_name,
    const TRITONSERVER_Parameter **parameters, const uint64_t parameter_count);

/* Starts unloading a model and returns without waiting; succeeds if the model
 * is not loaded. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerUnloadModel(
    TRITONSERVER_Server *server, const char *model_name);

/* As ServerUnloadModel, also unloading models loaded because of it (e.g. an
 * ensemble's steps). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerUnloadModelAndDependents(
    TRITONSERVER_Server *server, const char *model_name);

/* Snapshot of the server's metrics; caller owns it (TRITONSERVER_MetricsDelete). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerMetrics(
    TRITONSERVER_Server *server, TRITONSERVER_Metrics **metrics);

/* Submits a request. On success the request belongs to the server until its
 * release callback runs; responses arrive through the response callback.
 * 'trace' (may be NULL) is taken by the server even on failure and comes back
 * through the trace's release callback. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_ServerInferAsync(
    TRITONSERVER_Server *server, TRITONSERVER_InferenceRequest *inference_request,
    TRITONSERVER_InferenceTrace *trace);

/* ---- Custom metrics ------------------------------------------------------
 * Families and metrics made by backends or embedders, exported with the
 * server's own. Delete every metric before its family. */

typedef enum TRITONSERVER_metrickind_enum {
  TRITONSERVER_METRIC_KIND_COUNTER = 0,
  TRITONSERVER_METRIC_KIND_GAUGE = 1,
  TRITONSERVER_METRIC_KIND_HISTOGRAM = 2
} TRITONSERVER_MetricKind;

/* New metric family; caller owns it (TRITONSERVER_MetricFamilyDelete). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricFamilyNew(
    TRITONSERVER_MetricFamily **family, const TRITONSERVER_MetricKind kind,
    const char *name, const char *description);

/* Frees a family; fails while metrics of the family still exist. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricFamilyDelete(
    TRITONSERVER_MetricFamily *family);

/* Kind of a family. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_GetMetricFamilyKind(
    TRITONSERVER_MetricFamily *family, TRITONSERVER_MetricKind *kind);

/* New metric-arguments object; caller owns it (TRITONSERVER_MetricArgsDelete)
 * and may delete it right after creating the metric. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricArgsNew(
    TRITONSERVER_MetricArgs **args);

/* Makes 'args' describe a histogram with these bucket bounds (copied). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricArgsSetHistogram(
    TRITONSERVER_MetricArgs *args, const double *buckets, const uint64_t buckets_count);

/* Frees a metric-arguments object. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricArgsDelete(
    TRITONSERVER_MetricArgs *args);

/* New metric in 'family' with labels (STRING parameters, copied: the caller
 * keeps and may delete them at once). Caller owns the metric
 * (TRITONSERVER_MetricDelete). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricNew(
    TRITONSERVER_Metric **metric, TRITONSERVER_MetricFamily *family,
    const TRITONSERVER_Parameter **labels, const uint64_t label_count);

/* As TRITONSERVER_MetricNew with kind-specific arguments (histogram buckets);
 * 'args' is read only during the call. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricNewWithArgs(
    TRITONSERVER_Metric **metric, TRITONSERVER_MetricFamily *family,
    const TRITONSERVER_Parameter **labels, const uint64_t label_count,
    const TRITONSERVER_MetricArgs *args);

/* Frees a metric (before its family). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricDelete(
    TRITONSERVER_Metric *metric);

/* Current value (COUNTER and GAUGE; UNSUPPORTED otherwise). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricValue(
    TRITONSERVER_Metric *metric, double *value);

/* Adds 'value' (GAUGE: any; COUNTER: non-negative, else INVALID_ARG). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricIncrement(
    TRITONSERVER_Metric *metric, double value);

/* Sets the value (GAUGE only). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricSet(
    TRITONSERVER_Metric *metric, double value);

/* Records one observation (HISTOGRAM only). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_MetricObserve(
    TRITONSERVER_Metric *metric, double value);

/* Kind of a metric's family. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONSERVER_GetMetricKind(
    TRITONSERVER_Metric *metric, TRITONSERVER_MetricKind *kind);

#ifdef __cplusplus
}
#endif

#endif /* NEREID_TRITON_CORE_TRITONSERVER_H */
