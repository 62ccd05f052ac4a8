/* Compile-time proof that Nereid's Triton API headers keep Triton's ABI:
 * enum values, version macros, enum sizes, callback types, and the exact type
 * of every function the public example backends use (names from
 * compat/backend_abi_functions.tsv, types from Triton's tritonbackend.h 1.19
 * and tritonserver.h 1.34). Only __typeof__ looks at the functions, so this
 * links without an implementation. Single-threaded. */
#include "triton/core/tritonbackend.h"
#include "triton/core/tritonserver.h"

#include "test/unit/unit.h"

/* Value of an enum constant or macro, as in Triton. */
#define ABI_VALUE(name, value) \
  _Static_assert((name) == (value), #name " must equal " #value " as in Triton")

/* Enumerations travel through the ABI as int. */
#define ABI_ENUM_SIZE(type) \
  _Static_assert(sizeof(type) == sizeof(int), #type " must be int-sized")

/* Type of a function, written as Triton declares it. Pointee const-ness and
 * pointer depth must match; top-level const on parameters is not part of a
 * function's type. Counts itself so a case can confirm the coverage. */
#define ABI_SIG(fn, type)                                             \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), type), \
                 #fn " does not have Triton's signature");            \
  checked++

/* A callback typedef, written as Triton declares it. */
#define ABI_TYPE(name, type)                                  \
  _Static_assert(__builtin_types_compatible_p(name, type),    \
                 #name " does not have Triton's definition"); \
  checked++

/* ---- Enum values (file scope: fail the build, not the run) ---------------- */

ABI_VALUE(TRITONSERVER_API_VERSION_MAJOR, 1);
ABI_VALUE(TRITONSERVER_API_VERSION_MINOR, 34);
ABI_VALUE(TRITONBACKEND_API_VERSION_MAJOR, 1);
ABI_VALUE(TRITONBACKEND_API_VERSION_MINOR, 19);

ABI_VALUE(TRITONSERVER_TYPE_INVALID, 0);
ABI_VALUE(TRITONSERVER_TYPE_BOOL, 1);
ABI_VALUE(TRITONSERVER_TYPE_UINT8, 2);
ABI_VALUE(TRITONSERVER_TYPE_UINT16, 3);
ABI_VALUE(TRITONSERVER_TYPE_UINT32, 4);
ABI_VALUE(TRITONSERVER_TYPE_UINT64, 5);
ABI_VALUE(TRITONSERVER_TYPE_INT8, 6);
ABI_VALUE(TRITONSERVER_TYPE_INT16, 7);
ABI_VALUE(TRITONSERVER_TYPE_INT32, 8);
ABI_VALUE(TRITONSERVER_TYPE_INT64, 9);
ABI_VALUE(TRITONSERVER_TYPE_FP16, 10);
ABI_VALUE(TRITONSERVER_TYPE_FP32, 11);
ABI_VALUE(TRITONSERVER_TYPE_FP64, 12);
ABI_VALUE(TRITONSERVER_TYPE_BYTES, 13);
ABI_VALUE(TRITONSERVER_TYPE_BF16, 14);

ABI_VALUE(TRITONSERVER_MEMORY_CPU, 0);
ABI_VALUE(TRITONSERVER_MEMORY_CPU_PINNED, 1);
ABI_VALUE(TRITONSERVER_MEMORY_GPU, 2);

ABI_VALUE(TRITONSERVER_PARAMETER_STRING, 0);
ABI_VALUE(TRITONSERVER_PARAMETER_INT, 1);
ABI_VALUE(TRITONSERVER_PARAMETER_BOOL, 2);
ABI_VALUE(TRITONSERVER_PARAMETER_DOUBLE, 3);
ABI_VALUE(TRITONSERVER_PARAMETER_BYTES, 4);

ABI_VALUE(TRITONSERVER_INSTANCEGROUPKIND_AUTO, 0);
ABI_VALUE(TRITONSERVER_INSTANCEGROUPKIND_CPU, 1);
ABI_VALUE(TRITONSERVER_INSTANCEGROUPKIND_GPU, 2);
ABI_VALUE(TRITONSERVER_INSTANCEGROUPKIND_MODEL, 3);

ABI_VALUE(TRITONSERVER_LOG_INFO, 0);
ABI_VALUE(TRITONSERVER_LOG_WARN, 1);
ABI_VALUE(TRITONSERVER_LOG_ERROR, 2);
ABI_VALUE(TRITONSERVER_LOG_VERBOSE, 3);
ABI_VALUE(TRITONSERVER_LOG_DEFAULT, 0);
ABI_VALUE(TRITONSERVER_LOG_ISO8601, 1);

ABI_VALUE(TRITONSERVER_ERROR_UNKNOWN, 0);
ABI_VALUE(TRITONSERVER_ERROR_INTERNAL, 1);
ABI_VALUE(TRITONSERVER_ERROR_NOT_FOUND, 2);
ABI_VALUE(TRITONSERVER_ERROR_INVALID_ARG, 3);
ABI_VALUE(TRITONSERVER_ERROR_UNAVAILABLE, 4);
ABI_VALUE(TRITONSERVER_ERROR_UNSUPPORTED, 5);
ABI_VALUE(TRITONSERVER_ERROR_ALREADY_EXISTS, 6);
ABI_VALUE(TRITONSERVER_ERROR_CANCELLED, 7);

ABI_VALUE(TRITONSERVER_METRIC_PROMETHEUS, 0);

ABI_VALUE(TRITONSERVER_TRACE_LEVEL_DISABLED, 0);
ABI_VALUE(TRITONSERVER_TRACE_LEVEL_MIN, 1);
ABI_VALUE(TRITONSERVER_TRACE_LEVEL_MAX, 2);
ABI_VALUE(TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 4);
ABI_VALUE(TRITONSERVER_TRACE_LEVEL_TENSORS, 8);

ABI_VALUE(TRITONSERVER_TRACE_REQUEST_START, 0);
ABI_VALUE(TRITONSERVER_TRACE_QUEUE_START, 1);
ABI_VALUE(TRITONSERVER_TRACE_COMPUTE_START, 2);
ABI_VALUE(TRITONSERVER_TRACE_COMPUTE_INPUT_END, 3);
ABI_VALUE(TRITONSERVER_TRACE_COMPUTE_OUTPUT_START, 4);
ABI_VALUE(TRITONSERVER_TRACE_COMPUTE_END, 5);
ABI_VALUE(TRITONSERVER_TRACE_REQUEST_END, 6);
ABI_VALUE(TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT, 7);
ABI_VALUE(TRITONSERVER_TRACE_TENSOR_BACKEND_INPUT, 8);
ABI_VALUE(TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT, 9);
ABI_VALUE(TRITONSERVER_TRACE_CUSTOM_ACTIVITY, 10);

ABI_VALUE(TRITONSERVER_REQUEST_FLAG_SEQUENCE_START, 1);
ABI_VALUE(TRITONSERVER_REQUEST_FLAG_SEQUENCE_END, 2);
ABI_VALUE(TRITONSERVER_REQUEST_RELEASE_ALL, 1);
ABI_VALUE(TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, 2);
ABI_VALUE(TRITONSERVER_RESPONSE_COMPLETE_FINAL, 1);

ABI_VALUE(TRITONSERVER_MODEL_CONTROL_NONE, 0);
ABI_VALUE(TRITONSERVER_MODEL_CONTROL_POLL, 1);
ABI_VALUE(TRITONSERVER_MODEL_CONTROL_EXPLICIT, 2);
ABI_VALUE(TRITONSERVER_RATE_LIMIT_OFF, 0);
ABI_VALUE(TRITONSERVER_RATE_LIMIT_EXEC_COUNT, 1);

ABI_VALUE(TRITONSERVER_BATCH_UNKNOWN, 1);
ABI_VALUE(TRITONSERVER_BATCH_FIRST_DIM, 2);
ABI_VALUE(TRITONSERVER_INDEX_FLAG_READY, 1);
ABI_VALUE(TRITONSERVER_TXN_ONE_TO_ONE, 1);
ABI_VALUE(TRITONSERVER_TXN_DECOUPLED, 2);

ABI_VALUE(TRITONSERVER_METRIC_KIND_COUNTER, 0);
ABI_VALUE(TRITONSERVER_METRIC_KIND_GAUGE, 1);
ABI_VALUE(TRITONSERVER_METRIC_KIND_HISTOGRAM, 2);

ABI_VALUE(TRITONBACKEND_ARTIFACT_FILESYSTEM, 0);
ABI_VALUE(TRITONBACKEND_EXECUTION_BLOCKING, 0);
ABI_VALUE(TRITONBACKEND_EXECUTION_DEVICE_BLOCKING, 1);

ABI_ENUM_SIZE(TRITONSERVER_DataType);
ABI_ENUM_SIZE(TRITONSERVER_MemoryType);
ABI_ENUM_SIZE(TRITONSERVER_ParameterType);
ABI_ENUM_SIZE(TRITONSERVER_InstanceGroupKind);
ABI_ENUM_SIZE(TRITONSERVER_LogLevel);
ABI_ENUM_SIZE(TRITONSERVER_LogFormat);
ABI_ENUM_SIZE(TRITONSERVER_Error_Code);
ABI_ENUM_SIZE(TRITONSERVER_MetricFormat);
ABI_ENUM_SIZE(TRITONSERVER_InferenceTraceLevel);
ABI_ENUM_SIZE(TRITONSERVER_InferenceTraceActivity);
ABI_ENUM_SIZE(TRITONSERVER_RequestFlag);
ABI_ENUM_SIZE(TRITONSERVER_RequestReleaseFlag);
ABI_ENUM_SIZE(TRITONSERVER_ResponseCompleteFlag);
ABI_ENUM_SIZE(TRITONSERVER_ModelControlMode);
ABI_ENUM_SIZE(TRITONSERVER_RateLimitMode);
ABI_ENUM_SIZE(TRITONSERVER_ModelBatchFlag);
ABI_ENUM_SIZE(TRITONSERVER_ModelIndexFlag);
ABI_ENUM_SIZE(TRITONSERVER_ModelTxnPropertyFlag);
ABI_ENUM_SIZE(TRITONSERVER_MetricKind);
ABI_ENUM_SIZE(TRITONBACKEND_ArtifactType);
ABI_ENUM_SIZE(TRITONBACKEND_ExecutionPolicy);

/* Triton's enum tags are part of the source API (C++ code may name them). */
_Static_assert(__builtin_types_compatible_p(enum TRITONSERVER_datatype_enum,
                                            TRITONSERVER_DataType),
               "enum tag of TRITONSERVER_DataType");
_Static_assert(__builtin_types_compatible_p(enum tritonserver_requestflag_enum,
                                            TRITONSERVER_RequestFlag),
               "enum tag of TRITONSERVER_RequestFlag");
_Static_assert(__builtin_types_compatible_p(enum TRITONBACKEND_execpolicy_enum,
                                            TRITONBACKEND_ExecutionPolicy),
               "enum tag of TRITONBACKEND_ExecutionPolicy");

/* ---- Cases ---------------------------------------------------------------- */

/* Every function in compat/backend_abi_functions.tsv (105), typed as in
 * Triton's headers. */
static void tsv_functions_have_triton_types(void) {
  size_t checked = 0;
  ABI_SIG(TRITONBACKEND_ApiVersion, TRITONSERVER_Error * (*)(uint32_t *, uint32_t *));
  ABI_SIG(TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading,
          TRITONSERVER_Error * (*)(TRITONBACKEND_BackendAttribute *, bool));
  ABI_SIG(TRITONBACKEND_BackendConfig,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Backend *, TRITONSERVER_Message **));
  ABI_SIG(
      TRITONBACKEND_BackendMemoryManager,
      TRITONSERVER_Error * (*)(TRITONBACKEND_Backend *, TRITONBACKEND_MemoryManager **));
  ABI_SIG(TRITONBACKEND_BackendName,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Backend *, const char **));
  ABI_SIG(TRITONBACKEND_BackendSetState,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Backend *, void *));
  ABI_SIG(TRITONBACKEND_BackendState,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Backend *, void **));
  ABI_SIG(TRITONBACKEND_InputBuffer,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Input *, const uint32_t, const void **,
                                   uint64_t *, TRITONSERVER_MemoryType *, int64_t *));
  ABI_SIG(TRITONBACKEND_InputBufferForHostPolicy,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Input *, const char *, const uint32_t,
                                   const void **, uint64_t *, TRITONSERVER_MemoryType *,
                                   int64_t *));
  ABI_SIG(TRITONBACKEND_InputProperties,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Input *, const char **,
                                   TRITONSERVER_DataType *, const int64_t **, uint32_t *,
                                   uint64_t *, uint32_t *));
  ABI_SIG(TRITONBACKEND_InputPropertiesForHostPolicy,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Input *, const char *, const char **,
                                   TRITONSERVER_DataType *, const int64_t **, uint32_t *,
                                   uint64_t *, uint32_t *));
  ABI_SIG(TRITONBACKEND_MemoryManagerAllocate,
          TRITONSERVER_Error * (*)(TRITONBACKEND_MemoryManager *, void **,
                                   const TRITONSERVER_MemoryType, const int64_t,
                                   const uint64_t));
  ABI_SIG(TRITONBACKEND_MemoryManagerFree,
          TRITONSERVER_Error * (*)(TRITONBACKEND_MemoryManager *, void *,
                                   const TRITONSERVER_MemoryType, const int64_t));
  ABI_SIG(TRITONBACKEND_ModelBackend,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Model *, TRITONBACKEND_Backend **));
  ABI_SIG(TRITONBACKEND_ModelConfig,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_Model *, const uint32_t, TRITONSERVER_Message **));
  ABI_SIG(TRITONBACKEND_ModelInstanceDeviceId,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *, int32_t *));
  ABI_SIG(
      TRITONBACKEND_ModelInstanceHostPolicy,
      TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *, TRITONSERVER_Message **));
  ABI_SIG(TRITONBACKEND_ModelInstanceKind,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_ModelInstance *, TRITONSERVER_InstanceGroupKind *));
  ABI_SIG(
      TRITONBACKEND_ModelInstanceModel,
      TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *, TRITONBACKEND_Model **));
  ABI_SIG(TRITONBACKEND_ModelInstanceName,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *, const char **));
  ABI_SIG(TRITONBACKEND_ModelInstanceReportBatchStatistics,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *, const uint64_t,
                                   const uint64_t, const uint64_t, const uint64_t,
                                   const uint64_t));
  ABI_SIG(TRITONBACKEND_ModelInstanceReportResponseStatistics,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstanceResponseStatistics *));
  ABI_SIG(TRITONBACKEND_ModelInstanceReportStatistics,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *, TRITONBACKEND_Request *,
                                   const bool, const uint64_t, const uint64_t,
                                   const uint64_t, const uint64_t));
  ABI_SIG(TRITONBACKEND_ModelInstanceResponseStatisticsDelete,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstanceResponseStatistics *));
  ABI_SIG(TRITONBACKEND_ModelInstanceResponseStatisticsNew,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstanceResponseStatistics **));
  ABI_SIG(TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_ModelInstanceResponseStatistics *, uint64_t));
  ABI_SIG(TRITONBACKEND_ModelInstanceResponseStatisticsSetError,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_ModelInstanceResponseStatistics *, TRITONSERVER_Error *));
  ABI_SIG(TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstanceResponseStatistics *,
                                   TRITONBACKEND_ModelInstance *));
  ABI_SIG(TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_ModelInstanceResponseStatistics *, uint64_t));
  ABI_SIG(TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstanceResponseStatistics *,
                                   TRITONBACKEND_ResponseFactory *));
  ABI_SIG(TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_ModelInstanceResponseStatistics *, uint64_t));
  ABI_SIG(TRITONBACKEND_ModelInstanceSetState,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *, void *));
  ABI_SIG(TRITONBACKEND_ModelInstanceState,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *, void **));
  ABI_SIG(TRITONBACKEND_ModelName,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Model *, const char **));
  ABI_SIG(TRITONBACKEND_ModelRepository,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_Model *, TRITONBACKEND_ArtifactType *, const char **));
  ABI_SIG(TRITONBACKEND_ModelServer,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Model *, TRITONSERVER_Server **));
  ABI_SIG(TRITONBACKEND_ModelSetConfig,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_Model *, const uint32_t, TRITONSERVER_Message *));
  ABI_SIG(TRITONBACKEND_ModelSetState,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Model *, void *));
  ABI_SIG(TRITONBACKEND_ModelState,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Model *, void **));
  ABI_SIG(TRITONBACKEND_ModelVersion,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Model *, uint64_t *));
  ABI_SIG(TRITONBACKEND_OutputBuffer,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Output *, void **, const uint64_t,
                                   TRITONSERVER_MemoryType *, int64_t *));
  ABI_SIG(TRITONBACKEND_RequestCorrelationId,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, uint64_t *));
  ABI_SIG(TRITONBACKEND_RequestFlags,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, uint32_t *));
  ABI_SIG(TRITONBACKEND_RequestId,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, const char **));
  ABI_SIG(TRITONBACKEND_RequestInput,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_Request *, const char *, TRITONBACKEND_Input **));
  ABI_SIG(TRITONBACKEND_RequestInputByIndex,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_Request *, const uint32_t, TRITONBACKEND_Input **));
  ABI_SIG(TRITONBACKEND_RequestInputCount,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, uint32_t *));
  ABI_SIG(
      TRITONBACKEND_RequestInputName,
      TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, const uint32_t, const char **));
  ABI_SIG(TRITONBACKEND_RequestOutputCount,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, uint32_t *));
  ABI_SIG(
      TRITONBACKEND_RequestOutputName,
      TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, const uint32_t, const char **));
  ABI_SIG(TRITONBACKEND_RequestRelease,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, uint32_t));
  ABI_SIG(
      TRITONBACKEND_RequestTrace,
      TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, TRITONSERVER_InferenceTrace **));
  ABI_SIG(TRITONBACKEND_ResponseFactoryDelete,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ResponseFactory *));
  ABI_SIG(TRITONBACKEND_ResponseFactoryIsCancelled,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ResponseFactory *, bool *));
  ABI_SIG(TRITONBACKEND_ResponseFactoryNew,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_ResponseFactory **, TRITONBACKEND_Request *));
  ABI_SIG(TRITONBACKEND_ResponseFactorySendFlags,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ResponseFactory *, const uint32_t));
  ABI_SIG(TRITONBACKEND_ResponseNew,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Response **, TRITONBACKEND_Request *));
  ABI_SIG(TRITONBACKEND_ResponseNewFromFactory,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_Response **, TRITONBACKEND_ResponseFactory *));
  ABI_SIG(TRITONBACKEND_ResponseOutput,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Response *, TRITONBACKEND_Output **,
                                   const char *, const TRITONSERVER_DataType,
                                   const int64_t *, const uint32_t));
  ABI_SIG(TRITONBACKEND_ResponseSend,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_Response *, const uint32_t, TRITONSERVER_Error *));
  ABI_SIG(TRITONBACKEND_ResponseSetBoolParameter,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Response *, const char *, const bool));
  ABI_SIG(TRITONBACKEND_ResponseSetDoubleParameter,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Response *, const char *, const double));
  ABI_SIG(
      TRITONBACKEND_ResponseSetIntParameter,
      TRITONSERVER_Error * (*)(TRITONBACKEND_Response *, const char *, const int64_t));
  ABI_SIG(TRITONBACKEND_ResponseSetStringParameter,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Response *, const char *, const char *));
  ABI_SIG(TRITONBACKEND_StateBuffer,
          TRITONSERVER_Error * (*)(TRITONBACKEND_State *, void **, const uint64_t,
                                   TRITONSERVER_MemoryType *, int64_t *));
  ABI_SIG(TRITONBACKEND_StateNew,
          TRITONSERVER_Error * (*)(TRITONBACKEND_State **, TRITONBACKEND_Request *,
                                   const char *, const TRITONSERVER_DataType,
                                   const int64_t *, const uint32_t));
  ABI_SIG(TRITONSERVER_DataTypeByteSize, uint32_t(*)(TRITONSERVER_DataType));
  ABI_SIG(TRITONSERVER_DataTypeString, const char *(*)(TRITONSERVER_DataType));
  ABI_SIG(TRITONSERVER_ErrorCode, TRITONSERVER_Error_Code(*)(TRITONSERVER_Error *));
  ABI_SIG(TRITONSERVER_ErrorCodeString, const char *(*)(TRITONSERVER_Error *));
  ABI_SIG(TRITONSERVER_ErrorDelete, void (*)(TRITONSERVER_Error *));
  ABI_SIG(TRITONSERVER_ErrorMessage, const char *(*)(TRITONSERVER_Error *));
  ABI_SIG(TRITONSERVER_ErrorNew,
          TRITONSERVER_Error * (*)(TRITONSERVER_Error_Code, const char *));
  ABI_SIG(
      TRITONSERVER_InferenceRequestAddInput,
      TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest *, const char *,
                               const TRITONSERVER_DataType, const int64_t *, uint64_t));
  ABI_SIG(TRITONSERVER_InferenceRequestAddRequestedOutput,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest *, const char *));
  ABI_SIG(
      TRITONSERVER_InferenceRequestAppendInputData,
      TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest *, const char *,
                               const void *, size_t, TRITONSERVER_MemoryType, int64_t));
  ABI_SIG(TRITONSERVER_InferenceRequestDelete,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest *));
  ABI_SIG(TRITONSERVER_InferenceRequestNew,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest **,
                                   TRITONSERVER_Server *, const char *, const int64_t));
  ABI_SIG(TRITONSERVER_InferenceRequestSetCorrelationId,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest *, uint64_t));
  ABI_SIG(TRITONSERVER_InferenceRequestSetFlags,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest *, uint32_t));
  ABI_SIG(TRITONSERVER_InferenceRequestSetId,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest *, const char *));
  ABI_SIG(TRITONSERVER_InferenceRequestSetReleaseCallback,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest *,
                                   TRITONSERVER_InferenceRequestReleaseFn_t, void *));
  ABI_SIG(TRITONSERVER_InferenceRequestSetResponseCallback,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceRequest *,
                                   TRITONSERVER_ResponseAllocator *, void *,
                                   TRITONSERVER_InferenceResponseCompleteFn_t, void *));
  ABI_SIG(TRITONSERVER_InferenceResponseDelete,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceResponse *));
  ABI_SIG(TRITONSERVER_InferenceResponseError,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceResponse *));
  ABI_SIG(TRITONSERVER_InferenceResponseOutput,
          TRITONSERVER_Error * (*)(TRITONSERVER_InferenceResponse *, const uint32_t,
                                   const char **, TRITONSERVER_DataType *,
                                   const int64_t **, uint64_t *, const void **, size_t *,
                                   TRITONSERVER_MemoryType *, int64_t *, void **));
  ABI_SIG(
      TRITONSERVER_InferenceTraceReportActivity,
      TRITONSERVER_Error * (*)(TRITONSERVER_InferenceTrace *, uint64_t, const char *));
  ABI_SIG(TRITONSERVER_InstanceGroupKindString,
          const char *(*)(TRITONSERVER_InstanceGroupKind));
  ABI_SIG(TRITONSERVER_LogIsEnabled, bool (*)(TRITONSERVER_LogLevel));
  ABI_SIG(TRITONSERVER_LogMessage,
          TRITONSERVER_Error *
              (*)(TRITONSERVER_LogLevel, const char *, const int, const char *));
  ABI_SIG(TRITONSERVER_MemoryTypeString, const char *(*)(TRITONSERVER_MemoryType));
  ABI_SIG(TRITONSERVER_MessageDelete, TRITONSERVER_Error * (*)(TRITONSERVER_Message *));
  ABI_SIG(TRITONSERVER_MessageNewFromSerializedJson,
          TRITONSERVER_Error * (*)(TRITONSERVER_Message **, const char *, size_t));
  ABI_SIG(TRITONSERVER_MessageSerializeToJson,
          TRITONSERVER_Error * (*)(TRITONSERVER_Message *, const char **, size_t *));
  ABI_SIG(TRITONSERVER_MetricDelete, TRITONSERVER_Error * (*)(TRITONSERVER_Metric *));
  ABI_SIG(TRITONSERVER_MetricFamilyDelete,
          TRITONSERVER_Error * (*)(TRITONSERVER_MetricFamily *));
  ABI_SIG(TRITONSERVER_MetricFamilyNew,
          TRITONSERVER_Error * (*)(TRITONSERVER_MetricFamily **,
                                   const TRITONSERVER_MetricKind, const char *,
                                   const char *));
  ABI_SIG(TRITONSERVER_MetricIncrement,
          TRITONSERVER_Error * (*)(TRITONSERVER_Metric *, double));
  ABI_SIG(TRITONSERVER_MetricNew,
          TRITONSERVER_Error * (*)(TRITONSERVER_Metric **, TRITONSERVER_MetricFamily *,
                                   const TRITONSERVER_Parameter **, const uint64_t));
  ABI_SIG(TRITONSERVER_ParameterDelete, void (*)(TRITONSERVER_Parameter *));
  ABI_SIG(TRITONSERVER_ParameterNew,
          TRITONSERVER_Parameter *
              (*)(const char *, const TRITONSERVER_ParameterType, const void *));
  ABI_SIG(TRITONSERVER_ResponseAllocatorNew,
          TRITONSERVER_Error * (*)(TRITONSERVER_ResponseAllocator **,
                                   TRITONSERVER_ResponseAllocatorAllocFn_t,
                                   TRITONSERVER_ResponseAllocatorReleaseFn_t,
                                   TRITONSERVER_ResponseAllocatorStartFn_t));
  ABI_SIG(TRITONSERVER_ServerInferAsync,
          TRITONSERVER_Error * (*)(TRITONSERVER_Server *, TRITONSERVER_InferenceRequest *,
                                   TRITONSERVER_InferenceTrace *));
  ABI_SIG(TRITONSERVER_ServerModelIsReady,
          TRITONSERVER_Error *
              (*)(TRITONSERVER_Server *, const char *, const int64_t, bool *));
  ABI_SIG(TRITONSERVER_ServerModelTransactionProperties,
          TRITONSERVER_Error * (*)(TRITONSERVER_Server *, const char *, const int64_t,
                                   uint32_t *, void **));
  CHECK_EQ_U64(checked, 105);
}

/* Entry points the server looks up in a backend library: a backend compiled
 * against these declarations must define them with Triton's types. */
static void backend_entry_points_have_triton_types(void) {
  size_t checked = 0;
  ABI_SIG(TRITONBACKEND_Initialize, TRITONSERVER_Error * (*)(TRITONBACKEND_Backend *));
  ABI_SIG(TRITONBACKEND_Finalize, TRITONSERVER_Error * (*)(TRITONBACKEND_Backend *));
  ABI_SIG(TRITONBACKEND_ModelInitialize, TRITONSERVER_Error * (*)(TRITONBACKEND_Model *));
  ABI_SIG(TRITONBACKEND_ModelFinalize, TRITONSERVER_Error * (*)(TRITONBACKEND_Model *));
  ABI_SIG(TRITONBACKEND_ModelInstanceInitialize,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *));
  ABI_SIG(TRITONBACKEND_ModelInstanceFinalize,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *));
  ABI_SIG(TRITONBACKEND_ModelInstanceExecute,
          TRITONSERVER_Error * (*)(TRITONBACKEND_ModelInstance *,
                                   TRITONBACKEND_Request **, const uint32_t));
  ABI_SIG(TRITONBACKEND_GetBackendAttribute,
          TRITONSERVER_Error *
              (*)(TRITONBACKEND_Backend *, TRITONBACKEND_BackendAttribute *));
  ABI_SIG(TRITONBACKEND_ModelBatcherInitialize,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Batcher **, TRITONBACKEND_Model *));
  ABI_SIG(TRITONBACKEND_ModelBatcherFinalize,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Batcher *));
  ABI_SIG(TRITONBACKEND_ModelBatchIncludeRequest,
          TRITONSERVER_Error * (*)(TRITONBACKEND_Request *, void *, bool *));
  ABI_SIG(TRITONBACKEND_ModelBatchInitialize,
          TRITONSERVER_Error * (*)(const TRITONBACKEND_Batcher *, void **));
  ABI_SIG(TRITONBACKEND_ModelBatchFinalize, TRITONSERVER_Error * (*)(void *));
  CHECK_EQ_U64(checked, 13);
}

/* Callback types that embedders (and BLS backends) implement. */
static void callback_typedefs_match(void) {
  size_t checked = 0;
  ABI_TYPE(TRITONSERVER_InferenceRequestReleaseFn_t,
           void (*)(TRITONSERVER_InferenceRequest *, const uint32_t, void *));
  ABI_TYPE(TRITONSERVER_InferenceResponseCompleteFn_t,
           void (*)(TRITONSERVER_InferenceResponse *, const uint32_t, void *));
  ABI_TYPE(TRITONSERVER_InferenceTraceActivityFn_t,
           void (*)(TRITONSERVER_InferenceTrace *, TRITONSERVER_InferenceTraceActivity,
                    uint64_t, void *));
  ABI_TYPE(TRITONSERVER_InferenceTraceReleaseFn_t,
           void (*)(TRITONSERVER_InferenceTrace *, void *));
  ABI_TYPE(TRITONSERVER_InferenceTraceTensorActivityFn_t,
           void (*)(TRITONSERVER_InferenceTrace *, TRITONSERVER_InferenceTraceActivity,
                    const char *, TRITONSERVER_DataType, const void *, size_t,
                    const int64_t *, uint64_t, TRITONSERVER_MemoryType, int64_t, void *));
  ABI_TYPE(
      TRITONSERVER_ResponseAllocatorAllocFn_t,
      TRITONSERVER_Error * (*)(TRITONSERVER_ResponseAllocator *, const char *, size_t,
                               TRITONSERVER_MemoryType, int64_t, void *, void **, void **,
                               TRITONSERVER_MemoryType *, int64_t *));
  ABI_TYPE(TRITONSERVER_ResponseAllocatorBufferAttributesFn_t,
           TRITONSERVER_Error * (*)(TRITONSERVER_ResponseAllocator *, const char *,
                                    TRITONSERVER_BufferAttributes *, void *, void *));
  ABI_TYPE(
      TRITONSERVER_ResponseAllocatorQueryFn_t,
      TRITONSERVER_Error * (*)(TRITONSERVER_ResponseAllocator *, void *, const char *,
                               size_t *, TRITONSERVER_MemoryType *, int64_t *));
  ABI_TYPE(TRITONSERVER_ResponseAllocatorReleaseFn_t,
           TRITONSERVER_Error * (*)(TRITONSERVER_ResponseAllocator *, void *, void *,
                                    size_t, TRITONSERVER_MemoryType, int64_t));
  ABI_TYPE(TRITONSERVER_ResponseAllocatorStartFn_t,
           TRITONSERVER_Error * (*)(TRITONSERVER_ResponseAllocator *, void *));
  CHECK_EQ_U64(checked, 10);
}

/* Flags are OR-ed together, so they must stay distinct single bits. */
static void flags_are_distinct_bits(void) {
  const unsigned flags[] = {
      TRITONSERVER_REQUEST_FLAG_SEQUENCE_START,
      TRITONSERVER_REQUEST_FLAG_SEQUENCE_END,
  };
  unsigned seen = 0;
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
    CHECK(flags[i] != 0 && (flags[i] & (flags[i] - 1)) == 0);
    CHECK((seen & flags[i]) == 0);
    seen |= flags[i];
  }
  CHECK((TRITONSERVER_TRACE_LEVEL_TIMESTAMPS & TRITONSERVER_TRACE_LEVEL_TENSORS) == 0);
  CHECK_EQ_U64(TRITONSERVER_REQUEST_RELEASE_ALL | TRITONSERVER_REQUEST_RELEASE_RESCHEDULE,
               3);
  CHECK_EQ_U64(TRITONSERVER_TXN_ONE_TO_ONE | TRITONSERVER_TXN_DECOUPLED, 3);
}

/* The data-type numbering is what tensors carry across the ABI; check it at
 * run time too, against a table in protocol order. */
static void data_types_in_protocol_order(void) {
  const TRITONSERVER_DataType order[] = {
      TRITONSERVER_TYPE_INVALID, TRITONSERVER_TYPE_BOOL,   TRITONSERVER_TYPE_UINT8,
      TRITONSERVER_TYPE_UINT16,  TRITONSERVER_TYPE_UINT32, TRITONSERVER_TYPE_UINT64,
      TRITONSERVER_TYPE_INT8,    TRITONSERVER_TYPE_INT16,  TRITONSERVER_TYPE_INT32,
      TRITONSERVER_TYPE_INT64,   TRITONSERVER_TYPE_FP16,   TRITONSERVER_TYPE_FP32,
      TRITONSERVER_TYPE_FP64,    TRITONSERVER_TYPE_BYTES,  TRITONSERVER_TYPE_BF16,
  };
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) CHECK_EQ_U64(order[i], i);
  CHECK_EQ_U64(TRITONSERVER_API_VERSION_MAJOR * 100 + TRITONSERVER_API_VERSION_MINOR,
               134);
  CHECK_EQ_U64(TRITONBACKEND_API_VERSION_MAJOR * 100 + TRITONBACKEND_API_VERSION_MINOR,
               119);
}

UNIT_MAIN("abi_headers", UNIT_CASE(tsv_functions_have_triton_types),
          UNIT_CASE(backend_entry_points_have_triton_types),
          UNIT_CASE(callback_typedefs_match), UNIT_CASE(flags_are_distinct_bits),
          UNIT_CASE(data_types_in_protocol_order))
