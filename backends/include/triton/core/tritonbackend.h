/* Nereid's ABI-compatible declaration of the Triton backend C API
 * (TRITONBACKEND, API 1.19). Names, signatures, enum values and flags match
 * Triton's tritonbackend.h so released backends compile and run unchanged. */
#ifndef NEREID_TRITON_CORE_TRITONBACKEND_H
#define NEREID_TRITON_CORE_TRITONBACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Two directions cross this API. TRITONBACKEND_DECLSPEC marks functions the
 * server implements and backends call; TRITONBACKEND_ISPEC marks functions a
 * backend implements (exports) and the server looks up with dlsym. On ELF
 * targets ISPEC is empty: a backend exports its entry points with default
 * visibility as usual. libtritonserver.so must be built with both
 * _COMPILING_TRITONSERVER and _COMPILING_TRITONBACKEND: some server functions
 * below carry TRITONSERVER_DECLSPEC, as in Triton. */
#if defined(_COMPILING_TRITONBACKEND)
#if defined(_MSC_VER)
#define TRITONBACKEND_DECLSPEC __declspec(dllexport)
#define TRITONBACKEND_ISPEC __declspec(dllimport)
#elif defined(__GNUC__)
#define TRITONBACKEND_DECLSPEC __attribute__((__visibility__("default")))
#define TRITONBACKEND_ISPEC
#else
#define TRITONBACKEND_DECLSPEC
#define TRITONBACKEND_ISPEC
#endif
#else /* a backend */
#if defined(_MSC_VER)
#define TRITONBACKEND_DECLSPEC __declspec(dllimport)
#define TRITONBACKEND_ISPEC __declspec(dllexport)
#else
#define TRITONBACKEND_DECLSPEC
#define TRITONBACKEND_ISPEC
#endif
#endif

/* Version of this API. A backend built against MAJOR.MINOR loads only into a
 * server whose TRITONBACKEND_ApiVersion reports the same MAJOR and a MINOR at
 * least as high; backends check this in TRITONBACKEND_Initialize. */
#define TRITONBACKEND_API_VERSION_MAJOR 1
#define TRITONBACKEND_API_VERSION_MINOR 19

/* ---- Opaque objects (server-owned unless a function says otherwise) ------ */
typedef struct TRITONBACKEND_MemoryManager TRITONBACKEND_MemoryManager;
typedef struct TRITONBACKEND_Input TRITONBACKEND_Input;
typedef struct TRITONBACKEND_Output TRITONBACKEND_Output;
typedef struct TRITONBACKEND_State TRITONBACKEND_State;
typedef struct TRITONBACKEND_Request TRITONBACKEND_Request;
typedef struct TRITONBACKEND_ResponseFactory TRITONBACKEND_ResponseFactory;
typedef struct TRITONBACKEND_Response TRITONBACKEND_Response;
typedef struct TRITONBACKEND_Backend TRITONBACKEND_Backend;
typedef struct TRITONBACKEND_Model TRITONBACKEND_Model;
typedef struct TRITONBACKEND_ModelInstance TRITONBACKEND_ModelInstance;
typedef struct TRITONBACKEND_ModelInstanceResponseStatistics
    TRITONBACKEND_ModelInstanceResponseStatistics;
typedef struct TRITONBACKEND_BackendAttribute TRITONBACKEND_BackendAttribute;
/* Backend-defined: the server only passes the pointer back to the backend. */
typedef struct TRITONBACKEND_Batcher TRITONBACKEND_Batcher;

/* Conventions, as in tritonserver.h: a NULL TRITONSERVER_Error* means
 * success and a returned error belongs to the caller. Strings, shapes and
 * buffers returned through out-parameters belong to the object they were
 * read from (request, input, response, model...) and live as long as it. */

/* Writes the backend API version the server implements. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ApiVersion(uint32_t *major,
                                                                    uint32_t *minor);

/* How backend and model files reach the backend. FILESYSTEM: a local
 * directory path. */
typedef enum TRITONBACKEND_artifacttype_enum {
  TRITONBACKEND_ARTIFACT_FILESYSTEM = 0
} TRITONBACKEND_ArtifactType;

/* ---- Memory manager ------------------------------------------------------
 * Access to the server's pinned-host and GPU memory pools. */

/* Allocates 'byte_size' bytes of (memory_type, memory_type_id); the backend
 * owns the block and returns it with TRITONBACKEND_MemoryManagerFree.
 * UNSUPPORTED: that memory can never be allocated here. UNAVAILABLE: not
 * right now (pool exhausted). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_MemoryManagerAllocate(
    TRITONBACKEND_MemoryManager *manager, void **buffer,
    const TRITONSERVER_MemoryType memory_type, const int64_t memory_type_id,
    const uint64_t byte_size);

/* Returns a block; type and id must be those it was allocated with. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_MemoryManagerFree(
    TRITONBACKEND_MemoryManager *manager, void *buffer,
    const TRITONSERVER_MemoryType memory_type, const int64_t memory_type_id);

/* ---- Request inputs ------------------------------------------------------
 * An input and everything read from it live until its request is released. */

/* Name, type, shape, total data size and number of data buffers of an input.
 * Any out-pointer may be NULL. 'byte_size' is the data actually supplied,
 * which the backend must check against the shape. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_InputProperties(
    TRITONBACKEND_Input *input, const char **name, TRITONSERVER_DataType *datatype,
    const int64_t **shape, uint32_t *dims_count, uint64_t *byte_size,
    uint32_t *buffer_count);

/* As InputProperties, for the data given for host policy 'host_policy_name'
 * (NULL, or a policy without its own data: the default data). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_InputPropertiesForHostPolicy(
    TRITONBACKEND_Input *input, const char *host_policy_name, const char **name,
    TRITONSERVER_DataType *datatype, const int64_t **shape, uint32_t *dims_count,
    uint64_t *byte_size, uint32_t *buffer_count);

/* Data buffer 'index' (< buffer_count) of an input, read-only. memory_type /
 * memory_type_id carry the caller's preference in and the buffer's real
 * placement out. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_InputBuffer(
    TRITONBACKEND_Input *input, const uint32_t index, const void **buffer,
    uint64_t *buffer_byte_size, TRITONSERVER_MemoryType *memory_type,
    int64_t *memory_type_id);

/* As InputBuffer, for host policy 'host_policy_name' (NULL: default data). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_InputBufferForHostPolicy(
    TRITONBACKEND_Input *input, const char *host_policy_name, const uint32_t index,
    const void **buffer, uint64_t *buffer_byte_size, TRITONSERVER_MemoryType *memory_type,
    int64_t *memory_type_id);

/* Data buffer 'index' with its attributes object; both owned by the input. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_InputBufferAttributes(
    TRITONBACKEND_Input *input, const uint32_t index, const void **buffer,
    TRITONSERVER_BufferAttributes **buffer_attributes);

/* ---- Response outputs ---------------------------------------------------- */

/* Gets the buffer to fill with an output's data ('buffer_byte_size' bytes).
 * memory_type / memory_type_id: preference in, real placement out. The buffer
 * belongs to the output and lives as long as its response. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_OutputBuffer(
    TRITONBACKEND_Output *output, void **buffer, const uint64_t buffer_byte_size,
    TRITONSERVER_MemoryType *memory_type, int64_t *memory_type_id);

/* Attributes of the output's buffer; call after TRITONBACKEND_OutputBuffer.
 * Owned by the output. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_OutputBufferAttributes(
    TRITONBACKEND_Output *output, TRITONSERVER_BufferAttributes **buffer_attributes);

/* ---- Requests -------------------------------------------------------------
 * A request handed to TRITONBACKEND_ModelInstanceExecute belongs to the
 * backend until it calls TRITONBACKEND_RequestRelease. */

/* Request id, NULL if none. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestId(
    TRITONBACKEND_Request *request, const char **id);

/* Whether the client cancelled the request; the backend should then stop
 * early and respond with a CANCELLED error. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestIsCancelled(
    TRITONBACKEND_Request *request, bool *is_cancelled);

/* Same question through a response factory (usable after the request has
 * been released). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseFactoryIsCancelled(
    TRITONBACKEND_ResponseFactory *factory, bool *is_cancelled);

/* Numeric sequence id, 0 = none; fails if the id is a string. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestCorrelationId(
    TRITONBACKEND_Request *request, uint64_t *id);

/* Request timeout in microseconds, 0 = none. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_InferenceRequestTimeoutMicroseconds(TRITONBACKEND_Request *request,
                                                  uint64_t *timeout);

/* String sequence id, "" = none; fails if the id is numeric. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestCorrelationIdString(
    TRITONBACKEND_Request *request, const char **id);

/* TRITONSERVER_RequestFlag bits (sequence start/end). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestFlags(
    TRITONBACKEND_Request *request, uint32_t *flags);

/* Number of request parameters. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestParameterCount(
    TRITONBACKEND_Request *request, uint32_t *count);

/* Parameter 'index' (< count): key, type and a pointer to the value (see
 * TRITONSERVER_ParameterType). Index order may differ between requests. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestParameter(
    TRITONBACKEND_Request *request, const uint32_t index, const char **key,
    TRITONSERVER_ParameterType *type, const void **vvalue);

/* Number of inputs. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestInputCount(
    TRITONBACKEND_Request *request, uint32_t *count);

/* Name of input 'index' (< count). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestInputName(
    TRITONBACKEND_Request *request, const uint32_t index, const char **input_name);

/* Input by name. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestInput(
    TRITONBACKEND_Request *request, const char *name, TRITONBACKEND_Input **input);

/* Input by index (< count); index order may differ between requests. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestInputByIndex(
    TRITONBACKEND_Request *request, const uint32_t index, TRITONBACKEND_Input **input);

/* Number of outputs the client asked for. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestOutputCount(
    TRITONBACKEND_Request *request, uint32_t *count);

/* Name of requested output 'index' (< count). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestOutputName(
    TRITONBACKEND_Request *request, const uint32_t index, const char **output_name);

/* Where TRITONBACKEND_OutputBuffer would probably place output 'name' (NULL
 * and 'byte_size' NULL when unknown). memory_type / memory_type_id:
 * preference in, server's guess out; a hint only. UNAVAILABLE: no guess. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestOutputBufferProperties(
    TRITONBACKEND_Request *request, const char *name, size_t *byte_size,
    TRITONSERVER_MemoryType *memory_type, int64_t *memory_type_id);

/* Gives the request back to the server (TRITONSERVER_RequestReleaseFlag:
 * RELEASE_ALL, or RELEASE_RESCHEDULE to run it again). On success the
 * request and everything read from it are gone; on error the backend still
 * owns it. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestRelease(
    TRITONBACKEND_Request *request, uint32_t release_flags);

/* The request's trace, NULL if not traced; owned by the request. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_RequestTrace(
    TRITONBACKEND_Request *request, TRITONSERVER_InferenceTrace **trace);

/* ---- Response factories --------------------------------------------------
 * Lets a backend keep responding after releasing the request (decoupled
 * models, early release of input memory). */

/* New factory for 'request'; the backend owns it and deletes it with
 * TRITONBACKEND_ResponseFactoryDelete, which may outlive the request. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseFactoryNew(
    TRITONBACKEND_ResponseFactory **factory, TRITONBACKEND_Request *request);

/* Frees a factory. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseFactoryDelete(
    TRITONBACKEND_ResponseFactory *factory);

/* Sends TRITONSERVER_ResponseCompleteFlag bits with no response (typically
 * RESPONSE_COMPLETE_FINAL to end a decoupled stream). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseFactorySendFlags(
    TRITONBACKEND_ResponseFactory *factory, const uint32_t send_flags);

/* ---- Responses -----------------------------------------------------------
 * For one request, create a response and all its outputs and output buffers
 * before creating the next response, one thread at a time. Different
 * requests may be answered in parallel. Created responses may be sent in any
 * order, or deleted unsent. */

/* New response for 'request'; the backend owns it until it sends or deletes
 * it. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseNew(
    TRITONBACKEND_Response **response, TRITONBACKEND_Request *request);

/* New response through a factory; ownership as for TRITONBACKEND_ResponseNew. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseNewFromFactory(
    TRITONBACKEND_Response **response, TRITONBACKEND_ResponseFactory *factory);

/* Frees an unsent response (a sent one belongs to the server). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseDelete(
    TRITONBACKEND_Response *response);

/* Adds a response parameter; name and value are copied. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseSetStringParameter(
    TRITONBACKEND_Response *response, const char *name, const char *value);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseSetIntParameter(
    TRITONBACKEND_Response *response, const char *name, const int64_t value);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseSetBoolParameter(
    TRITONBACKEND_Response *response, const char *name, const bool value);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseSetDoubleParameter(
    TRITONBACKEND_Response *response, const char *name, const double value);

/* Adds output 'name' with type and shape (copied); the output belongs to the
 * response. Fill it through TRITONBACKEND_OutputBuffer. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseOutput(
    TRITONBACKEND_Response *response, TRITONBACKEND_Output **output, const char *name,
    const TRITONSERVER_DataType datatype, const int64_t *shape,
    const uint32_t dims_count);

/* Sends a response with TRITONSERVER_ResponseCompleteFlag bits. The response
 * passes to the server: do not touch it afterwards. 'error' (NULL on
 * success) is only read: the backend still owns it and deletes it. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ResponseSend(
    TRITONBACKEND_Response *response, const uint32_t send_flags,
    TRITONSERVER_Error *error);

/* ---- Implicit sequence state --------------------------------------------- */

/* New output state 'name' (must be declared in the model's sequence_batching
 * states) for the request's sequence. Owned by the request; valid until
 * TRITONBACKEND_StateUpdate or the request's release. Fails without sequence
 * batching state. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_StateNew(
    TRITONBACKEND_State **state, TRITONBACKEND_Request *request, const char *name,
    const TRITONSERVER_DataType datatype, const int64_t *shape,
    const uint32_t dims_count);

/* Makes 'state' the sequence's state for its next request. Optional: without
 * it the next request sees the previous state. The state and its buffer must
 * not be used afterwards. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_StateUpdate(
    TRITONBACKEND_State *state);

/* Gets the buffer to fill with the state's data; fill it before StateUpdate.
 * Owned by the state. memory_type / memory_type_id: preference in, real
 * placement out. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_StateBuffer(
    TRITONBACKEND_State *state, void **buffer, const uint64_t buffer_byte_size,
    TRITONSERVER_MemoryType *memory_type, int64_t *memory_type_id);

/* Attributes of the state's buffer; owned by the state. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_StateBufferAttributes(
    TRITONBACKEND_State *state, TRITONSERVER_BufferAttributes **buffer_attributes);

/* ---- Backend -------------------------------------------------------------- */

/* BLOCKING (default): an instance's Execute returns only when it can take the
 * next batch. DEVICE_BLOCKING: while one instance of a device is in Execute,
 * no other instance of that device is called. Sequence-batched models always
 * run BLOCKING. */
typedef enum TRITONBACKEND_execpolicy_enum {
  TRITONBACKEND_EXECUTION_BLOCKING = 0,
  TRITONBACKEND_EXECUTION_DEVICE_BLOCKING = 1
} TRITONBACKEND_ExecutionPolicy;

/* Backend name; owned by the backend object. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_BackendName(
    TRITONBACKEND_Backend *backend, const char **name);

/* Backend settings as JSON {"cmdline": {"<setting>": "<value>", ...}}. The
 * message belongs to the server: do not delete it. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_BackendConfig(
    TRITONBACKEND_Backend *backend, TRITONSERVER_Message **backend_config);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_BackendExecutionPolicy(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_ExecutionPolicy *policy);

/* Only honoured when called from TRITONBACKEND_Initialize. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_BackendSetExecutionPolicy(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_ExecutionPolicy policy);

/* Where the backend's files are (FILESYSTEM: directory holding its shared
 * library); 'location' is owned by the server. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_BackendArtifacts(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_ArtifactType *artifact_type,
    const char **location);

/* The server's memory manager; not owned by the caller. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_BackendMemoryManager(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_MemoryManager **manager);

/* Opaque backend-owned state pointer (NULL until set). The server never
 * frees it; the backend frees it in TRITONBACKEND_Finalize. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_BackendState(
    TRITONBACKEND_Backend *backend, void **state);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_BackendSetState(
    TRITONBACKEND_Backend *backend, void *state);

/* ---- Model ---------------------------------------------------------------- */

/* Model name; owned by the model. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelName(
    TRITONBACKEND_Model *model, const char **name);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelVersion(
    TRITONBACKEND_Model *model, uint64_t *version);

/* Where the model's files are (FILESYSTEM: the model's directory in the
 * repository); 'location' is owned by the server. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelRepository(
    TRITONBACKEND_Model *model, TRITONBACKEND_ArtifactType *artifact_type,
    const char **location);

/* Model configuration as JSON (format 'config_version', only 1 exists),
 * available already in TRITONBACKEND_ModelInitialize. The caller owns the
 * message and deletes it with TRITONSERVER_MessageDelete. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelConfig(
    TRITONBACKEND_Model *model, const uint32_t config_version,
    TRITONSERVER_Message **model_config);

/* Whether the backend should complete missing config fields (inputs,
 * outputs, max batch size) and report them with TRITONBACKEND_ModelSetConfig. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelAutoCompleteConfig(
    TRITONBACKEND_Model *model, bool *auto_complete_config);

/* Replaces the model config during TRITONBACKEND_ModelInitialize only (when
 * auto-completing). Only inputs, outputs, max batch size and an unset
 * scheduler are taken; re-read the config afterwards. The message is only
 * read: the caller still owns and deletes it. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelSetConfig(
    TRITONBACKEND_Model *model, const uint32_t config_version,
    TRITONSERVER_Message *model_config);

/* The server serving the model (for TRITONSERVER_* calls, e.g. BLS); not
 * owned by the caller. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelServer(
    TRITONBACKEND_Model *model, TRITONSERVER_Server **server);

/* The backend the model runs on; not owned by the caller. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelBackend(
    TRITONBACKEND_Model *model, TRITONBACKEND_Backend **backend);

/* Opaque backend-owned per-model state (NULL until set); the backend frees it
 * in TRITONBACKEND_ModelFinalize. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelState(
    TRITONBACKEND_Model *model, void **state);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelSetState(
    TRITONBACKEND_Model *model, void *state);

/* Reports memory the model holds until TRITONBACKEND_ModelFinalize, one
 * attributes entry (type, id, byte size) per device; may be repeated to
 * update. 'usage' is read only during the call. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelReportMemoryUsage(
    TRITONBACKEND_Model *model, TRITONSERVER_BufferAttributes **usage,
    uint32_t usage_size);

/* ---- Model instance ------------------------------------------------------- */

/* Instance name; owned by the instance. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceName(
    TRITONBACKEND_ModelInstance *instance, const char **name);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceKind(
    TRITONBACKEND_ModelInstance *instance, TRITONSERVER_InstanceGroupKind *kind);

/* Device the instance runs on (GPU ordinal for KIND_GPU). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceDeviceId(
    TRITONBACKEND_ModelInstance *instance, int32_t *device_id);

/* Host policy settings as JSON {"<policy>": {"<setting>": "<value>"}}. The
 * message belongs to the server: do not delete it. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceHostPolicy(
    TRITONBACKEND_ModelInstance *instance, TRITONSERVER_Message **host_policy);

/* Whether the instance is passive (loaded but not scheduled). */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceIsPassive(
    TRITONBACKEND_ModelInstance *instance, bool *is_passive);

/* Number of optimization profiles configured for the instance. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceProfileCount(
    TRITONBACKEND_ModelInstance *instance, uint32_t *count);

/* Name of profile 'index' (< count); owned by the instance. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceProfileName(
    TRITONBACKEND_ModelInstance *instance, const uint32_t index,
    const char **profile_name);

/* Number of secondary devices configured for the instance. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceSecondaryDeviceCount(TRITONBACKEND_ModelInstance *instance,
                                                uint32_t *count);

/* Kind and id of secondary device 'index' (< count); 'kind' is owned by the
 * instance. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceSecondaryDeviceProperties(
    TRITONBACKEND_ModelInstance *instance, uint32_t index, const char **kind,
    int64_t *id);

/* The instance's model; not owned by the caller. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Model **model);

/* Opaque backend-owned per-instance state (NULL until set); the backend frees
 * it in TRITONBACKEND_ModelInstanceFinalize. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceState(
    TRITONBACKEND_ModelInstance *instance, void **state);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceSetState(
    TRITONBACKEND_ModelInstance *instance, void *state);

/* As TRITONBACKEND_ModelReportMemoryUsage, for memory the instance holds
 * until TRITONBACKEND_ModelInstanceFinalize. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportMemoryUsage(
    TRITONBACKEND_ModelInstance *instance, TRITONSERVER_BufferAttributes **usage,
    uint32_t usage_size);

/* Statistics of one request, reported before releasing it. Timestamps are
 * steady-clock nanoseconds taken at: execute start, compute start, compute
 * end, execute end. With success == false the timestamps are ignored. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request *request,
    const bool success, const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns);

/* Per-response statistics (decoupled models): fill a statistics object with
 * the setters below, report it, delete it. The object does not own what is
 * set on it (instance, factory, error). */

/* New response-statistics object; the caller owns it and deletes it with
 * TRITONBACKEND_ModelInstanceResponseStatisticsDelete. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceResponseStatisticsNew(
    TRITONBACKEND_ModelInstanceResponseStatistics **response_statistics);

/* Frees the object only; what was set on it stays the caller's. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceResponseStatisticsDelete(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceResponseStatisticsSetModelInstance(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    TRITONBACKEND_ModelInstance *model_instance);

TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseFactory(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    TRITONBACKEND_ResponseFactory *response_factory);

/* Steady-clock ns when work on this response began. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseStart(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    uint64_t response_start);

/* Steady-clock ns when output extraction began; leave 0 for an empty
 * (flags-only) response. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceResponseStatisticsSetComputeOutputStart(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    uint64_t compute_output_start);

/* Steady-clock ns when the response was complete. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceResponseStatisticsSetResponseEnd(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    uint64_t response_end);

/* The error sent with the response (NULL for success); not taken over. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceResponseStatisticsSetError(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics,
    TRITONSERVER_Error *error);

/* Records the statistics; the caller keeps and later deletes the object. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceReportResponseStatistics(
    TRITONBACKEND_ModelInstanceResponseStatistics *response_statistics);

/* Statistics of one Execute call; 'batch_size' is the sum of the batch sizes
 * of all requests in it. Timestamps as in ReportStatistics, all non-zero. */
TRITONBACKEND_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceReportBatchStatistics(TRITONBACKEND_ModelInstance *instance,
                                                 const uint64_t batch_size,
                                                 const uint64_t exec_start_ns,
                                                 const uint64_t compute_start_ns,
                                                 const uint64_t compute_end_ns,
                                                 const uint64_t exec_end_ns);

/* ---- Entry points a backend implements ------------------------------------
 * Looked up by name in the backend library. Only ModelInstanceExecute is
 * required. An error returned from an Initialize fails that load. */

/* Once, when the backend library is loaded (shared by all its models). */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_Initialize(
    TRITONBACKEND_Backend *backend);

/* Once, before the library is unloaded: free backend state, join threads. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_Finalize(
    TRITONBACKEND_Backend *backend);

/* When a model (version) using the backend loads; validate the config here. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(
    TRITONBACKEND_Model *model);

/* Before the model unloads: free model state, join threads. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(
    TRITONBACKEND_Model *model);

/* When an instance is created. Called serially unless the backend enabled
 * parallel instance loading (see BackendAttributeSetParallelModelInstanceLoading). */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance *instance);

/* Before the instance goes away: free instance state, join threads. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance *instance);

/* Runs a batch. Never called concurrently for the same instance; may be for
 * different instances. On success the backend owns every request (it must
 * respond to and release each); on error the server keeps them and the
 * backend must not touch them. The 'requests' array itself stays the
 * server's and is valid only during the call: copy the pointers. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count);

/* Optional; the server may call it (between Initialize and Finalize) to learn
 * backend preferences, set through the BackendAttribute functions below. On
 * error, attributes set during this call are ignored. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_GetBackendAttribute(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_BackendAttribute *backend_attributes);

/* ---- Backend attributes (server functions, TRITONSERVER_DECLSPEC as in
 * Triton) ------------------------------------------------------------------ */

/* Adds a preferred instance group, most preferred first, used when a model
 * config gives none. count 0 and device_ids NULL mean server defaults. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
    TRITONBACKEND_BackendAttribute *backend_attributes,
    const TRITONSERVER_InstanceGroupKind kind, const uint64_t count,
    const uint64_t *device_ids, const uint64_t id_count);

/* Opts in to concurrent TRITONBACKEND_ModelInstanceInitialize calls (default
 * false: serial). */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *
TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
    TRITONBACKEND_BackendAttribute *backend_attributes, bool enabled);

/* ---- Custom batching (optional entry points; all or none) -----------------
 * Extra conditions on top of the dynamic batcher's own. */

/* At model load: create the backend's read-only batcher data. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelBatcherInitialize(
    TRITONBACKEND_Batcher **batcher, TRITONBACKEND_Model *model);

/* At model unload: free the batcher data. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelBatcherFinalize(
    TRITONBACKEND_Batcher *batcher);

/* Should 'request' join the pending batch described by 'userp'? Update
 * 'userp' to reflect the batch after the decision. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelBatchIncludeRequest(
    TRITONBACKEND_Request *request, void *userp, bool *should_include);

/* A new batch is starting: create its per-batch state in '*userp'. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelBatchInitialize(
    const TRITONBACKEND_Batcher *batcher, void **userp);

/* The batch is formed: free its per-batch state. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_ModelBatchFinalize(void *userp);

/* ---- Reading back a response's outputs ------------------------------------
 * Server functions. Returned values belong to the response and live until it
 * is deleted. Triton marks the first with TRITONBACKEND_ISPEC (kept for
 * fidelity), so a server built with -fvisibility=hidden must export it by
 * other means, e.g. a version script. */

/* Type and shape of output 'name'. */
TRITONBACKEND_ISPEC TRITONSERVER_Error *TRITONBACKEND_InferenceResponseOutputByName(
    TRITONBACKEND_Response *response, const char *name, TRITONSERVER_DataType *datatype,
    const int64_t **shape, uint64_t *dim_count);

/* Name, type and shape of output 'index'. */
TRITONSERVER_DECLSPEC TRITONSERVER_Error *TRITONBACKEND_InferenceResponseOutput(
    TRITONBACKEND_Response *response, const uint32_t index, const char **name,
    TRITONSERVER_DataType *datatype, const int64_t **shape, uint64_t *dim_count);

#ifdef __cplusplus
}
#endif

#endif /* NEREID_TRITON_CORE_TRITONBACKEND_H */
