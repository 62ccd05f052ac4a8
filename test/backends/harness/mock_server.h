/* A stand-in for libtritonserver.so in backend tests: implements the
 * TRITONBACKEND_ and TRITONSERVER_ functions our backends call (exported from
 * the test binary with -rdynamic, so a dlopen'ed backend binds to them), and
 * lets a test build requests, run a backend's lifecycle and inspect the
 * responses it sent. The test thread drives it; backend threads (repeat's
 * scheduler) may send responses concurrently, so each call's record is
 * guarded by its own mutex. Not a server: no scheduling, no validation
 * beyond what a test needs. */
#ifndef NEREID_TEST_BACKENDS_HARNESS_MOCK_SERVER_H
#define NEREID_TEST_BACKENDS_HARNESS_MOCK_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonbackend.h"

#define MOCK_MAX_DIMS 8
#define MOCK_MAX_TENSORS 8
#define MOCK_MAX_BUFFERS 8
#define MOCK_MAX_SENT 256

struct TRITONSERVER_Error {
  TRITONSERVER_Error_Code code;
  char *msg;
};

struct TRITONSERVER_Message {
  char *json;
  size_t len;
};

struct TRITONBACKEND_Backend {
  const char *name;
  const char *config_json; /* --backend-config as JSON; NULL: none */
  void *state;
  int preferred_kind; /* from GetBackendAttribute; -1: none */
};

struct TRITONBACKEND_Model {
  const char *name;
  uint64_t version;
  const char *config_json;
  void *state;
  TRITONBACKEND_Backend *backend;
};

/* Statistics as the backend reported them. */
typedef struct {
  atomic_int success, fail, batches;
  atomic_ullong batch_total;
} mock_stats_t;

struct TRITONBACKEND_ModelInstance {
  const char *name;
  TRITONBACKEND_Model *model;
  void *state;
  mock_stats_t stats;
};

struct TRITONBACKEND_Input {
  const char *name;
  TRITONSERVER_DataType datatype;
  int64_t shape[MOCK_MAX_DIMS];
  uint32_t dims;
  const void *buf[MOCK_MAX_BUFFERS];
  uint64_t size[MOCK_MAX_BUFFERS];
  uint32_t buffers;
  uint64_t byte_size;
};

struct TRITONBACKEND_Output {
  char name[64];
  TRITONSERVER_DataType datatype;
  int64_t shape[MOCK_MAX_DIMS];
  uint32_t dims;
  void *data; /* malloc'd by TRITONBACKEND_OutputBuffer */
  uint64_t size;
};

/* A response or flags as the client would receive them. */
typedef struct {
  uint64_t seq; /* order of sending across all calls */
  uint32_t flags;
  bool is_response;             /* false: flags only (ResponseFactorySendFlags) */
  TRITONSERVER_Error_Code code; /* meaningful when error != NULL */
  char *error;                  /* NULL on success */
  struct TRITONBACKEND_Output outputs[MOCK_MAX_TENSORS];
  uint32_t output_count;
} mock_sent_t;

/* One request's life as the client sees it; outlives the request itself. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  mock_sent_t sent[MOCK_MAX_SENT];
  size_t sent_count;
  bool final_seen, released;
  int factories_live;
  atomic_bool cancelled; /* set by mock_call_cancel, from any thread */
} mock_call_t;

struct TRITONBACKEND_Request {
  mock_call_t *call;
  const char *id; /* TRITONBACKEND_RequestId; NULL: none */
  struct TRITONBACKEND_Input inputs[MOCK_MAX_TENSORS];
  uint32_t input_count;
  const char *outputs[MOCK_MAX_TENSORS];
  uint32_t output_count;
};

struct TRITONBACKEND_ResponseFactory {
  mock_call_t *call;
};

struct TRITONBACKEND_Response {
  mock_call_t *call;
  struct TRITONBACKEND_Output outputs[MOCK_MAX_TENSORS];
  uint32_t output_count;
};

/* ---- calls and requests (test thread) ------------------------------------ */

mock_call_t *mock_call_new(void);
void mock_call_free(mock_call_t *call);

/** Cancels the call as a client would: TRITONBACKEND_RequestIsCancelled and
 * TRITONBACKEND_ResponseFactoryIsCancelled report it from then on. Any
 * thread, e.g. while the backend's Execute runs on the test thread. */
void mock_call_cancel(mock_call_t *call);

/** Waits until the call has its final flag and its request was released;
 * false after timeout_ms. */
bool mock_call_wait_done(mock_call_t *call, int timeout_ms);

/** Snapshot of sent[i] under the call's lock (the struct, not a deep copy:
 * the outputs stay owned by the call). */
mock_sent_t mock_call_sent(mock_call_t *call, size_t i);
size_t mock_call_sent_count(mock_call_t *call);

/** Output `name` of a sent response, or NULL. */
const struct TRITONBACKEND_Output *mock_sent_output(const mock_sent_t *sent,
                                                    const char *name);

/** A request for `call`; the backend frees it with TRITONBACKEND_RequestRelease. */
TRITONBACKEND_Request *mock_request_new(mock_call_t *call);

/** Adds an input whose data (not copied: keep it alive) arrives split into
 * `pieces` buffers of nearly equal size. */
void mock_request_input(TRITONBACKEND_Request *r, const char *name,
                        TRITONSERVER_DataType datatype, const int64_t *shape,
                        uint32_t dims, const void *data, uint64_t size, uint32_t pieces);

/** Sets the request's id (not copied: the string must outlive the request). */
void mock_request_id(TRITONBACKEND_Request *r, const char *id);

/** Names a requested output (the string must outlive the request). */
void mock_request_output(TRITONBACKEND_Request *r, const char *name);

/* ---- backend libraries and lifecycle ------------------------------------- */

typedef struct {
  void *handle;
  TRITONSERVER_Error *(*initialize)(TRITONBACKEND_Backend *);
  TRITONSERVER_Error *(*finalize)(TRITONBACKEND_Backend *);
  TRITONSERVER_Error *(*get_attribute)(TRITONBACKEND_Backend *,
                                       TRITONBACKEND_BackendAttribute *);
  TRITONSERVER_Error *(*model_initialize)(TRITONBACKEND_Model *);
  TRITONSERVER_Error *(*model_finalize)(TRITONBACKEND_Model *);
  TRITONSERVER_Error *(*instance_initialize)(TRITONBACKEND_ModelInstance *);
  TRITONSERVER_Error *(*instance_finalize)(TRITONBACKEND_ModelInstance *);
  TRITONSERVER_Error *(*execute)(TRITONBACKEND_ModelInstance *, TRITONBACKEND_Request **,
                                 const uint32_t);
} mock_lib_t;

/** A backend with one model and one instance, as the server would hold them. */
typedef struct {
  mock_lib_t lib;
  TRITONBACKEND_Backend backend;
  TRITONBACKEND_Model model;
  TRITONBACKEND_ModelInstance instance;
  bool backend_up, model_up, instance_up;
} mock_loaded_t;

/** dlopens `path` (RTLD_NOW | RTLD_LOCAL, as the server does), then runs
 * Initialize (+ GetBackendAttribute), ModelInitialize and
 * ModelInstanceInitialize (instance "<model>_0"). Stops at the first error
 * and returns it (caller deletes); mock_unload then undoes what succeeded. */
TRITONSERVER_Error *mock_load(mock_loaded_t *m, const char *path,
                              const char *backend_name, const char *backend_config_json,
                              const char *model_name, const char *model_config_json);

/** Finalizes what mock_load brought up, in reverse order, and dlcloses.
 * Returns how many finalize calls failed (their errors are printed). */
int mock_unload(mock_loaded_t *m);

/** A message holding a copy of json (used by the config calls). */
TRITONSERVER_Message *mock_message_new(const char *json);

/** The message of err, then deletes it; "" for NULL. Valid until next call. */
const char *mock_take_error(TRITONSERVER_Error *err);

#endif
